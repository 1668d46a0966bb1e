"""Relationships in words: history, how present someone was this week, and when a moment was last shared, in
wake_up, consider_them, attune and introspect — never a digit."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from self_model_support import NOON

from ego_core import Clock, PluginHost
from ego_core.testing import call_ok, mcp_client

WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


def data_of(text: str) -> str:
    return text.partition("\n\n---\n")[0]


OTHERS = ("Awake:", "- [", "Last introspection", "Embers:", "Memories:")
"""Lines of the other plugins (the header, the memory plugin's quotes) that can name someone."""


def people_lines(text: str, *names: str) -> list[str]:
    """The self-model's lines of a response that speak of the people (by name)."""
    lines = data_of(text).splitlines()
    return [line for line in lines if any(name in line for name in names) and not line.startswith(OTHERS)]


async def know(client: Any, *names: str) -> None:
    for name in names:
        await call_ok(client, "update_relationship", {"person": name, "field": "notes", "value": "A friend."})


async def share(client: Any, clock: Clock, who: str, days: float, word: str) -> None:
    clock.set(NOON + timedelta(days=days))
    await call_ok(client, "remember", {"content": f"{who} and I shared a quiet moment, the {word} of its kind."})


@pytest.mark.anyio
async def test_history_grows_with_moments_and_time(memory_host: Callable[..., PluginHost], clock: Clock) -> None:
    async with mcp_client(memory_host()) as client:
        for number, word in enumerate(WORDS[:4]):
            await share(client, clock, "Master", number, word)
        clock.set(NOON + timedelta(days=200))
        few = await call_ok(client, "consider_them", {"person": "Master"})
        await share(client, clock, "Master", 4, "fifth")  # the fifth moment, on the fifth day
        clock.set(NOON + timedelta(days=13))
        new = await call_ok(client, "consider_them", {"person": "Master"})
        clock.set(NOON + timedelta(days=14))
        growing = await call_ok(client, "consider_them", {"person": "Master"})
        clock.set(NOON + timedelta(days=180))
        long = await call_ok(client, "consider_them", {"person": "Master"})
    assert "; still new to each other." in few.splitlines()[0], "fewer than five moments, however long ago"
    assert "; still new to each other." in new.splitlines()[0]
    assert "; a growing history." in growing.splitlines()[0]
    assert "; a long history together." in long.splitlines()[0]


@pytest.mark.anyio
async def test_the_week_is_said_in_words(memory_host: Callable[..., PluginHost], clock: Clock) -> None:
    async with mcp_client(memory_host()) as client:
        await know(client, "Aiko")
        seen: list[str] = []
        clock.set(NOON)
        await share(client, clock, "Aiko", -30, "first")
        clock.set(NOON)
        seen.append(data_of(await call_ok(client, "consider_them", {"person": "Aiko"})))
        for count, word in enumerate(WORDS[:7], start=1):
            await share(client, clock, "Aiko", count / 10, word)
            if count in {1, 3, 7}:
                seen.append(data_of(await call_ok(client, "consider_them", {"person": "Aiko"})))
    assert "\nQuiet on that front lately." in seen[0]
    assert "\nThey've come up once or twice this week." in seen[1]
    assert "\nThey've been a steady presence this week." in seen[2]
    assert "\nThey've been woven through the week." in seen[3]


@pytest.mark.anyio
async def test_last_shared_reads_earlier_today_or_an_age_in_words(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    async with mcp_client(memory_host()) as client:
        await share(client, clock, "Master", 0, "first")
        clock.set(NOON + timedelta(hours=5))
        today = await call_ok(client, "wake_up")
        clock.set(NOON + timedelta(days=6))
        week = await call_ok(client, "wake_up")
    assert "\nMaster: you are still getting to know them; last shared earlier today.\n" in today
    assert "earlier today ago" not in today
    assert "\nMaster: you are still getting to know them; last shared about a week ago.\n" in week


@pytest.mark.anyio
async def test_attune_regards_a_person_and_introspect_adds_the_week_and_who_is_close(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    async with mcp_client(memory_host()) as client:
        await call_ok(client, "update_relationship", {"person": "Aiko", "field": "trust_level", "value": 0.65})
        for number, word in enumerate(WORDS[:6]):
            await share(client, clock, "Aiko", number * 10, word)
        await know(client, "Ben")
        await share(client, clock, "Master", 51, "first")
        await share(client, clock, "Ben", 52, "first")
        clock.set(NOON + timedelta(days=53))
        toward = await call_ok(client, "attune", {"person": "aiko"})
        inner = await call_ok(client, "introspect")
    assert "Regarding Aiko: you trust them; a growing history." in data_of(toward)
    assert "It's been quieter than usual" not in toward, "their rhythm is ten days: three days is usual"
    lines = data_of(inner).splitlines()
    assert (
        "Master: you are still getting to know them; last shared a couple of days ago; still new to each other; "
        "they've come up once or twice this week."
    ) in lines
    assert "Ben and Aiko have been close lately." in lines
    assert "surfaced on their own" not in inner


@pytest.mark.anyio
async def test_attune_says_when_it_has_been_quieter_than_usual(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    async with mcp_client(memory_host()) as client:
        await share(client, clock, "Master", 0, "first")
        clock.set(NOON + timedelta(days=20))
        attuned = await call_ok(client, "attune")
    assert "It's been quieter than usual with Master — about three weeks." in data_of(attuned)


@pytest.mark.anyio
async def test_no_digits_reach_the_people_lines_over_a_long_year(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    names = ("Master", "Aiko", "Ben")
    async with mcp_client(memory_host()) as client:
        await know(client, "Aiko", "Ben")
        for number, word in enumerate(WORDS):
            await share(client, clock, names[number % 3], number * 31, word)
        texts: list[str] = []
        for days in (341, 341.2, 342, 345, 352, 365, 400, 500, 700, 1200):
            clock.set(NOON + timedelta(days=days))
            texts.append(await call_ok(client, "wake_up"))
            texts.append(await call_ok(client, "introspect"))
            texts.append(await call_ok(client, "attune"))
            for name in names:
                texts.append(await call_ok(client, "consider_them", {"person": name}))
                texts.append(await call_ok(client, "attune", {"person": name}))
    lines = [line for text in texts for line in people_lines(text, *names)]
    assert lines
    offending = [line for line in lines if re.search(r"\d", line)]
    assert offending == []
    assert not [line for line in lines if "about about" in line or "earlier today ago" in line]
