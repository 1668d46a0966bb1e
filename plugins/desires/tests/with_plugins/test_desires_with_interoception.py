"""The real body sense (interoception) with a fixed clock and fixed readings."""

from __future__ import annotations

from datetime import UTC, datetime

from desires_support import DesireHostFactory

from ego_core import BODY_SENSE, BodySense, Clock
from ego_interoception import InteroceptionPlugin, Readings

# One moment: 02:00 in Tokyo (late night), 12:00 in New York (afternoon).
MOMENT = datetime(2026, 3, 4, 17, 0, tzinfo=UTC)
CALM = Readings(cpu_percent=5.0, memory_percent=30.0, system_uptime_hours=10.0)
BUSY = Readings(cpu_percent=95.0, memory_percent=30.0, system_uptime_hours=10.0)


def body(readings: Readings) -> InteroceptionPlugin:
    return InteroceptionPlugin(sampler=lambda: readings)


def test_late_night_raises_the_introspective_desires(desire_host: DesireHostFactory) -> None:
    clock = Clock(MOMENT)
    night = desire_host(name="night", clock=clock, others={"interoception": body(CALM)}, timezone="Asia/Tokyo")
    day = desire_host(name="day", clock=clock, others={"interoception": body(CALM)}, timezone="America/New_York")
    for dh, phase in ((night, "late_night"), (day, "afternoon")):
        sense = dh.host.services.get(BODY_SENSE, BodySense)
        assert sense is not None
        assert sense.time_phase() == phase
    at_night, by_day = night.levels(), day.levels()
    for name in ("cognitive_coherence", "pattern_seeking"):
        assert at_night[name] > by_day[name]
    assert by_day == night.plugin.snapshot().levels() | {
        name: by_day[name] for name in ("cognitive_coherence", "pattern_seeking", "resonance")
    }


def test_high_load_lowers_expression(desire_host: DesireHostFactory) -> None:
    clock = Clock(MOMENT)
    busy = desire_host(name="busy", clock=clock, others={"interoception": body(BUSY)}, timezone="America/New_York")
    calm = desire_host(name="calm", clock=clock, others={"interoception": body(CALM)}, timezone="America/New_York")
    assert busy.levels()["expression"] < calm.levels()["expression"]
    assert busy.levels()["social_thirst"] == calm.levels()["social_thirst"]
