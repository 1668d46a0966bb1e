"""The pure rules and the store, without the memory plugin: clique search, labels, decay, merge, the database."""

from __future__ import annotations

import itertools
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ego_core import EmotionalTrace, Memory
from ego_core.testing import HostFactory
from ego_notions import Notion, NotionDB, NotionsPlugin
from ego_notions.cliques import maximal_cliques
from ego_notions.model import first_sentence, is_ephemeral, label_for, merged, relinked, tags_of, tone_of

NOW = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def memory(
    ident: str, content: str = "x", *, emotion: str = "neutral", tags: tuple[str, ...] = (), importance: int = 3
) -> Memory:
    return Memory(
        id=ident,
        content=content,
        timestamp=NOW,
        emotional_trace=EmotionalTrace(primary=emotion),
        importance=importance,
        tags=tags,
    )


def notion(ident: str = "notion_aaaaaaaaaaaa", **changes: object) -> Notion:
    base = Notion(
        id=ident,
        label="tea (happy)",
        tone="happy",
        valence=0.5,
        confidence=0.6,
        anchored=NOW,
        created=NOW,
        reinforced=NOW,
        sources=("mem_1", "mem_2", "mem_3"),
        tags=("tea",),
    )
    return attrs.evolve(base, **changes)


graphs = st.integers(min_value=0, max_value=12).flatmap(
    lambda n: st.sets(st.tuples(st.integers(0, n), st.integers(0, n)), max_size=40).map(lambda edges: (n, edges))
)


@given(graphs)
def test_cliques_are_maximal_cliques_of_three_or_more(graph: tuple[int, set[tuple[int, int]]]) -> None:
    n, edges = graph
    adjacency: dict[str, set[str]] = {f"m{i:02d}": set() for i in range(n + 1)}
    for a, b in edges:
        if a != b:
            adjacency[f"m{a:02d}"].add(f"m{b:02d}")
            adjacency[f"m{b:02d}"].add(f"m{a:02d}")
    found, capped = maximal_cliques(adjacency, max_candidates=64, max_calls=10_000)
    assert not capped
    for group in found:
        assert len(group) >= 3
        assert all(b in adjacency[a] for a, b in itertools.combinations(group, 2))
        outside = set(adjacency) - set(group)
        assert not any(all(o in adjacency[g] for g in group) for o in outside)  # maximal
    # every triangle lies in some found clique
    for a, b, c in itertools.combinations(sorted(adjacency), 3):
        if b in adjacency[a] and c in adjacency[a] and c in adjacency[b]:
            assert any({a, b, c} <= set(g) for g in found)


def test_the_clique_search_is_capped() -> None:
    complete = {f"m{i:03d}": {f"m{j:03d}" for j in range(200) if j != i} for i in range(200)}
    found, capped = maximal_cliques(complete, max_candidates=64, max_calls=10_000)
    assert capped
    assert found
    assert all(len(g) <= 65 for g in found)  # a seed and at most 64 of its neighbours
    _, stopped = maximal_cliques(complete, max_candidates=200, max_calls=50)
    assert stopped


@given(st.floats(0.05, 1.0), st.lists(st.floats(0.0, 200.0), min_size=1, max_size=8))
def test_decay_is_a_function_of_time_not_of_how_often_it_is_read(start: float, days: list[float]) -> None:
    held = notion(confidence=start)
    moments = sorted(NOW + timedelta(days=d) for d in days)
    readings = [held.confidence_at(m) for m in moments]
    assert readings == sorted(readings, reverse=True)
    assert held.confidence_at(moments[-1]) == held.confidence_at(moments[-1])  # reading changes nothing
    assert held.confidence_at(NOW + DAY) == start  # the first day is a grace period


def test_half_lives() -> None:
    plain = notion(confidence=0.8)
    assert plain.confidence_at(NOW + 31 * DAY) == pytest.approx(0.4)
    conviction = notion(confidence=0.8, reinforcement_count=5)
    assert conviction.confidence_at(NOW + 91 * DAY) == pytest.approx(0.4)


