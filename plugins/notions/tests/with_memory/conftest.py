"""Fixtures of the notions tests: a host with the real memory plugin and notions, on a clock the test moves."""

from __future__ import annotations

from collections.abc import Callable

import attrs
import pytest
from notions_support import NOW

from ego_core import Clock, PluginHost, Settings
from ego_core.testing import HostFactory
from ego_memory.plugin import MemoryPlugin
from ego_notions import NotionsPlugin


@pytest.fixture
def clock() -> Clock:
    return Clock(NOW)


@pytest.fixture
def notions_host(make_host: HostFactory, ego_settings: Settings, clock: Clock) -> Callable[..., PluginHost]:
    """A host with memory (real model) and notions; ``data`` names the data directory; ``extra`` adds plugins."""

    def build(*, data: str = "data", extra: dict[str, object] | None = None) -> PluginHost:
        plugins: dict[str, object] = {"memory": MemoryPlugin(), "notions": NotionsPlugin(), **(extra or {})}
        settings = attrs.evolve(ego_settings, data_dir=ego_settings.data_dir.parent / data)
        return make_host(plugins, settings=settings, clock=clock)

    return build
