"""Tests of the desires plugin with the real memory, dedup and interoception plugins (the `all` tox env runs
them; the `desires` env, which installs no other plugin, leaves this directory out)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from desires_support import AFTERNOON, DesireHost, DesireHostFactory

from ego_core import Clock, Settings
from ego_core.testing import HostFactory
from ego_desires import DesiresPlugin
from ego_memory.plugin import MemoryPlugin


@pytest.fixture
def with_memory(make_host: HostFactory, ego_settings: Settings, tmp_path: Path) -> DesireHostFactory:
    """A started host with the real memory plugin (its default model), the desires plugin and ``others``."""

    def build(
        *,
        name: str = "a",
        others: Mapping[str, object] | None = None,
        clock: Clock | None = None,
        config: Mapping[str, Mapping[str, Any]] | None = None,
        **settings: Any,
    ) -> DesireHost:
        data_dir = tmp_path / f"data-{name}"
        plugin = DesiresPlugin()
        clock = clock or Clock(AFTERNOON)
        host = make_host(
            {"memory": MemoryPlugin(), "desires": plugin, **(others or {})},
            config={"desires": {"feel_desires_tool": True}, **(config or {})},
            settings=attrs.evolve(ego_settings, data_dir=data_dir, **settings),
            clock=clock,
        )
        host.start()
        assert not host.failures, [f.describe() for f in host.failures]
        return DesireHost(host=host, plugin=plugin, clock=clock, data_dir=data_dir)

    return build
