"""The windows are local calendar days of the configured time zone; moments are said in local words."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from trend_support import NOW, Feeling, block, remember_all, spread

from ego_core import Clock, PluginHost
from ego_core.testing import call_ok, mcp_client
from ego_emotion_trend import EmotionTrendConfig, when, windows

AUCKLAND = ZoneInfo("Pacific/Auckland")  # NOW is Sunday 15 March 2026, 01:00 there (UTC+13)


def test_windows_start_at_local_midnights() -> None:
    spans = windows(NOW, UTC, EmotionTrendConfig())
    assert spans.recent.start == datetime(2026, 3, 12, tzinfo=UTC)
    assert spans.week.start == datetime(2026, 3, 8, tzinfo=UTC)
    assert spans.month.start == datetime(2026, 2, 13, tzinfo=UTC)
    assert spans.first_half.end == spans.second_half.start == datetime(2026, 3, 11, 6, 0, 0, 500, tzinfo=UTC)
    assert spans.week.end == NOW + timedelta(milliseconds=1)
    local = windows(NOW, AUCKLAND, EmotionTrendConfig())
    assert local.recent.start == datetime(2026, 3, 13, tzinfo=AUCKLAND)
    assert local.recent.start == datetime(2026, 3, 12, 11, tzinfo=UTC)


def test_a_day_whose_midnight_is_skipped_starts_when_the_clock_jumps() -> None:
    santiago = ZoneInfo("America/Santiago")  # 2024-09-08 00:00 does not exist there (clocks go to 01:00)
    now = datetime(2024, 9, 8, 15, 0, tzinfo=santiago)
    spans = windows(now, santiago, EmotionTrendConfig(recent_days=1))
    assert spans.recent.start == datetime(2024, 9, 8, 4, 0, tzinfo=UTC)
    assert spans.recent.start.astimezone(santiago).hour == 1


@pytest.mark.parametrize(
    ("moment", "said"),
    [
        (datetime(2026, 3, 14, 9, 0, tzinfo=UTC), "this morning"),
        (datetime(2026, 3, 14, 2, 0, tzinfo=UTC), "last night"),
        (datetime(2026, 3, 13, 22, 0, tzinfo=UTC), "last night"),
        (datetime(2026, 3, 13, 18, 0, tzinfo=UTC), "yesterday evening"),
        (datetime(2026, 3, 10, 14, 0, tzinfo=UTC), "Tuesday afternoon"),
        (datetime(2026, 3, 2, 12, 0, tzinfo=UTC), "12 days ago"),
        (datetime(2025, 9, 1, 12, 0, tzinfo=UTC), "6mo ago"),
        (datetime(2026, 3, 14, 12, 30, tzinfo=UTC), "in the future"),
    ],
)
def test_moments_in_words(moment: datetime, said: str) -> None:
    assert when(moment, NOW, UTC) == said


def test_moments_in_words_are_local() -> None:
    # 22:00 UTC on Friday is 11:00 on Saturday in Auckland, where it is now 01:00 on Sunday.
    assert when(datetime(2026, 3, 13, 22, 0, tzinfo=UTC), NOW, AUCKLAND) == "yesterday morning"


@pytest.mark.anyio
async def test_the_recent_window_follows_the_time_zone(trend_host: Callable[..., PluginHost], clock: Clock) -> None:
    # Thursday 12 March, 05:00 UTC: inside the last three local days in UTC (Thu, Fri, Sat), but in Auckland
    # (Fri, Sat, Sun there) it was Thursday 18:00 - outside.
    feelings = [Feeling(NOW - datetime(2026, 3, 12, 5, tzinfo=UTC), "surprised", "A hailstorm out of nowhere.")]
    feelings += spread(5, "curious", timedelta(hours=30), timedelta(hours=2), "Counting hailstones")
    texts = {}
    for zone in ("UTC", "Pacific/Auckland"):
        async with mcp_client(trend_host(timezone=zone, data=zone.replace("/", "-"))) as client:
            await remember_all(client, clock, feelings)
            texts[zone] = block(await call_ok(client, "emotion_trend"), "recent")
    assert texts["UTC"].startswith("Recent (last 3 days, 6 memories):")
    assert "surprised" in texts["UTC"]
    assert texts["Pacific/Auckland"].startswith("Recent (last 3 days, 5 memories):")
    assert "surprised" not in texts["Pacific/Auckland"]
