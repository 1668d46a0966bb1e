"""Helpers for the emotion_trend tests: the fixed clock, backdated remembers, layer parsing."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs

from ego_core import Clock
from ego_core.testing import SEPARATOR, call_ok

EGO = [sys.executable, "-m", "ego_core.mcp.cli"]
NOW = datetime(2026, 3, 14, 12, 0, tzinfo=UTC)
"""A Saturday, noon UTC."""
DAY = timedelta(days=1)
HOUR = timedelta(hours=1)
HEADERS = {"felt": "Emotions felt so far (", "recent": "Recent (", "week": "This week (", "month": "This month ("}


@attrs.frozen
class Feeling:
    """One backdated remember: ``ago`` before NOW, with its emotion and text."""

    ago: timedelta
    emotion: str
    content: str
    secondary: tuple[str, ...] = ()
    extra: Mapping[str, Any] = attrs.field(factory=dict)

    def arguments(self) -> dict[str, Any]:
        args: dict[str, Any] = {"content": self.content, "emotion": self.emotion, **self.extra}
        if self.secondary:
            args["secondary"] = list(self.secondary)
        return args


async def remember_all(client: Any, clock: Clock, feelings: Iterable[Feeling], *, now: datetime = NOW) -> None:
    """Remember each feeling with the clock set to its moment, then put the clock back to ``now``."""
    for feeling in feelings:
        clock.set(now - feeling.ago)
        await call_ok(client, "remember", feeling.arguments())
    clock.set(now)


def data_of(text: str) -> str:
    """A response without its scaffold."""
    return text.split(SEPARATOR, maxsplit=1)[0]


def layers(text: str) -> set[str]:
    """Which layers a trend response shows."""
    data = data_of(text)
    return {name for name, header in HEADERS.items() if any(line.startswith(header) for line in data.splitlines())}


def block(text: str, name: str) -> str:
    """The lines of one layer (from its header to the next blank line)."""
    data = data_of(text)
    found = re.search(rf"^{re.escape(HEADERS[name])}.*?(?=\n\n|\Z)", data, flags=re.M | re.S)
    assert found, f"no {name} layer in: {data}"
    return found.group(0)


def section(text: str, first_line: str) -> str:
    """A section of a composed response (wake_up, introspect), from the line starting with ``first_line``."""
    data = data_of(text)
    found = re.search(rf"^{re.escape(first_line)}.*?(?=\n\n|\Z)", data, flags=re.M | re.S)
    return found.group(0) if found else ""


def spread(count: int, emotion: str, start: timedelta, step: timedelta, words: str, **extra: Any) -> Sequence[Feeling]:
    """``count`` feelings ``step`` apart from ``start`` ago, each with its own text."""
    return [Feeling(start - step * i, emotion, f"{words} ({emotion}, entry {i}).", extra=extra) for i in range(count)]
