"""Fixtures of the self_model tests: a host with the plugin (and, in ``with_memory/``, the memory plugin)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
from self_model_support import NOON

from ego_core import Clock, PluginHost
from ego_core.testing import HostFactory
from ego_self_model import SelfModelPlugin


@pytest.fixture
def clock() -> Clock:
    return Clock(NOON)


@pytest.fixture
def self_host(make_host: HostFactory, clock: Clock) -> Callable[..., PluginHost]:
    """A host with the self_model plugin alone (plus any plugin objects given); keywords configure it."""

    def build(plugins: Mapping[str, object] | None = None, **config: Any) -> PluginHost:
        tables = {"self_model": config} if config else None
        return make_host({"self_model": SelfModelPlugin(), **(plugins or {})}, config=tables, clock=clock)

    return build
