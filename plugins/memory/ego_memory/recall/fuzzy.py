"""Fuzzy recall: how much of a recalled memory comes back, by its recall strength.

At a strength of at least :data:`VIVID` the content is shown; from :data:`GIST` a gist (emotion, category, a
few keywords, roughly when); below it only an impression (emotion, roughly when). A precious memory and one
anticipating a moment still ahead stay vivid. No label says a memory faded: only what is shown changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, tzinfo

from ego_core import Memory, text_width, truncate, when_words
from ego_memory.recall.strength import Strengths, precious_ids
from ego_memory.text.keywords import gist
from ego_self_model.api import People

VIVID = 0.5
GIST = 0.2


def roughly(timestamp: datetime, now: datetime, tz: tzinfo) -> str:
    """Roughly when, in words by the local days of ``tz``: ``earlier today``, ``last night``, ``yesterday``,
    ``about two weeks ago``, ``several months ago`` (:func:`ego_core.when_words`)."""
    return when_words(timestamp, now, tz)


def shown(memory: Memory, strength: float, *, vivid: bool, now: datetime, tz: tzinfo, width: int) -> str:
    """What recall shows of ``memory``: its content (at most ``width`` columns), a gist, or an impression."""
    if vivid or strength >= VIVID:
        return truncate(memory.content, width)
    emotion, when = memory.emotional_trace.primary, roughly(memory.timestamp, now, tz)
    if strength >= GIST:
        return f"{emotion} {memory.category} — {gist(memory.content)} ({when})"
    return f"{emotion}, {when}"


def shares(needs: Sequence[int], room: int, least: int) -> list[int]:
    """The columns each text may take of ``room``: an even share, and what a shorter text leaves goes to the
    longer ones; never less than ``least``."""
    widths = [0] * len(needs)
    left, waiting = room, len(needs)
    for at in sorted(range(len(needs)), key=lambda i: needs[i]):  # the shortest first
        share = max(least, left // waiting)
        widths[at] = max(least, min(needs[at], share))
        left -= min(needs[at], share)
        waiting -= 1
    return widths


def recall_texts(
    memories: Sequence[Memory],
    strengths: Strengths,
    people: People | None,
    *,
    present: float,
    now: datetime,
    tz: tzinfo,
    room: int,
    least: int,
) -> dict[str, str]:
    """What recall shows of each memory, by id: their strength at the ranking's ``present`` decides (the people
    service is asked once, for them all). The contents shown share ``room`` columns (see :func:`shares`)."""
    precious = precious_ids(memories, people)
    strength = {memory.id: strengths.of_memory(memory, present) for memory in memories}
    vivid = {
        memory.id
        for memory in memories
        if memory.id in precious
        or (memory.anticipated is not None and memory.anticipated > now)
        or strength[memory.id] >= VIVID
    }
    full = [memory for memory in memories if memory.id in vivid]
    needs = [text_width(m.content[: room + 1]) for m in full]  # a longer head than the room is never needed
    widths = dict(zip((m.id for m in full), shares(needs, room, least), strict=True))
    return {
        memory.id: shown(
            memory, strength[memory.id], vivid=memory.id in vivid, now=now, tz=tz, width=widths.get(memory.id, 0)
        )
        for memory in memories
    }
