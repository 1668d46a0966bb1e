"""The desires' part of ``attune``: desire currents in words, and current interests.

Pure functions of their arguments: readings, usual levels, emergent desires, memories and notions at a moment.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Final

import attrs

from ego_core import Memory, NotionView
from ego_desires.emergent import Direction
from ego_desires.levels import Reading
from ego_desires.wording import Catalog

SHOWN_FROM: Final = 0.3
"""Desires below this level are not spoken of."""
SHOWN: Final = 3
STIRS_ABOVE: Final = 0.5
"""A desire left out that is above this level makes itself felt without a name."""
NOTHING: Final = "Nothing in particular pulls at you right now."
STIRS: Final = "Something else stirs, but you can't name it yet."
USUAL: Final = 0.5
"""The usual level of a desire never sampled yet."""

INTEREST_HALF_LIFE_HOURS: Final = 12.0
"""Recency weight e^(−age / 12 h)."""
TOPICS_SHOWN: Final = 3
TOPIC_CHARS: Final = 40
GENERIC_SHARE: Final = 0.25
"""A category that holds at least this share of the background memories is generic (weighs less)."""
RECENT: Final = 10


@attrs.frozen
class Current:
    name: str
    level: float
    direction: Direction


def direction_of(level: float, usual: float | None, margin: float) -> Direction:
    """rising above its usual level by more than ``margin``, settling below by more, steady otherwise."""
    baseline = USUAL if usual is None else usual
    if level > baseline + margin:
        return "rising"
    if level < baseline - margin:
        return "settling"
    return "steady"


def fixed_currents(readings: Sequence[Reading], usual: Mapping[str, float], margin: float) -> list[Current]:
    return [Current(r.name, r.level, direction_of(r.level, usual.get(r.name), margin)) for r in readings]


def currents_line(currents: Iterable[Current], catalog: Catalog, emergent: Collection[str] = ()) -> str:
    """``Desire currents: …``: the strongest (at least 0.3) in their catalog sentence for their direction.

    The strongest of the ``emergent`` desires always has a place (the last one), so that an emergent pull is
    felt while it lives even when long-neglected fixed desires are all at the top.
    """
    ranked = sorted((c for c in currents if c.level >= SHOWN_FROM), key=lambda c: (-round(c.level, 3), c.name))
    if not ranked:
        return f"Desire currents: {NOTHING}"
    shown = ranked[:SHOWN]
    pull = next((c for c in ranked if c.name in emergent), None)
    if pull is not None and pull not in shown:
        shown = [*shown[: SHOWN - 1], pull]
    sentences = []
    for current in shown:
        entry = catalog.entry(current.name)
        sentences.append(entry.sentence[current.direction] if entry is not None else f"{current.name}.")
    if any(c.level > STIRS_ABOVE for c in ranked if c not in shown):
        sentences.append(STIRS)
    return "Desire currents: " + " ".join(sentences)


def _recency(at: datetime, now: datetime) -> float:
    hours = max(0.0, (now - at).total_seconds() / 3600.0)
    return math.exp(-hours / INTEREST_HALF_LIFE_HOURS)


def _topic(text: str) -> str:
    cleaned = " ".join(text.split())
    return cleaned if len(cleaned) <= TOPIC_CHARS else cleaned[: TOPIC_CHARS - 1].rstrip() + "…"


def interests(
    background: Sequence[Memory],
    notions: Sequence[NotionView],
    emergent: Sequence[tuple[str, datetime]],
    now: datetime,
) -> list[str]:
    """The top topics by score: tags (1.0) and categories (0.5, or 0.15 when generic) of the 10 newest memories,
    notion labels (2.0) and emergent desires (1.0), each weighed by recency. A private memory's tags are left out.
    """
    scores: dict[str, float] = defaultdict(float)
    shown: dict[str, str] = {}
    newest = sorted(background, key=lambda m: m.timestamp, reverse=True)
    share = Counter(m.category for m in newest)
    generic = {c for c, n in share.items() if newest and n / len(newest) >= GENERIC_SHARE}

    def add(text: str, weight: float) -> None:
        topic = _topic(text)
        if not topic or weight <= 0:
            return
        key = topic.casefold()
        shown.setdefault(key, topic)
        scores[key] += weight

    for memory in newest[:RECENT]:
        r = _recency(memory.timestamp, now)
        if not memory.is_private:
            for tag in memory.tags:
                add(tag, 1.0 * r)
        add(memory.category, (0.15 if memory.category in generic else 0.5) * r)
    for notion in notions:
        add(notion.label, 2.0 * _recency(notion.reinforced_at, now))
    for name, created in emergent:
        add(name, 1.0 * _recency(created, now))
    ranked = sorted(scores, key=lambda key: (-scores[key], key))
    return [shown[key] for key in ranked[:TOPICS_SHOWN]]


def interests_line(topics: Sequence[str]) -> str | None:
    return f"Current interests: {', '.join(topics)}" if topics else None
