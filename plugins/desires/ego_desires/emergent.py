"""Emergent desires: six desires that arise from strong notions or from the feelings of the last hours, live
for a while and are gone.

Everything here is pure: which desire an emotion calls up, whether a stored emergent desire is still alive at a
moment, and its life stage (rising, steady, settling). Expiry is a predicate, so reading changes nothing; rows
that are no longer alive are deleted by the next write.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Final, Literal

import attrs

from ego_core import Memory
from ego_desires.config import EmergentSettings

Direction = Literal["rising", "steady", "settling"]
DIRECTIONS: Final[tuple[Direction, ...]] = ("rising", "steady", "settling")

EMERGENT: Final[tuple[str, ...]] = (
    "be_with_someone",
    "get_away_from_something",
    "feel_safe",
    "grasp_something",
    "stay_in_this",
    "go_back_to_something",
)

RISING_UNTIL: Final = 0.25
"""An emergent desire rises for the first quarter of its life, is steady until 60 %, and settles after."""
STEADY_UNTIL: Final = 0.60

_NEGATIVE: Final[Mapping[str, str]] = MappingProxyType(
    {
        "melancholy": "be_with_someone",
        "sad": "be_with_someone",
        "frustrated": "get_away_from_something",
        "anxious": "feel_safe",
    }
)
_POSITIVE: Final[Mapping[str, str]] = MappingProxyType(
    {"excited": "grasp_something", "happy": "stay_in_this", "contentment": "stay_in_this"}
)


def called_up(emotion: str, valence: float) -> str | None:
    """The emergent desire an emotion with a mean valence calls up, or None (curious calls up none)."""
    if emotion == "nostalgic":
        return "go_back_to_something"
    if valence < 0 and emotion in _NEGATIVE:
        return _NEGATIVE[emotion]
    if valence > 0 and emotion in _POSITIVE:
        return _POSITIVE[emotion]
    return None


def from_flow(newest_first: Sequence[Memory], least: int) -> str | None:
    """The desire the short-term flow calls up: its most frequent primary emotion (ties: the one met first,
    newest first) and the mean valence, once at least ``least`` memories are in the window."""
    if len(newest_first) < least or not newest_first:
        return None
    counts = Counter(m.emotional_trace.primary for m in newest_first)
    order = {emotion: i for i, emotion in reversed(list(enumerate(m.emotional_trace.primary for m in newest_first)))}
    dominant = min(counts, key=lambda emotion: (-counts[emotion], order[emotion]))
    valence = sum(m.emotional_trace.valence for m in newest_first) / len(newest_first)
    return called_up(dominant, valence)


@attrs.frozen
class EmergentRow:
    """The stored state of one emergent desire (times in UTC seconds)."""

    name: str
    created: float
    anchored_at: float
    """When its level curve was last anchored: its creation, or its last satisfaction."""
    start: float
    """The position at ``anchored_at``, in periods."""
    quality: float | None = None
    satisfied_at: float | None = None
    """Its last satisfaction, or None while it never was."""


def alive(row: EmergentRow, now: float, settings: EmergentSettings) -> bool:
    """Never satisfied: alive until ``expiry_hours`` after it arose; satisfied: until ``satisfied_ttl_hours``
    after its last satisfaction."""
    if row.satisfied_at is None:
        return now < row.created + settings.expiry_hours * 3600.0
    return now < row.satisfied_at + settings.satisfied_ttl_hours * 3600.0


def life_stage(row: EmergentRow, now: float, settings: EmergentSettings) -> Direction:
    """settling once satisfied; otherwise by the share of its life gone (rising, steady, then settling)."""
    if row.satisfied_at is not None:
        return "settling"
    ratio = max(0.0, now - row.created) / (settings.expiry_hours * 3600.0)
    if ratio < RISING_UNTIL:
        return "rising"
    return "steady" if ratio < STEADY_UNTIL else "settling"
