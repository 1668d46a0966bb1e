"""The wake_up line (order 25, one line of at most 20 tokens), the introspect section (order 40, at most 100
tokens, with a scaffold pointer to emotion_trend) and the tool's definition (at most 250 characters)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trend_support import DAY, HOUR, NOW, Feeling, data_of, remember_all, spread

from ego_core import EMOTIONS, Clock, EmotionalTrace, EmotionTally, Memory, PluginHost
from ego_core.testing import call_ok, mcp_client
from ego_emotion_trend import EmotionTrendConfig, Level, Trend
from ego_emotion_trend.report import introspect_text, wake_up_line
from ego_emotion_trend.trend import Month, Recent, Week

TOKENS = 4
"""Characters per token, the estimate `ego bench tokens` uses."""


@pytest.mark.anyio
async def test_wake_up_and_introspect_sections_on_a_real_store(
    trend_host: Callable[..., PluginHost], clock: Clock
) -> None:
    feelings = [
        *spread(12, "curious", 25 * DAY, 2 * DAY, "A long read about moss"),
        *spread(6, "sad", 6 * DAY, 5 * HOUR, "Waiting for an answer that did not come"),
        *spread(6, "happy", 2 * DAY, 7 * HOUR, "Planting beans with Master", intensity=0.8),
        *[Feeling(h * HOUR, "happy", f"A good talk, number {h}.", ("anxious",)) for h in range(1, 7)],
    ]
    async with mcp_client(trend_host()) as client:
        await remember_all(client, clock, feelings)
        wake_up = data_of(await call_ok(client, "wake_up"))
        introspect = await call_ok(client, "introspect")
    lines = wake_up.splitlines()
    assert lines[1].startswith("Memories: 30")  # the memory plugin's section (order 10) comes first
    assert lines[2] == "Lately: mostly happy and anxious."
    block = data_of(introspect).split("\n\n")[1]
    assert block.splitlines() == [
        "Emotional trend:",
        "- Lately: mostly happy and anxious; peak happy(0.8) last night.",  # the newest of the most intense
        "- This week: mostly happy and sad; shift: from sad to happy, lighter toward the end.",
        "- This month: an energetic, fulfilling month.",  # mean valence 0.34, arousal 0.54
    ]
    assert "How have the last weeks felt? emotion_trend shows the peaks, shifts and what is fading." in introspect


@pytest.mark.anyio
async def test_the_tool_definition_is_compact(trend_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(trend_host()) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    listed = tools["emotion_trend"].model_dump(mode="json", by_alias=True, exclude_none=True)
    assert len(json.dumps(listed, separators=(",", ":"), ensure_ascii=False)) <= 250


# ---------------------------------------------------------------------------------------------------
# Length bounds over any mix of emotions


def tallies() -> st.SearchStrategy[EmotionTally]:
    counts = st.dictionaries(st.sampled_from(EMOTIONS), st.integers(1, 500), min_size=1, max_size=12)
    return st.builds(
        lambda primary, secondary, valence, arousal: EmotionTally(
            count=sum(primary.values()),
            valence=valence,
            arousal=arousal,
            primary=primary,
            secondary=secondary,
            peak_id="mem_000000000001",
            last_id="mem_000000000001",
        ),
        counts,
        st.dictionaries(st.sampled_from(EMOTIONS), st.integers(1, 500), max_size=12),
        st.floats(-1, 1),
        st.floats(0, 1),
    )


def peak(emotion: str, intensity: float, ago: timedelta) -> Memory:
    trace = EmotionalTrace(primary=emotion, intensity=intensity)
    return Memory(id="mem_000000000001", content="x" * 500, timestamp=NOW - ago, emotional_trace=trace)


@settings(max_examples=200)
@given(
    recent=tallies(),
    first=tallies(),
    second=tallies(),
    month=tallies(),
    emotion=st.sampled_from(EMOTIONS),
    intensity=st.floats(0, 1),
    ago=st.timedeltas(timedelta(0), timedelta(days=3)),
    fading=st.lists(st.sampled_from(EMOTIONS), max_size=3, unique=True),
)
def test_the_sections_stay_short_whatever_was_felt(
    recent: EmotionTally,
    first: EmotionTally,
    second: EmotionTally,
    month: EmotionTally,
    emotion: str,
    intensity: float,
    ago: timedelta,
    fading: list[str],
) -> None:
    config = EmotionTrendConfig()
    trend = Trend(
        count=100,
        level=Level.MONTH,
        recent=Recent(tally=recent, events=(peak(emotion, intensity, ago),)),
        week=Week(tally=first, first=first, second=second),
        month=Month(tally=month),
        fading=tuple((name, NOW - 200 * DAY) for name in fading),
    )
    line = wake_up_line(trend, config)
    assert line is not None
    assert "\n" not in line
    assert len(line) <= 20 * TOKENS
    text = introspect_text(trend, NOW, UTC, config)
    assert text is not None
    assert len(text) <= 100 * TOKENS
    assert "x" * 10 not in text  # no memory's text


def test_nothing_to_say_without_memories() -> None:
    config = EmotionTrendConfig()
    empty = Trend(count=0, level=Level.NONE)
    assert wake_up_line(empty, config) is None
    assert introspect_text(empty, NOW, UTC, config) is None


def test_the_wake_up_line_falls_back_to_the_longer_windows() -> None:
    config = EmotionTrendConfig()
    quiet = EmotionTally()
    month = EmotionTally(count=3, primary={"nostalgic": 3})
    trend = Trend(
        count=40,
        level=Level.MONTH,
        recent=Recent(tally=quiet),
        week=Week(tally=quiet, first=quiet, second=quiet),
        month=Month(tally=month),
    )
    assert wake_up_line(trend, config) == "This month: mostly nostalgic."
    silent = Trend(count=20, level=Level.WEEK, recent=Recent(tally=quiet), week=Week(quiet, quiet, quiet))
    assert wake_up_line(silent, config) == "No feelings remembered in the last 7 days."
