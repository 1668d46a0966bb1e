"""The desires plugin's public contract: the ``desires.levels`` service, for plugins and the dashboard.

A consumer asks ``ctx.services.get(DESIRE_LEVELS, DesireLevels)`` and copes with ``None`` (desires disabled). This
module imports only ``ego_core``, ``attrs`` and the standard library, never another module of the plugin: a
plugin that uses it has no import cycle with this one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Protocol, runtime_checkable

import attrs

__all__ = ["DESIRE_LEVELS", "DesireLevels", "DesireSample"]

DESIRE_LEVELS = "desires.levels"


def _levels(value: Mapping[str, float]) -> Mapping[str, float]:
    return MappingProxyType(dict(value))


@attrs.frozen
class DesireSample:
    """The desires' levels as the agent felt them at one moment (levels only, never text)."""

    at: datetime
    levels: Mapping[str, float] = attrs.field(factory=dict, converter=_levels)
    """Every desire's level then, in [0, 1], by name."""


@runtime_checkable
class DesireLevels(Protocol):
    """The desires plugin's current levels, for plugins that react to them (the self-model's resurfacing), and
    their recorded history (the dashboard's History view)."""

    def levels(self) -> Mapping[str, float]:
        """Every desire's level now, in [0, 1], by name (``curiosity``, ``cognitive_coherence``, ...)."""
        ...

    def history(self, since: datetime, until: datetime) -> Sequence[DesireSample]:
        """The levels the agent felt from ``since`` to ``until`` (both included), oldest first: at most one sample
        per 15 minutes, kept 90 days. An implementer subclassing this protocol without its own history has none."""
        return ()
