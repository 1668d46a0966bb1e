"""The first run of the onnx provider (MiniLM): with no model directory it runs the int8 model installed with ego,
offline; a configured directory without the model is said once, in one line naming the command that fills it, and a
failed download leaves nothing behind (so the next try starts clean). The default model ships with its weights
too: it starts offline with no model variable. The network is kept out by a proxy that refuses every connection,
so a download fails the same way on any machine."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import EgoChild

REFUSING_PROXY = "http://127.0.0.1:9"


def run(
    ego_child: EgoChild,
    home: Path,
    *args: str,
    stdin: str = "",
    embedder: str = "onnx",
    model_dir: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    env = ego_child.env(HOME=str(home), HTTPS_PROXY=REFUSING_PROXY, HTTP_PROXY=REFUSING_PROXY, ALL_PROXY="")
    env["EGO_EMBEDDER"] = embedder
    if model_dir is not None:
        env["EGO_EMBEDDING_MODEL_DIR"] = str(model_dir)
    return subprocess.run(
        ego_child.command(*args), env=env, input=stdin, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_onnx_provider_starts_offline_with_the_packaged_model(ego_child: EgoChild, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = run(ego_child, home, "memory", "stats", "--json", "--plugins", "memory")
    assert done.returncode == 0, done.stderr
    assert "stage=startup" not in done.stderr
    assert '"embedding_model": "onnx:all-MiniLM-L6-v2-int8"' in done.stdout
    assert list(home.iterdir()) == []  # nothing downloaded, no cache made


def test_a_first_run_without_the_model_says_so_once_and_leaves_no_partial_download(
    ego_child: EgoChild, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    model_dir = home / "models" / "all-MiniLM-L6-v2" / "onnx"  # configured, never filled
    served = run(ego_child, home, "serve", "--plugins", "memory", model_dir=model_dir)  # stdin at EOF
    assert served.returncode == 2
    assert len(served.stderr.strip().splitlines()) == 1
    assert f"ONNX model directory {model_dir} is missing model.onnx, tokenizer.json" in served.stderr
    assert "ego memory download-model" in served.stderr

    doctor = run(ego_child, home, "doctor", "--plugins", "memory", model_dir=model_dir)
    assert doctor.returncode == 2
    assert "ego memory download-model" in doctor.stderr

    fetched = run(ego_child, home, "memory", "download-model", "--plugins", "memory", model_dir=model_dir)
    assert fetched.returncode == 1
    assert fetched.stderr.startswith("ego: error: ")
    assert len(fetched.stderr.strip().splitlines()) == 1
    assert str(model_dir) in fetched.stderr
    assert list(home.iterdir()) == []  # nothing half-downloaded to trip the next start


def test_download_model_without_a_directory_says_none_is_needed(ego_child: EgoChild, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = run(ego_child, home, "memory", "download-model", "--plugins", "memory")
    assert done.returncode == 2
    assert done.stderr.startswith("ego: error: memory download-model: no directory to fill: pass --to DIR")
    assert "without a model directory it runs all-MiniLM-L6-v2 int8, installed with ego" in done.stderr
    assert list(home.iterdir()) == []


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
