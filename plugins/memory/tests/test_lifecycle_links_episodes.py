"""link_memories and episodes through the MCP client."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from memory_support import saved_id

from ego_core import PRIVATE_MARK, Clock, ToolError
from ego_core.testing import call_error, call_ok, mcp_client
from ego_memory.plugin import MemoryPlugin
from ego_memory.text.privacy import mask_quotes

if TYPE_CHECKING:
    from conftest import MemoryHosts

pytestmark = pytest.mark.anyio

BASE = datetime(2026, 5, 10, 8, 0, tzinfo=UTC)
SEPARATOR = "\n\n---\n"
NOT_FOUND_SCAFFOLD = "Double-check the ID. Use recall to search for the memory you're looking for."
LINK_SCAFFOLD = "What connects these two? Is it a cause, a consequence, or a resonance?"

CONTENTS = (
    "Fixed the flaky CI job by pinning the PostgreSQL container version.",
    "Baked sourdough bread with rye flour; the crust cracked nicely.",
    "Watched a documentary about volcanoes in Iceland.",
    "A quiet chess game in the park ended in a draw.",
)
SECRET = "I still flinch at deep water since the capsized ferry in 2019"


def link_rows(plugin: MemoryPlugin) -> set[tuple[str, str, str, float, str]]:
    assert plugin.memories is not None
    rows = plugin.memories.store.db.execute("SELECT source, target, link_type, confidence, note FROM links")
    return {tuple(row) for row in rows.fetchall()}


async def remember_spaced(client: Any, clock: Clock, contents: tuple[str, ...], **extra: Any) -> list[str]:
    """Remember each content two hours after the previous one (no sequence links, no similarity links)."""
    ids = []
    for offset, content in enumerate(contents):
        clock.set(BASE + timedelta(hours=2 * offset))
        ids.append(saved_id(await call_ok(client, "remember", {"content": content, "force": True, **extra})))
    return ids


# ----------------------------------------------------------------------------------------------
# link_memories


async def test_link_memories_is_bidirectional_and_repeating_it_is_a_no_op(memory_hosts: MemoryHosts) -> None:
    clock = Clock(BASE)
    host, plugin = memory_hosts(clock=clock)
    async with mcp_client(host) as client:
        a, b, c, _d = await remember_spaced(client, clock, CONTENTS)
        assert link_rows(plugin) == set()

        text = await call_ok(client, "link_memories", {"source_id": a, "target_id": b})
        assert text == f"Linked {a} <-> {b} (related).{SEPARATOR}{LINK_SCAFFOLD}"
        rows = link_rows(plugin)
        assert {(s, t, k) for s, t, k, _, _ in rows} == {(a, b, "related"), (b, a, "related")}
        assert {(conf, note) for *_, conf, note in rows} == {(0.9, "linked by you")}

        # repeating, in either direction, changes nothing and says so (not an error)
        for source, target in ((a, b), (b, a)):
            again = await call_ok(client, "link_memories", {"source_id": source, "target_id": target})
            assert again == f"Already linked: {source} <-> {target} (related). Nothing changed."
        assert link_rows(plugin) == rows

        # another type between the same pair is another link; the memories see it from both sides
        assert "Linked" in await call_ok(
            client, "link_memories", {"source_id": b, "target_id": a, "link_type": "caused_by"}
        )
        assert "Linked" in await call_ok(
            client, "link_memories", {"source_id": c, "target_id": a, "link_type": "leads_to"}
        )
        assert plugin.memories is not None
        by_id = {m.id: m for m in plugin.memories.store.get([a, b, c])}
        assert {(lk.target_id, lk.link_type) for lk in by_id[a].links} == {
            (b, "related"),
            (b, "caused_by"),
            (c, "leads_to"),
        }
        assert {(lk.target_id, lk.link_type) for lk in by_id[b].links} == {(a, "related"), (a, "caused_by")}
        assert {(lk.target_id, lk.link_type) for lk in by_id[c].links} == {(a, "leads_to")}
        assert plugin.memories.store.integrity_problems() == []


async def test_link_memories_rejects_self_links_unknown_ids_and_unknown_types(memory_hosts: MemoryHosts) -> None:
    clock = Clock(BASE)
    host, plugin = memory_hosts(clock=clock)
    ctx = host.context("memory")
    async with mcp_client(host) as client:
        a, b = await remember_spaced(client, clock, CONTENTS[:2])

        itself = await call_error(client, "link_memories", {"source_id": a, "target_id": a})
        assert itself == (
            "Invalid arguments for link_memories: `target_id`: a memory cannot be linked to itself. "
            "Fix the call and try again."
        )

        for source, target in ((a, "mem_0123456789ab"), ("mem_0123456789ab", b)):
            unknown = await call_error(client, "link_memories", {"source_id": source, "target_id": target})
            assert unknown == f"Memory not found: mem_0123456789ab{SEPARATOR}{NOT_FOUND_SCAFFOLD}"

        wild = await call_error(client, "link_memories", {"source_id": a, "target_id": "the one about my diary"})
        assert wild.startswith("Memory not found: ")
        assert "diary" not in wild

        bad_type = await call_error(
            client, "link_memories", {"source_id": a, "target_id": b, "link_type": "best_friends"}
        )
        assert "link_type" in bad_type

        # a forgotten memory cannot be linked any more
        await call_ok(client, "forget", {"memory_id": b})
        gone = await call_error(client, "link_memories", {"source_id": a, "target_id": b})
        assert gone == f"Memory not found: {b}{SEPARATOR}{NOT_FOUND_SCAFFOLD}"
    assert link_rows(plugin) == set()

    # the handler validates the type itself too (not only the MCP schema)
    assert plugin.lifecycle is not None
    with pytest.raises(ToolError, match="link_type"):
        plugin.lifecycle.link({"source_id": a, "target_id": a, "link_type": "best_friends"}, ctx)


# ----------------------------------------------------------------------------------------------
# episodes


async def test_an_episode_orders_its_memories_by_time_and_takes_the_highest_importance(
    memory_hosts: MemoryHosts,
) -> None:
    clock = Clock(BASE)
    host, plugin = memory_hosts(clock=clock)
    async with mcp_client(host) as client:
        ids = []
        for offset, (content, importance) in enumerate(zip(CONTENTS[:3], (2, 5, 3), strict=True)):
            clock.set(BASE + timedelta(hours=2 * offset))
            ids.append(
                saved_id(
                    await call_ok(client, "remember", {"content": content, "importance": importance, "force": True})
                )
            )
        first, second, third = ids
        clock.set(BASE + timedelta(hours=7))
        created = await call_ok(
            client,
            "create_episode",
            {"memory_ids": [third, first, second, first], "summary": "  A   Sunday of small repairs \n"},
        )
        found = re.fullmatch(
            r"Episode (ep_[0-9a-f]{12}) created: 3 memories, 2026-05-10 08:00 to 2026-05-10 12:00, importance 5\."
            + re.escape(SEPARATOR)
            + r"What ties these moments together\? What did this stretch of time mean to you\?",
            created,
        )
        assert found, created
        episode_id = found.group(1)

        shown = await call_ok(client, "get_episode", {"episode_id": episode_id})
        assert shown == (
            f"Episode {episode_id} (importance 5): A Sunday of small repairs\n"
            "From 2026-05-10 08:00 to 2026-05-10 12:00.\n"
            f"1. [7h ago] {CONTENTS[0]} (id: {first}, private: false)\n"
            f"2. [5h ago] {CONTENTS[1]} (id: {second}, private: false)\n"
            f"3. [3h ago] {CONTENTS[2]} (id: {third}, private: false)"
            f"{SEPARATOR}How does this episode feel from where you are now?"
        )
        assert plugin.memories is not None
        stored = plugin.memories.store.get_episode(episode_id)
        assert stored is not None
        assert stored.memory_ids == (first, second, third)
        assert stored.importance == 5

        # members that no longer exist are filtered out and counted
        await call_ok(client, "forget", {"memory_id": second})
        await call_ok(client, "forget", {"memory_id": first})
        after = await call_ok(client, "get_episode", {"episode_id": episode_id})
        assert f"1. [3h ago] {CONTENTS[2]} (id: {third}, private: false)" in after
        assert first not in after
        assert second not in after
        assert CONTENTS[0] not in after
        assert "Note: 2 memory(ies) no longer exist." in after


async def test_a_private_memory_never_enters_an_episode_summary(memory_hosts: MemoryHosts) -> None:
    clock = Clock(BASE)
    host, plugin = memory_hosts(clock=clock)
    async with mcp_client(host) as client:
        public = saved_id(await call_ok(client, "remember", {"content": CONTENTS[2]}))
        clock.set(BASE + timedelta(hours=2))
        secret = saved_id(await call_ok(client, "remember", {"content": SECRET, "private": True, "emotion": "anxious"}))
        clock.set(BASE + timedelta(hours=3))
        created = await call_ok(
            client,
            "create_episode",
            {"memory_ids": [public, secret], "summary": f"Volcanoes, and then: {SECRET}. A strange evening."},
        )
        assert "Words quoted from private memories were left out of the summary" in created
        assert SECRET not in created
        episode_id = re.search(r"Episode (ep_[0-9a-f]{12}) created", created)
        assert episode_id
        shown = await call_ok(client, "get_episode", {"episode_id": episode_id.group(1)})
        first_line = shown.splitlines()[0]
        assert SECRET not in first_line
        assert "capsized ferry" not in first_line
        assert PRIVATE_MARK in first_line
        assert f"(id: {secret}, private: true)" in shown

        # a summary without private text is kept as written, with no note
        plain = await call_ok(client, "create_episode", {"memory_ids": [public], "summary": "Volcanoes on a Sunday."})
        assert "left out" not in plain

    assert plugin.memories is not None
    for episode in plugin.memories.store.episodes():
        assert SECRET not in episode.summary
        assert "capsized ferry" not in episode.summary
    summaries = {e.summary for e in plugin.memories.store.episodes()}
    assert "Volcanoes on a Sunday." in summaries


@pytest.mark.parametrize(
    "summary",
    [
        "An evening by the sea; deep water since the capsized ferry, still.",  # from the middle
        "Why do I STILL FLINCH AT DEEP WATER? It was a long day.",  # another case
        "the capsized  ferry in\n2019; and still flinch at deep   water",  # pieces reordered, other spacing
    ],
)
async def test_a_quote_from_anywhere_in_a_private_member_is_masked(memory_hosts: MemoryHosts, summary: str) -> None:
    host, plugin = memory_hosts()
    async with mcp_client(host) as client:
        public = saved_id(await call_ok(client, "remember", {"content": CONTENTS[2]}))
        secret = saved_id(await call_ok(client, "remember", {"content": SECRET, "private": True}))
        created = await call_ok(client, "create_episode", {"memory_ids": [public, secret], "summary": summary})
    assert "Words quoted from private memories were left out of the summary" in created
    assert plugin.memories is not None
    [episode] = plugin.memories.store.episodes()
    folded = episode.summary.lower()
    for passage in ("deep water", "capsized ferry", "flinch at", "ferry in 2019"):
        assert passage not in folded, episode.summary
    assert PRIVATE_MARK in episode.summary


def test_quotes_are_masked_as_whole_words_and_unrelated_text_is_kept() -> None:
    private = ["My secret: I am afraid of the dark basement stairs", "実は今日は夕焼けを一緒に見たかった"]
    assert mask_quotes("Harbour, and I am afraid of the dark basement stairs at night", private) == (
        f"Harbour, and {PRIVATE_MARK} at night"
    )
    assert mask_quotes("今日は夕焼けを一緒に見たあとで散歩した", private) == f"{PRIVATE_MARK}あとで散歩した"
    for kept in ("The dark was lovely at the harbour", "夕焼けの散歩", "A day at the basement"):
        assert mask_quotes(kept, private) == kept


async def test_episode_errors_unknown_ids_and_empty_summaries(memory_hosts: MemoryHosts) -> None:
    host, plugin = memory_hosts()
    async with mcp_client(host) as client:
        kept = saved_id(await call_ok(client, "remember", {"content": CONTENTS[0]}))

        unknown = await call_error(client, "get_episode", {"episode_id": "ep_0123456789ab"})
        assert unknown == (
            f"Episode not found: ep_0123456789ab{SEPARATOR}Episode ids start with ep_; create_episode returns them."
        )
        wild = await call_error(client, "get_episode", {"episode_id": "the trip to my secret place"})
        assert wild.startswith("Episode not found: ")
        assert "secret place" not in wild

        missing = await call_error(
            client, "create_episode", {"memory_ids": [kept, "mem_0123456789ab"], "summary": "Two things."}
        )
        assert missing == f"Memory not found: mem_0123456789ab{SEPARATOR}{NOT_FOUND_SCAFFOLD}"
        blank = await call_error(client, "create_episode", {"memory_ids": [kept], "summary": "   \n "})
        assert "summary" in blank
    assert plugin.memories is not None
    assert plugin.memories.store.episodes() == []
