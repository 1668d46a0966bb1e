"""The benchmark data committed in bench/data: the exact bytes the committed reports were made on, each folder
with its README (source, licence, changes, definition) and the licence texts it must carry."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
FOLDERS = {
    "ja": {"files": ["jsquad.json", "pairs.json", "tanaka.json"], "licences": ["LICENSE-JGLUE-CC-BY-SA-4.0.txt"]},
    "locomo": {
        "files": ["26.json", "30.json", "41.json", "42.json", "43.json"],
        "licences": ["LICENSE-CC-BY-NC-4.0.txt"],
    },
}


def _sums(folder: Path) -> dict[str, str]:
    lines = (folder / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    return {name: digest for digest, name in (line.split(maxsplit=1) for line in lines if line.strip())}


@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_the_data_files_are_the_bytes_the_reports_were_made_on(name: str) -> None:
    folder = DATA / name
    sums = _sums(folder)
    assert sorted(sums) == sorted(path.name for path in folder.glob("*.json")) == FOLDERS[name]["files"]
    for file, digest in sums.items():
        assert hashlib.sha256((folder / file).read_bytes()).hexdigest() == digest, f"{name}/{file} changed"


@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_each_folder_carries_its_readme_and_licence_texts(name: str) -> None:
    folder = DATA / name
    readme = (folder / "README.md").read_text(encoding="utf-8")
    for licence in FOLDERS[name]["licences"]:
        text = (folder / licence).read_text(encoding="utf-8")
        assert "Creative Commons" in text
        assert licence in readme
    assert "## The benchmark" in readme
    assert "Licence" in readme
