"""How memories and episodes are written to and read from SQLite rows (and the time and hash helpers)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import attrs

from ego_core import EmotionalTrace, Memory, MemoryLink
from ego_memory.text.language import segmented

MEMORY_COLUMNS = (
    "id, ts, content, emotion, secondary, intensity, valence, arousal, body_state, importance, category, tags, "
    "is_private, access_count, last_accessed, anticipated"
)
"""The columns :func:`row_to_memory` reads, in its order."""
INSERT_MEMORY = (
    "INSERT INTO memories(id, ts, content, content_hash, emotion, secondary, intensity, valence, arousal, "
    "body_state, importance, category, tags, is_private, access_count, last_accessed, terms, anticipated) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
"""The statement :func:`memory_row` fills (``terms``: what the word index reads, see :func:`segmented`)."""
EPISODE_COLUMNS = "id, summary, memory_ids, start_ts, end_ts, importance, created"


def content_hash(content: str) -> str:
    return hashlib.sha256(content.strip().encode("utf-8")).hexdigest()


def to_epoch(moment: datetime) -> float:
    """Seconds since the epoch at millisecond precision (exact through float and ISO 8601 round trips)."""
    if moment.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return round(moment.timestamp(), 3)


def from_epoch(value: float) -> datetime:
    return datetime.fromtimestamp(round(value, 3), UTC)


def to_millis(moment: datetime) -> datetime:
    """``moment`` truncated to whole milliseconds (what the store keeps)."""
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def memory_row(memory: Memory) -> tuple[Any, ...]:
    """The values of :data:`INSERT_MEMORY` for ``memory`` (its links are rows of their own)."""
    trace = memory.emotional_trace
    return (
        memory.id,
        to_epoch(memory.timestamp),
        memory.content,
        content_hash(memory.content),
        trace.primary,
        json.dumps(list(trace.secondary), ensure_ascii=False),
        float(trace.intensity),
        float(trace.valence),
        float(trace.arousal),
        json.dumps(dict(trace.body_state), ensure_ascii=False, default=str),
        int(memory.importance),
        memory.category,
        json.dumps(list(memory.tags), ensure_ascii=False),
        int(memory.is_private),
        int(memory.access_count),
        to_epoch(memory.last_accessed) if memory.last_accessed else None,
        segmented(memory.content),
        to_epoch(memory.anticipated) if memory.anticipated else None,
    )


def row_to_memory(row: Sequence[Any], links: Sequence[MemoryLink]) -> Memory:
    """A memory from a row of :data:`MEMORY_COLUMNS` and its outgoing links."""
    (
        mid,
        ts,
        content,
        emotion,
        secondary,
        intensity,
        valence,
        arousal,
        body_state,
        importance,
        category,
        tags,
        is_private,
        access_count,
        last_accessed,
        anticipated,
    ) = row
    return Memory(
        id=mid,
        content=content,
        timestamp=from_epoch(ts),
        emotional_trace=EmotionalTrace(
            primary=emotion,
            secondary=tuple(json.loads(secondary)),
            intensity=intensity,
            valence=valence,
            arousal=arousal,
            body_state=json.loads(body_state),
        ),
        importance=importance,
        category=category,
        tags=tuple(json.loads(tags)),
        links=tuple(links),
        is_private=bool(is_private),
        access_count=access_count,
        last_accessed=from_epoch(last_accessed) if last_accessed is not None else None,
        anticipated=from_epoch(anticipated) if anticipated is not None else None,
    )


@attrs.frozen
class Episode:
    """Memories grouped into one episode: members in time order, importance = max."""

    id: str
    summary: str
    memory_ids: tuple[str, ...]
    start: datetime
    end: datetime
    importance: int
    created: datetime


def episode_row(episode: Episode) -> tuple[Any, ...]:
    """The values of :data:`EPISODE_COLUMNS` for ``episode``."""
    return (
        episode.id,
        episode.summary,
        json.dumps(list(episode.memory_ids)),
        to_epoch(episode.start),
        to_epoch(episode.end),
        episode.importance,
        to_epoch(episode.created),
    )


def row_to_episode(row: Sequence[Any]) -> Episode:
    return Episode(
        id=row[0],
        summary=row[1],
        memory_ids=tuple(json.loads(row[2])),
        start=from_epoch(row[3]),
        end=from_epoch(row[4]),
        importance=row[5],
        created=from_epoch(row[6]),
    )
