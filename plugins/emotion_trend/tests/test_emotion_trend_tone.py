"""Acceptance 2: each of the six month tone phrases comes from a store built for it
(table-driven, through a real MCP client); the thresholds and phrases are configuration."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from trend_support import DAY, HOUR, Feeling, block, remember_all

from ego_core import Clock, PluginHost
from ego_core.testing import call_ok, mcp_client
from ego_emotion_trend import EmotionTrendConfig, TonePhrases, tone

# (phrase, the memories' valence and arousal); 30 memories spread over the month.
TONES = [
    ("an energetic, fulfilling month", 0.8, 0.8),
    ("a quietly content month", 0.6, 0.2),
    ("a turbulent, unsettled month", -0.7, 0.85),
    ("a heavy, draining month", -0.6, 0.3),
    ("a numb, uneventful month", 0.1, 0.15),
    ("a month of mixed feelings", -0.1, 0.6),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("phrase", "valence", "arousal"), TONES, ids=[t[0] for t in TONES])
async def test_each_tone_comes_from_a_store_built_for_it(
    trend_host: Callable[..., PluginHost], clock: Clock, phrase: str, valence: float, arousal: float
) -> None:
    feelings = [
        Feeling(
            i * 23 * HOUR + HOUR,
            "neutral",
            f"Day {i} of the month: an ordinary entry number {i}.",
            extra={"valence": valence, "arousal": arousal},
        )
        for i in range(30)
    ]
    async with mcp_client(trend_host()) as client:
        await remember_all(client, clock, feelings)
        text = await call_ok(client, "emotion_trend")
    assert block(text, "month").splitlines()[0] == f"This month (last 30 days, 30 memories): {phrase}."


def test_a_mixed_month_of_opposites_is_mixed() -> None:
    # Mean valence near zero from strong opposites, lively arousal: neither numb nor one-sided.
    config = EmotionTrendConfig()
    assert tone((0.9 - 0.9) / 2, 0.7, config) == "a month of mixed feelings"


@pytest.mark.parametrize(
    ("valence", "arousal", "expected"),
    [
        (0.31, 0.51, "energetic"),
        (0.31, 0.5, "content"),  # arousal exactly at high_arousal is low
        (0.3, 0.9, "mixed"),  # valence exactly at the threshold is not positive
        (-0.31, 0.51, "turbulent"),
        (-0.31, 0.0, "heavy"),
        (-0.3, 0.3, "numb"),  # |v| ≤ 0.3 and a ≤ 0.3
        (0.3, 0.31, "mixed"),
        (0.0, 0.0, "numb"),
    ],
)
def test_tone_thresholds_at_their_edges(valence: float, arousal: float, expected: str) -> None:
    phrases = TonePhrases()
    assert tone(valence, arousal, EmotionTrendConfig()) == getattr(phrases, expected)


def test_thresholds_and_phrases_are_configuration() -> None:
    config = EmotionTrendConfig(
        positive_valence=0.5,
        high_arousal=0.7,
        phrases=TonePhrases(content="a gentle month", energetic="a bright month"),
    )
    assert tone(0.6, 0.6, config) == "a gentle month"
    assert tone(0.6, 0.71, config) == "a bright month"
    assert tone(0.4, 0.6, config) == "a month of mixed feelings"


@pytest.mark.anyio
async def test_configured_phrases_reach_the_agent(trend_host: Callable[..., PluginHost], clock: Clock) -> None:
    feelings = [Feeling(i * DAY, "happy", f"A bright day, number {i}.") for i in range(30)]
    host = trend_host(month_from=30, phrases={"energetic": "a month full of sunshine"})
    async with mcp_client(host) as client:
        await remember_all(client, clock, feelings)
        text = await call_ok(client, "emotion_trend")
    assert "This month (last 30 days, 30 memories): a month full of sunshine." in text
