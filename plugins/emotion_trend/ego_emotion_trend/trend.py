"""Reading the trend from the memory service: how many memories, which layers they allow, and each layer.

Only counts and the few memories a layer names are read (``MemoryService.tally`` counts a window without
loading it), so a month of a large store stays fast.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from datetime import datetime

import attrs

from ego_core import EMOTIONS, EmotionTally, Memory, MemoryService
from ego_emotion_trend.config import EmotionTrendConfig
from ego_emotion_trend.windows import Span, Windows


class Level(enum.IntEnum):
    """How much the number of memories allows the trend to say (graceful degradation)."""

    NONE = 0
    FELT = 1
    RECENT = 2
    WEEK = 3
    MONTH = 4


def level_for(count: int, config: EmotionTrendConfig) -> Level:
    if count <= 0:
        return Level.NONE
    if count >= config.month_from:
        return Level.MONTH
    if count >= config.week_from:
        return Level.WEEK
    return Level.RECENT if count >= config.recent_from else Level.FELT


Scores = list[tuple[str, float]]


def ranked(scores: Mapping[str, float]) -> Scores:
    """Highest first; equal scores by name, so the order never depends on the store."""
    return sorted(((name, score) for name, score in scores.items() if score > 0), key=lambda item: (-item[1], item[0]))


def weighted(tally: EmotionTally, config: EmotionTrendConfig) -> Scores:
    """Each emotion's weighted count: primary ``primary_weight`` (1.0) each, secondary ``secondary_weight`` (0.4)."""
    scores: dict[str, float] = {}
    for name, times in tally.primary.items():
        scores[name] = scores.get(name, 0.0) + config.primary_weight * times
    for name, times in tally.secondary.items():
        scores[name] = scores.get(name, 0.0) + config.secondary_weight * times
    return ranked(scores)


def undercurrent(tally: EmotionTally, config: EmotionTrendConfig) -> Scores:
    """The secondary emotions, weighted: what runs beneath the surface."""
    return ranked({name: config.secondary_weight * times for name, times in tally.secondary.items()})


def felt_here(tally: EmotionTally) -> set[str]:
    return set(tally.primary) | set(tally.secondary)


@attrs.frozen
class Recent:
    tally: EmotionTally
    events: tuple[Memory, ...] = ()
    """In time order; the intensity peak is always among them."""


@attrs.frozen
class Week:
    tally: EmotionTally
    first: EmotionTally
    second: EmotionTally


@attrs.frozen
class Month:
    tally: EmotionTally
    peak: Memory | None = None
    end: Memory | None = None


@attrs.frozen
class Trend:
    count: int
    level: Level
    felt: EmotionTally | None = None
    """Everything so far (only for a store too small for windows)."""
    recent: Recent | None = None
    week: Week | None = None
    month: Month | None = None
    fading: tuple[tuple[str, datetime], ...] = ()
    """Emotions only faded older memories carry, absent this week, with when each was last felt."""


class TrendReader:
    """Reads what a response needs, and nothing more (``named=False``: no memory is loaded at all)."""

    def __init__(self, service: MemoryService, config: EmotionTrendConfig, windows: Windows) -> None:
        self.service = service
        self.config = config
        self.windows = windows

    def _tally(self, span: Span) -> EmotionTally:
        return self.service.tally(span.start, span.end)

    def _named(self, ids: list[str | None]) -> dict[str, Memory]:
        wanted = [memory_id for memory_id in dict.fromkeys(ids) if memory_id is not None]
        return {memory.id: memory for memory in self.service.get(wanted)} if wanted else {}

    def read(self, *, named: bool = True, fading: bool = True) -> Trend:
        count = self.service.count()
        level = level_for(count, self.config)
        if level == Level.NONE:
            return Trend(count=count, level=level)
        if level == Level.FELT:
            return Trend(count=count, level=level, felt=self._tally(self.windows.everything))
        recent = self.recent(named=named)
        week = self.week() if level >= Level.WEEK else None
        if week is None or level < Level.MONTH:
            return Trend(count=count, level=level, recent=recent, week=week)
        month = self.month(named=named)
        faded = self.fading(week.tally, month.tally) if fading else ()
        return Trend(count=count, level=level, recent=recent, week=week, month=month, fading=faded)

    def recent(self, *, named: bool = True) -> Recent:
        tally = self._tally(self.windows.recent)
        if not named or tally.count == 0:
            return Recent(tally=tally)
        span, limit = self.windows.recent, self.config.recent_events
        # The newest memories of the window (a few extra, in case some lie after now) ...
        latest = [m for m in self.service.recent(span.start, limit + 3) if m.timestamp < span.end][-limit:]
        if tally.peak_id is not None and tally.peak_id not in {m.id for m in latest}:
            # ... where the peak takes the place of the oldest.
            peak = self._named([tally.peak_id]).get(tally.peak_id)
            if peak is not None:
                latest = [peak, *latest[1:]]
        events = tuple(sorted(latest, key=lambda m: m.timestamp))
        return Recent(tally=tally, events=events)

    def week(self) -> Week:
        windows = self.windows
        return Week(
            tally=self._tally(windows.week),
            first=self._tally(windows.first_half),
            second=self._tally(windows.second_half),
        )

    def month(self, *, named: bool = True) -> Month:
        tally = self._tally(self.windows.month)
        if not named or tally.count == 0:
            return Month(tally=tally)
        found = self._named([tally.peak_id, tally.last_id])
        return Month(
            tally=tally,
            peak=found.get(tally.peak_id) if tally.peak_id else None,
            end=found.get(tally.last_id) if tally.last_id else None,
        )

    def fading(self, week: EmotionTally, month: EmotionTally) -> tuple[tuple[str, datetime], ...]:
        """Emotions absent this week whose older memories have all faded to ``fading_strength`` or less: any of
        ``EMOTIONS`` and any other label found in the month."""
        candidates = (set(EMOTIONS) | felt_here(month)) - felt_here(week)
        if not candidates:
            return ()
        faded = self.service.faded_emotions(
            sorted(candidates),
            self.windows.week.start,
            self.windows.now,
            since=self.windows.lookback,
            strength=self.config.fading_strength,
        )
        newest_first = sorted(faded.items(), key=lambda item: (-item[1].timestamp(), item[0]))
        return tuple(newest_first[: self.config.fading_shown])
