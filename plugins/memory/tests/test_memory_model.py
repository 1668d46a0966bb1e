"""The data model's portable form: cattrs round trips, and records written without newer fields."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import cattrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ego_core import EMOTIONS, LINK_TYPES, EmotionalTrace, Memory, MemoryLink
from ego_memory.record.emotions import CATEGORIES
from ego_memory.record.model import memory_from_dict, memory_to_dict

MEMORY_ID = st.from_regex(r"mem_[0-9a-f]{12}", fullmatch=True)
ZONES = st.sampled_from([UTC, timezone(timedelta(hours=9)), timezone(timedelta(hours=-5, minutes=-30))])
MOMENT = st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), timezones=ZONES)
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
UNIT = st.floats(min_value=0.0, max_value=1.0)

TRACES = st.builds(
    EmotionalTrace,
    primary=st.sampled_from(list(EMOTIONS)),
    secondary=st.lists(st.sampled_from(list(EMOTIONS)), max_size=3),
    intensity=UNIT,
    valence=st.floats(min_value=-1.0, max_value=1.0),
    arousal=UNIT,
    body_state=st.dictionaries(st.text(), JSON_VALUE, max_size=4),
)
LINKS = st.builds(
    MemoryLink, target_id=MEMORY_ID, link_type=st.sampled_from(LINK_TYPES), confidence=UNIT, note=st.text(max_size=20)
)
MEMORIES = st.builds(
    Memory,
    id=MEMORY_ID,
    content=st.text(min_size=1),
    timestamp=MOMENT,
    emotional_trace=TRACES,
    importance=st.integers(min_value=1, max_value=5),
    category=st.sampled_from(CATEGORIES),
    tags=st.lists(st.text(min_size=1), max_size=4),
    links=st.lists(LINKS, max_size=3).map(tuple),
    is_private=st.booleans(),
    access_count=st.integers(min_value=0, max_value=10**6),
    last_accessed=st.none() | MOMENT,
)


@settings(max_examples=200, deadline=None)
@given(memory=MEMORIES)
def test_memories_round_trip_through_dicts_and_json(memory: Memory) -> None:
    data = memory_to_dict(memory)
    assert memory_from_dict(data) == memory
    portable = json.loads(json.dumps(data))
    back = memory_from_dict(portable)
    assert back == memory
    assert back.timestamp.utcoffset() == timedelta(0)
    assert isinstance(portable["tags"], list)
    assert isinstance(portable["emotional_trace"]["secondary"], list)
    assert portable["timestamp"].endswith("+00:00")


def test_an_old_record_reads_missing_fields_with_their_defaults() -> None:
    old: dict[str, Any] = {
        "id": "mem_00000000a1b2",
        "content": "Written by an older version.",
        "timestamp": "2024-02-03T04:05:06+00:00",
        "emotional_trace": {"primary": "nostalgic", "intensity": 0.5, "valence": 0.3, "arousal": 0.3},
        "importance": 4,
        "category": "memory",
    }
    memory = memory_from_dict(old)
    assert memory.is_private is False
    assert memory.tags == ()
    assert memory.links == ()
    assert (memory.access_count, memory.last_accessed) == (0, None)
    assert memory.emotional_trace.secondary == ()
    assert dict(memory.emotional_trace.body_state) == {}
    assert memory.timestamp == datetime(2024, 2, 3, 4, 5, 6, tzinfo=UTC)

    legacy = memory_from_dict({**old, "is_private": "true", "timestamp": 1706933106, "tags": ["a", "b"]})
    assert legacy.is_private is True
    assert legacy.tags == ("a", "b")
    assert legacy.timestamp == datetime(2024, 2, 3, 4, 5, 6, tzinfo=UTC)


def test_a_timestamp_without_a_time_zone_is_refused() -> None:
    record = {"id": "mem_00000000a1b2", "content": "x", "timestamp": "2024-02-03T04:05:06"}
    with pytest.raises(cattrs.BaseValidationError) as refused:
        memory_from_dict(record)
    assert "time zone" in repr(refused.value.exceptions)
