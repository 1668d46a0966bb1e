"""Fixtures for tests across every built-in plugin (the `all` tox environment installs them all)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from ego_core.host import PluginHost
from ego_core.testing import HostFactory
from ego_dedup import DedupPlugin
from ego_interoception.plugin import InteroceptionPlugin
from ego_memory.plugin import MemoryPlugin
from ego_workspace_sync.plugin import WorkspaceSyncPlugin

REPO = Path(__file__).resolve().parents[2]
MODEL_DIR = Path(os.environ.get("EGO_EMBEDDING_MODEL_DIR") or REPO.parent / "shared/models/all-MiniLM-L6-v2/onnx")

PLUGINS: Mapping[str, Callable[[], object]] = {
    "memory": MemoryPlugin,
    "dedup": DedupPlugin,
    "workspace_sync": WorkspaceSyncPlugin,
    "interoception": InteroceptionPlugin,
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def combo_host(make_host: HostFactory, workspace: Path) -> Callable[..., PluginHost]:
    """A host with the given built-in plugins (default: all), the real model, and a workspace."""

    def build(*ids: str, **memory: Any) -> PluginHost:
        chosen = ids or tuple(PLUGINS)
        config = {
            "memory": {"model_dir": str(MODEL_DIR), **memory},
            "workspace_sync": {"workspace_dir": str(workspace)},
        }
        return make_host({plugin_id: PLUGINS[plugin_id]() for plugin_id in chosen}, config=config)

    return build
