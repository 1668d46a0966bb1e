"""The body sense itself: time phases, bands, readings, the CPU meter, caching and thread safety."""

from __future__ import annotations

import json
import logging
import math
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple
from zoneinfo import ZoneInfo

import psutil
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ego_core import BodySense, Clock
from ego_interoception import (
    PHASES,
    UNKNOWN,
    BodySenseService,
    BodyState,
    CpuMeter,
    PsutilSampler,
    Readings,
    load_band,
    local_phase,
    memory_band,
    phase_for_hour,
)

# The phases as docs/plugins/interoception.md states them, independent of the implementation's table.
SPEC_PHASES: dict[str, range] = {
    "late_night": range(0, 5),
    "early_morning": range(5, 7),
    "morning": range(7, 12),
    "afternoon": range(12, 17),
    "evening": range(17, 21),
    "night": range(21, 24),
}
EXPECTED_BY_HOUR = {hour: phase for phase, hours in SPEC_PHASES.items() for hour in hours}
TOKYO = ZoneInfo("Asia/Tokyo")
START = datetime(2025, 3, 14, 9, 0, tzinfo=UTC)


class CountingSampler:
    """Returns fixed readings and counts how often the system would have been read."""

    def __init__(self, readings: Readings | None = None) -> None:
        self.readings = readings or Readings(cpu_percent=12.0, memory_percent=40.0, system_uptime_hours=30.0)
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self) -> Readings:
        with self._lock:
            self.calls += 1
        return self.readings


def make_service(
    clock: Clock, sampler: Callable[[], Readings], *, cache_seconds: float = 5.0, tz: ZoneInfo = TOKYO
) -> BodySenseService:
    return BodySenseService(now=clock.now, tz=tz, sampler=sampler, cache_seconds=cache_seconds)


# --------------------------------------------------------------------------------------------------
# Time phase


def test_spec_table_covers_every_hour_once() -> None:
    assert sorted(EXPECTED_BY_HOUR) == list(range(24))
    assert set(SPEC_PHASES) == set(PHASES)


@pytest.mark.parametrize("hour", range(24))
def test_phase_for_every_local_hour(hour: int) -> None:
    local = datetime(2025, 7, 1, hour, 59, 59, tzinfo=TOKYO)
    clock = Clock(local.astimezone(UTC))
    service = make_service(clock, CountingSampler())

    assert phase_for_hour(hour) == EXPECTED_BY_HOUR[hour]
    assert service.time_phase() == EXPECTED_BY_HOUR[hour]
    assert service.body_state()["time_phase"] == EXPECTED_BY_HOUR[hour]


@pytest.mark.parametrize(
    ("utc_hour", "tz", "expected"),
    [
        (23, "UTC", "night"),
        (23, "Asia/Tokyo", "morning"),  # 08:00 the next day
        (23, "America/New_York", "evening"),  # 19:00 in EDT
        (4, "Europe/Berlin", "early_morning"),  # 06:00 in CEST
    ],
)
def test_phase_uses_the_display_time_zone(utc_hour: int, tz: str, expected: str) -> None:
    moment = datetime(2025, 7, 1, utc_hour, 0, tzinfo=UTC)
    assert local_phase(moment, ZoneInfo(tz)) == expected


@pytest.mark.parametrize("hour", [-1, 24])
def test_phase_for_hour_rejects_impossible_hours(hour: int) -> None:
    with pytest.raises(ValueError, match="hour"):
        phase_for_hour(hour)


def test_naive_clock_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        local_phase(datetime(2025, 1, 1, 12, 0), TOKYO)


@given(
    moment=st.datetimes(
        min_value=datetime(1900, 1, 2),
        max_value=datetime(2200, 12, 30),
        timezones=st.timezones(),
    ),
    tz=st.timezones(),
)
def test_any_moment_and_zone_gives_the_phase_of_the_local_hour(moment: datetime, tz: ZoneInfo) -> None:
    service = BodySenseService(now=lambda: moment, tz=tz, sampler=Readings)
    phase = service.time_phase()
    assert phase in PHASES
    assert moment.astimezone(tz).hour in SPEC_PHASES[phase]


# --------------------------------------------------------------------------------------------------
# Bands and readings


@pytest.mark.parametrize(
    ("percent", "band"),
    [
        (None, UNKNOWN),
        (0.0, "low"),
        (29.99, "low"),
        (30.0, "moderate"),
        (69.99, "moderate"),
        (70.0, "high"),
        (100.0, "high"),
    ],
)
def test_load_band_thresholds(percent: float | None, band: str) -> None:
    assert load_band(percent) == band


