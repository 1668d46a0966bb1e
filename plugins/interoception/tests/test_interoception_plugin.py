"""The plugin in a host: the service, the wake_up line, configuration and entry-point discovery."""

from __future__ import annotations

import importlib.metadata
import logging
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import attrs
import psutil
import pytest

from ego_core import BODY_SENSE, BodySense, Clock, ConfigError, Section, Settings, hookimpl
from ego_core.testing import HostFactory, load_settings, mcp_client, tool_text
from ego_interoception import BodySenseService, InteroceptionConfig, InteroceptionPlugin, Readings

# 19:30 in Tokyo.
EVENING_IN_TOKYO = datetime(2025, 3, 14, 10, 30, tzinfo=UTC)
CALM = Readings(cpu_percent=8.0, memory_percent=35.0, system_uptime_hours=48.0)


def fixed() -> Readings:
    return CALM


def tokyo(settings: Settings) -> Settings:
    return attrs.evolve(settings, timezone="Asia/Tokyo")


def test_service_is_provided_and_is_a_body_sense(make_host: HostFactory, ego_settings: Settings) -> None:
    clock = Clock(EVENING_IN_TOKYO)
    host = make_host({"interoception": InteroceptionPlugin(sampler=fixed)}, settings=tokyo(ego_settings), clock=clock)
    assert host.services.get(BODY_SENSE) is None

    host.start()
    body = host.services.get(BODY_SENSE, BodySense)

    assert isinstance(body, BodySense)
    assert isinstance(body, BodySenseService)
    assert body.time_phase() == "evening"
    clock.set(EVENING_IN_TOKYO + timedelta(hours=3))
    assert dict(body.body_state()) == {
        "time_phase": "night",
        "system_load": "low",
        "memory_pressure": "calm",
        "uptime_hours": 3.0,
    }


def test_service_is_withdrawn_at_shutdown(make_host: HostFactory) -> None:
    host = make_host({"interoception": InteroceptionPlugin(sampler=fixed)})
    host.start()
    host.stop()
    assert host.services.get(BODY_SENSE) is None


def test_default_plugin_reads_psutil(make_host: HostFactory) -> None:
    host = make_host({"interoception": InteroceptionPlugin})
    host.start()
    body = host.services.get(BODY_SENSE, BodySenseService)
    assert body is not None
    snapshot = body.snapshot()
    assert snapshot.cpu_percent is not None
    assert snapshot.memory_percent is not None
    assert snapshot.system_load in {"low", "moderate", "high"}
    assert snapshot.memory_pressure in {"calm", "moderate", "high"}


class OtherSections:
    """Stand-ins for the sections that come before (relationship, 30) and after (order 50) the body line."""

    @hookimpl
    def on_wake_up(self) -> list[Section]:
        return [
            Section(key="relationship", text="Companion: close.", order=30),
            Section(key="later", text="Something later.", order=50),
        ]


@pytest.mark.anyio
async def test_wake_up_contains_the_body_line(make_host: HostFactory, ego_settings: Settings) -> None:
    clock = Clock(EVENING_IN_TOKYO)
    host = make_host(
        {"interoception": InteroceptionPlugin(sampler=fixed), "others": OtherSections()},
        settings=tokyo(ego_settings),
        clock=clock,
    )
    async with mcp_client(host) as client:
        clock.set(EVENING_IN_TOKYO + timedelta(hours=2, minutes=30))
        result = await client.call_tool("wake_up", {})

    text = tool_text(result)
    assert not result.is_error
    lines = text.split("\n---\n")[0].splitlines()
    body_line = "Body: night, load low, memory calm, up 2.5h."
    assert body_line in lines
    assert lines.index("Companion: close.") < lines.index(body_line) < lines.index("Something later.")


def test_config_from_the_plugin_table(make_host: HostFactory) -> None:
    host = make_host(
        {"interoception": InteroceptionPlugin(sampler=fixed)},
        config={"interoception": {"cache_seconds": 30}},
    )
    assert host.context("interoception").config == InteroceptionConfig(cache_seconds=30.0)
    host.start()
    body = host.services.get(BODY_SENSE, BodySenseService)
    assert body is not None
    assert body.cache_seconds == 30.0


def test_default_config(make_host: HostFactory) -> None:
    host = make_host({"interoception": InteroceptionPlugin(sampler=fixed)})
    assert host.context("interoception").config == InteroceptionConfig(cache_seconds=5.0)


