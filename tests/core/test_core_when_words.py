"""``when_words``: when something happened, by the local calendar days of the configured time zone."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ego_core import when_words

TOKYO = ZoneInfo("Asia/Tokyo")
BERLIN = ZoneInfo("Europe/Berlin")  # summer time: the clocks jump on the last Sundays of March and October
ZONES = (TOKYO, UTC, BERLIN)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

moments = st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC))
stretches = st.one_of(
    st.timedeltas(timedelta(0), timedelta(hours=60)),  # around midnight and the day before, most often
    st.timedeltas(timedelta(0), timedelta(days=800)),
)


def calendar_days(moment: datetime, now: datetime, zone: ZoneInfo) -> int:
    return (now.astimezone(zone).date() - moment.astimezone(zone).date()).days


@settings(max_examples=400, deadline=None)
@given(moment=moments, stretch=stretches, zone=st.sampled_from(ZONES))
def test_the_local_calendar_day_decides_and_no_digit_is_said(
    moment: datetime, stretch: timedelta, zone: ZoneInfo
) -> None:
    now = moment + stretch
    words = when_words(moment, now, zone)
    days = calendar_days(moment, now, zone)
    small_hours = moment.astimezone(zone).hour < 5
    night = small_hours or moment.astimezone(zone).hour >= 21
    still_night = now.astimezone(zone).hour < 5  # the present belongs to the night before too
    assert not re.search(r"\d", words), words
    if days == 0:
        assert words == (("earlier tonight" if still_night else "last night") if small_hours else "earlier today")
    elif days == 1:
        if night and not small_hours:
            assert words == ("earlier tonight" if still_night else "last night")
        else:  # a small hour of the night before the present one, or a day's hour
            assert words == ("last night" if small_hours and still_night else "yesterday")
    elif days == 2 and night and not small_hours and still_night:
        assert words == "last night", words  # the night before the present one, which began yesterday
    else:
        assert words.endswith(" ago"), words
        for claim in ("today", "yesterday", "night"):
            assert claim not in words, words
    if days >= 1:
        assert "today" not in words, words
        assert words == "earlier tonight" or "tonight" not in words, words
    else:
        assert "yesterday" not in words


@settings(max_examples=400, deadline=None)
@given(moment=moments, stretch=stretches, zone=st.sampled_from(ZONES))
def test_in_detail_an_earlier_day_is_never_today_nor_today_yesterday(
    moment: datetime, stretch: timedelta, zone: ZoneInfo
) -> None:
    now = moment + stretch
    words = when_words(moment, now, zone, detail=True)
    days = calendar_days(moment, now, zone)
    local = moment.astimezone(zone)
    this_night = now.astimezone(zone).hour < 5 and days == 1 and local.hour >= 21  # the present night, begun before
    if days >= 1 and this_night:
        assert words == "tonight", words
    elif days >= 1:
        assert not words.startswith(("this ", "tonight")), words
        assert "today" not in words, words
    else:
        assert not words.startswith("yesterday"), words
        if local.hour < 5 and now.astimezone(zone).hour >= 5:
            assert words == "last night", words
        else:
            assert words.startswith(("this ", "tonight")), words
    if days == 1 and not this_night:
        night_before: date = local.date() - timedelta(days=1)
        allowed = ("yesterday ", "last night", WEEKDAYS[night_before.weekday()] + " night")
        assert words.startswith(allowed), words


@pytest.mark.parametrize(
    ("moment", "now", "said"),
    [
        # the simulated month in Tokyo: 21:00 with the companion, then 08:03 the next morning
        (datetime(2026, 5, 1, 21, 0, tzinfo=TOKYO), datetime(2026, 5, 2, 8, 3, tzinfo=TOKYO), "last night"),
        (datetime(2026, 5, 1, 21, 0, tzinfo=TOKYO), datetime(2026, 5, 1, 23, 0, tzinfo=TOKYO), "earlier today"),
        (datetime(2026, 5, 1, 18, 0, tzinfo=TOKYO), datetime(2026, 5, 2, 8, 3, tzinfo=TOKYO), "yesterday"),
        (datetime(2026, 5, 2, 2, 0, tzinfo=TOKYO), datetime(2026, 5, 2, 8, 3, tzinfo=TOKYO), "last night"),
        (datetime(2026, 5, 1, 2, 0, tzinfo=TOKYO), datetime(2026, 5, 2, 8, 3, tzinfo=TOKYO), "yesterday"),
        (datetime(2026, 5, 1, 23, 50, tzinfo=TOKYO), datetime(2026, 5, 2, 0, 10, tzinfo=TOKYO), "earlier tonight"),
        # in the small hours a moment a minute before is not last night
        (datetime(2026, 5, 2, 1, 37, tzinfo=TOKYO), datetime(2026, 5, 2, 1, 38, tzinfo=TOKYO), "earlier tonight"),
        (datetime(2026, 5, 1, 22, 0, tzinfo=TOKYO), datetime(2026, 5, 3, 1, 38, tzinfo=TOKYO), "last night"),
        (datetime(2026, 4, 30, 9, 0, tzinfo=TOKYO), datetime(2026, 5, 2, 8, 3, tzinfo=TOKYO), "a couple of days ago"),
        (datetime(2026, 4, 18, 9, 0, tzinfo=TOKYO), datetime(2026, 5, 2, 8, 3, tzinfo=TOKYO), "about two weeks ago"),
        (datetime(2024, 1, 1, 9, 0, tzinfo=TOKYO), datetime(2026, 5, 2, 8, 3, tzinfo=TOKYO), "well over a year ago"),
        # the clocks went forward at 02:00 on 29 March 2026 in Berlin: still last night, not today
        (datetime(2026, 3, 28, 23, 30, tzinfo=BERLIN), datetime(2026, 3, 29, 3, 30, tzinfo=BERLIN), "earlier tonight"),
        (datetime(2026, 3, 28, 23, 30, tzinfo=BERLIN), datetime(2026, 3, 29, 7, 30, tzinfo=BERLIN), "last night"),
        # 09:00 and 23:00 UTC: the same UTC day, but 18:00 and 08:00 the next day in Tokyo
        (datetime(2026, 5, 1, 9, 0, tzinfo=UTC), datetime(2026, 5, 1, 23, 0, tzinfo=UTC), "yesterday"),
        # a moment after now (a clock set back) is now
        (datetime(2026, 5, 2, 9, 0, tzinfo=TOKYO), datetime(2026, 5, 2, 8, 3, tzinfo=TOKYO), "earlier today"),
    ],
)
def test_moments_in_tokyo_and_berlin(moment: datetime, now: datetime, said: str) -> None:
    zone = BERLIN if moment.tzinfo is BERLIN else TOKYO
    assert when_words(moment, now, zone) == said


def test_in_detail_the_part_of_the_day_is_named() -> None:
    now = datetime(2026, 5, 2, 8, 3, tzinfo=TOKYO)  # a Saturday
    assert when_words(datetime(2026, 5, 2, 7, 0, tzinfo=TOKYO), now, TOKYO, detail=True) == "this morning"
    assert when_words(datetime(2026, 5, 1, 21, 0, tzinfo=TOKYO), now, TOKYO, detail=True) == "last night"
    assert when_words(datetime(2026, 5, 1, 18, 0, tzinfo=TOKYO), now, TOKYO, detail=True) == "yesterday evening"
    assert when_words(datetime(2026, 4, 28, 14, 0, tzinfo=TOKYO), now, TOKYO, detail=True) == "Tuesday afternoon"
    assert when_words(datetime(2026, 5, 3, 9, 0, tzinfo=TOKYO), now, TOKYO, detail=True) == "in the future"
