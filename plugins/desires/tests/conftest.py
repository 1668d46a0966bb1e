"""Fixtures of the desires tests: hosts with the desires plugin (and stand-ins), each on its own data dir."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs
import pytest
from desires_support import AFTERNOON, DesireHost, DesireHostFactory

from ego_core import Clock, Settings
from ego_core.testing import HostFactory
from ego_desires import DesiresPlugin


@pytest.fixture
def desire_host(make_host: HostFactory, ego_settings: Settings, tmp_path: Path) -> DesireHostFactory:
    """A started host serving the desires plugin and the given stand-ins.

    ``name`` picks the data dir (same name = same store); ``clock`` is shared when given; ``desires`` is the
    ``[plugins.desires]`` table; ``settings`` are evolved from the test's settings.
    """

    def build(
        *,
        name: str = "a",
        others: Mapping[str, object] | None = None,
        clock: Clock | None = None,
        at: datetime = AFTERNOON,
        desires: Mapping[str, Any] | None = None,
        start: bool = True,
        **settings: Any,
    ) -> DesireHost:
        data_dir = tmp_path / f"data-{name}"
        chosen = attrs.evolve(ego_settings, data_dir=data_dir, **settings)
        plugin = DesiresPlugin()
        clock = clock or Clock(at)
        host = make_host(
            {"desires": plugin, **(others or {})},
            config={"desires": {"feel_desires_tool": True, **(desires or {})}},
            settings=chosen,
            clock=clock,
        )
        if start:
            host.start()
            assert not host.failures, [f.describe() for f in host.failures]
        return DesireHost(host=host, plugin=plugin, clock=clock, data_dir=data_dir)

    return build
