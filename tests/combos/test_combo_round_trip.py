"""Export and import of everything: after a few weeks of life with every plugin that keeps state, ``ego export
--include-private`` and ``ego import`` into an empty data directory give a self that answers exactly as the
original does — wake_up, introspect, feel_desires, emotion_trend, consider_them and recall, at the same clock.

Interoception is left out of both hosts: it keeps no state, and its readings of the machine differ from one call to
the next (the desires plugin would fold them into its levels)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from combo_support import PLUGINS

from ego_core import Clock, PluginHost, Settings
from ego_core.testing import HostFactory, ToolRunner, tool_text

if TYPE_CHECKING:
    from collections.abc import Callable

    from conftest import EgoWorld

pytestmark = pytest.mark.anyio

STATEFUL = ("memory", "dedup", "desires", "self_model", "emotion_trend")
START = datetime(2027, 5, 3, 8, 30, tzinfo=UTC)
DAYS = [
    ("Master and I planted tulip bulbs along the fence before the first frost.", "happy", False),
    ("I kept quiet about how tired the long refactor made me feel tonight.", "melancholy", True),
    ("We argued about whether the harbour lantern is older than the lighthouse.", "curious", False),
    ("Aiko sent a recording of her violin recital; the slow movement moved me.", "moved", False),
    ("Master's sister is ill and he asked me not to mention it to anyone.", "anxious", True),
    ("Fixed the flaky heartbeat alert at last and celebrated with jasmine tea.", "excited", False),
]
ANSWERS: list[tuple[str, dict[str, Any]]] = [
    ("wake_up", {}),
    ("introspect", {}),
    ("feel_desires", {}),
    ("emotion_trend", {}),
    ("consider_them", {"person": "Aiko"}),
    ("consider_them", {"person": "Master"}),
    ("recall", {"context": "the violin recital", "n_results": 3}),
    ("recall", {"context": "what Master asked me to keep quiet", "n_results": 3}),
    ("search_memories", {"context": "tulip bulbs frost", "n_results": 5}),
]


async def call(runner: ToolRunner, tool: str, args: dict[str, Any]) -> str:
    result = await runner.call(tool, args)
    text = tool_text(result)
    assert not result.is_error, f"{tool}: {text}"
    return text


async def live_a_few_weeks(host: PluginHost, clock: Clock) -> None:
    runner = ToolRunner(host)
    ids: list[str] = []
    for day, (content, emotion, private) in enumerate(DAYS):
        clock.set(START + timedelta(days=3 * day))
        await call(runner, "wake_up", {})
        saved = await call(
            runner,
            "remember",
            {"content": content, "emotion": emotion, "importance": 2 + day % 4, "private": private, "tags": ["life"]},
        )
        ids.append(saved.split("id: ", 1)[1][:16])
        await call(runner, "recall", {"context": content[:40]})
        if day % 2:
            await call(runner, "satisfy_desire", {"name": "curiosity", "quality": 0.6})
    clock.set(START + timedelta(days=19))
    await call(runner, "link_memories", {"source_id": ids[0], "target_id": ids[5], "link_type": "leads_to"})
    await call(runner, "create_episode", {"memory_ids": ids[:3], "summary": "The first days of the garden."})
    await call(runner, "update_self", {"field": "values", "value": "Keep what Master tells me in confidence."})
    await call(runner, "update_self", {"field": "growth_log", "value": "Learned to rest after long work."})
    asked = await call(runner, "update_self", {"field": "new_question", "value": "Why does music move me so?"})
    assert "q_" in asked, asked
    await call(runner, "update_relationship", {"person": "Aiko", "field": "notes", "value": "plays the violin"})
    await call(runner, "update_relationship", {"person": "Aiko", "field": "trust_level", "value": 0.8})
    await call(runner, "consider_them", {"person": "Aiko"})
    await call(runner, "introspect", {})
    await call(runner, "consolidate", {})


async def answers(host: PluginHost) -> list[str]:
    runner = ToolRunner(host)
    return [await call(runner, tool, args) for tool, args in ANSWERS]


async def test_an_imported_self_answers_exactly_as_the_exported_one(
    make_host: HostFactory, make_world: Callable[[str], EgoWorld]
) -> None:
    source, target = make_world("source"), make_world("target")
    # the default embedder (no model directory); the opt-in tools that read desires and feelings as numbers
    config: dict[str, Any] = {"memory": {}, "desires": {"feel_desires_tool": True}, "emotion_trend": {"tool": True}}

    def host_on(world: EgoWorld, clock: Clock) -> PluginHost:
        settings = Settings(data_dir=world.data_dir, timezone="UTC")
        host = make_host({pid: PLUGINS[pid]() for pid in STATEFUL}, config=config, settings=settings, clock=clock)
        host.start()
        return host

    clock = Clock(START)
    lived = host_on(source, clock)
    await live_a_few_weeks(lived, clock)
    lived.stop()

    export = source.root / "self.jsonl"
    plugins = ("--plugins", ",".join(STATEFUL))
    exported = source.run("export", *plugins, "--include-private", str(export))
    assert exported.returncode == 0, exported.stderr
    records = [json.loads(line) for line in export.read_text(encoding="utf-8").splitlines()]
    kinds = {(r.get("plugin"), r["type"]) for r in records if "type" in r}
    assert {"memory", "desires", "self_model"} <= {plugin for plugin, _kind in kinds}, kinds
    imported = target.run("import", *plugins, str(export))
    assert imported.returncode == 0, imported.stderr

    later = START + timedelta(days=16, hours=5)
    original = host_on(source, Clock(later))
    copy = host_on(target, Clock(later))
    try:
        said_by_original = await answers(original)
        said_by_copy = await answers(copy)
    finally:
        original.stop()
        copy.stop()
    for (tool, args), before, after in zip(ANSWERS, said_by_original, said_by_copy, strict=True):
        assert after == before, f"{tool} {args} differs after the round trip"
    woke, introspected, felt, trend, aiko, _master, violin, secret, _search = said_by_copy
    assert "Memories: 6" in woke
    assert "Why does music move me so?" in introspected
    assert "curiosity[" in felt
    assert "excited" in trend
    assert "plays the violin" in aiko
    assert "violin recital" in violin
    assert "private: true" in secret
