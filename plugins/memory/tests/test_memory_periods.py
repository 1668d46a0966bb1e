"""Calendar periods named in a recall context: the phrases read, the windows they give, and that any text is
either read as one window or ignored, never an error."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ego_memory.recall.periods import MONTHS, named_period

PRESENT = datetime(2023, 12, 1, 9, 30, tzinfo=UTC)


def days(context: str, present: datetime = PRESENT) -> tuple[date, date] | None:
    window = named_period(context, present)
    return None if window is None else (window[0].date(), window[1].date())


@pytest.mark.parametrize(
    ("context", "window"),
    [
        ("What did Joanna accomplish in January 2022?", (date(2022, 1, 1), date(2022, 2, 1))),
        ("What movie did she watch on 1 May, 2022?", (date(2022, 5, 1), date(2022, 5, 2))),
        ("What book did Tim finish on 8th December, 2023?", (date(2023, 12, 8), date(2023, 12, 9))),
        ("Which team did he sign with on May 21, 2023?", (date(2023, 5, 21), date(2023, 5, 22))),
        ("Where was John between August 11 and August 15 2023?", (date(2023, 8, 11), date(2023, 8, 16))),
        ("Where was Tim in the week before 16 November 2023?", (date(2023, 11, 9), date(2023, 11, 17))),
        ("the week after March 3, 2023", (date(2023, 3, 3), date(2023, 3, 11))),
        ("Which country was he visiting in the second week of November?", (date(2023, 11, 8), date(2023, 11, 15))),
        ("the last week of February 2024", (date(2024, 2, 23), date(2024, 3, 1))),
        ("Which tournament did Nate win in the beginning of November 2022?", (date(2022, 11, 1), date(2022, 11, 11))),
        ("late Sept 2022", (date(2022, 9, 21), date(2022, 10, 1))),
        ("When did Melanie go camping in June?", (date(2023, 6, 1), date(2023, 7, 1))),
        ("on 31 February, 2023", (date(2023, 2, 1), date(2023, 3, 1))),  # no such day: its month
        ("between August 15 and August 11 2023", (date(2023, 8, 11), date(2023, 8, 16))),
        ("What did I do in December?", (date(2023, 12, 1), date(2024, 1, 1))),
        ("What charity event did John organize in 2024?", (date(2024, 1, 1), date(2025, 1, 1))),
    ],
)
def test_a_named_period_gives_its_window(context: str, window: tuple[date, date]) -> None:
    assert days(context) == window


def test_days_begin_at_midnight_in_the_present_time_zone() -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    window = named_period("on 1 May, 2022", datetime(2023, 12, 1, tzinfo=tokyo))
    assert window == (datetime(2022, 5, 1, tzinfo=tokyo), datetime(2022, 5, 2, tzinfo=tokyo))
    assert window[0].timestamp() == datetime(2022, 4, 30, 15, 0, tzinfo=UTC).timestamp()


def test_a_month_without_a_year_is_the_latest_one_by_the_present() -> None:
    assert days("camping in June", datetime(2024, 3, 1, tzinfo=UTC)) == (date(2023, 6, 1), date(2023, 7, 1))
    assert days("camping in June", datetime(2024, 6, 2, tzinfo=UTC)) == (date(2024, 6, 1), date(2024, 7, 1))


@pytest.mark.parametrize(
    "context",
    [
        "What might John's financial status be?",
        "When did Melanie paint a sunrise?",
        "What may I bring to the party?",
        "what happened last week",
        "",
    ],
)
def test_no_calendar_period_is_no_window(context: str) -> None:
    assert named_period(context, PRESENT) is None


@given(
    st.text(max_size=200)
    | st.builds(
        lambda word, day, month, year: f"{word} {day} {month} {year}",
        st.sampled_from(["on", "in", "the week before", "between", "early", "second week of"]),
        st.integers(0, 40),
        st.sampled_from(sorted(MONTHS)),
        st.integers(1900, 2099),
    )
)
def test_any_text_gives_one_nonempty_window_or_none(context: str) -> None:
    window = named_period(context, PRESENT)
    if window is not None:
        start, end = window
        assert start < end
        assert start.tzinfo is not None
        assert end.tzinfo is not None
