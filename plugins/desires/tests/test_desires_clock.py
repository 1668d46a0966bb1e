"""Clock jumps: a satisfaction 10 years in the future or the past, a clock set back or
forward while serving, a restored old backup, a changed time zone — never an error, never a level outside [0, 1]."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta

import pytest
from desires_support import AFTERNOON, NINE, DesireHost, DesireHostFactory, FixedBody, level_map, parse_levels

from ego_core import Clock
from ego_core.testing import call_ok, mcp_client
from ego_desires import Anchor, DesireStore, sigmoid
from ego_desires.store import open_file

pytestmark = pytest.mark.anyio

TEN_YEARS = timedelta(days=3653)


def plant(dh: DesireHost, moment: datetime, *, start: float = 0.0, quality: float | None = 1.0) -> None:
    """Give every desire a satisfaction at ``moment``, written straight into the store (as a copied file would)."""
    (dh.data_dir / "desires").mkdir(parents=True, exist_ok=True)
    store = DesireStore(open_file(dh.data_dir / "desires"))
    store.open(moment.timestamp(), lambda _name: Anchor(moment.timestamp(), start))
    store.update(NINE, lambda _name, _old: Anchor(moment.timestamp(), start, quality, "explicit"), 0.0)
    store.close()


async def exercise(dh: DesireHost) -> list[str]:
    async with mcp_client(dh.host) as client:
        return [
            await call_ok(client, "feel_desires"),
            await call_ok(client, "wake_up"),
            await call_ok(client, "introspect"),
            await call_ok(client, "satisfy_desire", {"name": "curiosity", "quality": 0.3}),
            await call_ok(client, "feel_desires"),
        ]


def in_unit_interval(levels: dict[str, float]) -> bool:
    return set(levels) == set(NINE) and all(0.0 <= v <= 1.0 for v in levels.values())


@pytest.mark.parametrize("offset", [TEN_YEARS, -TEN_YEARS], ids=["future", "past"])
async def test_a_satisfaction_ten_years_away_gives_levels_in_range(
    desire_host: DesireHostFactory, offset: timedelta
) -> None:
    unstarted = desire_host(start=False)
    plant(unstarted, AFTERNOON + offset)
    dh = desire_host(clock=unstarted.clock)
    texts = await exercise(dh)
    assert in_unit_interval(dh.levels())
    for text in (texts[0], texts[-1]):
        assert all(0.0 <= level <= 1.0 for _n, level, _b in parse_levels(text))
    if offset < timedelta(0):  # ten years without satisfaction: every desire rose, saturated and settled
        assert set(level_map(texts[0]).values()) == {0.55}
    else:  # a satisfaction "from the future" counts as now: everything is still quiet
        assert max(level_map(texts[0]).values()) == pytest.approx(0.02)


async def test_a_future_satisfaction_starts_rising_again_after_a_restart(desire_host: DesireHostFactory) -> None:
    unstarted = desire_host(start=False)
    plant(unstarted, AFTERNOON + TEN_YEARS)
    dh = desire_host(clock=unstarted.clock)
    quiet = dh.levels()
    dh.clock.set(AFTERNOON + timedelta(hours=12))
    later = dh.levels()
    assert all(later[name] > quiet[name] for name in NINE)
    # 12 h after startup: one period of information_hunger, stretched by 1.4 for the quality-1 satisfaction
    assert later["information_hunger"] == pytest.approx(sigmoid(4.0 * (1 / 1.4 - 1)))


async def test_clock_jumps_while_serving_never_fail(desire_host: DesireHostFactory) -> None:
    dh = desire_host(others={"body": FixedBody()})
    for moment in (
        AFTERNOON - TEN_YEARS,
        AFTERNOON + TEN_YEARS,
        AFTERNOON,
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(9000, 1, 1, tzinfo=UTC),
        AFTERNOON - timedelta(seconds=1),
    ):
        dh.clock.set(moment)
        await exercise(dh)
        assert in_unit_interval(dh.levels())


async def test_a_clock_set_back_holds_a_desire_until_it_is_written_again(desire_host: DesireHostFactory) -> None:
    dh = desire_host()
    async with mcp_client(dh.host) as client:
        await call_ok(client, "satisfy_desire", {"name": "curiosity", "quality": 1.0})
        held = dh.levels()["curiosity"]
        dh.clock.set(AFTERNOON - timedelta(days=2))
        assert dh.levels()["curiosity"] == held
        await call_ok(client, "satisfy_desire", {"name": "expression", "quality": 0.5})  # any write
        dh.clock.set(AFTERNOON - timedelta(days=1))
        assert dh.levels()["curiosity"] > held


async def test_a_restored_old_backup_is_read_as_a_long_absence(desire_host: DesireHostFactory) -> None:
    dh = desire_host()
    async with mcp_client(dh.host) as client:
        await call_ok(client, "satisfy_desire", {"name": "curiosity", "quality": 1.0})
    backup = dh.data_dir.parent / "backup.sqlite3"
    dh.host.stop()
    shutil.copy(dh.data_dir / "desires" / "desires.sqlite3", backup)
    for suffix in ("-wal", "-shm"):
        (dh.data_dir / "desires" / f"desires.sqlite3{suffix}").unlink(missing_ok=True)

    later = desire_host(clock=Clock(AFTERNOON + timedelta(days=30)))
    async with mcp_client(later.host) as client:
        await call_ok(client, "satisfy_desire", {"name": "curiosity", "quality": 1.0})
    later.host.stop()
    shutil.copy(backup, later.data_dir / "desires" / "desires.sqlite3")
    for suffix in ("-wal", "-shm"):
        (later.data_dir / "desires" / f"desires.sqlite3{suffix}").unlink(missing_ok=True)

    restored = desire_host(clock=later.clock)
    texts = await exercise(restored)
    # satisfied 30 days ago, as far as the backup knows: it rose long ago and has settled at its plateau
    assert level_map(texts[0])["curiosity"] == 0.55
    assert in_unit_interval(restored.levels())


async def test_a_changed_time_zone_changes_no_level_without_a_body_sense(desire_host: DesireHostFactory) -> None:
    first = desire_host(timezone="UTC")
    async with mcp_client(first.host) as client:
        await call_ok(client, "satisfy_desire", {"name": "social_thirst", "quality": 0.8})
    first.clock.set(AFTERNOON + timedelta(hours=5))
    levels = first.levels()
    first.host.stop()
    for zone in ("Asia/Tokyo", "America/Los_Angeles", "Pacific/Kiritimati"):
        moved = desire_host(clock=first.clock, timezone=zone)
        assert moved.levels() == levels
        moved.host.stop()
