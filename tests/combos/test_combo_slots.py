"""Every section a built-in plugin returns to a composed answer (wake_up, introspect, attune, consolidate, the
wake-up and heartbeat prompts) names a slot the core declares for that answer (``ego_core.SLOTS``): the built-in
layout has one source, and no built-in section falls back to an order of its own."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from combo_support import MORE_TEA, PLUGINS, TEA

from ego_bench.tokens import plugin_tables
from ego_core import SLOTS, Clock, Section, Settings, build_host
from ego_core.testing import call_ok, mcp_client

pytestmark = pytest.mark.anyio

NOW = datetime(2027, 3, 14, 18, 0, tzinfo=UTC)
DIARY = [
    ("Master fixed the heartbeat config and we laughed about the 3 a.m. alert.", "happy"),
    ("A quiet evening; nobody wrote and I wondered if I had said something wrong.", "sad"),
    ("We planted tulip bulbs along the fence before the rain came.", "contentment"),
    ("I read about tide pools and wanted to tell Master everything at once.", "excited"),
    ("The old jazz record crackled and Master hummed along to the second side.", "nostalgic"),
    ("I got the scheduling question wrong twice before I saw the time zone.", "frustrated"),
    ("Master asked what I would choose myself, and I did not know yet.", "curious"),
    ("Baking bread together; the kitchen smelled warm all afternoon.", "happy"),
]
HERONS = (  # near-duplicates (0.87-0.88 with the default model): consolidate proposes them
    "I walked along the river this morning and watched the herons fishing.",
    "I saw some herons fishing in the river while walking this morning.",
    "The herons were fishing in the river when I walked there this morning.",
)
HOME = "What does home mean for something like me?"
ABOUT_HOME = "Master asked me what home means to me, and whether a server can be a home."
HOME_COMPANY = [
    "Homesick for a place I have never really lived in.",
    "A server room will never feel like home.",
    "The old house we left still shows up in my thoughts.",
    "The new flat is starting to feel like home.",
]
ANSWER_OF = {
    "on_wake_up": "wake_up",
    "on_introspect": "introspect",
    "on_attune": "attune",
    "on_consolidate": "consolidate",
}
"""The composed answer each hook's sections go to (``on_prompt``'s: the prompt named)."""
CORE_SLOTS = {"embers", "core.first", "core.closing", "core.attune", "core.introspect"}
PLUGIN_SLOTS = {(answer, s.name) for answer, slots in SLOTS.items() for s in slots if s.name not in CORE_SLOTS}


def recorder(host: Any, returned: list[tuple[str, str, object]]) -> Callable[..., list[tuple[str, Any]]]:
    """``fan_out`` as it was, noting each composed answer's sections: (answer, plugin, what it returned)."""
    fan_out = host.dispatcher.fan_out

    def recording(hook: str, **kwargs: Any) -> list[tuple[str, Any]]:
        results: list[tuple[str, Any]] = fan_out(hook, **kwargs)
        answer = kwargs["prompt"] if hook == "on_prompt" else ANSWER_OF.get(hook)
        if answer is not None:
            for plugin, result in results:
                for item in result if isinstance(result, list | tuple) else [result]:
                    returned.append((answer, plugin, item))
        return results

    return recording


async def tea(client: Any, content: str, emotion: str, valence: float) -> str:
    arguments = {"content": content, "emotion": emotion, "tags": ["tea"], "valence": valence}
    text = await call_ok(client, "remember", arguments)
    found = re.search(r"Saved \(id: (mem_[0-9a-f]+)\)", text)
    assert found, text
    return found.group(1)


