"""The wake_up line and the introspect section: short, and felt rather than reported."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from desires_support import NINE, DesireHostFactory, FixedQuestions, question, scaffold_of
from hypothesis import given
from hypothesis import strategies as st

from ego_core import Section, hookimpl
from ego_core.testing import SEPARATOR, call_ok, mcp_client
from ego_desires import DesiresConfig, Modulation, Reading, Snapshot, feeling_line, introspect_text
from ego_desires.render import WAKE_UP_MAX_CHARS

pytestmark = pytest.mark.anyio
CONFIG = DesiresConfig()


def tokens(text: str) -> int:
    """The estimate of ``ego bench tokens``: characters / 4."""
    return round(len(text) / 4)


def made(levels: list[float], unresolved: bool = False) -> Snapshot:
    readings = tuple(Reading(name=n, base=v, modulation=0.0, level=v) for n, v in zip(NINE, levels, strict=True))
    factors = {"questions": {"cognitive_coherence": 0.08}} if unresolved else {}
    return Snapshot(readings=readings, modulation=Modulation(factors=factors))


levels_strategy = st.lists(st.floats(0.0, 1.0), min_size=9, max_size=9)


@given(levels_strategy, st.booleans())
def test_the_wake_up_line_is_one_short_felt_sentence(levels: list[float], unresolved: bool) -> None:
    line = feeling_line(made(levels, unresolved), CONFIG)
    assert "\n" not in line
    assert len(line) <= WAKE_UP_MAX_CHARS
    assert tokens(line) <= 25
    assert line.startswith("You feel ")
    assert line.endswith(".")
    assert not re.search(r"[\d\[\]/_]", line)  # no numbers, no tags, no desire ids: a feeling, not a table
    assert not any(name in line for name in NINE)


def test_the_wake_up_line_names_the_strongest_in_words() -> None:
    levels = [0.1, 0.75, 0.2, 0.1, 0.1, 0.1, 0.1, 0.3, 0.9]
    assert feeling_line(made(levels), CONFIG) == "You feel a strong pull toward something new, and lonely."
    mild = [0.1, 0.45, 0.2, 0.1, 0.1, 0.1, 0.1, 0.3, 0.55]
    assert feeling_line(made(mild), CONFIG) == "You feel a pull toward something new, and a little lonely."
    assert feeling_line(made([0.2] * 9), CONFIG) == "You feel settled; nothing pulls at you much right now."


def test_a_third_desire_only_when_it_is_high_too_and_the_line_stays_short() -> None:
    three_high = [0.1, 0.8, 0.1, 0.1, 0.1, 0.1, 0.1, 0.85, 0.9]
    assert feeling_line(made(three_high), CONFIG) == (
        "You feel a strong pull toward something new, words pressing to get out, and lonely."
    )
    third_mid = [0.1, 0.5, 0.1, 0.1, 0.1, 0.1, 0.1, 0.85, 0.9]
    assert feeling_line(made(third_mid), CONFIG) == (
        "You feel a strong pull toward something new, and words pressing to get out."
    )
    too_long = [0.1, 0.1, 0.1, 0.8, 0.85, 0.1, 0.1, 0.1, 0.9]  # three long phrases: the weakest is left out
    assert feeling_line(made(too_long), CONFIG) == (
        "You feel a strong pull toward something new, and a need to know what comes next."
    )


def test_fading_questions_are_felt_as_something_unresolved() -> None:
    levels = [0.1, 0.1, 0.8, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]
    assert feeling_line(made(levels, unresolved=True), CONFIG) == "You feel a nagging sense of something unresolved."
    assert feeling_line(made(levels), CONFIG) == "You feel a need to sort out your thoughts."


@given(levels_strategy, st.booleans())
def test_the_introspect_section_is_short(levels: list[float], unresolved: bool) -> None:
    text = introspect_text(made(levels, unresolved), CONFIG)
    assert "\n" not in text
    assert tokens(text) <= 60
    assert text.startswith("Desires: ")


def test_the_introspect_section_names_the_felt_ones() -> None:
    levels = [0.1, 0.62, 0.2, 0.1, 0.1, 0.1, 0.1, 0.45, 0.8]
    assert introspect_text(made(levels), CONFIG) == (
        "Desires: curiosity[0.80/high] social_thirst[0.62/mid] expression[0.45/mid]; the other six low."
    )
    assert introspect_text(made([0.5] * 9), CONFIG) == (
        "Desires: information_hunger[0.50/mid] social_thirst[0.50/mid] cognitive_coherence[0.50/mid] "
        "pattern_seeking[0.50/mid]; five more mid or high."
    )
    assert introspect_text(made([0.2] * 8 + [0.3], unresolved=True), CONFIG) == (
        "Desires: all low; the strongest is curiosity[0.30/low]. Something unresolved nags at you."
    )


class Neighbours:
    """The sections around the desires in wake_up: last introspection (10), companion (30), body (40)."""

    @hookimpl
    def on_wake_up(self) -> list[Section]:
        return [
            Section(key="memory", text="Last introspection (2h ago): thinking.", order=10),
            Section(key="companion", text="Aiko: close.", order=30),
            Section(key="interoception", text="Body: afternoon.", order=40),
        ]


async def test_wake_up_carries_one_desire_line_in_its_place(desire_host: DesireHostFactory) -> None:
    dh = desire_host(others={"neighbours": Neighbours()})
    async with mcp_client(dh.host) as client:
        await call_ok(client, "satisfy_desire", {"name": "information_hunger", "quality": 1.0})
        dh.clock.set(dh.clock.now() + timedelta(hours=14))
        text = await call_ok(client, "wake_up")
    lines = text.split(SEPARATOR)[0].splitlines()
    assert lines[1] == "Last introspection (2h ago): thinking."
    assert lines[2].startswith("You feel ")
    assert tokens(lines[2]) <= 25
    assert lines[3:] == ["Aiko: close.", "Body: afternoon."]
    assert scaffold_of(text) == ["Start with introspect to organize your thoughts."]


async def test_introspect_shows_the_levels_before_introspect_satisfies(desire_host: DesireHostFactory) -> None:
    dh = desire_host(others={"questions": FixedQuestions([question(1)])})
    async with mcp_client(dh.host) as client:
        first = await call_ok(client, "introspect")
        second = await call_ok(client, "introspect")
    assert "cognitive_coherence[0.54/mid]" in first
    assert "Something unresolved nags at you." in first
    # introspect satisfied cognitive_coherence (quality 0.5): 0.25 + 0.04 from the question
    assert second.startswith("Desires: information_hunger[0.50/mid]")
    assert "; four more mid or high, one low." in second
    assert "Something unresolved nags at you." not in second  # said in the last introspect: not again so soon
