"""The body sense: time phase from the (local) clock, CPU load and memory pressure from psutil, uptime.

Everything here is cheap and non-blocking: psutil readings come from counters the OS already keeps (no
sampling interval is ever waited for), and they are cached for ``cache_seconds`` so that a burst of calls
(a ``remember`` storm, a wake_up) reads the system once.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime, tzinfo
from typing import Any, Final

import attrs
import psutil

# --------------------------------------------------------------------------------------------------
# Time phase

PHASES: Final = ("late_night", "early_morning", "morning", "afternoon", "evening", "night")
"""The six time phases, in the order they occur in a day (late_night starts at midnight)."""

_PHASE_STARTS: Final = ((21, "night"), (17, "evening"), (12, "afternoon"), (7, "morning"), (5, "early_morning"))


def phase_for_hour(hour: int) -> str:
    """late_night 0-4, early_morning 5-6, morning 7-11, afternoon 12-16, evening 17-20, night 21-23."""
    if not 0 <= hour <= 23:
        raise ValueError(f"hour must be from 0 to 23, got {hour}")
    for start, phase in _PHASE_STARTS:
        if hour >= start:
            return phase
    return "late_night"


def local_phase(moment: datetime, tz: tzinfo) -> str:
    """The phase of a timezone-aware ``moment`` as seen on a wall clock in ``tz``."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("the body sense needs a timezone-aware datetime")
    return phase_for_hour(moment.astimezone(tz).hour)


# --------------------------------------------------------------------------------------------------
# Bands

UNKNOWN: Final = "unknown"
"""The band shown when a reading is unavailable (psutil failed on this platform)."""

LOAD_MODERATE_AT: Final = 30.0
"""CPU busy percentage from which the system load is ``moderate`` (below: ``low``)."""
LOAD_HIGH_AT: Final = 70.0
"""CPU busy percentage from which the system load is ``high``."""
MEMORY_MODERATE_AT: Final = 70.0
"""Used-memory percentage from which memory pressure is ``moderate`` (below: ``calm``)."""
MEMORY_HIGH_AT: Final = 90.0
"""Used-memory percentage from which memory pressure is ``high``."""

LOAD_BANDS: Final = ("low", "moderate", "high")
MEMORY_BANDS: Final = ("calm", "moderate", "high")


def load_band(cpu_percent: float | None) -> str:
    """``low`` below 30 %, ``moderate`` from 30 % to below 70 %, ``high`` from 70 %; ``unknown`` for None."""
    if cpu_percent is None:
        return UNKNOWN
    if cpu_percent >= LOAD_HIGH_AT:
        return "high"
    return "moderate" if cpu_percent >= LOAD_MODERATE_AT else "low"


def memory_band(memory_percent: float | None) -> str:
    """``calm`` below 70 %, ``moderate`` from 70 % to below 90 %, ``high`` from 90 %; ``unknown`` for None."""
    if memory_percent is None:
        return UNKNOWN
    if memory_percent >= MEMORY_HIGH_AT:
        return "high"
    return "moderate" if memory_percent >= MEMORY_MODERATE_AT else "calm"


# --------------------------------------------------------------------------------------------------
# Readings


def _percent(value: float | None) -> float | None:
    if value is None:
        return None
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"a percentage must be a finite number, got {value!r}")
    return min(100.0, max(0.0, number))


def _hours(value: float | None) -> float | None:
    if value is None:
        return None
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"hours must be a finite number, got {value!r}")
    return max(0.0, number)


@attrs.frozen
class Readings:
    """One sample of the machine. ``None`` means the reading is unavailable; percentages are clamped to 0-100."""

    cpu_percent: float | None = attrs.field(default=None, converter=_percent)
    memory_percent: float | None = attrs.field(default=None, converter=_percent)
    system_uptime_hours: float | None = attrs.field(default=None, converter=_hours)


Sampler = Callable[[], Readings]
"""Anything that returns :class:`Readings`; the default is :class:`PsutilSampler`. Tests inject their own."""


class CpuMeter:
    """System-wide CPU busy percentage since the previous reading, from ``psutil.cpu_times()``.

    Like ``psutil.cpu_percent(interval=None)`` it never waits, but it keeps its own previous sample instead of
    psutil's per-thread one, so calls from any worker thread measure the same interval. When no time has
    passed since the previous reading it repeats the last value; before there is one it estimates from the
    1-minute load average per CPU.
    """

    def __init__(self, cpu_times: Callable[[], Any] | None = None, loadavg: Callable[[], float] | None = None) -> None:
        self._cpu_times = cpu_times or psutil.cpu_times
        self._loadavg = loadavg or _load_average_percent
        self._lock = threading.Lock()
        self._previous = _busy_and_total(self._cpu_times())
        self._last: float | None = None

    def percent(self) -> float:
        with self._lock:
            current = _busy_and_total(self._cpu_times())
            previous, self._previous = self._previous, current
            busy = current[0] - previous[0]
            total = current[1] - previous[1]
            if total > 0:
                self._last = min(100.0, max(0.0, 100.0 * busy / total))
            elif self._last is None:
                return min(100.0, max(0.0, self._loadavg()))
            return self._last


def _busy_and_total(times: Any) -> tuple[float, float]:
    fields: dict[str, float] = dict(times._asdict())
    # On Linux guest time is already counted in user/nice (the same correction psutil.cpu_percent makes).
    total = sum(fields.values()) - fields.get("guest", 0.0) - fields.get("guest_nice", 0.0)
    idle = fields.get("idle", 0.0) + fields.get("iowait", 0.0)
    return total - idle, total


