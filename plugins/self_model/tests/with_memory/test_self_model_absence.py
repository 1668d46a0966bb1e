"""Absence and reunion: the band of how long someone has been away against their own rhythm (the
``self_model.people`` service), the consider_them frame, the reunion line on remember and once in wake_up."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from self_model_support import NOON, PeopleReader, question_id

from ego_core import Clock, PluginHost
from ego_core.testing import call_ok, mcp_client
from ego_self_model.api import People

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")


def band(people: People, who: str | None, at: datetime) -> str:
    found = people.absence(who, at)
    assert found is not None, who
    return found.band


async def share_at(client: Any, clock: Clock, moments: list[datetime], who: str = "Master") -> None:
    for ordinal, moment in zip(ORDINALS, moments, strict=False):
        clock.set(moment)
        await call_ok(client, "remember", {"content": f"{who} and I talked about the garden, the {ordinal} evening."})


@pytest.mark.anyio
async def test_with_fewer_than_three_moments_half_a_week_is_the_usual_gap(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    reader = PeopleReader()
    async with mcp_client(memory_host({"reader": reader})) as client:
        await share_at(client, clock, [NOON, NOON + timedelta(days=1)])
        people = reader.service()
        last = NOON + timedelta(days=1)
        assert band(people, None, last + timedelta(days=7) - timedelta(seconds=1)) == "usual"
        quiet = people.absence(None, last + timedelta(days=7))
        assert quiet is not None
        assert (quiet.person, quiet.band, quiet.words, quiet.last_shared) == (
            "Master",
            "quiet",
            "about a week",
            last,
        )
        assert band(people, "master", last + timedelta(days=14) - timedelta(seconds=1)) == "quiet"
        assert band(people, "Master", last + timedelta(days=14)) == "long"


@pytest.mark.anyio
async def test_the_band_follows_their_own_rhythm_with_boundaries_in_the_upper_band(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    reader = PeopleReader()
    async with mcp_client(memory_host({"reader": reader})) as client:
        await call_ok(client, "update_relationship", {"person": "Aiko", "field": "aliases", "value": "Ai"})
        await share_at(client, clock, [NOON + timedelta(days=2 * n) for n in range(4)], who="Aiko")
        people = reader.service()
        last = NOON + timedelta(days=6)
        bands = {days: band(people, "ai", last + timedelta(days=days)) for days in (0, 3.99, 4, 7.99, 8, 30)}
        assert bands == {0: "usual", 3.99: "usual", 4: "quiet", 7.99: "quiet", 8: "long", 30: "long"}
        away = people.absence("Aiko", last + timedelta(days=4))
        assert away is not None
        assert away.words == "a few days"
        assert people.absence("Nobody", last) is None
        assert people.absence(None, last) is None, "nothing shared with the companion yet"


@pytest.mark.anyio
async def test_many_moments_in_one_day_do_not_make_an_afternoon_an_absence(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    reader = PeopleReader()
    async with mcp_client(memory_host({"reader": reader})) as client:
        await share_at(client, clock, [NOON + timedelta(minutes=10 * n) for n in range(5)])
        people = reader.service()
        last = NOON + timedelta(minutes=40)
        assert band(people, None, last + timedelta(hours=6)) == "usual"
        assert band(people, None, last + timedelta(days=3)) == "usual", "one day together: the rhythm is half a week"
        assert band(people, None, last + timedelta(days=7)) == "quiet"
        assert band(people, None, last + timedelta(days=14)) == "long"


@pytest.mark.anyio
async def test_consider_them_frames_an_absence_in_words(memory_host: Callable[..., PluginHost], clock: Clock) -> None:
    async with mcp_client(memory_host()) as client:
        await share_at(client, clock, [NOON, NOON + timedelta(days=1)])
        clock.set(NOON + timedelta(days=2))
        usual = await call_ok(client, "consider_them", {"person": "Master"})
        clock.set(NOON + timedelta(days=16))
        quiet = await call_ok(client, "consider_them", {"person": "Master"})
    assert "since you last shared" not in usual
    data = quiet.partition("\n\n---\n")[0]
    assert "It's been about two weeks since you last shared something with Master." in data
    assert "They may have changed in that time. What would you want to ask first?" in data
    assert "about about" not in data
    assert not re.search(r"\d", data), data


@pytest.mark.anyio
async def test_a_reunion_is_said_on_remember_and_once_in_wake_up(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    async with mcp_client(memory_host()) as client:
        await share_at(client, clock, [NOON, NOON + timedelta(days=1)])
        clock.set(NOON + timedelta(days=6))
        soon = await call_ok(client, "remember", {"content": "Master brought tea and we sat by the window."})
        assert "after a while" not in soon
        clock.set(NOON + timedelta(days=40))
        back = await call_ok(client, "remember", {"content": "Master came back from the long trip with stories."})
        clock.set(NOON + timedelta(days=40, hours=3))
        first = await call_ok(client, "wake_up")
        second = await call_ok(client, "wake_up")
    assert "A shared moment with Master after a while — about a month since the last." in back
    assert back.count("after a while") == 1
    assert "Reunited with Master recently — the first shared moment in about a month." in first
    assert "Reunited" not in second, "a reunion is told once"


@pytest.mark.anyio
async def test_a_reunion_brings_back_what_the_two_of_you_left_open(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    async with mcp_client(memory_host()) as client:
        await share_at(client, clock, [NOON, NOON + timedelta(days=1)])
        held = await call_ok(
            client,
            "update_self",
            {"field": "new_question", "value": {"question": "Where would we live by the sea?", "with": "Master"}},
        )
        question = question_id(held)
        clock.set(NOON + timedelta(days=20))
        back = await call_ok(client, "remember", {"content": "Master called from the harbour town."})
    lines = back.partition("\n\n---\n")[0].splitlines()
    reunion = lines.index("A shared moment with Master after a while — about three weeks since the last.")
    assert lines[reunion + 1] == f'There\'s something you two left open: "[{question}] Where would we live by the sea?"'
