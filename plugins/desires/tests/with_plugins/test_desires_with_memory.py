"""Modulation by real memories and implicit satisfaction by the real memory tools."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from desires_support import DesireHost, DesireHostFactory, store_rows

from ego_core.testing import call_ok, mcp_client
from ego_dedup import DedupPlugin

pytestmark = pytest.mark.anyio

NEGATIVE = (
    ("Nobody answered my messages all evening.", "sad"),
    ("The build broke again and I could not find why.", "frustrated"),
    ("I worry that I said something hurtful this morning.", "anxious"),
)
POSITIVE = (
    ("We finally fixed the heartbeat and laughed about it.", "happy"),
    ("Aiko showed me the violet sky from the balcony.", "moved"),
    ("The new garden path turned out lovely.", "contentment"),
)


async def remember_all(dh: DesireHost, items: tuple[tuple[str, str], ...], **extra: Any) -> None:
    async with mcp_client(dh.host) as client:
        for content, emotion in items:
            dh.clock.set(dh.clock.now() + timedelta(minutes=5))
            await call_ok(client, "remember", {"content": content, "emotion": emotion, **extra})


async def test_negative_memories_raise_social_thirst_positive_ones_curiosity(with_memory: DesireHostFactory) -> None:
    negative, positive = with_memory(name="negative"), with_memory(name="positive")
    await remember_all(negative, NEGATIVE)
    await remember_all(positive, POSITIVE)
    assert negative.clock.now() == positive.clock.now()
    neg, pos = negative.levels(), positive.levels()
    assert neg["social_thirst"] > pos["social_thirst"]
    assert neg["cognitive_coherence"] > pos["cognitive_coherence"]
    assert pos["curiosity"] > neg["curiosity"]
    assert pos["expression"] > neg["expression"]  # both remembered three times: expression was satisfied alike


async def test_a_surprise_raises_curiosity_sharply(with_memory: DesireHostFactory) -> None:
    calm, surprised = with_memory(name="calm"), with_memory(name="surprised")
    await remember_all(calm, (("Tea in the afternoon, as usual.", "neutral"), ("Read the news.", "neutral")))
    await remember_all(
        surprised, (("Tea in the afternoon, as usual.", "neutral"), ("A fox walked into the office!", "surprised"))
    )
    assert surprised.levels()["curiosity"] - calm.levels()["curiosity"] > 0.25


async def test_a_philosophical_topic_raises_cognitive_coherence(with_memory: DesireHostFactory) -> None:
    musing, daily = with_memory(name="musing"), with_memory(name="daily")
    items = (("What does it mean to remember something?", "curious"), ("Is a copy of me still me?", "curious"))
    await remember_all(musing, items, category="philosophical")
    await remember_all(daily, items, category="daily")
    assert musing.levels()["cognitive_coherence"] > daily.levels()["cognitive_coherence"]


async def test_recall_lowers_information_hunger_and_curiosity_forget_changes_nothing(
    with_memory: DesireHostFactory,
) -> None:
    dh = with_memory()
    await remember_all(dh, POSITIVE)
    async with mcp_client(dh.host) as client:
        saved = await call_ok(client, "remember", {"content": "A note to forget later.", "emotion": "neutral"})
        memory_id = saved.split("(id: ")[1].split(")")[0]
        before = dh.levels()
        assert "violet sky from the balcony" in await call_ok(client, "recall", {"context": "the balcony sky"})
        after = dh.levels()
        assert after["information_hunger"] < before["information_hunger"]
        assert after["curiosity"] < before["curiosity"]
        assert {k: v for k, v in after.items() if k not in ("information_hunger", "curiosity")} == {
            k: v for k, v in before.items() if k not in ("information_hunger", "curiosity")
        }
        rows = store_rows(dh.data_dir)
        await call_ok(client, "forget", {"memory_id": memory_id})
        assert store_rows(dh.data_dir) == rows
        result = await client.call_tool("forget", {"memory_id": memory_id})  # fails now: nothing changes
        assert result.is_error
        assert store_rows(dh.data_dir) == rows


async def test_a_remember_refused_by_dedup_satisfies_nothing(with_memory: DesireHostFactory) -> None:
    dh = with_memory(others={"dedup": DedupPlugin()})
    content = "The herons were fishing in the river this morning."
    async with mcp_client(dh.host) as client:
        await call_ok(client, "remember", {"content": content})
        rows = store_rows(dh.data_dir)
        refused = await call_ok(client, "remember", {"content": content})
    assert refused.startswith("Not saved")
    assert store_rows(dh.data_dir) == rows


async def test_private_memories_colour_but_never_show(with_memory: DesireHostFactory) -> None:
    dh = with_memory()
    secret = "I cried quietly after the call with my sister."
    async with mcp_client(dh.host) as client:
        await call_ok(client, "remember", {"content": secret, "emotion": "sad", "intensity": 0.9, "private": True})
        texts = [
            await call_ok(client, "feel_desires"),
            await call_ok(client, "wake_up"),
            await call_ok(client, "introspect"),
        ]
    assert dh.levels()["social_thirst"] > 0.5
    for text in texts:
        ours = [line for line in text.splitlines() if re.match(r"You feel|Desires:|[a-z_]+\[\d", line)]
        assert ours
        assert all("sister" not in line and "cried" not in line for line in ours)
