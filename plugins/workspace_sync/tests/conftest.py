"""Fixtures for the workspace sync tests: a host with the real memory plugin (real model) and this plugin."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from workspace_helpers import MOMENT, SyncHostFactory

from ego_core import Clock, PluginHost, Settings
from ego_core.testing import HostFactory
from ego_memory.plugin import MemoryPlugin
from ego_workspace_sync import WorkspaceSyncPlugin


@pytest.fixture(autouse=True)
def _no_workspace_from_the_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's EGO_WORKSPACE_DIR would win over the test's config and send lines to their real workspace."""
    monkeypatch.delenv("EGO_WORKSPACE_DIR", raising=False)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path / "openclaw" / "workspace"


@pytest.fixture
def sync_host(make_host: HostFactory, ego_settings: Settings) -> SyncHostFactory:
    """A host with ``memory`` (its real default model) and ``workspace_sync`` (``workspace`` None: not configured)."""

    def build(workspace: Path | None, *, clock: Clock | None = None, timezone: str = "Asia/Tokyo") -> PluginHost:
        config: dict[str, Mapping[str, Any]] = {}
        if workspace is not None:
            config["workspace_sync"] = {"workspace_dir": str(workspace)}
        return make_host(
            {"memory": MemoryPlugin(), "workspace_sync": WorkspaceSyncPlugin()},
            config=config,
            settings=attrs.evolve(ego_settings, timezone=timezone),
            clock=clock or Clock(MOMENT),
        )

    return build
