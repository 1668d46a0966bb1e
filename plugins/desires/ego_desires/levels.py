"""Every desire's level at one moment: the base curve of its state plus modulation, kept within [0, 1] (above
``soft_from`` what modulation adds only approaches 1).

:func:`snapshot` is a pure function of (stored state, inputs, clock, config): the same arguments always give
the same levels. The last moment shared with the companion (an input) counts as a satisfaction of the desires
``company.shared`` lists, and holds them while you are together, whether or not it was written yet.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timedelta

import attrs

from ego_desires.catalog import DESIRES
from ego_desires.config import DesiresConfig
from ego_desires.curve import SHARED, Anchor, base_level, blended_quality, position, satisfied_position
from ego_desires.modulation import Inputs, Modulation, modulate
from ego_self_model.api import AbsenceBand


@attrs.frozen
class Reading:
    name: str
    base: float
    """The level from time and satisfaction alone."""
    modulation: float
    """What memories, body and questions add (may be negative)."""
    level: float
    """``base + modulation`` clamped to [0, 1]."""


@attrs.frozen
class Snapshot:
    readings: tuple[Reading, ...]
    """One per desire, in the canonical order."""
    modulation: Modulation
    together: bool = False
    """A moment was shared with the companion within ``company.together_hours``: loneliness is not worded."""
    absence: AbsenceBand | None = None
    """How long the companion has been away against their usual rhythm (None: no self-model knows)."""
    knows_company: bool = False
    """A self-model reads company (:attr:`Inputs.knows_company`)."""

    def reading(self, name: str) -> Reading:
        return next(r for r in self.readings if r.name == name)

    def levels(self) -> dict[str, float]:
        return {r.name: r.level for r in self.readings}

    def strongest(self) -> list[Reading]:
        """Highest level first; equal levels in the canonical order."""
        return sorted(self.readings, key=lambda r: -r.level)

    @property
    def alone(self) -> bool:
        """Time alone, to which loneliness belongs: not together with the companion, and apart from them longer
        than usual (``quiet`` or ``long``) — or with no self-model to ask. A self-model that knows no one yet (no
        companion, no moment) is no evidence of being alone: nothing is said of loneliness then."""
        if self.together:
            return False
        if self.absence is None:
            return not self.knows_company
        return self.absence != "usual"

    @property
    def unresolved(self) -> bool:
        """Fading important questions are raising cognitive_coherence."""
        return self.modulation.question_boost > 0


def clamp_level(value: float) -> float:
    return min(1.0, max(0.0, value))


def combined(base: float, change: float, soft_from: float) -> float:
    """``base + change`` in [0, 1]; above ``soft_from`` a positive change only approaches 1 (what lies beyond is
    compressed: soft_from + room · (1 − e^(−excess / room))), and it never takes the level below ``base``."""
    raw = base + change
    room = 1.0 - soft_from
    if change <= 0.0 or raw <= soft_from or room <= 0.0:
        return clamp_level(raw)
    return clamp_level(max(base, soft_from + room * (1.0 - math.exp(-(raw - soft_from) / room))))


def initial_anchor(now: datetime, config: DesiresConfig) -> Anchor:
    return Anchor(anchored_at=now.timestamp(), start=config.initial_position)


def current_position(anchor: Anchor, name: str, now: datetime, config: DesiresConfig) -> float:
    return position(anchor, now.timestamp(), config.periods.hours(name), config.steepness, config.recovery_gain)


def level_of(anchor: Anchor, name: str, now: datetime, config: DesiresConfig) -> float:
    """The base level of ``name`` at ``now`` from ``anchor`` (time and satisfaction alone)."""
    return base_level(current_position(anchor, name, now, config), config.steepness, config.settle)


def satisfied_anchor(
    anchor: Anchor, name: str, at: datetime, *, quality: float, source: str, config: DesiresConfig
) -> Anchor:
    """``anchor`` satisfied at ``at`` with ``quality`` by ``source`` (a tool, a shared moment)."""
    here = current_position(anchor, name, at, config)
    level = base_level(here, config.steepness, config.settle)
    return Anchor(
        anchored_at=at.timestamp(),
        start=satisfied_position(here, quality, config.steepness, config.settle),
        quality=blended_quality(quality, anchor.quality, level),
        source=source,
    )


def shared_satisfaction(anchor: Anchor, name: str, at: datetime, config: DesiresConfig) -> Anchor:
    """``anchor`` satisfied at ``at`` by a moment shared with the companion (``company.shared``'s quality)."""
    return satisfied_anchor(anchor, name, at, quality=config.company.shared[name], source=SHARED, config=config)


def lived(anchor: Anchor, name: str, shared_at: datetime | None, now: datetime, config: DesiresConfig) -> Anchor:
    """``anchor`` with the last moment shared with the companion counted: a satisfaction at that moment when it
    came after the stored one, and no rise while you are together (until ``company.together_hours`` after it).
    Desires ``company.shared`` does not list, and a moment after ``now``, change nothing."""
    if shared_at is None or name not in config.company.shared or shared_at > now:
        return anchor
    if shared_at.timestamp() > anchor.anchored_at:
        anchor = shared_satisfaction(anchor, name, shared_at, config)
    held = (shared_at + timedelta(hours=config.company.together_hours)).timestamp()
    return attrs.evolve(anchor, anchored_at=held) if held > anchor.anchored_at else anchor


def together(shared_at: datetime | None, now: datetime, config: DesiresConfig) -> bool:
    """A moment was shared with the companion within ``company.together_hours`` before ``now``."""
    return shared_at is not None and timedelta(0) <= now - shared_at < timedelta(hours=config.company.together_hours)


def snapshot(anchors: Mapping[str, Anchor], inputs: Inputs, now: datetime, config: DesiresConfig) -> Snapshot:
    modulation = modulate(inputs, now, config)
    readings = []
    for name in DESIRES:
        anchor = lived(anchors.get(name) or initial_anchor(now, config), name, inputs.shared_at, now, config)
        base = level_of(anchor, name, now, config)
        change = modulation.total(name)
        level = combined(base, change, config.soft_from)
        readings.append(Reading(name=name, base=base, modulation=change, level=level))
    return Snapshot(
        readings=tuple(readings),
        modulation=modulation,
        together=together(inputs.shared_at, now, config),
        absence=inputs.absence,
        knows_company=inputs.knows_company,
    )
