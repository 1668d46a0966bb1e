"""Every desire's level at one moment: the base curve of its state plus modulation, clamped to [0, 1].

:func:`snapshot` is a pure function of (stored state, inputs, clock, config): the same arguments always give
the same levels.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import attrs

from ego_desires.catalog import DESIRES
from ego_desires.config import DesiresConfig
from ego_desires.curve import Anchor, base_level, position
from ego_desires.modulation import Inputs, Modulation, modulate


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

    def reading(self, name: str) -> Reading:
        return next(r for r in self.readings if r.name == name)

    def levels(self) -> dict[str, float]:
        return {r.name: r.level for r in self.readings}

    def strongest(self) -> list[Reading]:
        """Highest level first; equal levels in the canonical order."""
        return sorted(self.readings, key=lambda r: -r.level)

    @property
    def unresolved(self) -> bool:
        """Fading important questions are raising cognitive_coherence."""
        return self.modulation.question_boost > 0


def clamp_level(value: float) -> float:
    return min(1.0, max(0.0, value))


def initial_anchor(now: datetime, config: DesiresConfig) -> Anchor:
    return Anchor(anchored_at=now.timestamp(), start=config.initial_position)


def current_position(anchor: Anchor, name: str, now: datetime, config: DesiresConfig) -> float:
    return position(anchor, now.timestamp(), config.periods.hours(name), config.steepness, config.recovery_gain)


def snapshot(anchors: Mapping[str, Anchor], inputs: Inputs, now: datetime, config: DesiresConfig) -> Snapshot:
    modulation = modulate(inputs, now, config)
    readings = []
    for name in DESIRES:
        anchor = anchors.get(name) or initial_anchor(now, config)
        base = base_level(current_position(anchor, name, now, config), config.steepness)
        change = modulation.total(name)
        readings.append(Reading(name=name, base=base, modulation=change, level=clamp_level(base + change)))
    return Snapshot(readings=tuple(readings), modulation=modulation)
