"""Fixtures for tests across every built-in plugin (the `all` tox environment installs them all)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from combo_support import PLUGINS

from ego_core import PluginHost
from ego_core.testing import HostFactory


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def combo_host(make_host: HostFactory, workspace: Path, tmp_path: Path) -> Callable[..., PluginHost]:
    """A host with the given built-in plugins (default: all), the default embedding model (use, installed with its
    weights: no model directory), a workspace and a local shared memory store."""

    def build(*ids: str, **memory: Any) -> PluginHost:
        chosen = ids or tuple(PLUGINS)
        config = {
            "memory": dict(memory),
            "workspace_sync": {"workspace_dir": str(workspace)},
            "shared_memory": {"db": f"sqlite:///{tmp_path / 'shared.db'}", "agent_id": "claude"},
            "desires": {"feel_desires_tool": True},  # the opt-in tools, so that every tool is exercised
            "emotion_trend": {"tool": True},
        }
        return make_host({plugin_id: PLUGINS[plugin_id]() for plugin_id in chosen}, config=config)

    return build