def _load_average_percent() -> float:
    one_minute: float = psutil.getloadavg()[0]
    return 100.0 * one_minute / (os.cpu_count() or 1)


class PsutilSampler:
    """The default sampler: CPU from :class:`CpuMeter`, memory from ``psutil.virtual_memory().percent``,
    system uptime from ``psutil.boot_time()``. A reading psutil cannot provide is ``None``, never an error.
    """

    def __init__(self, cpu: CpuMeter | None = None, wall: Callable[[], float] = time.time) -> None:
        self._cpu = cpu
        self._wall = wall
        if self._cpu is None:
            try:
                self._cpu = CpuMeter()
            except (psutil.Error, OSError):
                self._cpu = None

    def __call__(self) -> Readings:
        return Readings(
            cpu_percent=_guarded(self._cpu.percent) if self._cpu is not None else None,
            memory_percent=_guarded(lambda: float(psutil.virtual_memory().percent)),
            system_uptime_hours=_guarded(lambda: (self._wall() - float(psutil.boot_time())) / 3600.0),
        )


def _guarded(read: Callable[[], float]) -> float | None:
    try:
        return read()
    except (psutil.Error, OSError, ValueError):
        return None


# --------------------------------------------------------------------------------------------------
# The service


@attrs.frozen
class BodyState:
    """A full reading of the body sense. :meth:`as_mapping` is the compact form attached to memories."""

    time_phase: str
    system_load: str
    memory_pressure: str
    uptime_hours: float
    cpu_percent: float | None = None
    memory_percent: float | None = None
    system_uptime_hours: float | None = None

    def as_mapping(self) -> dict[str, Any]:
        return {
            "time_phase": self.time_phase,
            "system_load": self.system_load,
            "memory_pressure": self.memory_pressure,
            "uptime_hours": self.uptime_hours,
        }

    def summary(self) -> str:
        """One short line, e.g. ``Body: evening, load low, memory calm, up 2.5h.``"""
        return (
            f"Body: {self.time_phase}, load {self.system_load}, memory {self.memory_pressure}, "
            f"up {self.uptime_hours:.1f}h."
        )


class BodySenseService:
    """Implements :class:`ego_core.services.BodySense`; provided as the service ``interoception.body``.

    ``now`` is the host's clock (so a simulated clock moves phases, uptime and the cache), ``tz`` the display
    time zone. Readings are sampled at most once per ``cache_seconds`` of that clock (0 = every call), also
    when the clock jumps backwards. Thread-safe; never blocks on the system.
    """

    def __init__(
        self,
        *,
        now: Callable[[], datetime],
        tz: tzinfo,
        sampler: Sampler | None = None,
        cache_seconds: float = 5.0,
        log: logging.Logger | None = None,
    ) -> None:
        if not (math.isfinite(cache_seconds) and cache_seconds >= 0):
            raise ValueError("cache_seconds must be a number of seconds >= 0")
        self._now = now
        self._tz = tz
        self._sampler: Sampler = sampler if sampler is not None else PsutilSampler()
        self._cache_seconds = float(cache_seconds)
        self._log = log or logging.getLogger("ego.plugin.interoception")
        self._lock = threading.Lock()
        self._cached: tuple[datetime, Readings] | None = None
        self._failing = False
        self.started_at = self._aware_now()

    @property
    def cache_seconds(self) -> float:
        return self._cache_seconds

    def _aware_now(self) -> datetime:
        moment = self._now()
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise ValueError("the body sense needs a timezone-aware clock")
        return moment

    def readings(self) -> Readings:
        """The machine readings, from the cache while it is fresh."""
        return self._readings_at(self._aware_now())

    def _readings_at(self, moment: datetime) -> Readings:
        with self._lock:
            if self._cached is not None:
                sampled_at, cached = self._cached
                age = (moment - sampled_at).total_seconds()
                if 0 <= age < self._cache_seconds:
                    return cached
            readings = self._sample()
            self._cached = (moment, readings)
            return readings

    def _sample(self) -> Readings:
        try:
            readings = self._sampler()
        except Exception as exc:
            if not self._failing:
                self._log.warning("body sense readings unavailable: %s", type(exc).__name__)
            self._failing = True
            return Readings()
        self._failing = False
        return readings

    def snapshot(self) -> BodyState:
        moment = self._aware_now()
        readings = self._readings_at(moment)
        uptime = max(0.0, (moment - self.started_at).total_seconds() / 3600.0)
        return BodyState(
            time_phase=local_phase(moment, self._tz),
            system_load=load_band(readings.cpu_percent),
            memory_pressure=memory_band(readings.memory_percent),
            uptime_hours=round(uptime, 1),
            cpu_percent=readings.cpu_percent,
            memory_percent=readings.memory_percent,
            system_uptime_hours=readings.system_uptime_hours,
        )

    def body_state(self) -> Mapping[str, Any]:
        """``{"time_phase", "system_load", "memory_pressure", "uptime_hours"}`` — small and JSON-able."""
        return self.snapshot().as_mapping()

    def time_phase(self) -> str:
        """The current phase in the display time zone (needs no machine readings)."""
        return local_phase(self._aware_now(), self._tz)

    def summary(self) -> str:
        """The wake_up line, e.g. ``Body: evening, load low, memory calm, up 2.5h.``"""
        return self.snapshot().summary()
