"""What a committed benchmark report says about how it was run: the command, from a checkout, and nothing about
the machine it ran on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ego_bench.plugin import REPO, recorded_command

RESULTS = REPO / "bench" / "results"
DATA = REPO / "bench" / "data"


def test_a_report_records_the_command_with_repository_relative_paths(tmp_path: Path) -> None:
    """A new user found a committed report recording `--data /work/shared/data/locomo`: the absolute path of the
    machine it ran on. The writer records every path argument relative to the repository, from any directory."""
    root = tmp_path / "checkout" / "ego"
    (root / "bench" / "results").mkdir(parents=True)
    shared = tmp_path / "checkout" / "shared" / "data" / "locomo"
    argv = ["bench", "scale", "--data", str(shared), "--sizes", "1000,10000", "--output", "results/scale.json"]
    assert recorded_command(argv, cwd=root / "bench", root=root) == (
        "ego bench scale --data ../shared/data/locomo --sizes 1000,10000 --output bench/results/scale.json"
    )
    elsewhere = ["bench", "ja", f"--data={shared}", "--output", str(tmp_path / "tmp" / "ja.json")]
    assert recorded_command(elsewhere, cwd=root, root=root) == (
        "ego bench ja --data=../shared/data/locomo --output <elsewhere>/ja.json"
    )
    assert recorded_command(["bench", "tokens", "--quiet"], cwd=root, root=root) == "ego bench tokens --quiet"


def test_the_committed_data_is_recorded_as_bench_data_from_any_directory(tmp_path: Path) -> None:
    root = tmp_path / "ego"
    (root / "bench" / "data" / "locomo").mkdir(parents=True)
    from_root = ["bench", "locomo", "--data", "bench/data/locomo", "--output", "bench/results/locomo.json"]
    assert recorded_command(from_root, cwd=root, root=root) == (
        "ego bench locomo --data bench/data/locomo --output bench/results/locomo.json"
    )
    from_bench = ["bench", "scale", "--data", "data/locomo", "--sizes", "1000"]
    assert recorded_command(from_bench, cwd=root / "bench", root=root) == (
        "ego bench scale --data bench/data/locomo --sizes 1000"
    )
    absolute = ["bench", "ja", f"--data={root / 'bench' / 'data' / 'ja'}"]
    assert recorded_command(absolute, cwd=tmp_path, root=root) == "ego bench ja --data=bench/data/ja"


def _data_argument(command: str) -> str | None:
    words = command.split()
    for index, word in enumerate(words):
        if word == "--data":
            return words[index + 1]
        if word.startswith("--data="):
            return word.removeprefix("--data=")
    return None


@pytest.mark.parametrize("report", sorted(RESULTS.glob("*.json")), ids=lambda path: path.name)
def test_a_committed_report_names_data_a_checkout_has(report: Path) -> None:
    """A report's ``--data`` is a folder of bench/data, or ``../shared/data/<name>`` for the reports made before the
    data came into the repository: the same files as ``bench/data/<name>`` (bench/data/README.md)."""
    data = _data_argument(json.loads(report.read_text(encoding="utf-8"))["command"])
    if data is None:
        return
    name = data.removeprefix("bench/data/").removeprefix("../shared/data/")
    assert name != data, f"{report.name} ran on {data}, neither bench/data nor ../shared/data"
    assert (DATA / name / "SHA256SUMS").is_file(), f"{report.name} ran on {data}: bench/data/{name} is missing"


@pytest.mark.parametrize("report", sorted(RESULTS.glob("*.json")), ids=lambda path: path.name)
def test_no_committed_report_records_an_absolute_path_in_its_command(report: Path) -> None:
    command = json.loads(report.read_text(encoding="utf-8"))["command"]
    assert command.startswith("ego bench ")
    assert not [word for word in command.replace("=", " ").split() if word.startswith(("/", "~"))], command


@pytest.mark.parametrize("report", sorted(RESULTS.glob("*.json")), ids=lambda path: path.name)
def test_no_committed_report_records_a_temporary_path(report: Path) -> None:
    """A report's figures hold for any machine: a temporary file's path (``/tmp/ego-bench-…``) says only where
    one run happened to put it."""
    text = report.read_text(encoding="utf-8")
    assert "ego-bench-" not in text
    assert "/tmp/" not in text
