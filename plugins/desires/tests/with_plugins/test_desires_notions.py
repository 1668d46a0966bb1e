"""Emergent desires and current interests from the real notions plugin (read through ``notions.store``): a notion
held at 0.7 or more calls up its desire in attune, and its label becomes a current interest. Runs where the
notions plugin is installed (the `all` tox env)."""

from __future__ import annotations

import itertools
import re
from datetime import timedelta
from typing import Any

import pytest
from desires_support import DesireHostFactory

from ego_core.testing import call_ok, mcp_client

pytest.importorskip("ego_notions")
from ego_notions import NotionsPlugin

pytestmark = pytest.mark.anyio

TEA = [
    "Morning tea on the balcony before Master woke up.",
    "Brewed sencha slowly and watched the steam rise.",
    "The kettle sang while the city was still quiet.",
    "Shared a pot of hojicha with Master after breakfast.",
    "Poured the last cup of genmaicha as the sun came up.",
]
STAY = "There's a wish to let this moment stay."


async def clique(client: Any, contents: list[str]) -> None:
    ids = []
    for content in contents:
        text = await call_ok(
            client, "remember", {"content": content, "emotion": "contentment", "valence": 0.6, "tags": ["tea"]}
        )
        found = re.search(r"Saved \(id: (mem_[0-9a-f]+)\)", text)
        assert found, text
        ids.append(found.group(1))
    for source, target in itertools.combinations(ids, 2):
        await call_ok(client, "link_memories", {"source_id": source, "target_id": target, "link_type": "related"})


async def test_a_strong_notion_calls_up_its_emergent_desire(with_memory: DesireHostFactory) -> None:
    dh = with_memory(others={"notions": NotionsPlugin()})
    async with mcp_client(dh.host) as client:
        await clique(client, TEA)
        assert "Formed 1 notion(s)." in await call_ok(client, "consolidate")
        dh.clock.set(dh.clock.now() + timedelta(hours=8))  # the memories left the short-term flow
        attuned = await call_ok(client, "attune")
        assert STAY in attuned  # stay_in_this: a contented, pleasant notion
        assert re.search(r"Current interests: [^\n]*tea", attuned)
        assert "stay_in_this[0.98/high]" in await call_ok(client, "feel_desires")


async def test_without_a_strong_notion_nothing_arises_from_the_old_memories(with_memory: DesireHostFactory) -> None:
    dh = with_memory(others={"notions": NotionsPlugin()})
    async with mcp_client(dh.host) as client:
        await clique(client, TEA[:2])  # two members form no notion
        await call_ok(client, "consolidate")
        dh.clock.set(dh.clock.now() + timedelta(hours=8))
        assert STAY not in await call_ok(client, "attune")
        assert "stay_in_this" not in await call_ok(client, "feel_desires")


@pytest.mark.parametrize(
    ("tags", "other"),
    [(("tea", "お茶"), "散歩"), (("poetry", "詩"), "walks"), (("Rain", "雨"), "cooking")],
    ids=["tea", "poetry", "rain"],
)
async def test_one_theme_is_one_interest_in_both_languages(
    with_memory: DesireHostFactory, tags: tuple[str, str], other: str
) -> None:
    dh = with_memory(others={"notions": NotionsPlugin()})
    async with mcp_client(dh.host) as client:
        for number in range(6):
            dh.clock.set(dh.clock.now() + timedelta(minutes=30))
            tag = tags[number % 2]
            await call_ok(client, "remember", {"content": f"Day {number}: {tag} again.", "tags": [tag]})
        await call_ok(client, "remember", {"content": f"A little {other}.", "tags": [other]})
        attuned = await call_ok(client, "attune")
    line = next(line for line in attuned.splitlines() if line.startswith("Current interests: "))
    named = [topic.strip() for topic in line.removeprefix("Current interests: ").split(",")]
    assert sum(topic in tags for topic in named) == 1, line
    assert named[0] in tags, "the theme of six memories weighs most, in whichever language it was met first"
