"""Absence: how long since a moment was last shared with someone, measured against their own rhythm.

The typical gap is an exponential moving average (α 0.3) over the gaps between successive shared moments, seeded
with the first gap; with fewer than three moments it is a week. It never counts as less than a day, so a busy day
of many moments does not make an afternoon's silence read as an absence. The band: ``usual`` under twice the
typical gap, ``quiet`` from twice, ``long`` from four times (a boundary falls into the upper band).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Final

from ego_core import Absence, AbsenceBand, duration_words

EMA_ALPHA: Final = 0.3
MIN_MOMENTS: Final = 3
FALLBACK_GAP: Final = timedelta(days=7)
SHORTEST_GAP: Final = timedelta(days=1)
QUIET_FACTOR: Final = 2.0
LONG_FACTOR: Final = 4.0


def typical_gap(moments: Sequence[datetime]) -> timedelta:
    """The usual time between shared moments (an EMA over successive gaps), or a week with fewer than three."""
    ordered = sorted(moments)
    if len(ordered) < MIN_MOMENTS:
        return FALLBACK_GAP
    gaps = [(later - earlier).total_seconds() for earlier, later in itertools.pairwise(ordered)]
    average = gaps[0]
    for gap in gaps[1:]:
        average = EMA_ALPHA * gap + (1 - EMA_ALPHA) * average
    return max(timedelta(seconds=average), SHORTEST_GAP)


def band_of(elapsed: timedelta, usual: timedelta) -> AbsenceBand:
    if elapsed >= usual * LONG_FACTOR:
        return "long"
    if elapsed >= usual * QUIET_FACTOR:
        return "quiet"
    return "usual"


def absence(person: str, moments: Sequence[datetime], at: datetime) -> Absence | None:
    """``person``'s absence at ``at`` from the times of the moments shared with them (None when there are none).
    Moments after ``at`` are not counted."""
    past = [moment for moment in moments if moment <= at]
    if not past:
        return None
    last = max(past)
    elapsed = at - last
    band = band_of(elapsed, typical_gap(past))
    return Absence(person=person, band=band, words=duration_words(elapsed), last_shared=last)
