"""Response formats of remember, recall and search_memories, through the MCP client."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ego_core import EMOTIONS, Clock
from ego_core.testing import mcp_client, tool_text
from ego_memory.record.emotions import CATEGORIES, EMOTION_PROFILES
from ego_memory.tools.memory import PRIVATE_SAVED_NOTE, RECALL_SCAFFOLD, REMEMBER_SCAFFOLD, UNLINKED_SCAFFOLD

if TYPE_CHECKING:
    from conftest import MemoryHosts

NOW = datetime(2026, 4, 10, 9, 0, tzinfo=UTC)
SEPARATOR = "\n\n---\n"
SAVED = re.compile(r"^Saved \(id: (mem_[0-9a-f]{12})\)\. Linked to (\d+) existing memor(?:y|ies)\.$")
HEADER = re.compile(r"^(\d+) of (\d+)\+? match(?:es)?(?:, (\d+) linked)?(?:, (\d+) unbidden)?:$")
CONTENT_LINE = re.compile(r"^(\d+)\. \[(just now|\d+(?:m|h|d|w|mo|y) ago)\] (.+)$")
META_LINE = re.compile(
    r"^   ([a-z]+(?:\(\d\.\d\))?)(?:, undercurrent ([a-z, ]+))? · importance ([1-5]) · "
    r"(?:score ([01]\.\d\d)|linked|unbidden) · private: (true|false)$"
)
RELATED = re.compile(r"^- \[(just now|\d+(?:m|h|d|w|mo|y) ago)\] (.{1,70}) \(similarity: (0\.\d\d|1\.00)\)$")


def split(text: str) -> tuple[str, list[str]]:
    data, separator, scaffold = text.partition(SEPARATOR)
    return data, scaffold.splitlines() if separator else []


def parse_recall(data: str) -> list[dict[str, Any]]:
    """Every result of a recall response, checking the line format on the way."""
    lines = data.splitlines()
    header = HEADER.match(lines[0])
    assert header, data
    shown = int(header.group(1)) + int(header.group(3) or 0) + int(header.group(4) or 0)
    results = []
    for number in range(1, shown + 1):
        content = CONTENT_LINE.match(lines[2 * number - 1])
        meta = META_LINE.match(lines[2 * number])
        assert content, lines[2 * number - 1]
        assert meta, lines[2 * number]
        assert int(content.group(1)) == number
        results.append(
            {
                "age": content.group(2),
                "content": content.group(3),
                "emotion": meta.group(1),
                "undercurrent": meta.group(2),
                "importance": int(meta.group(3)),
                "score": float(meta.group(4)) if meta.group(4) else None,
                "private": meta.group(5) == "true",
            }
        )
    assert int(header.group(2)) >= int(header.group(1))
    shown_scores = [r["score"] for r in results if r["score"] is not None]
    assert shown_scores == sorted(shown_scores, reverse=True), data
    return results


@pytest.mark.anyio
async def test_empty_store(memory_hosts: MemoryHosts) -> None:
    host, _plugin = memory_hosts(clock=Clock(NOW))
    async with mcp_client(host) as client:
        recalled = await client.call_tool("recall", {"context": "anything at all"})
        data, scaffold = split(tool_text(recalled))
        assert (recalled.is_error, data) == (False, "No related memories found.")
        assert scaffold == ["Try other words, or fewer filters."]
        searched = await client.call_tool("search_memories", {"context": "anything at all"})
        assert split(tool_text(searched))[0] == "No related memories found."

        saved = await client.call_tool("remember", {"content": "The first thing I ever kept."})
        data, scaffold = split(tool_text(saved))
        lines = data.splitlines()
        assert SAVED.match(lines[0])
        assert SAVED.match(lines[0]).group(2) == "0"  # type: ignore[union-attr]
        assert lines[1:] == ["No similar memories found yet."]
        assert scaffold == [UNLINKED_SCAFFOLD]


@pytest.mark.anyio
async def test_remember_links_similar_memories_and_shows_three(memory_hosts: MemoryHosts) -> None:
    clock = Clock(NOW - timedelta(days=3))
    host, plugin = memory_hosts(clock=clock)
    memories = plugin._require()
    plugin._tools()
    variants = [
        "I walked the dog in the park this morning.",
        "This morning I walked my dog in the park.",
        "I took the dog for a walk in the park this morning.",
        "Walked the dog around the park early this morning.",
        "In the park this morning I walked the dog.",
        "The dog and I walked in the park this morning.",
    ]
    async with mcp_client(host) as client:
        ids = []
        for text in variants[:5]:
            ids.append(SAVED.match(split(tool_text(await client.call_tool("remember", {"content": text})))[0]))
        unrelated = await client.call_tool("remember", {"content": "Quarterly tax forms are due next week."})
        assert "Linked to 0 existing memories." in tool_text(unrelated)
        clock.set(NOW)
        saved = await client.call_tool("remember", {"content": variants[5], "emotion": "happy"})
    data, scaffold = split(tool_text(saved))
    lines = data.splitlines()
    header = SAVED.match(lines[0])
    assert header, data
    assert header.group(2) == "5"  # at most 5 links
    assert lines[1] == "Most related:"
    related = [RELATED.match(line) for line in lines[2:5]]
    assert all(related), lines
    assert len(lines) == 5  # at most 3 shown, no notes
    similarities = [float(m.group(3)) for m in related if m]
    assert similarities == sorted(similarities, reverse=True)
    assert all(s >= 0.70 for s in similarities)
    assert {m.group(1) for m in related if m} == {"3d ago"}
    assert {m.group(2) for m in related if m} <= set(variants)
    assert scaffold == [REMEMBER_SCAFFOLD]

    new = memories.store.get_one(header.group(1))
    assert new is not None
    similar = {link.target_id: link.confidence for link in new.links if link.link_type == "similar"}
    assert len(similar) == 5
    assert all(confidence >= 0.70 for confidence in similar.values())
    for target, confidence in similar.items():
        other = memories.store.get_one(target)
        assert other is not None
        assert any(
            link.target_id == new.id and link.link_type == "similar" and link.confidence == confidence
            for link in other.links
        )
    assert memories.store.integrity_problems() == []


@pytest.mark.anyio
async def test_remember_notes_unknown_labels_and_privacy(memory_hosts: MemoryHosts) -> None:
    host, plugin = memory_hosts(clock=Clock(NOW))
    memories = plugin._require()
    plugin._tools()
    async with mcp_client(host) as client:
        saved = await client.call_tool(
            "remember",
            {
                "content": "Something odd happened at the bakery.",
                "emotion": "ecstatic",
                "secondary": ["curious", "befuddled"],
                "category": "misc",
                "importance": 9,
                "private": True,
            },
        )
        plain = await client.call_tool("remember", {"content": "A plain public note about the weather."})
    data, _scaffold = split(tool_text(saved))
    lines = data.splitlines()
    memory_id = SAVED.match(lines[0]).group(1)  # type: ignore[union-attr]
    assert f"Unknown emotion, stored as neutral. Known: {', '.join(EMOTIONS)}." in lines
    assert f"Unknown category, stored as daily. Known: {', '.join(CATEGORIES)}." in lines
    assert any(line.startswith("Unknown secondary emotion(s) dropped. Known: happy, sad,") for line in lines)
    assert PRIVATE_SAVED_NOTE in lines
    assert len(EMOTIONS) == 12
    assert tuple(EMOTION_PROFILES) == EMOTIONS  # a profile for each emotion remember accepts, in its order
    assert len(CATEGORIES) == 12
    assert "befuddled" not in data
    assert "ecstatic" not in data
    assert "misc" not in data
    assert PRIVATE_SAVED_NOTE not in tool_text(plain)

    stored = memories.store.get_one(memory_id)
    assert stored is not None
    assert (stored.emotional_trace.primary, stored.emotional_trace.secondary) == ("neutral", ("curious",))
    assert (stored.category, stored.importance, stored.is_private) == ("daily", 5, True)


@pytest.mark.anyio
async def test_recall_lines_scaffold_and_vivid_emotions(memory_hosts: MemoryHosts) -> None:
    clock = Clock(NOW - timedelta(days=2))
    host, _plugin = memory_hosts(clock=clock)
    long_text = "We sat by the harbour and watched the ferries. " * 6
    async with mcp_client(host) as client:
        vivid = await client.call_tool(
            "remember",
            {
                "content": "Master gave me a hand-written letter about the harbour.",
                "emotion": "moved",
                "intensity": 0.9,
                "secondary": ["nostalgic", "surprised"],
                "importance": 5,
            },
        )
        edge = await client.call_tool(
            "remember", {"content": "The harbour lights at night.", "emotion": "curious", "intensity": 0.7}
        )
        quiet = await client.call_tool(
            "remember",
            {"content": "Line one about the harbour\nline two about gulls.", "emotion": "curious", "intensity": 0.69},
        )
        long = await client.call_tool("remember", {"content": long_text, "private": True})
        clock.set(NOW)
        recalled = await client.call_tool("recall", {"context": "the harbour", "n_results": 4})
        narrow = await client.call_tool("recall", {"context": "the harbour", "n_results": 1, "emotion_filter": "moved"})
        searched = await client.call_tool("search_memories", {"context": "the harbour", "n_results": 4})

    for result in (vivid, edge, quiet, long):
        assert SAVED.match(split(tool_text(result))[0].splitlines()[0]), tool_text(result)
    data, scaffold = split(tool_text(recalled))
    results = {r["content"][:9]: r for r in parse_recall(data)}
    assert set(results) == {"Master ga", "The harbo", "Line one ", "We sat by"}
    vivid_result, edge_result = results["Master ga"], results["The harbo"]
    quiet_result, long_result = results["Line one "], results["We sat by"]
    assert vivid_result["emotion"] == "moved(0.9)"
    assert vivid_result["undercurrent"] == "nostalgic, surprised"
    assert vivid_result["importance"] == 5
    assert edge_result["emotion"] == "curious(0.7)"
    assert quiet_result["emotion"] == "curious"
    assert quiet_result["undercurrent"] is None
    assert quiet_result["content"] == "Line one about the harbour line two about gulls."
    assert long_result["private"] is True
    assert long_result["content"] == long_text.strip()  # 282 columns: within its share of the room
    assert {r["age"] for r in results.values()} == {"2d ago"}
    assert all(not r["private"] for r in (vivid_result, edge_result, quiet_result))
    assert scaffold == [RECALL_SCAFFOLD]

    data, scaffold = split(tool_text(narrow))
    (only,) = parse_recall(data)
    assert only["content"] == "Master gave me a hand-written letter about the harbour."
    assert scaffold == [RECALL_SCAFFOLD]

    compact = split(tool_text(searched))[0].splitlines()
    assert re.match(r"^4 of \d+ matches:$", compact[0])
    for line in compact[1:]:
        assert re.match(
            r"^mem_[0-9a-f]{12} \| 2d ago \| [a-z]+ \| [a-z_]+ \| [01]\.\d\d \| private: (true|false) \| .{1,160}$",
            line,
        ), line


@pytest.mark.anyio
async def test_the_header_says_how_many_were_found_beyond_those_shown(memory_hosts: MemoryHosts) -> None:
    host, _plugin = memory_hosts(clock=Clock(NOW))
    async with mcp_client(host) as client:
        for text in ("Rain on the roof.", "Rain at the bus stop.", "Rain soaked my shoes.", "Rain and thunder."):
            await client.call_tool("remember", {"content": text})
        recalled = await client.call_tool("recall", {"context": "rain", "n_results": 2})
    data, scaffold = split(tool_text(recalled))
    header = HEADER.match(data.splitlines()[0])
    assert header
    assert header.group(1) == "2"
    assert header.group(2) == "4"  # every memory holding "rain" matches: "2 of 4 matches:"
    assert scaffold == [RECALL_SCAFFOLD]


# ---------------------------------------------------------------------------------------------------
# Every result line says private: true|false (property over many random memories and queries)

WORDS = (
    "rain harbour bread lantern code dog park tea letter train music garden night morning master laugh "
    "quiet storm river sunset window book coffee festival"
).split()


@pytest.fixture(scope="module")
def random_memories(module_memory_hosts: MemoryHosts) -> Any:
    host, plugin = module_memory_hosts(clock=Clock(NOW))
    ctx = host.context("memory")
    tools = plugin._tools()
    rng = random.Random(20261122)
    private: dict[str, bool] = {}
    for number in range(60):
        args = {
            "content": " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))).capitalize() + f" ({number}).",
            "emotion": rng.choice([*EMOTIONS, "unknown-feeling"]),
            "secondary": rng.sample(list(EMOTIONS), rng.randint(0, 2)),
            "intensity": round(rng.random(), 2),
            "importance": rng.randint(1, 5),
            "private": rng.random() < 0.4,
            "force": True,
        }
        saved = tools.remember(args, ctx)
        assert SAVED.match(saved.data.splitlines()[0]), saved.data
        private[args["content"]] = args["private"]
    return tools, ctx, private


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(st.sampled_from([*WORDS, "unrelated", "zebra", "夕焼け"]), min_size=1, max_size=5),
    n_results=st.integers(min_value=1, max_value=10),
    use_filter=st.booleans(),
)
def test_every_recall_result_states_its_privacy(
    random_memories: Any, words: list[str], n_results: int, use_filter: bool
) -> None:
    tools, ctx, private = random_memories
    args: dict[str, Any] = {"context": " ".join(words), "n_results": n_results}
    if use_filter:
        args["valence_range"] = [-0.5, 1.0]
    data = tools.recall(args, ctx).data
    if data == "No related memories found.":
        return
    results = parse_recall(data)
    assert 1 <= len(results) <= n_results
    assert len(data.splitlines()) == 1 + 2 * len(results)  # no line without its metadata
    for result in results:
        assert result["private"] is private[result["content"]]
