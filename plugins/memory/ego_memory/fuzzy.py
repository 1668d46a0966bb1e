"""Fuzzy recall: how much of a recalled memory comes back, by its recall strength.

At a strength of at least :data:`VIVID` the content is shown; from :data:`GIST` a gist (emotion, category, a
few keywords, roughly when); below it only an impression (emotion, roughly when). A precious memory and one
anticipating a moment still ahead stay vivid. No label says a memory faded: only what is shown changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ego_core import Memory, People, duration_words, truncate
from ego_memory.keywords import gist
from ego_memory.strength import Strengths, precious_ids

VIVID = 0.5
GIST = 0.2


def roughly(timestamp: datetime, now: datetime) -> str:
    """Roughly when, in words: ``earlier today``, ``about two weeks ago``, ``several months ago``."""
    words = duration_words(now - timestamp)
    return words if words == "earlier today" else f"{words} ago"


def shown(memory: Memory, strength: float, *, vivid: bool, now: datetime, snippet: int) -> str:
    """What recall shows of ``memory``: its content (at most ``snippet`` columns), a gist, or an impression."""
    if vivid or strength >= VIVID:
        return truncate(memory.content, snippet)
    emotion, when = memory.emotional_trace.primary, roughly(memory.timestamp, now)
    if strength >= GIST:
        return f"{emotion} {memory.category} — {gist(memory.content)} ({when})"
    return f"{emotion}, {when}"


def recall_texts(
    memories: Sequence[Memory],
    strengths: Strengths,
    people: People | None,
    *,
    present: float,
    now: datetime,
    snippet: int,
) -> dict[str, str]:
    """What recall shows of each memory, by id: their strength at the ranking's ``present`` decides (the people
    service is asked once, for them all)."""
    precious = precious_ids(memories, people)
    return {
        memory.id: shown(
            memory,
            strengths.of_memory(memory, present),
            vivid=memory.id in precious or (memory.anticipated is not None and memory.anticipated > now),
            now=now,
            snippet=snippet,
        )
        for memory in memories
    }
