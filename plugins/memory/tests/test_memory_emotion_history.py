"""The memory service's emotional history (read by emotion_trend): ``tally`` counts a window by emotion without
loading it, ``faded_emotions`` finds emotions only faded memories still carry - faded by the recall pipeline's
own time decay, which use and links slow down."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from ego_core import MEMORY_STORE, EmotionalTrace, EmotionTally, Memory, MemoryService
from ego_memory.recall.decay import half_life, link_strength, recall_strength
from ego_memory.recall.emotion_history import unrecalled_floor
from ego_memory.service import Memories

if TYPE_CHECKING:
    from conftest import MemoryHosts

NOW = datetime(2026, 5, 20, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def item(memory_id: str, ago: timedelta, primary: str, *secondary: str, **fields: Any) -> Memory:
    trace = {k: fields.pop(k) for k in ("intensity", "valence", "arousal") if k in fields}
    return Memory(
        id=memory_id,
        content=f"Memory {memory_id} about {primary} things and {' '.join(secondary) or 'nothing else'}.",
        timestamp=NOW - ago,
        emotional_trace=EmotionalTrace(primary=primary, secondary=secondary, **trace),
        **fields,
    )


def load(memories: Memories, items: Sequence[Memory]) -> None:
    memories.store.add_many(list(items), memories.embed([m.content for m in items]))


@pytest.fixture
def service(memory_hosts: MemoryHosts) -> tuple[MemoryService, Memories]:
    host, plugin = memory_hosts()
    found = host.services.get(MEMORY_STORE, MemoryService)
    assert found is not None
    assert plugin.memories is not None
    return found, plugin.memories


# ---------------------------------------------------------------------------------------------------
# tally


def test_tally_counts_a_window_by_emotion(service: tuple[MemoryService, Memories]) -> None:
    memories_service, memories = service
    load(
        memories,
        [
            item("mem_000000000001", 10 * DAY, "happy", valence=0.9, arousal=0.1),  # before the window
            item("mem_000000000002", 5 * DAY, "sad", "anxious", intensity=0.5, valence=-0.6, arousal=0.4),
            item("mem_000000000003", 4 * DAY, "sad", "anxious", "curious", intensity=0.9, valence=-0.4, arousal=0.6),
            item("mem_000000000004", 3 * DAY, "happy", "anxious", intensity=0.9, valence=0.8, arousal=0.5),
            item("mem_000000000005", 2 * DAY, "curious", intensity=0.2, valence=0.2, arousal=0.7),
            item("mem_000000000006", -DAY, "excited", intensity=1.0),  # after the window
        ],
    )
    tally = memories_service.tally(NOW - 6 * DAY, NOW)
    assert tally.count == 4
    assert dict(tally.primary) == {"sad": 2, "happy": 1, "curious": 1}
    assert dict(tally.secondary) == {"anxious": 3, "curious": 1}
    assert tally.valence == pytest.approx((-0.6 - 0.4 + 0.8 + 0.2) / 4)
    assert tally.arousal == pytest.approx((0.4 + 0.6 + 0.5 + 0.7) / 4)
    assert tally.peak_id == "mem_000000000004"  # the newest of the two most intense
    assert tally.last_id == "mem_000000000005"


def test_tally_windows_are_half_open(service: tuple[MemoryService, Memories]) -> None:
    memories_service, memories = service
    load(memories, [item("mem_000000000001", 2 * DAY, "happy"), item("mem_000000000002", DAY, "sad")])
    assert memories_service.tally(NOW - 2 * DAY, NOW - DAY).primary == {"happy": 1}
    assert memories_service.tally(NOW - DAY, NOW).primary == {"sad": 1}
    assert memories_service.tally(NOW, NOW + DAY) == EmotionTally()


def test_tally_of_an_empty_window_is_empty(service: tuple[MemoryService, Memories]) -> None:
    memories_service, _memories = service
    empty = memories_service.tally(NOW - 30 * DAY, NOW)
    assert (empty.count, empty.peak_id, empty.last_id, dict(empty.primary)) == (0, None, None, {})


# ---------------------------------------------------------------------------------------------------
# strongest


def test_strongest_gives_the_most_intense_of_a_window(service: tuple[MemoryService, Memories]) -> None:
    memories_service, memories = service
    load(
        memories,
        [
            item("mem_000000000001", 10 * DAY, "joy", intensity=1.0),  # before the window
            item("mem_000000000002", 5 * DAY, "sad", intensity=0.9),
            item("mem_000000000003", 4 * DAY, "happy", intensity=0.9),  # as intense, newer: first
            item("mem_000000000004", 3 * DAY, "calm", intensity=0.2),
            item("mem_000000000005", 2 * DAY, "anxious", intensity=0.6, is_private=True),
            item("mem_000000000006", -DAY, "excited", intensity=1.0),  # after `until`
        ],
    )
    since, until = NOW - 6 * DAY, NOW
    ids = [m.id for m in memories_service.strongest(since, 10, until=until)]
    assert ids == ["mem_000000000003", "mem_000000000002", "mem_000000000005", "mem_000000000004"]
    assert [m.id for m in memories_service.strongest(since, 2, until=until)] == ids[:2]
    found = memories_service.strongest(since, 10, min_intensity=0.6, until=until)
    assert [m.id for m in found] == ids[:3]
    assert found[2].is_private  # included, flagged: the consumer keeps it out of logs and files
    assert found[0].emotional_trace.primary == "happy"
    assert found[0].content.startswith("Memory mem_000000000003")
    assert [m.id for m in memories_service.strongest(since, 1)] == ["mem_000000000006"]  # no upper bound
    assert memories_service.strongest(since, 0) == []
    assert memories_service.strongest(NOW + 2 * DAY, 10) == []


def test_strongest_loads_only_what_it_returns_from_a_wide_window(
    service: tuple[MemoryService, Memories], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Wider than NARROW_WINDOW: read from the top of the intensity index, never the whole window."""
    from ego_memory.store.memory_store import NARROW_WINDOW

    memories_service, memories = service
    count = NARROW_WINDOW + 500
    batch = [
        item(f"mem_{n:012x}", timedelta(minutes=count - n), "calm", intensity=round((n * 37 % 1000) / 1000, 3))
        for n in range(count)
    ]
    vectors = np.zeros((count, memories.embedder.dimension), dtype=np.float32)
    vectors[:, 0] = 1.0
    memories.store.add_many(batch, vectors)
    loaded: list[int] = []
    tables = memories.store.tables
    original = tables.memories

    def counting(rows: Any, with_links: bool = True) -> list[Memory]:
        found = original(rows, with_links)
        loaded.append(len(found))
        return found

    monkeypatch.setattr(tables, "memories", counting)
    for since in (NOW - 30 * DAY, NOW - timedelta(minutes=100)):  # wide (intensity index) and narrow (time index)
        expected = sorted(
            (m for m in batch if m.timestamp >= since), key=lambda m: (m.emotional_trace.intensity, m.timestamp)
        )[::-1][:5]
        found = memories_service.strongest(since, 5, min_intensity=0.1)
        assert [m.id for m in found] == [m.id for m in expected]
    assert loaded == [5, 5]


