"""Time decay: how much of a memory's recall strength is left.

The half-life grows with use (access count) and with the memory's links, so a memory that is recalled or well
connected fades more slowly. Recall ranking and the memory service (``faded_emotions``) share these formulas.
"""

from __future__ import annotations

import math

DAY = 86400.0


def link_strength(total_confidence: float) -> float:
    """A memory's links as one number in [0, 1]: the sum of its outgoing links' confidence over 5, capped."""
    return min(1.0, total_confidence / 5.0)


def half_life(half_life_days: float, access_count: int, links: float) -> float:
    """Days until half the strength is gone: ``half_life_days · (1 + 0.5·ln(1 + access_count)) · (1 + links)``."""
    return half_life_days * (1.0 + 0.5 * math.log1p(access_count)) * (1.0 + links)


def recall_strength(age_days: float, half_life_days: float) -> float:
    """The recency factor ``exp(-ln 2 · age_days / half_life)``: 1 for a fresh memory, 0.5 after one half-life."""
    return math.exp(-math.log(2.0) * max(0.0, age_days) / half_life_days)


PRECIOUS_FLOOR = 0.25
"""Recall ranking counts a precious memory's strength as at least this (what recall shows stays the raw value)."""
DORMANT = 0.3
"""Below this recall strength a memory is dormant (``MemoryService.dormant_near``)."""


def strength_at(
    ts: float, at: float, half_life_days: float, *, access_count: int, links: float, anticipated: float | None = None
) -> float:
    """A memory's recall strength at ``at`` (epoch seconds). A memory anticipating a moment keeps 1 until that
    moment and fades from it afterwards (not from when it was written), so its strength never jumps."""
    start = ts if anticipated is None else max(ts, anticipated)
    return recall_strength((at - start) / DAY, half_life(half_life_days, access_count, links))
