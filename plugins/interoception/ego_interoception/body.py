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

LOGGER_NAME: Final = "ego.plugin.interoception"
"""Where unavailable readings are reported when no logger is passed in (the plugin passes its own)."""

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


CPU_MIN_INTERVAL: Final = 0.5
"""Seconds (monotonic clock) a CPU measuring interval must span before its busy share is trusted.

The kernel counts CPU time in clock ticks (usually 10 ms), so an interval of a few ticks reads as 0 % or
100 % almost at random. A shorter interval repeats the last good value, or - before there is one - uses the
1-minute load average per CPU.
"""


class CpuMeter:
    """System-wide CPU busy percentage since the previous good reading, from ``psutil.cpu_times()``.

    Like ``psutil.cpu_percent(interval=None)`` it never waits, but it keeps its own previous sample instead of
    psutil's per-thread one, so calls from any worker thread measure the same interval. An interval shorter
    than ``min_interval`` seconds of the ``monotonic`` clock is not trusted: the meter then repeats its last
    good value and keeps measuring from the older sample, so the interval grows until it is long enough.
    Before there is any good value it estimates from the 1-minute load average per CPU (``None`` if that is
    unavailable too). Counters or a clock that go backwards restart the interval.

    Constructing a meter never fails: if the counters cannot be read yet, the first :meth:`percent` primes it.
    :meth:`percent` raises when the CPU counters cannot be read or make no sense.
    """

    def __init__(
        self,
        cpu_times: Callable[[], Any] | None = None,
        loadavg: Callable[[], float] | None = None,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        min_interval: float = CPU_MIN_INTERVAL,
    ) -> None:
        if not (math.isfinite(min_interval) and min_interval >= 0):
            raise ValueError("min_interval must be a number of seconds >= 0")
        self._cpu_times = cpu_times or psutil.cpu_times
        self._loadavg = loadavg or _load_average_percent
        self._monotonic = monotonic
        self._min_interval = float(min_interval)
        self._lock = threading.Lock()
        self._previous: tuple[float, tuple[float, float]] | None = None
        self._last: float | None = None
        try:
            self._previous = self._sample()
        except Exception:  # reported by the first percent() call instead
            self._previous = None

    def _sample(self) -> tuple[float, tuple[float, float]]:
        return float(self._monotonic()), _busy_and_total(self._cpu_times())

    def percent(self) -> float | None:
        with self._lock:
            now, (busy_now, total_now) = current = self._sample()
            if self._previous is None:
                self._previous = current
                return self._fallback()
            since, (busy_then, total_then) = self._previous
            elapsed, busy, total = now - since, busy_now - busy_then, total_now - total_then
            if elapsed < 0 or busy < 0 or total < 0:
                # The clock or the counters went backwards (hotplugged CPU, wrapped counter): start over.
                self._previous = current
                return self._fallback()
            if elapsed < self._min_interval or total <= 0:
                return self._fallback()
            self._previous = current
            self._last = min(100.0, max(0.0, 100.0 * busy / total))
            return self._last

    def _fallback(self) -> float | None:
        if self._last is not None:
            return self._last
        try:
            estimate = float(self._loadavg())
        except Exception:  # only an estimate; the next good interval replaces it
            return None
        return min(100.0, max(0.0, estimate)) if math.isfinite(estimate) else None


def _busy_and_total(times: Any) -> tuple[float, float]:
    fields: dict[str, float] = {name: float(value) for name, value in times._asdict().items()}
    if not all(math.isfinite(value) and value >= 0 for value in fields.values()):
        raise ValueError(f"CPU times must be finite numbers >= 0, got {fields!r}")
    # On Linux guest time is already counted in user/nice (the same correction psutil.cpu_percent makes).
    total = sum(fields.values()) - fields.get("guest", 0.0) - fields.get("guest_nice", 0.0)
    idle = fields.get("idle", 0.0) + fields.get("iowait", 0.0)
    return total - idle, total


def _load_average_percent() -> float:
    one_minute = float(psutil.getloadavg()[0])
    return 100.0 * one_minute / (os.cpu_count() or 1)


class PsutilSampler:
    """The default sampler: CPU from :class:`CpuMeter`, memory from ``psutil.virtual_memory().percent``,
    system uptime from ``psutil.boot_time()``.

    A reading that cannot be taken - psutil raises anything, or returns something that is not a finite
    number - is ``None``, never an error; neither constructing nor calling the sampler raises. A reading
    that becomes unavailable is logged once at WARNING (``body sense readings unavailable: ...``, one line
    for all readings that failed together), and again only after it has recovered and failed anew.
    """

    def __init__(
        self,
        cpu: CpuMeter | None = None,
        wall: Callable[[], float] = time.time,
        *,
        log: logging.Logger | None = None,
    ) -> None:
        self._cpu = cpu if cpu is not None else CpuMeter()
        self._wall = wall
        self._log = log or logging.getLogger(LOGGER_NAME)
        self._lock = threading.Lock()
        self._failing: set[str] = set()

    def __call__(self) -> Readings:
        failures: dict[str, str] = {}
        cpu = self._read("cpu_percent", self._cpu.percent, failures)
        memory = self._read("memory_percent", lambda: psutil.virtual_memory().percent, failures)
        uptime = self._read(
            "system_uptime_hours", lambda: (self._wall() - float(psutil.boot_time())) / 3600.0, failures
        )
        self._report(failures)
        return Readings(cpu_percent=cpu, memory_percent=memory, system_uptime_hours=uptime)

    @staticmethod
    def _read(name: str, read: Callable[[], float | None], failures: dict[str, str]) -> float | None:
        try:
            value = read()
            if value is None:
                return None
            number = float(value)
            if not math.isfinite(number):
                raise ValueError(f"{name} is not a finite number: {value!r}")
        except Exception as exc:  # any failure of a reading makes it unknown
            failures[name] = type(exc).__name__
            return None
        return number

    def _report(self, failures: dict[str, str]) -> None:
        with self._lock:
            new = {name: error for name, error in failures.items() if name not in self._failing}
            self._failing = set(failures)
        if new:
            details = ", ".join(f"{name} ({error})" for name, error in new.items())
            self._log.warning("body sense readings unavailable: %s", details)


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
        """One short line, e.g. ``Body: evening, load low, memory calm, up 2.5h.`` (``up 14h``, ``up 3d``)."""
        return f"Body: {self.time_phase}, load {self.system_load}, memory {self.memory_pressure}, up {self.uptime()}."

    def uptime(self) -> str:
        """How long awake, as briefly as it is still meaningful: tenths of an hour, hours, then days."""
        hours = self.uptime_hours
        if hours < 10:
            return f"{hours:.1f}h"
        if hours < 48:
            return f"{hours:.0f}h"
        return f"{hours / 24:.0f}d"


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
        self._log = log or logging.getLogger(LOGGER_NAME)
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
            if not isinstance(readings, Readings):
                raise TypeError(f"the sampler must return Readings, got {type(readings).__name__}")
        except Exception as exc:  # the body sense never fails its caller
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