# ---------------------------------------------------------------------------------------------------
# faded_emotions


def test_an_emotion_only_old_memories_carry_has_faded(service: tuple[MemoryService, Memories]) -> None:
    memories_service, memories = service
    load(
        memories,
        [
            item("mem_000000000001", 300 * DAY, "nostalgic"),
            item("mem_000000000002", 250 * DAY, "happy", "nostalgic"),  # the newest carrying nostalgic
            item("mem_000000000003", 280 * DAY, "melancholy"),
            item("mem_000000000004", 20 * DAY, "melancholy"),  # still strong: melancholy has not faded
            item("mem_000000000005", 260 * DAY, "anxious", "frustrated"),
        ],
    )
    faded = memories_service.faded_emotions(
        ["nostalgic", "melancholy", "frustrated", "surprised"], NOW - 7 * DAY, NOW, strength=0.5
    )
    assert faded == {"nostalgic": NOW - 250 * DAY, "frustrated": NOW - 260 * DAY}


def test_since_limits_how_far_back_faded_emotions_are_looked_for(service: tuple[MemoryService, Memories]) -> None:
    memories_service, memories = service
    load(memories, [item("mem_000000000001", 400 * DAY, "nostalgic"), item("mem_000000000002", 200 * DAY, "sad")])
    found = memories_service.faded_emotions(["nostalgic", "sad"], NOW - 7 * DAY, NOW, since=NOW - 365 * DAY)
    assert set(found) == {"sad"}


