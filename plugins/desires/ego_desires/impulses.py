"""Impulses: a memory that comes back unbidden gives a passing push to the desire its emotion calls for.

The push waits (kept in the store, so a restart keeps it) until the agent next sees the levels — in wake_up,
introspect, attune or feel_desires — and is then gone. Only the memory's id, its emotion and the amounts are
kept, never its text.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from ego_core import Memory

IMPULSES: Final[Mapping[str, tuple[str, float]]] = MappingProxyType(
    {
        "surprised": ("curiosity", 0.20),
        "excited": ("curiosity", 0.15),
        "curious": ("information_hunger", 0.15),
        "sad": ("social_thirst", 0.15),
        "melancholy": ("social_thirst", 0.15),
        "anxious": ("cognitive_coherence", 0.15),
        "nostalgic": ("resonance", 0.15),
        "moved": ("expression", 0.15),
        "frustrated": ("expression", 0.10),
        "happy": ("expression", 0.10),
        "contentment": ("expression", 0.10),
    }
)
"""Primary emotion → the desire an involuntary memory of it pushes, and by how much (neutral pushes nothing)."""


def impulse_of(memory: Memory) -> tuple[str, float] | None:
    """The desire and amount ``memory``'s primary emotion calls for, or None."""
    return IMPULSES.get(memory.emotional_trace.primary)


def capped(pending: Mapping[str, float], cap: float) -> dict[str, float]:
    """Each desire's pending impulses, at most ``cap``; desires with nothing pending left out."""
    return {desire: min(cap, amount) for desire, amount in pending.items() if amount > 0}
