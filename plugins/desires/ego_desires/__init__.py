"""ego desires: nine abstract desires that rise with time, are satisfied, and are coloured by memory, body and
questions."""

from __future__ import annotations

from ego_desires.catalog import DESIRES, TIERS, desire_name
from ego_desires.config import DesiresConfig, band
from ego_desires.curve import Anchor, base_level, blended_quality, pace, position, satisfied_position, sigmoid
from ego_desires.levels import Reading, Snapshot, snapshot
from ego_desires.modulation import Inputs, Modulation, modulate
from ego_desires.plugin import DesiresPlugin, LevelsService
from ego_desires.render import WAKE_UP_MAX_CHARS, feeling_line, introspect_text, levels_line
from ego_desires.store import DesireStore, DesireStoreError

__all__ = [
    "DESIRES",
    "TIERS",
    "WAKE_UP_MAX_CHARS",
    "Anchor",
    "DesireStore",
    "DesireStoreError",
    "DesiresConfig",
    "DesiresPlugin",
    "Inputs",
    "LevelsService",
    "Modulation",
    "Reading",
    "Snapshot",
    "band",
    "base_level",
    "blended_quality",
    "desire_name",
    "feeling_line",
    "introspect_text",
    "levels_line",
    "modulate",
    "pace",
    "position",
    "satisfied_position",
    "sigmoid",
    "snapshot",
]