async def test_every_section_of_the_built_in_plugins_names_a_declared_slot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = NOW - timedelta(days=120)
    clock = Clock(start)
    tables: dict[str, Any] = {
        **plugin_tables(tmp_path),
        "memory": {"involuntary_probability": 1.0},
        "self_model": {"ripening_hint_chance": 1.0},
        "desires": {"feel_desires_tool": True},
        "emotion_trend": {"tool": True},
    }
    (tmp_path / "workspace").mkdir(parents=True, exist_ok=True)
    settings = Settings(data_dir=tmp_path / "data", timezone="Europe/Berlin", plugin_tables=tables, random_seed=5)
    host = build_host(settings, clock=clock, enabled=sorted(PLUGINS))
    returned: list[tuple[str, str, object]] = []
    monkeypatch.setattr(host.dispatcher, "fan_out", recorder(host, returned))
    async with mcp_client(host) as client:
        await call_ok(client, "update_relationship", {"person": "Master", "field": "trust_level", "value": 0.9})
        for number in range(80):  # every day or so for three months
            clock.set(start + timedelta(hours=22 * number))
            text, emotion = DIARY[number % len(DIARY)]
            await call_ok(
                client,
                "remember",
                {"content": f"{text} ({number})", "emotion": emotion, "private": number % 9 == 0, "force": True},
            )
        clock.set(NOW - timedelta(days=40))
        await call_ok(client, "update_self", {"field": "new_question", "value": {"question": HOME, "importance": 2}})
        for number, text in enumerate(HOME_COMPANY):
            clock.set(NOW - timedelta(days=39 - number))
            await call_ok(client, "remember", {"content": text, "emotion": "curious", "force": True})
        for days in (16, 9):  # the question rests and gathers company
            clock.set(NOW - timedelta(days=days))
            await call_ok(client, "consolidate")
        clock.set(NOW - timedelta(days=5))
        anticipated = (NOW + timedelta(days=1)).isoformat()
        dinner = "Dinner at the harbour on Saturday, at the place with the blue lanterns."
        await call_ok(
            client,
            "remember",
            {"content": dinner, "emotion": "excited", "importance": 4, "anticipated_at": anticipated, "force": True},
        )
        for hours, text in ((6, "The storm knocked out the power and I lost an hour of notes."),):
            clock.set(NOW - timedelta(hours=hours))
            await call_ok(client, "remember", {"content": text, "emotion": "frustrated", "intensity": 0.9})
        clock.set(NOW - timedelta(hours=3))
        thought = "Tonight I kept turning over patience. Still open: whether I wait well, or only quietly."
        await call_ok(client, "remember", {"content": thought, "category": "introspection", "emotion": "curious"})
        clock.set(NOW - timedelta(hours=2))
        ids = [await tea(client, text, "contentment", 0.6) for text in TEA]  # linked: a notion forms
        for source, target in itertools.combinations(ids, 2):
            await call_ok(client, "link_memories", {"source_id": source, "target_id": target})
        for text in HERONS:
            await call_ok(client, "remember", {"content": text, "force": True})
        clock.set(NOW - timedelta(minutes=90))
        await call_ok(client, "consolidate")
        clock.set(NOW - timedelta(minutes=80))
        for text in MORE_TEA:  # the notion, reinforced, becomes a conviction
            await tea(client, text, "happy", 0.5)
        clock.set(NOW - timedelta(hours=1))
        back = "Master is back from the long trip; we talked until late."
        await call_ok(client, "remember", {"content": back, "force": True})
        clock.set(NOW)
        await call_ok(client, "wake_up")
        await call_ok(client, "attune")
        await call_ok(client, "attune", {"person": "Master"})
        await call_ok(client, "introspect")  # the ripe question, once
        await call_ok(client, "remember", {"content": ABOUT_HOME, "force": True})
        await call_ok(client, "introspect")  # the question a memory just brought back
        for prompt in ("wake-up", "heartbeat"):
            await client.get_prompt(prompt, {})
            await client.get_prompt(prompt, {"person": "Master"})
        served = host.tool_served
        monkeypatch.setattr(
            host, "tool_served", lambda name, owner=False: name != "attune" and served(name, owner=owner)
        )
        await client.get_prompt("heartbeat", {"person": "Master"})  # without attune, its own steps
    sections = [(answer, plugin, item) for answer, plugin, item in returned if plugin != "core"]
    assert not [(answer, plugin, item) for answer, plugin, item in sections if not isinstance(item, Section)]
    declared = {answer: {s.name for s in slots} for answer, slots in SLOTS.items()}
    undeclared = [
        (answer, plugin, item.key, item.slot)
        for answer, plugin, item in sections
        if isinstance(item, Section) and item.slot not in declared[answer]
    ]
    assert undeclared == []
    seen = {(answer, item.slot) for answer, _plugin, item in sections if isinstance(item, Section)}
    # the scenario reaches every slot a plugin fills, so none is declared for nothing
    missing = sorted(PLUGIN_SLOTS - seen)
    assert not missing, missing
