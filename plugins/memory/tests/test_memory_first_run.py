"""The first run without the onnx provider's model (MiniLM, configured): the failure is said once, a failed download
leaves nothing behind (so the next try starts clean), and `ego doctor` names the one command that fixes it. The
default model ships with its weights: it starts offline with no model variable. The network is kept out by a proxy
that refuses every connection, so a download fails the same way on any machine."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import EgoChild

REFUSING_PROXY = "http://127.0.0.1:9"


def run(
    ego_child: EgoChild, home: Path, *args: str, stdin: str = "", embedder: str = "onnx"
) -> subprocess.CompletedProcess[str]:
    env = ego_child.env(HOME=str(home), HTTPS_PROXY=REFUSING_PROXY, HTTP_PROXY=REFUSING_PROXY, ALL_PROXY="")
    env.pop("EGO_EMBEDDING_MODEL_DIR", None)  # onnx's default: chromadb's cache under HOME
    env["EGO_EMBEDDER"] = embedder
    return subprocess.run(
        ego_child.command(*args), env=env, input=stdin, capture_output=True, text=True, timeout=300, check=False
    )


def test_a_first_run_without_the_model_says_so_once_and_leaves_no_partial_download(
    ego_child: EgoChild, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    served = run(ego_child, home, "serve", "--plugins", "memory")  # stdin at EOF: starts, serves, exits
    assert served.returncode == 0, served.stderr
    assert served.stderr.count("plugin=memory stage=startup") == 1
    assert "ego memory download-model" in served.stderr
    assert not (home / ".cache" / "chroma").exists()  # nothing half-downloaded to trip the next start

    doctor = run(ego_child, home, "doctor", "--plugins", "memory")
    assert doctor.returncode == 1
    assert "ego memory download-model" in doctor.stdout

    fetched = run(ego_child, home, "memory", "download-model", "--plugins", "memory")
    assert fetched.returncode == 1
    assert fetched.stderr.startswith("ego: error: ")
    assert len(fetched.stderr.strip().splitlines()) == 1
    assert not (home / ".cache" / "chroma").exists()


def test_download_model_into_a_directory_that_holds_the_model_does_nothing(
    ego_child: EgoChild, tmp_path: Path, model_dir: Path
) -> None:
    done = run(ego_child, tmp_path, "memory", "download-model", "--to", str(model_dir), "--plugins", "memory")
    assert done.returncode == 0, done.stderr
    assert f"already in {model_dir}" in done.stdout


def test_the_default_model_starts_offline_with_no_model_variable(ego_child: EgoChild, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = run(ego_child, home, "memory", "stats", "--json", "--plugins", "memory", embedder="use")
    assert done.returncode == 0, done.stderr
    assert "stage=startup" not in done.stderr
    assert '"embedding_model": "use:multilingual-v3"' in done.stdout
    assert not (home / ".cache" / "chroma").exists()  # no model downloaded
