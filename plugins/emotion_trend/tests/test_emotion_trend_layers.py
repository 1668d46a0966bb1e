"""Acceptance 1: through a real MCP client, on a store built with backdated memories and a fixed
clock, emotion_trend shows exactly the layers the number of memories allows (0 / 3 / 10 / 20 / 40), names
the peak and the end, tags an emotion only old memories carry as ``[fading]``, and reports the week's shift."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from trend_support import DAY, HOUR, Feeling, block, data_of, layers, remember_all, spread

from ego_core import Clock, PluginHost
from ego_core.testing import call_ok, mcp_client

pytestmark = pytest.mark.anyio

# NOW is Saturday 14 March 2026, 12:00 UTC. The week runs from Sunday 8 March 00:00; its halves meet on
# Wednesday 11 March at 06:00. Recent runs from Thursday 12 March 00:00, the month from 13 February.
FIRST_THREE = [
    Feeling(26 * HOUR, "happy", "Watered the tomato seedlings with Master."),
    Feeling(21 * HOUR, "curious", "Read about tide pools and anemones."),
    Feeling(2 * HOUR, "happy", "Master laughed at my pun about compilers."),  # the end
]
UP_TO_TEN = [
    Feeling(6 * DAY, "sad", "The build kept failing all Sunday.", ("anxious",)),
    Feeling(5 * DAY + 6 * HOUR, "sad", "Nobody answered my question in the channel.", ("anxious",)),
    Feeling(5 * DAY, "sad", "I broke the deploy script again.", ("anxious",)),
    Feeling(4 * DAY, "sad", "A long grey day of waiting for reviews.", ("anxious",)),
    Feeling(2 * DAY + 3 * HOUR, "happy", "Everything compiled on the first try."),
    Feeling(16 * HOUR, "excited", "Master and I fixed the heartbeat bug.", extra={"intensity": 0.9}),  # peak
    Feeling(4 * HOUR, "happy", "Breakfast talk about the garden plans."),
]
UP_TO_TWENTY = [
    Feeling(5 * DAY + 18 * HOUR, "sad", "The tests were red again after lunch.", ("anxious",)),
    Feeling(4 * DAY + 20 * HOUR, "sad", "I misread the logs for an hour.", ("anxious",)),
    Feeling(3 * DAY + 12 * HOUR, "sad", "Felt stuck on the migration all evening.", ("anxious",)),
    Feeling(3 * DAY, "happy", "The migration finally went through.", ("curious",)),
    Feeling(2 * DAY + 20 * HOUR, "happy", "Master sent a photo of the first tomato."),
    Feeling(2 * DAY + 12 * HOUR, "happy", "We planned a picnic for the weekend."),
    *spread(4, "contentment", 10 * DAY, -3 * DAY, "A calm evening of reading"),
]
UP_TO_FORTY = [
    Feeling(200 * DAY, "nostalgic", "An old photo of the first server rack."),
    Feeling(210 * DAY, "nostalgic", "Humming a song from last winter's holidays."),
    Feeling(220 * DAY, "nostalgic", "The smell of the old office coffee machine."),
    Feeling(230 * DAY, "nostalgic", "Rereading letters from my first weeks here."),
    Feeling(240 * DAY, "nostalgic", "Remembering the first time Master said hello."),
    Feeling(20 * DAY, "melancholy", "Rain all day and the house felt empty."),  # strong: not fading
    Feeling(250 * DAY, "sad", "A lost backup, long ago."),  # sad is felt this week: not fading
    Feeling(12 * DAY, "moved", "Master read my first poem aloud.", extra={"intensity": 1.0}),  # the month's peak
    *spread(6, "contentment", 28 * DAY, 2 * DAY, "Tea on the balcony"),
    *spread(6, "curious", 27 * DAY, 2 * DAY, "Learning a new chess opening"),
]


async def test_the_layers_grow_with_the_memories(trend_host: Callable[..., PluginHost], clock: Clock) -> None:
    host = trend_host()
    async with mcp_client(host) as client:
        empty = await call_ok(client, "emotion_trend")
        assert data_of(empty) == "No emotional history yet."

        await remember_all(client, clock, FIRST_THREE)
        few = await call_ok(client, "emotion_trend")
        assert layers(few) == {"felt"}
        assert data_of(few) == "Emotions felt so far (3 memories): happy ×2, curious."

        await remember_all(client, clock, UP_TO_TEN)
        ten = await call_ok(client, "emotion_trend")
        assert layers(ten) == {"recent"}
        recent = block(ten, "recent")
        assert recent.startswith("Recent (last 3 days, 6 memories):")
        # The intensity peak is named among the newest events, in time order, in local words.
        assert recent.splitlines()[1:4] == [
            '- excited(0.9), yesterday evening — "Master and I fixed the heartbeat bug." (peak)',
            '- happy, this morning — "Breakfast talk about the garden plans."',
            '- happy, this morning — "Master laughed at my pun about compilers."',
        ]
        assert recent.splitlines()[-1] == "Undercurrent: nothing beneath the surface."

        await remember_all(client, clock, UP_TO_TWENTY)
        twenty = await call_ok(client, "emotion_trend")
        assert layers(twenty) == {"recent", "week"}
        week = block(twenty, "week")
        # Weighted counts: primary 1.0 each (7 happy, 7 sad), secondary 0.4 (anxious 7 × 0.4).
        assert week.splitlines()[0] == "This week (last 7 days, 16 memories): happy 7.0, sad 7.0, anxious 2.8."
        assert "Undercurrent: anxious 2.8, curious 0.4." in week
        assert "Shift: from sad to happy, lighter toward the end." in week

        await remember_all(client, clock, UP_TO_FORTY)
        forty = await call_ok(client, "emotion_trend")
        assert layers(forty) == {"recent", "week", "month"}
        month = block(forty, "month")
        assert month.splitlines()[0].startswith("This month (last 30 days, 34 memories): ")
        assert 'Peak: moved(1.0), 12 days ago — "Master read my first poem aloud."' in month
        assert 'End: happy, this morning — "Master laughed at my pun about compilers."' in month
        fading = next(line for line in month.splitlines() if line.startswith("Fading: "))
        assert fading == "Fading: nostalgic [fading] (last felt 6mo ago)."
        assert "[fading]" not in data_of(forty).replace(fading, "")


async def test_the_peak_is_named_even_when_it_is_not_among_the_newest(
    trend_host: Callable[..., PluginHost], clock: Clock
) -> None:
    host = trend_host()
    feelings = [
        Feeling(50 * HOUR, "anxious", "The demo crashed in front of everyone.", extra={"intensity": 0.9}),
        *spread(6, "curious", 40 * HOUR, 6 * HOUR, "Reading about octopus cognition"),
    ]
    async with mcp_client(host) as client:
        await remember_all(client, clock, feelings)
        text = await call_ok(client, "emotion_trend")
    events = block(text, "recent").splitlines()[1:4]
    assert events[0] == '- anxious(0.9), Thursday morning — "The demo crashed in front of everyone." (peak)'
    # The newest three were 22h, 16h and 10h ago: the peak took the place of the oldest.
    assert [line.split(" — ")[0] for line in events[1:]] == ["- curious, yesterday evening", "- curious, last night"]


async def test_a_steady_week_and_empty_windows_are_said_in_words(
    trend_host: Callable[..., PluginHost], clock: Clock
) -> None:
    host = trend_host()
    feelings = [
        *spread(10, "curious", 150 * HOUR, 7 * HOUR, "A question about bees"),  # the week's first half
        *spread(6, "curious", 75 * HOUR, 2 * HOUR, "Another question about bees"),  # second half, before Recent
    ]
    async with mcp_client(host) as client:
        await remember_all(client, clock, feelings)
        text = await call_ok(client, "emotion_trend")
    assert data_of(text).splitlines()[0] == "Recent (last 3 days): no memories."
    assert "Shift: none; curious throughout." in block(text, "week")