def test_config_file_table_and_environment_override(
    make_host: HostFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_file = tmp_path / "ego.toml"
    config_file.write_text("[plugins.interoception]\ncache_seconds = 2.5\n", encoding="utf-8")
    settings = load_settings(config_path=config_file, data_dir=tmp_path / "data", env={})
    monkeypatch.delenv("EGO_INTEROCEPTION_CACHE_SECONDS", raising=False)
    from_file = make_host({"interoception": InteroceptionPlugin(sampler=fixed)}, settings=settings)
    assert from_file.context("interoception").config.cache_seconds == 2.5

    monkeypatch.setenv("EGO_INTEROCEPTION_CACHE_SECONDS", "0")
    from_env = make_host({"interoception": InteroceptionPlugin(sampler=fixed)}, settings=settings)
    assert from_env.context("interoception").config.cache_seconds == 0.0


@pytest.mark.parametrize("table", [{"cache_seconds": "soon"}, {"cache_seconds": True}, {"cache_seconds": [5]}])
def test_bad_config_value_names_the_key(make_host: HostFactory, table: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match=r"plugins\.interoception\.cache_seconds"):
        make_host({"interoception": InteroceptionPlugin(sampler=fixed)}, config={"interoception": table})


def test_bad_environment_value_names_the_variable_and_the_key(
    make_host: HostFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EGO_INTEROCEPTION_CACHE_SECONDS", "a while")
    with pytest.raises(ConfigError) as info:
        make_host({"interoception": InteroceptionPlugin(sampler=fixed)})
    assert str(info.value) == "EGO_INTEROCEPTION_CACHE_SECONDS (plugins.interoception.cache_seconds): expected a number"


@pytest.mark.parametrize("value", [-1, "nan"])
def test_out_of_range_cache_window_is_a_config_error(make_host: HostFactory, value: object) -> None:
    with pytest.raises(ConfigError) as info:
        make_host(
            {"interoception": InteroceptionPlugin(sampler=fixed)}, config={"interoception": {"cache_seconds": value}}
        )
    assert str(info.value) == (
        "plugins.interoception.cache_seconds: expected a number of seconds >= 0 (0 reads the system on every call)"
    )


def test_out_of_range_environment_value_names_the_variable(
    make_host: HostFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EGO_INTEROCEPTION_CACHE_SECONDS", "-5")
    with pytest.raises(ConfigError) as info:
        make_host({"interoception": InteroceptionPlugin(sampler=fixed)})
    assert str(info.value).startswith(
        "EGO_INTEROCEPTION_CACHE_SECONDS (plugins.interoception.cache_seconds): expected a number of seconds >= 0"
    )


def test_unknown_config_key_is_a_config_error(make_host: HostFactory) -> None:
    with pytest.raises(ConfigError, match="cache_secs"):
        make_host({"interoception": InteroceptionPlugin(sampler=fixed)}, config={"interoception": {"cache_secs": 5}})


def test_discovered_through_the_installed_entry_point(make_host: HostFactory) -> None:
    (entry_point,) = [ep for ep in importlib.metadata.entry_points(group="ego") if ep.name == "interoception"]
    assert entry_point.value == "ego_interoception.plugin:InteroceptionPlugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "ego-interoception"

    host = make_host(autoload=True, enabled=["interoception"])
    assert host.plugin_ids() == ["core", "interoception"]
    assert host.installed["interoception"].distribution == "ego-interoception"
    host.start()
    assert isinstance(host.services.get(BODY_SENSE), BodySense)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="psutil reads /proc on Linux only")
def test_plugin_starts_and_wakes_with_a_malformed_proc(
    make_host: HostFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "stat").write_text("cpu  garbage\n", encoding="utf-8")
    monkeypatch.setattr(psutil, "PROCFS_PATH", str(tmp_path))
    host = make_host({"interoception": InteroceptionPlugin}, clock=Clock(EVENING_IN_TOKYO))
    with caplog.at_level(logging.WARNING):
        host.start()
        body = host.services.get(BODY_SENSE, BodySenseService)
        assert body is not None
        summary = body.summary()
    assert "load unknown, memory unknown" in summary
    assert any("body sense readings unavailable" in r.getMessage() for r in caplog.records)