def test_use_keeps_an_old_memory_strong(service: tuple[MemoryService, Memories]) -> None:
    # 120 days old: a plain memory has faded (half-life 90 days); recalled 20 times, its half-life is
    # 90·(1 + 0.5·ln 21) ≈ 227 days, and it is still strong.
    memories_service, memories = service
    load(
        memories,
        [
            item("mem_000000000001", 120 * DAY, "nostalgic", access_count=20),
            item("mem_000000000002", 120 * DAY, "melancholy"),
        ],
    )
    assert memories_service.faded_emotions(["nostalgic", "melancholy"], NOW - 7 * DAY, NOW) == {
        "melancholy": NOW - 120 * DAY
    }


def test_a_much_recalled_memory_beyond_the_floor_keeps_its_emotion(service: tuple[MemoryService, Memories]) -> None:
    # Unrecalled, no memory older than 2 · 90 · log2(2) = 180 days can be strong, however well linked; recalled
    # 1,000 times, a 250-day-old memory still is (half-life 90·(1 + 0.5·ln 1001) ≈ 401 days, strength 0.65).
    memories_service, memories = service
    load(
        memories,
        [
            item("mem_000000000001", 200 * DAY, "nostalgic"),  # the newest, faded
            item("mem_000000000002", 250 * DAY, "neutral", "nostalgic", access_count=1000),
            item("mem_000000000003", 210 * DAY, "melancholy"),
            item("mem_000000000004", 260 * DAY, "melancholy", access_count=3),  # recalled, but not enough
        ],
    )
    assert unrecalled_floor(NOW.timestamp(), 0.5, 90.0) == pytest.approx((NOW - 180 * DAY).timestamp())
    assert memories_service.faded_emotions(["nostalgic", "melancholy"], NOW - 7 * DAY, NOW) == {
        "melancholy": NOW - 210 * DAY
    }


def test_at_full_strength_every_emotion_seen_has_faded(service: tuple[MemoryService, Memories]) -> None:
    memories_service, memories = service
    load(memories, [item("mem_000000000001", 2 * DAY, "happy", "curious"), item("mem_000000000002", DAY, "happy")])
    assert memories_service.faded_emotions(["happy", "curious", "sad"], NOW, NOW, strength=1.0) == {
        "happy": NOW - DAY,
        "curious": NOW - 2 * DAY,
    }


def test_links_keep_an_old_memory_strong(service: tuple[MemoryService, Memories]) -> None:
    # Linked with a total confidence of 4 (link strength 0.8), the half-life is 90·1.8 = 162 days: strong at
    # 120 days (0.60), faded before (0.40 unlinked).
    memories_service, memories = service
    old, other = item("mem_000000000001", 120 * DAY, "nostalgic"), item("mem_000000000002", 119 * DAY, "neutral")
    load(memories, [old, other])
    assert memories_service.faded_emotions(["nostalgic"], NOW - 7 * DAY, NOW) == {"nostalgic": old.timestamp}
    for link_type in ("similar", "caused_by", "leads_to", "related"):
        assert memories.store.link(old.id, other.id, link_type, 1.0)
    assert memories_service.faded_emotions(["nostalgic"], NOW - 7 * DAY, NOW) == {}


