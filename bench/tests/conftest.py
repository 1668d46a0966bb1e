"""The real embedding model, as every benchmark uses it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def model_dir() -> Path:
    path = Path(os.environ.get("EGO_EMBEDDING_MODEL_DIR") or REPO_ROOT.parent / "shared/models/all-MiniLM-L6-v2/onnx")
    if not (path / "model.onnx").exists():
        pytest.fail(f"the embedding model is missing at {path}; set EGO_EMBEDDING_MODEL_DIR")
    return path


@pytest.fixture
def ego_cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """For a test that runs ``ego`` in-process: no EGO_* setting of the developer's shell (but the model
    directory), and a data directory of its own."""
    for key in list(os.environ):
        if key.startswith("EGO_") and key != "EGO_EMBEDDING_MODEL_DIR":
            monkeypatch.delenv(key)
    monkeypatch.setenv("EGO_DATA_DIR", str(tmp_path / "ego-data"))
