"""Fixtures for the self_model tests that need the memory plugin (its real default model): hosts with both, and
a spy embedder that records every text the memory plugin embeds."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
from self_model_memory_support import SpyPlugin

from ego_core import Clock, PluginHost
from ego_core.testing import HostFactory
from ego_memory.plugin import MemoryPlugin
from ego_self_model import SelfModelPlugin


@pytest.fixture
def memory_host(make_host: HostFactory, clock: Clock) -> Callable[..., PluginHost]:
    """A host with the memory plugin (real default model) and self_model, plus any plugin objects given."""

    def build(
        plugins: Mapping[str, object] | None = None, memory: Mapping[str, Any] | None = None, **config: Any
    ) -> PluginHost:
        tables: dict[str, Mapping[str, Any]] = {"memory": dict(memory or {})}
        if config:
            tables["self_model"] = config
        chosen = {"memory": MemoryPlugin(), "self_model": SelfModelPlugin(), **(plugins or {})}
        return make_host(chosen, config=tables, clock=clock)

    return build


@pytest.fixture
def spy() -> SpyPlugin:
    return SpyPlugin()
