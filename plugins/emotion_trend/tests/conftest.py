"""Fixtures of the emotion_trend tests: a host with the real memory plugin and emotion_trend, on a fixed clock."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from trend_support import NOW

from ego_core import Clock, PluginHost, Settings
from ego_core.testing import HostFactory
from ego_emotion_trend import EmotionTrendPlugin
from ego_memory.plugin import MemoryPlugin


@pytest.fixture
def clock() -> Clock:
    return Clock(NOW)


@pytest.fixture
def trend_host(make_host: HostFactory, ego_settings: Settings, clock: Clock) -> Callable[..., PluginHost]:
    """A host with memory (real model) and emotion_trend; keyword arguments configure emotion_trend.

    ``data`` names the data directory (hosts of one test with different names have separate stores).
    """

    def build(*, timezone: str = "UTC", memory: bool = True, data: str = "data", **trend: Any) -> PluginHost:
        plugins: dict[str, object] = {"emotion_trend": EmotionTrendPlugin()}
        if memory:
            plugins["memory"] = MemoryPlugin()
        config: dict[str, Mapping[str, Any]] = {
            "emotion_trend": {"tool": True, **trend},
        }
        settings = attrs.evolve(ego_settings, timezone=timezone, data_dir=ego_settings.data_dir.parent / data)
        return make_host(plugins, config=config, settings=settings, clock=clock)

    return build


@pytest.fixture
def child_env(tmp_path: Path) -> Callable[..., dict[str, str]]:
    """Environment for an ``ego`` child: no inherited ``EGO_*``, a temporary data dir."""

    def build(**extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
        env["EGO_DATA_DIR"] = str(tmp_path / "child-data")
        env["EGO_TIMEZONE"] = "UTC"
        env.update(extra)
        data = Path(env["EGO_DATA_DIR"])
        data.mkdir(parents=True, exist_ok=True)
        if not (data / "ego.toml").exists():  # the emotion_trend tool is opt-in
            (data / "ego.toml").write_text("[plugins.emotion_trend]\ntool = true\n", encoding="utf-8")
        return env

    return build
