"""Fixtures for the dedup tests: hosts with the memory plugin (its default model, use) with or without dedup."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dedup_support import NOON, memory_config

from ego_core import Clock, PluginHost
from ego_core.testing import HostFactory
from ego_dedup import DedupPlugin
from ego_memory.plugin import MemoryPlugin


@pytest.fixture
def clock() -> Clock:
    return Clock(NOON)


@pytest.fixture
def dedup_host(make_host: HostFactory, clock: Clock) -> Callable[..., PluginHost]:
    """A host with the memory plugin (default model) and the dedup plugin; keyword arguments configure dedup."""

    def build(**dedup: Any) -> PluginHost:
        return make_host({"memory": MemoryPlugin(), "dedup": DedupPlugin()}, config=memory_config(**dedup), clock=clock)

    return build


@pytest.fixture
def memory_only_host(make_host: HostFactory, clock: Clock) -> Callable[[], PluginHost]:
    def build() -> PluginHost:
        return make_host({"memory": MemoryPlugin()}, config=memory_config(), clock=clock)

    return build


@pytest.fixture
def child_env(tmp_path: Path) -> Callable[..., dict[str, str]]:
    """Environment for an ``ego`` child: no inherited ``EGO_*`` (the default model needs no variable), a temporary
    data dir."""

    def build(**extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
        env["EGO_DATA_DIR"] = str(tmp_path / "child-data")
        env.update(extra)
        return env

    return build
