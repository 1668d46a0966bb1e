"""Absence: how long since a moment was last shared with someone, measured against their own rhythm.

The typical gap is an exponential moving average (α 0.3) over the gaps of twelve hours or more between successive
shared moments (an evening of many moments is one time together), seeded with the first; with fewer than two such
gaps it is half a week (someone seen once and again a week or more later is a reunion). It never counts as less than
a day, so a busy day of many moments does not make an afternoon's silence read as an absence, and a friend who visits
every few days is not missed after a week. The band: ``usual``
under twice the typical gap, ``quiet`` from twice, ``long`` from four times (a boundary falls into the upper band).

Silence is weak evidence: a few days without a memory naming someone one lives with is not their absence. Without
other evidence, ``quiet`` also needs :data:`QUIET_FLOOR` (three days) and ``long`` :data:`LONG_FLOOR` (a week).
A memory that names them only to say they are away or missed (:mod:`ego_self_model.presence`) after the last
shared moment is evidence: the absence is then ``evident`` and at least ``quiet``, however short.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Final

from ego_core import duration_words
from ego_self_model.api import Absence, AbsenceBand
from ego_self_model.store import StateStore

EMA_ALPHA: Final = 0.3
MIN_MOMENTS: Final = 3
FALLBACK_GAP: Final = timedelta(days=3.5)
SHORTEST_GAP: Final = timedelta(days=1)
APART: Final = timedelta(hours=12)
"""A gap between moments shorter than this is within one time together (an evening, a day), not between two."""
QUIET_FACTOR: Final = 2.0
LONG_FACTOR: Final = 4.0
QUIET_FLOOR: Final = timedelta(days=3)
LONG_FLOOR: Final = timedelta(days=7)


def typical_gap(moments: Sequence[datetime]) -> timedelta:
    """The usual time between times together (an EMA over the gaps of :data:`APART` or more between successive
    moments: an evening of many moments is one time together), or half a week with fewer than two such gaps."""
    ordered = sorted(moments)
    gaps = [
        (later - earlier).total_seconds() for earlier, later in itertools.pairwise(ordered) if later - earlier >= APART
    ]
    if len(gaps) < MIN_MOMENTS - 1:
        return FALLBACK_GAP
    average = gaps[0]
    for gap in gaps[1:]:
        average = EMA_ALPHA * gap + (1 - EMA_ALPHA) * average
    return max(timedelta(seconds=average), SHORTEST_GAP)


def band_of(elapsed: timedelta, usual: timedelta, *, evident: bool = False) -> AbsenceBand:
    """The band of ``elapsed`` against ``usual``; ``evident``: a memory said they were away (at least quiet, and
    the floors do not apply)."""
    if elapsed >= usual * LONG_FACTOR and (evident or elapsed >= LONG_FLOOR):
        return "long"
    if evident or (elapsed >= usual * QUIET_FACTOR and elapsed >= QUIET_FLOOR):
        return "quiet"
    return "usual"


def absence(
    person: str, moments: Sequence[datetime], at: datetime, *, away_since: datetime | None = None
) -> Absence | None:
    """``person``'s absence at ``at`` from the times of the moments shared with them (None when there are none).
    Moments after ``at`` are not counted. ``away_since``: when a memory first said they were away after the last
    shared moment (:meth:`ego_self_model.store.StateStore.away_since`), if one did."""
    past = [moment for moment in moments if moment <= at]
    if not past:
        return None
    last = max(past)
    elapsed = at - last
    evident = away_since is not None and last < away_since <= at
    band = band_of(elapsed, typical_gap(past), evident=evident)
    return Absence(person=person, band=band, words=duration_words(elapsed), last_shared=last, evident=evident)


def absence_in(
    store: StateStore, db: sqlite3.Connection, key: str, name: str, at: datetime, *, lives_with: bool = True
) -> Absence | None:
    """:func:`absence` of the person ``key`` (called ``name``) at ``at``, read in the transaction ``db``. What was
    said of their absence counts for the one the agent ``lives_with`` only: that a visiting friend is not here is
    no news; their absences are measured by their rhythm."""
    moments = [moment for moment in store.moments(db, key) if moment <= at]
    if not moments:
        return None
    said = store.away_since(db, key, max(moments), at) if lives_with else None
    return absence(name, moments, at, away_since=said)


REUNION_LEAST: Final = timedelta(days=2)
"""However evident, an absence shorter than this ends in no reunion: a day apart is a day."""


def ended(away: Absence, at: datetime) -> bool:
    """Whether a moment at ``at`` ends ``away`` as a reunion: an evident absence of :data:`REUNION_LEAST` (two
    days) or more, or one of :data:`LONG_FLOOR` (a week) or more that is not usual for them."""
    apart = at - away.last_shared
    return (away.evident and apart >= REUNION_LEAST) or (away.band != "usual" and apart >= LONG_FLOOR)
