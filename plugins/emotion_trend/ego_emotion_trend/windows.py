"""The trend's windows of real time, in local calendar days of the configured time zone."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, tzinfo

import attrs

from ego_emotion_trend.config import EmotionTrendConfig

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
TICK = timedelta(milliseconds=1)
"""Windows end just after now, so a memory stored at this very millisecond is in them."""


@attrs.frozen
class Span:
    """``start`` (inclusive) to ``end`` (exclusive), both UTC."""

    start: datetime
    end: datetime


@attrs.frozen
class Windows:
    now: datetime
    recent: Span
    week: Span
    first_half: Span
    """The first half of the week (by time, from the week's first midnight to now)."""
    second_half: Span
    month: Span
    lookback: datetime
    """How far back fading emotions are searched."""
    everything: Span
    """All memories up to now (for a store too small for windows)."""


def local_midnight(day: date, tz: tzinfo) -> datetime:
    """The start of ``day`` on a wall clock in ``tz``, as UTC.

    Where a DST change skips midnight, the wall time 00:00 is read with the offset in force before the change
    (PEP 495), which is the moment the change happens: the day's first moment.
    """
    return datetime.combine(day, time.min, tzinfo=tz).astimezone(UTC)


def days_back(now: datetime, tz: tzinfo, days: int) -> datetime:
    """The start of a window of ``days`` local calendar days ending today (today counts as the first)."""
    today = now.astimezone(tz).date()
    return local_midnight(today - timedelta(days=days - 1), tz)


def windows(now: datetime, tz: tzinfo, config: EmotionTrendConfig) -> Windows:
    now = now.astimezone(UTC)
    end = now + TICK
    week_start = days_back(now, tz, config.week_days)
    middle = week_start + (end - week_start) / 2
    return Windows(
        now=now,
        recent=Span(days_back(now, tz, config.recent_days), end),
        week=Span(week_start, end),
        first_half=Span(week_start, middle),
        second_half=Span(middle, end),
        month=Span(days_back(now, tz, config.month_days), end),
        lookback=days_back(now, tz, config.fading_lookback_days),
        everything=Span(EPOCH, end),
    )