def test_tags_tone_and_labels() -> None:
    members = [
        memory("a", emotion="sad", tags=("rain", "walk")),
        memory("b", emotion="happy", tags=("walk", "rain", "park")),
        memory("c", emotion="happy", tags=()),
    ]
    assert tags_of(members) == ("rain", "walk")
    assert tone_of(members) == "happy"
    assert tags_of([memory("a", tags=("x", "y")), memory("b", tags=("y", "z")), memory("c", tags=("z", "q"))]) == (
        "y",
        "z",
    )
    assert tone_of([memory("a", emotion="sad"), memory("b", emotion="happy")]) == "sad"  # a tie: the first met
    assert label_for(("a", "b", "c", "d"), [], "curious") == "a & b & c (curious)"
    assert label_for((), [], "sad") == "untitled (sad)"
    assert first_sentence("  「今日は雨」だった。明日は晴れ。") == "今日は雨」だった"
    assert first_sentence("x" * 60) == "x" * 45 + "..."


def test_ephemeral_groups() -> None:
    assert is_ephemeral([memory("a", "Session start"), memory("b", "おやすみ"), memory("c", "A real thought")])
    assert is_ephemeral([memory(str(i), importance=1) for i in range(2)] + [memory("c")])
    assert not is_ephemeral([memory("a", "Tea"), memory("b", "Bye for now"), memory("c", "Coffee")])


def test_merge_and_relink() -> None:
    kept = notion("notion_aaaaaaaaaaaa", related=("notion_bbbbbbbbbbbb", "notion_cccccccccccc"), person="Master")
    absorbed = notion(
        "notion_bbbbbbbbbbbb",
        sources=("mem_3", "mem_4"),
        tags=("cup",),
        confidence=0.9,
        reinforcement_count=2,
        related=("notion_aaaaaaaaaaaa",),
        meta={"why": {"type": "text", "value": "calm"}},
    )
    result = merged(kept, absorbed, NOW)
    assert result.sources == ("mem_1", "mem_2", "mem_3", "mem_4")
    assert result.tags == ("tea", "cup")
    assert result.related == ("notion_cccccccccccc",)
    assert (result.confidence, result.reinforcement_count, result.person) == (0.9, 2, "Master")
    assert merged(kept, absorbed, NOW, None, set_person=True).person is None
    other = notion(
        "notion_cccccccccccc",
        related=("notion_bbbbbbbbbbbb", "notion_aaaaaaaaaaaa"),
        meta={"see": {"type": "notion_ids", "value": ["notion_bbbbbbbbbbbb", "notion_cccccccccccc"]}},
    )
    moved = relinked(other, "notion_bbbbbbbbbbbb", "notion_aaaaaaaaaaaa")
    assert moved.related == ("notion_aaaaaaaaaaaa",)
    assert moved.meta["see"]["value"] == ["notion_aaaaaaaaaaaa"]


def test_the_store_round_trips_and_indexes(tmp_path: Path) -> None:
    db = NotionDB(tmp_path)
    first = notion(meta={"why": {"type": "text", "value": "静けさ"}}, person="Master")
    second = notion("notion_bbbbbbbbbbbb", sources=("mem_9",), tags=("Coffee",))
    db.apply(save=[first, second])
    assert db.get(first.id) == first
    assert [n.id for n in db.holding(["mem_2"])] == [first.id]
    assert [n.id for n in db.tagged(["coffee"])] == [second.id]
    db.apply(delete=[first.id])
    assert db.holding(["mem_2"]) == []
    db.close()
    assert [n.id for n in NotionDB(tmp_path).all()] == [second.id]


def test_a_failed_write_changes_nothing(tmp_path: Path) -> None:
    db = NotionDB(tmp_path)
    db.apply(save=[notion()])
    broken = attrs.evolve(notion("notion_bbbbbbbbbbbb"), label=None)  # violates NOT NULL
    with pytest.raises(sqlite3.IntegrityError):
        db.apply(save=[notion("notion_cccccccccccc"), broken])
    assert [n.id for n in db.all()] == ["notion_aaaaaaaaaaaa"]


@pytest.mark.anyio
async def test_without_memory_notions_is_not_served(make_host: HostFactory) -> None:
    from ego_core.testing import mcp_client

    host = make_host({"notions": NotionsPlugin()})
    async with mcp_client(host) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "curate_notions" not in names
