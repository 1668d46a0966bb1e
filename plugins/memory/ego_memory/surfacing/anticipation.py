"""Anticipation: a memory that looks forward to a moment ("dinner with Master on Friday").

Until the moment it does not fade (:func:`ego_memory.recall.decay.strength_at`) and grows more present as the moment
nears (the approach salience); when the moment has come, wake_up or attune asks once how it was. Afterwards it
fades from the moment on, like a memory written then.
"""

from __future__ import annotations

import math
import random
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Literal

from ego_core import Claim, Memory, duration_words, truncate
from ego_memory.store.memory_store import MemoryStore
from ego_memory.store.rows import to_millis

Band = Literal["arrived", "imminent", "approaching", "distant"]

TAU_DAYS = 7.0
"""Days of the approach salience's reach per importance point."""
IMMINENT = timedelta(hours=48)
APPROACHING = 0.3
"""An anticipation is approaching from this salience on."""
HORIZON = timedelta(days=43)
"""No anticipation further off than this is approaching (importance 5 becomes so about 42 days before)."""
APPROACH_CHANCE = 0.5
"""How often wake_up or attune mentions an approaching (not yet imminent) anticipation."""
QUOTE_TOKENS = 20
"""Tokens of the quoted memory (a Japanese character is about one, an English word about one): wake_up stays in its
token budget, and a Japanese quote keeps ten characters or more, cut at a word."""
QUOTE = 60
"""Columns of the quoted memory, a loose outer bound (a CJK character counts two)."""
PAST_NOTE = "Note: anticipated_at is already in the past — held as a regular memory."
UNREADABLE_NOTE = "Note: anticipated_at could not be read as a time — held as a regular memory."


def parse_anticipated(value: object, tz: tzinfo, now: datetime) -> tuple[datetime | None, str | None]:
    """The anticipated moment (UTC, whole milliseconds) of a ``remember`` argument, or None with the note the
    response gains: an ISO 8601 date (local midnight in ``tz``) or date-time (naive: in ``tz``)."""
    if value is None:
        return None, None
    if not isinstance(value, str):
        return None, UNREADABLE_NOTE
    text = value.strip()
    try:
        if len(text) == 10:
            moment = datetime.combine(date.fromisoformat(text), time.min, tzinfo=tz)
        else:
            moment = datetime.fromisoformat(text)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=tz)
        moment = to_millis(moment.astimezone(now.tzinfo))
    except (ValueError, OverflowError):
        return None, UNREADABLE_NOTE
    if moment <= now:
        return None, PAST_NOTE
    return moment, None


def salience(importance: int, days_until: float) -> float:
    """How present an anticipation is: ``(I/5)·exp(−days/(7·I))``, I the importance clamped to 1–5."""
    level = min(5, max(1, importance))
    return min(1.0, max(0.0, level / 5 * math.exp(-max(0.0, days_until) / (TAU_DAYS * level))))


def band(moment: datetime, importance: int, now: datetime) -> Band:
    """arrived (the moment has come), imminent (within 48 hours), approaching (salience at least 0.3) or
    distant."""
    ahead = moment - now
    if ahead <= timedelta(0):
        return "arrived"
    if ahead <= IMMINENT:
        return "imminent"
    return "approaching" if salience(importance, ahead / timedelta(days=1)) >= APPROACHING else "distant"


def when_words(moment: datetime, now: datetime, tz: tzinfo) -> str:
    """How far off the moment is, in words (never digits): ``later today``, ``tomorrow``, ``in a day or two``,
    ``in about two weeks``."""
    days = (moment.astimezone(tz).date() - now.astimezone(tz).date()).days
    if days <= 0:
        return "later today"
    if days == 1:
        return "tomorrow"
    if moment - now <= IMMINENT:
        return "in a day or two"
    return f"in {duration_words(moment - now)}"


def quote(memory: Memory) -> str:
    private = " (private)" if memory.is_private else ""
    return f'"{quoted(memory)}"{private}'


def quoted(memory: Memory) -> str:
    return truncate(memory.content, QUOTE, tokens=QUOTE_TOKENS)


def surfacing_claims(memory: Memory) -> tuple[Claim, ...]:
    """What an anticipation line states: the moment looked forward to, and the words quoted."""
    return (
        Claim(kind="anticipation", memory_id=memory.id, at=memory.anticipated),
        Claim(kind="quote", memory_id=memory.id, words=quoted(memory), whole=memory.content, at=memory.timestamp),
    )


def surfacing_line(store: MemoryStore, now: datetime, tz: tzinfo, chance: random.Random) -> tuple[str, Memory] | None:
    """At most one anticipation for wake_up or attune. An arrival wins (the earliest; acknowledged once, for
    good), then the most salient imminent one (always), then the most salient approaching one (one time in
    two). Neither of the last two is marked: it may come back at the next call. The line and its memory."""
    waiting = store.unsurfaced_anticipations((now + HORIZON).timestamp())
    for memory in waiting:
        if memory.anticipated is not None and memory.anticipated <= now and store.mark_surfaced(memory.id):
            return f"That time came: {quote(memory)}. How was it, actually?", memory
    ahead = [(m, m.anticipated) for m in waiting if m.anticipated is not None and m.anticipated > now]

    def most_salient(memories: list[tuple[Memory, datetime]]) -> tuple[Memory, datetime]:
        return max(
            memories,
            key=lambda pair: (
                salience(pair[0].importance, (pair[1] - now).total_seconds() / 86400),
                -pair[1].timestamp(),
            ),
        )

    imminent = [pair for pair in ahead if band(pair[1], pair[0].importance, now) == "imminent"]
    if imminent:
        memory, moment = most_salient(imminent)
    else:
        approaching = [pair for pair in ahead if band(pair[1], pair[0].importance, now) == "approaching"]
        if not approaching or chance.random() >= APPROACH_CHANCE:
            return None
        memory, moment = most_salient(approaching)
    when = when_words(moment, now, tz)
    if when in ("later today", "tomorrow"):
        return f"{when.capitalize()}: {quote(memory)}", memory
    return f"Approaching: {quote(memory)} ({when}).", memory
