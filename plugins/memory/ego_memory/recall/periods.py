"""Periods a recall context names ("in July 2022", "on 1 May, 2022", "the second week of November").

:func:`named_period` turns the first date phrase of a context into a time window, so recall can look among
the memories of that period. Only explicit calendar phrases count; relative ones ("last week") depend on when
the memory was written and are handled by the temporal cue instead.
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime, timedelta, tzinfo

MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): number for number, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9

_MONTH = r"(?P<{name}>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<{name}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<{name}>(?:19|20)\d\d)"


def _pattern(template: str) -> re.Pattern[str]:
    parts = {
        "month": _MONTH.format(name="month"),
        "day": _DAY.format(name="day"),
        "year": _YEAR.format(name="year"),
        "month2": _MONTH.format(name="month2"),
        "day2": _DAY.format(name="day2"),
        "year2": _YEAR.format(name="year2"),
    }
    return re.compile(r"\b" + template.format(**parts) + r"\b", re.IGNORECASE)


_ORDINALS = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3, "last": -1}
_PARTS = {"beginning": (0, 10), "start": (0, 10), "early": (0, 10), "mid": (10, 20), "middle": (10, 20)}
_PARTS.update({"end": (20, 31), "late": (20, 31)})

_BETWEEN = _pattern(r"between {month} {day},? and {month2} {day2},? {year}")
_WEEK_BEFORE = _pattern(r"week (?P<side>before|after|of) (?:(?:the )?{day} {month},? {year}|{month2} {day2},? {year2})")
_ORDINAL_WEEK = _pattern(r"(?P<ordinal>first|1st|second|2nd|third|3rd|fourth|4th|last) week of {month},?(?: {year})?")
_PART_OF = _pattern(r"(?P<part>beginning|start|early|mid|middle|end|late)(?:[- ]| of )?{month},?(?: {year})?")
_DAY_MONTH_YEAR = _pattern(r"{day} {month},? {year}")
_MONTH_DAY_YEAR = _pattern(r"{month} {day},? {year}")
_MONTH_YEAR = _pattern(r"{month},? {year}")
_IN_MONTH = _pattern(r"(?:in|during|of|since) {month}")
_IN_YEAR = _pattern(r"(?:in|during) {year}")


def _month_start(year: int, month: int, zone: tzinfo) -> datetime:
    return datetime(year, month, 1, tzinfo=zone)


def _month_end(year: int, month: int, zone: tzinfo) -> datetime:
    return _month_start(year, month, zone) + timedelta(days=calendar.monthrange(year, month)[1])


def _latest_year(month: int, present: datetime) -> int:
    """The year of the most recent ``month`` that has begun by ``present``."""
    return present.year if month <= present.month else present.year - 1


def _day(year: int, month: int, day: int, zone: tzinfo) -> datetime | None:
    try:
        return datetime(year, month, day, tzinfo=zone)
    except ValueError:
        return None


def named_period(context: str, present: datetime) -> tuple[datetime, datetime] | None:
    """The window ``[start, end)`` of the first calendar phrase in ``context``, or None.

    Days begin at midnight in ``present``'s time zone. A month without a year is the latest such month by
    ``present``; a day is the whole day; a day that does not exist ("31 February, 2023") leaves its month.
    """
    zone = present.tzinfo or UTC
    if found := _BETWEEN.search(context):
        year = int(found["year"])
        first = _day(year, MONTHS[found["month"].lower()], int(found["day"]), zone)
        last = _day(year, MONTHS[found["month2"].lower()], int(found["day2"]), zone)
        if first and last:
            first, last = min(first, last), max(first, last)
            return first, last + timedelta(days=1)
    if found := _WEEK_BEFORE.search(context):
        year = int(found["year"] or found["year2"])
        month = found["month"] or found["month2"]
        day = found["day"] or found["day2"]
        anchor = _day(year, MONTHS[month.lower()], int(day), zone)
        if anchor is not None:
            if found["side"].lower() == "before":
                return anchor - timedelta(days=7), anchor + timedelta(days=1)
            if found["side"].lower() == "after":
                return anchor, anchor + timedelta(days=8)
            return anchor - timedelta(days=anchor.weekday()), anchor + timedelta(days=7 - anchor.weekday())
    if found := _ORDINAL_WEEK.search(context):
        month = MONTHS[found["month"].lower()]
        year = int(found["year"]) if found["year"] else _latest_year(month, present)
        index = _ORDINALS[found["ordinal"].lower()]
        end_of_month = _month_end(year, month, zone)
        month_begins = _month_start(year, month, zone)
        start = end_of_month - timedelta(days=7) if index < 0 else month_begins + timedelta(days=7 * index)
        return start, min(start + timedelta(days=7), end_of_month)
    if found := _PART_OF.search(context):
        month = MONTHS[found["month"].lower()]
        year = int(found["year"]) if found["year"] else _latest_year(month, present)
        first_day, last_day = _PARTS[found["part"].lower()]
        start = _month_start(year, month, zone) + timedelta(days=first_day)
        return start, min(_month_start(year, month, zone) + timedelta(days=last_day), _month_end(year, month, zone))
    for pattern in (_DAY_MONTH_YEAR, _MONTH_DAY_YEAR):
        if found := pattern.search(context):
            day = _day(int(found["year"]), MONTHS[found["month"].lower()], int(found["day"]), zone)
            if day is not None:
                return day, day + timedelta(days=1)
    if found := _MONTH_YEAR.search(context):
        year, month = int(found["year"]), MONTHS[found["month"].lower()]
        return _month_start(year, month, zone), _month_end(year, month, zone)
    if found := _IN_MONTH.search(context):
        month = MONTHS[found["month"].lower()]
        year = _latest_year(month, present)
        return _month_start(year, month, zone), _month_end(year, month, zone)
    if found := _IN_YEAR.search(context):
        year = int(found["year"])
        return datetime(year, 1, 1, tzinfo=zone), datetime(year + 1, 1, 1, tzinfo=zone)
    return None
