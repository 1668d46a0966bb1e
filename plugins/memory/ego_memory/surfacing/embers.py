"""Embers: the intense memories of the last few still smoulder in ``wake_up``'s ``Embers:`` line.

Each of the :data:`EMBER_NEWEST` newest memories of the last :data:`EMBER_HOURS` hours whose intensity is above
:data:`EMBER_INTENSITY` offers
``...{emotion} about: {the opening of its content}`` with its intensity as warmth (the core shows the two warmest
fragments of every plugin). A private memory offers ``...{emotion} about something private``: never its words.
The thought wake_up quotes already (the newest introspection) offers nothing.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta

from ego_core import Claim, Ember, Memory
from ego_memory.text.thought import clip

EMBER_NEWEST = 5
EMBER_HOURS = 24
"""An ember is recent: a memory older than a day no longer smoulders, however intense it was (a vivid memory of
last month comes back through recall and involuntary surfacing, not as an ember)."""
EMBER_INTENSITY = 0.6
EMBERS_OFFERED = 2
"""Only the two warmest of all plugins' fragments are shown: offering more would change nothing."""
EMBER_TOKENS = 14
"""Tokens of a fragment's quote (a Japanese character is about one, an English word about one): two fragments fit
wake_up's budget, and a Japanese one keeps ten characters or more, cut at a word."""
EMBER_QUOTE = 36
"""Columns of a fragment's quote, a loose outer bound (a CJK character counts two): about six English words."""


def ember_text(memory: Memory) -> str:
    emotion = memory.emotional_trace.primary
    if memory.is_private:
        return f"...{emotion} about something private"
    return f"...{emotion} about: {ember_quote(memory)}"


def ember_quote(memory: Memory) -> str:
    return clip(memory.content, EMBER_QUOTE, tokens=EMBER_TOKENS)


def ember_of(memory: Memory) -> Ember:
    """The ember of one memory, with the quote it shows as a claim (none for a private one: nothing is quoted)."""
    claims = () if memory.is_private else (quote_claim(memory, ember_quote(memory)),)
    return Ember(text=ember_text(memory), warmth=memory.emotional_trace.intensity, claims=claims)


def quote_claim(memory: Memory, words: str) -> Claim:
    return Claim(kind="quote", memory_id=memory.id, words=words, whole=memory.content, at=memory.timestamp)


def embers(newest: Collection[Memory], now: datetime, *, quoted: Collection[str] = ()) -> list[Ember]:
    """The embers of ``newest`` (the newest memories) from the last :data:`EMBER_HOURS` hours before ``now``,
    warmest first, the newer first among equally warm; ``quoted``: ids wake_up quotes already."""
    since = now - timedelta(hours=EMBER_HOURS)
    intense = [
        m
        for m in newest
        if m.emotional_trace.intensity > EMBER_INTENSITY and m.id not in quoted and since <= m.timestamp <= now
    ]
    intense.sort(key=lambda m: (-m.emotional_trace.intensity, -m.timestamp.timestamp()))
    return [ember_of(m) for m in intense[:EMBERS_OFFERED]]
