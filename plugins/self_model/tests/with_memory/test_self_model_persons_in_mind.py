"""People who come to mind with a recall: those of the memories it found (resonant), someone a dormant memory
near it brings up by chance (involuntary), and — in introspect, with other words — those close lately."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import attrs
import pytest
from self_model_support import NOON

from ego_core import Clock, PluginHost, Settings
from ego_core.testing import HostFactory, call_ok, mcp_client, read_log
from ego_memory.plugin import MemoryPlugin
from ego_self_model import SelfModelPlugin

ALWAYS = {"involuntary_person_chance": 1.0}
NEVER = {"involuntary_person_chance": 0.0}


def seeded_host(
    make_host: HostFactory, settings: Settings, clock: Clock, seed: int, *, log: bool = False, **config: Any
) -> PluginHost:
    """Memory and self_model with ``random_seed`` set (and ego's JSON log written, with ``log``)."""
    tables = {"self_model": config}
    plugins = {"memory": MemoryPlugin(), "self_model": SelfModelPlugin()}
    seeded = attrs.evolve(settings, random_seed=seed)
    return make_host(plugins, config=tables, clock=clock, settings=seeded, log=log)


async def know(client: Any, *names: str) -> None:
    for name in names:
        await call_ok(client, "update_relationship", {"person": name, "field": "notes", "value": "A friend."})


async def remember_at(client: Any, clock: Clock, days: float, content: str, **extra: Any) -> None:
    clock.set(NOON + timedelta(days=days))
    await call_ok(client, "remember", {"content": content, **extra})


def recall_lines(text: str) -> list[str]:
    return text.partition("\n\n---\n")[0].splitlines()


@pytest.mark.anyio
async def test_the_people_of_the_memories_found_come_to_mind_most_present_first(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    async with mcp_client(memory_host(**NEVER)) as client:
        await know(client, "Aiko", "Ben")
        await remember_at(client, clock, 0, "Aiko and Ben baked sourdough bread in the morning.")
        await remember_at(client, clock, 1, "Aiko painted the garden fence a pale blue.")
        await remember_at(client, clock, 2, "Ben fixed the bicycle chain in the garage.")
        await remember_at(client, clock, 3, "Master and I sorted the old photographs.")
        all_four = await call_ok(
            client, "recall", {"context": "Aiko Ben Master: bread, the fence, the bicycle, photographs", "n_results": 4}
        )
        one = await call_ok(client, "recall", {"context": "painting the garden fence pale blue", "n_results": 1})
        nobody = await call_ok(client, "recall", {"context": "the weather", "n_results": 1, "date_to": "2020-01-01"})
    assert "So, Ben, Aiko and Master came to mind." in recall_lines(all_four)
    assert "So, Aiko is at the back of my mind too." in recall_lines(one)
    assert "came to mind" not in nobody
    assert "at the back of my mind" not in nobody


@pytest.mark.anyio
async def test_two_people_come_to_mind_together(memory_host: Callable[..., PluginHost], clock: Clock) -> None:
    async with mcp_client(memory_host(**NEVER)) as client:
        await know(client, "Aiko", "Ben")
        await remember_at(client, clock, 0, "Aiko and Ben baked sourdough bread in the morning.")
        found = await call_ok(client, "recall", {"context": "baking sourdough bread", "n_results": 1})
    assert "So, Aiko and Ben came to mind." in recall_lines(found)


async def a_dormant_past(client: Any, clock: Clock) -> None:
    """Chiyo and Dan only in memories two years old (Dan also in a recent one), Aiko in a fresh one."""
    await know(client, "Aiko", "Chiyo", "Dan")
    await remember_at(client, clock, -730, "Chiyo and I walked along the river at dawn, herons in the reeds.")
    await remember_at(client, clock, -729, "Dan and I walked by the river at dawn and counted herons.")
    await remember_at(client, clock, -1, "Dan phoned about the concert tickets.")
    await remember_at(client, clock, 0, "Aiko and I walked along the river at dawn this morning.")


@pytest.mark.anyio
async def test_someone_long_unseen_surfaces_on_their_own_by_chance(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    async with mcp_client(memory_host(**ALWAYS)) as client:
        await a_dormant_past(client, clock)
        found = await call_ok(client, "recall", {"context": "walking along the river at dawn", "n_results": 1})
        filtered = await call_ok(
            client,
            "recall",
            {"context": "walking along the river at dawn", "n_results": 1, "emotion_filter": "neutral"},
        )
    lines = recall_lines(found)
    assert "So, Aiko is at the back of my mind too." in lines
    assert "Chiyo surfaced on their own." in lines, "of the dormant memories' people, the longest unseen"
    assert "Dan surfaced on their own." not in lines
    assert "surfaced on their own" not in filtered, "an explicit filter keeps the unbidden out"


@pytest.mark.anyio
async def test_the_people_of_a_memory_recall_brought_along_unbidden_are_not_found_ones(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    async with mcp_client(memory_host(memory={"involuntary_probability": 1.0}, **NEVER)) as client:
        await a_dormant_past(client, clock)
        found = await call_ok(client, "recall", {"context": "walking along the river at dawn", "n_results": 2})
    lines = recall_lines(found)
    assert lines[3].startswith("2. [1y ago]"), found
    assert "So, Aiko is at the back of my mind too." in lines


@pytest.mark.anyio
async def test_without_the_chance_nobody_surfaces_unbidden(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    async with mcp_client(memory_host(**NEVER)) as client:
        await a_dormant_past(client, clock)
        found = await call_ok(client, "recall", {"context": "walking along the river at dawn", "n_results": 1})
    assert "surfaced on their own" not in found


@pytest.mark.anyio
async def test_the_chance_is_seeded_and_rare(make_host: HostFactory, ego_settings: Settings, clock: Clock) -> None:
    runs: list[list[bool]] = []
    for _ in range(2):
        async with mcp_client(seeded_host(make_host, ego_settings, clock, 7)) as client:
            await a_dormant_past(client, clock)
            texts = [
                await call_ok(client, "recall", {"context": "walking along the river at dawn", "n_results": 1})
                for _ in range(50)
            ]
        runs.append(["Chiyo surfaced on their own." in text for text in texts])
        clock.set(NOON)
    assert runs[0] == runs[1], "the same seed, the same chances"
    assert 0 < sum(runs[0]) < 12, "about one recall in twelve"


@pytest.mark.anyio
async def test_a_private_memory_brings_its_person_but_never_its_words_to_the_log(
    make_host: HostFactory, ego_settings: Settings, clock: Clock
) -> None:
    secret = "Aiko told me about the letter from her sister that she never answered."
    host = seeded_host(make_host, ego_settings, clock, 1, log=True, involuntary_person_chance=1.0)
    async with mcp_client(host) as client:
        await know(client, "Aiko", "Chiyo")
        await remember_at(
            client, clock, -730, "Chiyo wrote me a letter I kept for years; her sister sent one too.", private=True
        )
        await remember_at(client, clock, 0, secret, private=True)
        found = await call_ok(client, "recall", {"context": "the unanswered letter from her sister", "n_results": 1})
    lines = recall_lines(found)
    assert "So, Aiko is at the back of my mind too." in lines
    assert "Chiyo surfaced on their own." in lines
    # whatever quotes the answer is masked on its way to the log; the names are not private text
    logging.getLogger("ego.plugin.listener").warning("seen: %s", found)
    for handler in logging.getLogger().handlers:
        handler.flush()
    logged = "\n".join(str(record) for record in read_log(host))
    assert "So, Aiko is at the back of my mind too." in logged
    assert "Chiyo surfaced on their own." in logged
    assert "letter from her sister" not in logged
    assert "kept for years" not in logged