def test_the_threshold_is_the_recall_strength_left(service: tuple[MemoryService, Memories]) -> None:
    # At one half-life (90 days, no use, no links) half the strength is left.
    memories_service, memories = service
    load(memories, [item("mem_000000000001", 90 * DAY, "nostalgic")])
    assert recall_strength(90.0, half_life(90.0, 0, link_strength(0.0))) == pytest.approx(0.5)
    assert set(memories_service.faded_emotions(["nostalgic"], NOW - 7 * DAY, NOW, strength=0.51)) == {"nostalgic"}
    assert memories_service.faded_emotions(["nostalgic"], NOW - 7 * DAY, NOW, strength=0.49) == {}


def test_the_newest_memory_of_an_emotion_settles_it_before_older_ones(service: tuple[MemoryService, Memories]) -> None:
    # Only memories before `before` count: this week's are the caller's business.
    memories_service, memories = service
    load(memories, [item("mem_000000000001", 200 * DAY, "nostalgic"), item("mem_000000000002", DAY, "nostalgic")])
    assert set(memories_service.faded_emotions(["nostalgic"], NOW - 7 * DAY, NOW)) == {"nostalgic"}
    assert memories_service.faded_emotions(["nostalgic"], NOW, NOW) == {}


def test_nothing_fades_when_recall_decay_is_switched_off(memory_hosts: MemoryHosts) -> None:
    _host, plugin = memory_hosts(recall={"decay": False})
    assert plugin.memories is not None
    load(plugin.memories, [item("mem_000000000001", 900 * DAY, "nostalgic")])
    assert plugin.memories.faded_emotions(["nostalgic"], NOW - 7 * DAY, NOW) == {}


def test_decay_formula_is_the_documented_one() -> None:
    days, uses, links = 40.0, 3, link_strength(2.5)
    expected = math.exp(-math.log(2) * days / (90.0 * (1 + 0.5 * math.log1p(uses)) * (1 + 0.5)))
    assert recall_strength(days, half_life(90.0, uses, links)) == pytest.approx(expected)
    assert link_strength(9.0) == 1.0
    assert recall_strength(-3.0, 90.0) == 1.0


def test_labels_are_matched_exactly_also_with_like_wildcards(service: tuple[MemoryService, Memories]) -> None:
    memories_service, memories = service
    load(
        memories,
        [
            item("mem_000000000001", 200 * DAY, "neutral", "wist%ful"),
            item("mem_000000000002", 3 * DAY, "neutral", "wistXful", "a_b"),
            item("mem_000000000003", 200 * DAY, "neutral", "aXb"),
        ],
    )
    assert set(memories_service.faded_emotions(["wist%ful", "a_b", "aXb"], NOW, NOW)) == {"wist%ful", "aXb"}


def test_an_anticipation_fades_from_the_moment_it_looked_forward_to(service: tuple[MemoryService, Memories]) -> None:
    # Written 300 days ago: the trip 10 days ahead keeps its excitement, the concert of 30 days ago still
    # glows (0.79), the festival of 100 days ago has faded (0.46), as recall itself counts them.
    memories_service, memories = service
    load(
        memories,
        [
            item("mem_000000000001", 300 * DAY, "excited", anticipated=NOW + 10 * DAY),
            item("mem_000000000002", 300 * DAY, "happy", anticipated=NOW - 30 * DAY),
            item("mem_000000000003", 300 * DAY, "moved", anticipated=NOW - 100 * DAY),
            item("mem_000000000004", 100 * DAY, "curious"),
        ],
    )
    emotions = ["excited", "happy", "moved", "curious"]
    assert memories_service.faded_emotions(emotions, NOW - 7 * DAY, NOW) == {
        "moved": NOW - 300 * DAY,
        "curious": NOW - 100 * DAY,
    }
