"""Where each built-in section of a composed answer goes, declared once, by name.

The core composes ``wake_up``, ``introspect`` and ``attune``, the memory plugin composes ``consolidate``, and the
core's prompts ``wake-up`` and ``heartbeat`` are composed the same way, each from the sections the plugins
return. A built-in section names its slot (``Section(key="self_model.people", slot="self_model.people", ...)``);
:data:`SLOTS` gives each slot of each answer its place (``order``, ascending; equal orders by the section's
``key``) and what the answer's token budget leaves out first (lowest ``priority``). A section that names no slot
of the answer (a third-party plugin's) keeps its own ``order`` and ``priority``: by default (100 and 50) it comes
after every built-in slot but the closing line of the prompts.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import attrs

from ego_core.types import Section


@attrs.frozen
class Slot:
    """A place in a composed answer: its name, its ``order`` there and its ``priority`` (0-100) when not
    everything fits the answer's token budget."""

    name: str
    order: int
    priority: int = 50


def _slots(*slots: tuple[str, int, int]) -> tuple[Slot, ...]:
    return tuple(Slot(name, order, priority) for name, order, priority in slots)


SLOTS: Mapping[str, tuple[Slot, ...]] = MappingProxyType(
    {
        # (slot, order, priority), in the order they are shown
        "wake_up": _slots(
            ("memory.thought", 10, 90),  # the last introspection (the agent's own thought) or the memory count
            ("memory.unbidden", 11, 40),
            ("self_model.open_edge", 12, 50),
            ("embers", 15, 35),  # the core's
            ("memory.anticipation", 18, 80),  # told once
            ("desires", 20, 70),
            ("emotion_trend", 25, 45),
            ("self_model.companion", 30, 65),
            ("self_model.reunion", 30, 85),  # told once
            ("interoception", 40, 30),
            ("shared_memory", 60, 20),  # a pointer (scaffold only)
        ),
        "introspect": _slots(
            ("memory.recent", 10, 50),
            ("desires", 20, 50),
            ("notions", 27, 50),
            ("self_model.questions", 30, 50),
            ("self_model.resurfacing", 35, 75),  # questions a memory just brought back
            ("self_model.ripened", 35, 85),  # told once, in place of the resurfacing questions
            ("emotion_trend", 40, 50),
            ("self_model.self", 50, 50),
            ("self_model.people", 55, 50),
        ),
        "attune": _slots(
            ("emotion_trend", 10, 50),
            ("memory.anticipation", 18, 80),
            ("desires", 20, 50),
            ("notions", 25, 50),
            ("self_model.person", 30, 50),
            ("self_model.ripening", 35, 50),
            ("interoception", 40, 30),
        ),
        "consolidate": _slots(
            ("self_model.ripening", 35, 50),
            ("notions", 40, 50),
            ("dedup", 50, 50),
        ),
        "wake-up": _slots(
            ("core.first", 10, 50),
            ("self_model.person", 15, 50),
            ("memory.keep", 20, 50),
            ("memory.private", 30, 50),
            ("core.closing", 1000, 50),  # after every plugin's step
        ),
        "heartbeat": _slots(
            ("core.attune", 10, 50),
            ("self_model.person", 15, 50),
            ("desires", 20, 50),
            ("core.introspect", 40, 50),
            ("memory.remember", 60, 50),
            ("memory.consolidate", 80, 50),
        ),
    }
)
"""Each composed answer (a tool's or a prompt's name) and its built-in slots, in the order they are shown."""


def slot_of(answer: str, name: str | None) -> Slot | None:
    """The slot called ``name`` in ``answer``, or None (no such answer or slot, or no name)."""
    if name is None:
        return None
    return next((slot for slot in SLOTS.get(answer, ()) if slot.name == name), None)


def placed(answer: str, section: Section) -> Section:
    """``section`` with its slot's order and priority in ``answer``; as it is when it names no slot there."""
    slot = slot_of(answer, section.slot)
    if slot is None:
        return section
    return attrs.evolve(section, order=slot.order, priority=slot.priority)