@pytest.mark.parametrize(
    ("percent", "band"),
    [
        (None, UNKNOWN),
        (0.0, "calm"),
        (69.99, "calm"),
        (70.0, "moderate"),
        (89.99, "moderate"),
        (90.0, "high"),
        (100.0, "high"),
    ],
)
def test_memory_band_thresholds(percent: float | None, band: str) -> None:
    assert memory_band(percent) == band


def test_readings_clamp_percentages_and_refuse_non_numbers() -> None:
    assert Readings(cpu_percent=-3, memory_percent=250).cpu_percent == 0.0
    assert Readings(cpu_percent=-3, memory_percent=250).memory_percent == 100.0
    with pytest.raises(ValueError, match="finite"):
        Readings(cpu_percent=float("nan"))
    with pytest.raises(ValueError, match="finite"):
        Readings(system_uptime_hours=float("inf"))


def test_body_state_is_small_json_and_satisfies_the_protocol() -> None:
    clock = Clock(START)
    sampler = CountingSampler(Readings(cpu_percent=75.0, memory_percent=71.0))
    service = make_service(clock, sampler, tz=ZoneInfo("UTC"))
    clock.set(START + timedelta(hours=2, minutes=30))

    state = service.body_state()

    assert isinstance(service, BodySense)
    assert dict(state) == {
        "time_phase": "morning",
        "system_load": "high",
        "memory_pressure": "moderate",
        "uptime_hours": 2.5,
    }
    assert json.loads(json.dumps(state)) == dict(state)
    assert service.summary() == "Body: morning, load high, memory moderate, up 2.5h."


@pytest.mark.parametrize(
    ("hours", "shown"), [(0.0, "0.0h"), (2.5, "2.5h"), (9.94, "9.9h"), (14.2, "14h"), (47.4, "47h"), (72.0, "3d")]
)
def test_uptime_is_as_brief_as_it_is_still_meaningful(hours: float, shown: str) -> None:
    state = BodyState("night", "low", "calm", hours)
    assert state.summary() == f"Body: night, load low, memory calm, up {shown}."


def test_snapshot_keeps_the_numbers_behind_the_bands() -> None:
    service = make_service(Clock(START), CountingSampler(Readings(12.5, 40.0, 30.25)))
    snapshot = service.snapshot()
    assert (snapshot.cpu_percent, snapshot.memory_percent, snapshot.system_uptime_hours) == (12.5, 40.0, 30.25)


def test_uptime_never_goes_negative_when_the_clock_moves_back() -> None:
    clock = Clock(START)
    service = make_service(clock, CountingSampler())
    clock.set(START - timedelta(hours=3))
    assert service.body_state()["uptime_hours"] == 0.0


