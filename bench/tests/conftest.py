"""Fixtures of the benchmark tests (the embedding models are the installed ones: nothing beside the clone)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def ego_cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """For a test that runs ``ego`` in-process: no EGO_* setting of the developer's shell, and a data directory
    of its own."""
    for key in list(os.environ):
        if key.startswith("EGO_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("EGO_DATA_DIR", str(tmp_path / "ego-data"))
