"""The slot table (``ego_core.SLOTS``): every built-in section's place and priority, declared once by name; the
composition places the sections that name a slot by it, and the others by their own order and priority."""

from __future__ import annotations

from typing import Any

import pytest

from ego_core import SLOTS, Section, Slot, compose_sections, hookimpl
from ego_core.testing import HostFactory, mcp_client, tool_text

ANSWERS = ("wake_up", "introspect", "attune", "consolidate", "wake-up", "heartbeat")
DEFAULT = Section(key="any", text="")
"""A section with the default order (100) and priority (50)."""


def slot(answer: str, name: str) -> Slot:
    [found] = [s for s in SLOTS[answer] if s.name == name]
    return found


def test_every_composed_answer_has_slots_each_declared_once() -> None:
    assert tuple(SLOTS) == ANSWERS
    for answer, slots in SLOTS.items():
        names = [s.name for s in slots]
        assert len(names) == len(set(names)), answer
        assert [s.order for s in slots] == sorted(s.order for s in slots), answer  # declared in the order shown
        assert all(0 <= s.priority <= 100 for s in slots), answer


def test_a_section_with_the_default_order_comes_after_every_built_in_slot_but_the_closing_line() -> None:
    later = [(answer, s.name) for answer, slots in SLOTS.items() for s in slots if s.order >= DEFAULT.order]
    assert later == [("wake-up", "core.closing")]


def test_today_s_layout_of_wake_up() -> None:
    table = [(s.name, s.order, s.priority) for s in SLOTS["wake_up"]]
    assert table == [
        ("memory.thought", 10, 90),
        ("memory.unbidden", 11, 40),
        ("self_model.open_edge", 12, 50),
        ("embers", 15, 35),
        ("memory.anticipation", 18, 80),
        ("desires", 20, 70),
        ("emotion_trend", 25, 45),
        ("self_model.companion", 30, 65),
        ("self_model.reunion", 30, 85),
        ("interoception", 40, 30),
        ("shared_memory", 60, 20),
    ]


def composed(answer: str | None, *sections: Section, budget: int | None = None) -> list[str]:
    results: list[tuple[str, Any]] = [(f"p{number}", section) for number, section in enumerate(sections)]
    texts, _scaffold = compose_sections(results, answer=answer, budget=budget)
    return texts


def test_sections_that_name_a_slot_are_placed_by_the_table_whatever_order_they_give() -> None:
    shuffled = [
        Section(key="b", text="Body.", slot="interoception", order=1),
        Section(key="n", text="Notion.", slot="notions"),  # no such slot in wake_up: order 100
        Section(key="x", text="Third party.", order=35),  # between the companion (30) and the body (40)
        Section(key="d", text="Desire.", slot="desires", order=99),
        Section(key="c", text="Companion.", slot="self_model.companion"),
        Section(key="t", text="Thought.", slot="memory.thought"),
    ]
    assert composed("wake_up", *shuffled) == [
        "Thought.",
        "Desire.",
        "Companion.",
        "Third party.",
        "Body.",
        "Notion.",
    ]
    # without an answer, slots mean nothing: each section's own order
    assert composed(None, *shuffled) == ["Body.", "Third party.", "Desire.", "Companion.", "Notion.", "Thought."]


def test_the_slot_s_priority_decides_what_the_budget_leaves_out() -> None:
    words = " ".join(["the quiet kitchen hums along"] * 12)
    body = Section(key="body", text="Body: " + words, slot="interoception", priority=99)  # the slot says 30
    desire = Section(key="desire", text="Desire: " + words, slot="desires", priority=1)  # the slot says 70
    assert (slot("wake_up", "interoception").priority, slot("wake_up", "desires").priority) == (30, 70)
    kept = composed("wake_up", body, desire, budget=80)
    assert [text.split(":")[0] for text in kept] == ["Desire"]
    # an unknown slot keeps the section's own priority
    body = Section(key="body", text="Body: " + words, slot="nowhere", priority=99)
    assert [text.split(":")[0] for text in composed("wake_up", body, desire, budget=80)] == ["Body"]


def test_equal_orders_keep_the_key_order() -> None:
    reunion = Section(key="self_model.reunion", text="Reunited.", slot="self_model.reunion")
    companion = Section(key="self_model", text="Companion.", slot="self_model.companion")
    assert composed("wake_up", reunion, companion) == ["Companion.", "Reunited."]


@pytest.mark.anyio
async def test_the_core_s_answers_place_plugins_sections_by_their_slots(make_host: HostFactory) -> None:
    class Builtinish:
        @hookimpl
        def on_wake_up(self) -> list[Section]:
            return [
                Section(key="body", text="Body: calm.", slot="interoception"),
                Section(key="pull", text="A pull toward the sea.", slot="desires"),
                Section(key="late", text="A note left for later."),
                Section(key="thought", text="Last thought: the tide.", slot="memory.thought"),
            ]

        @hookimpl
        def on_attune(self) -> list[Section]:
            return [
                Section(key="person", text="Aiko: close.", slot="self_model.person"),
                Section(key="trend", text="The days felt warm.", slot="emotion_trend"),
            ]

        @hookimpl
        def on_prompt(self, prompt: str) -> Section | None:
            return Section(key="step", text="Look at the tide table.") if prompt == "wake-up" else None

    async with mcp_client(make_host({"builtinish": Builtinish()})) as client:
        wake = tool_text(await client.call_tool("wake_up", {}))
        attune = tool_text(await client.call_tool("attune", {}))
        prompt = await client.get_prompt("wake-up", {})
    lines = wake.split("\n---\n")[0].splitlines()[1:]  # after the "Awake:" header
    assert lines == ["Last thought: the tide.", "A pull toward the sea.", "Body: calm.", "A note left for later."]
    assert attune.split("\n---\n")[0].splitlines() == ["The days felt warm.", "Aiko: close."]
    steps = [line for line in str(prompt.messages[0].content.text).splitlines() if line.startswith("- ")]
    assert steps[0].startswith("- Call wake_up")  # core.first (10)
    assert steps[-2:] == [
        "- Look at the tide table.",
        "- Let ego's questions guide how you think; never read its answers aloud as a report.",
    ]