def test_failing_sampler_gives_unknown_bands_and_logs_once(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> Readings:
        raise OSError("no /proc here")

    service = BodySenseService(now=Clock(START).now, tz=TOKYO, sampler=broken, cache_seconds=0)
    with caplog.at_level(logging.WARNING, logger="ego.plugin.interoception"):
        first = service.body_state()
        second = service.body_state()

    assert first == second
    assert (first["system_load"], first["memory_pressure"]) == (UNKNOWN, UNKNOWN)
    assert first["time_phase"] == "evening"  # 18:00 in Tokyo
    assert [r.getMessage() for r in caplog.records] == ["body sense readings unavailable: OSError"]


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_service_refuses_a_bad_cache_window(bad: float) -> None:
    with pytest.raises(ValueError, match="cache_seconds"):
        make_service(Clock(START), CountingSampler(), cache_seconds=bad)


# --------------------------------------------------------------------------------------------------
# Caching


def test_readings_are_sampled_once_within_the_cache_window() -> None:
    clock = Clock(START)
    sampler = CountingSampler()
    service = make_service(clock, sampler, cache_seconds=5)

    service.body_state()
    service.summary()
    clock.set(START + timedelta(seconds=4.999))
    service.body_state()
    assert sampler.calls == 1

    clock.set(START + timedelta(seconds=5))
    service.body_state()
    assert sampler.calls == 2

    clock.set(START + timedelta(seconds=9))
    service.body_state()
    assert sampler.calls == 2


def test_cache_is_refreshed_with_new_values() -> None:
    clock = Clock(START)
    sampler = CountingSampler(Readings(cpu_percent=5.0, memory_percent=10.0))
    service = make_service(clock, sampler, cache_seconds=5)
    assert service.body_state()["system_load"] == "low"

    sampler.readings = Readings(cpu_percent=95.0, memory_percent=95.0)
    assert service.body_state()["system_load"] == "low"
    clock.set(START + timedelta(seconds=6))
    state = service.body_state()
    assert (state["system_load"], state["memory_pressure"]) == ("high", "high")


def test_clock_moving_backwards_refreshes_the_cache() -> None:
    clock = Clock(START)
    sampler = CountingSampler()
    service = make_service(clock, sampler, cache_seconds=60)
    service.body_state()
    clock.set(START - timedelta(seconds=1))
    service.body_state()
    assert sampler.calls == 2


def test_zero_cache_window_samples_every_call() -> None:
    sampler = CountingSampler()
    service = make_service(Clock(START), sampler, cache_seconds=0)
    for _ in range(3):
        service.body_state()
    assert sampler.calls == 3


def test_time_phase_does_not_read_the_machine() -> None:
    sampler = CountingSampler()
    service = make_service(Clock(START), sampler)
    assert service.time_phase() == "evening"
    assert sampler.calls == 0


def test_concurrent_callers_share_one_sample() -> None:
    sampler = CountingSampler()
    service = make_service(Clock(START), sampler, cache_seconds=5)
    barrier = threading.Barrier(8)
    states: list[dict[str, object]] = []
    lock = threading.Lock()

    def worker() -> None:
        barrier.wait()
        for _ in range(50):
            state = dict(service.body_state())
            with lock:
                states.append(state)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sampler.calls == 1
    assert len(states) == 400
    assert all(state == states[0] for state in states)


# --------------------------------------------------------------------------------------------------
# The psutil side


class CpuTimes(NamedTuple):
    """The shape of ``psutil.cpu_times()`` on Linux (steal/irq fields omitted)."""

    user: float
    nice: float
    system: float
    idle: float
    iowait: float
    guest: float
    guest_nice: float


def scripted(times: list[CpuTimes]) -> Callable[[], CpuTimes]:
    it: Iterator[CpuTimes] = iter(times)
    return lambda: next(it)


class FakeMonotonic:
    """A monotonic clock the test moves by hand (the CPU meter's interval clock)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.value = start

    def __call__(self) -> float:
        return self.value

    def advance(self, seconds: float) -> None:
        self.value += seconds


def no_load_average() -> float:
    pytest.fail("the load average is only a fallback")


def test_cpu_meter_measures_busy_share_since_the_previous_reading() -> None:
    clock = FakeMonotonic()
    meter = CpuMeter(
        cpu_times=scripted(
            [
                CpuTimes(100, 0, 50, 850, 0, 0, 0),  # primed at construction
                CpuTimes(130, 0, 60, 900, 10, 0, 0),  # +40 busy, +10 iowait, +50 idle -> 40 %
                CpuTimes(130, 0, 60, 900, 10, 0, 0),  # no CPU time passed: repeat the last value
                CpuTimes(230, 0, 60, 900, 10, 50, 0),  # guest is part of user: +100 total, all busy
            ]
        ),
        loadavg=no_load_average,
        monotonic=clock,
    )
    clock.advance(10)
    assert meter.percent() == pytest.approx(40.0)
    clock.advance(10)
    assert meter.percent() == pytest.approx(40.0)
    clock.advance(10)
    assert meter.percent() == pytest.approx(100.0)


def test_cpu_meter_falls_back_to_load_average_before_any_interval() -> None:
    same = CpuTimes(1, 0, 1, 10, 0, 0, 0)
    clock = FakeMonotonic()
    meter = CpuMeter(cpu_times=scripted([same, same]), loadavg=lambda: 150.0, monotonic=clock)
    clock.advance(10)
    assert meter.percent() == 100.0


def test_first_reading_right_after_startup_is_the_load_average_not_one_clock_tick() -> None:
    # The first wake_up comes ~10 ms after startup: one clock tick, on one CPU, which happened to be busy.
    clock = FakeMonotonic()
    meter = CpuMeter(
        cpu_times=scripted([CpuTimes(100, 0, 50, 850, 0, 0, 0), CpuTimes(100.01, 0, 50, 850, 0, 0, 0)]),
        loadavg=lambda: 4.0,
        monotonic=clock,
    )
    clock.advance(0.01)
    assert meter.percent() == 4.0  # not 100 %


def test_short_intervals_repeat_the_last_good_value_and_keep_measuring_from_the_older_sample() -> None:
    clock = FakeMonotonic()
    meter = CpuMeter(
        cpu_times=scripted(
            [
                CpuTimes(0, 0, 0, 0, 0, 0, 0),
                CpuTimes(10, 0, 0, 90, 0, 0, 0),  # 1 s later: 10 %
                CpuTimes(10.01, 0, 0, 90, 0, 0, 0),  # 10 ms later: one busy tick, not trusted
                CpuTimes(10.01, 0, 0, 90.01, 0, 0, 0),  # 20 ms later: one idle tick, not trusted
                CpuTimes(60, 0, 0, 140, 0, 0, 0),  # 1 s after the good reading: +50 busy of +100 -> 50 %
            ]
        ),
        loadavg=no_load_average,
        monotonic=clock,
        min_interval=0.5,
    )
    clock.advance(1)
    assert meter.percent() == pytest.approx(10.0)
    clock.advance(0.01)
    assert meter.percent() == pytest.approx(10.0)
    clock.advance(0.01)
    assert meter.percent() == pytest.approx(10.0)
    clock.advance(0.98)
    assert meter.percent() == pytest.approx(50.0)


def test_readings_are_stable_when_the_service_reads_on_every_call() -> None:
    # cache_seconds=0 with calls milliseconds apart: every short interval repeats the last good value.
    clock = FakeMonotonic()
    ticks = [CpuTimes(0, 0, 0, 0, 0, 0, 0), CpuTimes(5, 0, 0, 95, 0, 0, 0)]
    ticks += [CpuTimes(5 + 0.01 * (i % 2), 0, 0, 95 + 0.01 * (i // 2), 0, 0, 0) for i in range(1, 20)]
    meter = CpuMeter(cpu_times=scripted(ticks), loadavg=no_load_average, monotonic=clock)
    clock.advance(1)
    readings = []
    for _ in range(20):
        readings.append(meter.percent())
        clock.advance(0.01)
    assert readings == [pytest.approx(5.0)] * 20


def test_cpu_counters_going_backwards_restart_the_interval() -> None:
    clock = FakeMonotonic()
    meter = CpuMeter(
        cpu_times=scripted(
            [
                CpuTimes(100, 0, 0, 100, 0, 0, 0),
                CpuTimes(150, 0, 0, 150, 0, 0, 0),  # 50 %
                CpuTimes(10, 0, 0, 10, 0, 0, 0),  # a CPU went away: counters dropped
                CpuTimes(19, 0, 0, 11, 0, 0, 0),  # measured from the restart: 90 %
            ]
        ),
        loadavg=no_load_average,
        monotonic=clock,
    )
    clock.advance(1)
    assert meter.percent() == pytest.approx(50.0)
    clock.advance(1)
    assert meter.percent() == pytest.approx(50.0)
    clock.advance(1)
    assert meter.percent() == pytest.approx(90.0)


def test_cpu_meter_without_a_load_average_is_none_until_a_good_interval() -> None:
    def no_loadavg() -> float:
        raise OSError("getloadavg unsupported")

    clock = FakeMonotonic()
    meter = CpuMeter(
        cpu_times=scripted([CpuTimes(0, 0, 0, 0, 0, 0, 0), CpuTimes(0, 0, 0, 0.01, 0, 0, 0)]),
        loadavg=no_loadavg,
        monotonic=clock,
    )
    assert meter.percent() is None
    meter = CpuMeter(cpu_times=scripted([CpuTimes(0, 0, 0, 0, 0, 0, 0)] * 2), loadavg=lambda: math.nan)
    assert meter.percent() is None


def test_cpu_meter_construction_never_fails_on_bad_counters() -> None:
    def malformed() -> CpuTimes:
        raise ValueError("could not convert string to float: b'garbage'")

    meter = CpuMeter(cpu_times=malformed, loadavg=no_load_average)
    with pytest.raises(ValueError, match="garbage"):
        meter.percent()


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0])
def test_cpu_meter_refuses_nonsense_counters(bad: float) -> None:
    meter = CpuMeter(cpu_times=lambda: CpuTimes(1, 0, 1, bad, 0, 0, 0), loadavg=no_load_average)
    with pytest.raises(ValueError, match="CPU times"):
        meter.percent()


def test_psutil_sampler_reads_this_machine() -> None:
    readings = PsutilSampler()()
    for value in (readings.cpu_percent, readings.memory_percent):
        assert value is not None
        assert 0.0 <= value <= 100.0
    assert readings.system_uptime_hours is not None
    assert readings.system_uptime_hours > 0.0


class BrokenMeter(CpuMeter):
    def __init__(self, error: Exception) -> None:
        self.error = error

    def percent(self) -> float:
        raise self.error


def test_psutil_sampler_reports_unavailable_readings_as_none(caplog: pytest.LogCaptureFixture) -> None:
    sampler = PsutilSampler(cpu=BrokenMeter(OSError("cpu counters unavailable")))
    with caplog.at_level(logging.WARNING, logger="ego.plugin.interoception"):
        readings = sampler()
        sampler()
    assert readings.cpu_percent is None
    assert readings.memory_percent is not None
    assert [r.getMessage() for r in caplog.records] == ["body sense readings unavailable: cpu_percent (OSError)"]


@pytest.mark.parametrize("error", [ValueError("bad /proc/stat"), RuntimeError("?"), ZeroDivisionError()])
def test_any_failure_of_a_reading_makes_only_that_reading_unknown(error: Exception) -> None:
    readings = PsutilSampler(cpu=BrokenMeter(error))()
    assert readings.cpu_percent is None
    assert readings.memory_percent is not None


def test_non_finite_psutil_values_are_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    class Memory(NamedTuple):
        percent: float

    monkeypatch.setattr(psutil, "virtual_memory", lambda: Memory(math.nan))
    monkeypatch.setattr(psutil, "boot_time", lambda: "yesterday")
    readings = PsutilSampler()()
    assert (readings.memory_percent, readings.system_uptime_hours) == (None, None)


def test_a_reading_that_recovers_and_fails_again_is_logged_again(caplog: pytest.LogCaptureFixture) -> None:
    class FlakyMeter(CpuMeter):
        def __init__(self) -> None:
            self.results: list[float | Exception] = [OSError("a"), OSError("b"), 20.0, ValueError("c")]

        def percent(self) -> float:
            result = self.results.pop(0)
            if isinstance(result, Exception):
                raise result
            return result

    sampler = PsutilSampler(cpu=FlakyMeter())
    with caplog.at_level(logging.WARNING, logger="ego.plugin.interoception"):
        values = [sampler().cpu_percent for _ in range(4)]
    assert values == [None, None, 20.0, None]
    assert [r.getMessage() for r in caplog.records] == [
        "body sense readings unavailable: cpu_percent (OSError)",
        "body sense readings unavailable: cpu_percent (ValueError)",
    ]


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="psutil reads /proc on Linux only")


@linux_only
def test_malformed_proc_stat_gives_unknown_not_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "stat").write_text("cpu  garbage 1 2 3\nbtime soon\n", encoding="utf-8")
    monkeypatch.setattr(psutil, "PROCFS_PATH", str(tmp_path))
    with caplog.at_level(logging.WARNING, logger="ego.plugin.interoception"):
        sampler = PsutilSampler()  # used to raise ValueError from CpuMeter.__init__
        readings = sampler()
        sampler()
    assert readings == Readings()
    assert [r.getMessage() for r in caplog.records] == [
        "body sense readings unavailable: cpu_percent (ValueError), memory_percent (FileNotFoundError), "
        "system_uptime_hours (ValueError)"
    ]


@linux_only
def test_missing_proc_logs_that_readings_are_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(psutil, "PROCFS_PATH", str(tmp_path / "missing"))
    with caplog.at_level(logging.WARNING, logger="ego.plugin.interoception"):
        service = BodySenseService(now=Clock(START).now, tz=TOKYO, sampler=PsutilSampler(), cache_seconds=0)
        state = service.body_state()
        service.body_state()
    assert (state["system_load"], state["memory_pressure"]) == (UNKNOWN, UNKNOWN)
    assert [r.getMessage() for r in caplog.records] == [
        "body sense readings unavailable: cpu_percent (FileNotFoundError), "
        "memory_percent (FileNotFoundError), system_uptime_hours (FileNotFoundError)"
    ]


def test_sampler_returning_something_else_gives_unknown(caplog: pytest.LogCaptureFixture) -> None:
    def wrong() -> Readings:
        return {"cpu_percent": 10.0}  # type: ignore[return-value]

    service = BodySenseService(now=Clock(START).now, tz=TOKYO, sampler=wrong, cache_seconds=0)
    with caplog.at_level(logging.WARNING, logger="ego.plugin.interoception"):
        state = service.body_state()
    assert (state["system_load"], state["memory_pressure"]) == (UNKNOWN, UNKNOWN)
    assert [r.getMessage() for r in caplog.records] == ["body sense readings unavailable: TypeError"]
