"""The history of the felt levels: every level the agent sees (wake_up, introspect, attune, feel_desires) is
recorded, at most once per 15 minutes, kept 90 days, and read through the ``desires.levels`` service."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest
from desires_support import AFTERNOON, NINE, DesireHostFactory, level_map

from ego_core.testing import call_ok, mcp_client
from ego_desires.api import DESIRE_LEVELS, DesireLevels, DesireSample
from ego_desires.store import FILE_NAME, LEGACY_VERSION, MIGRATIONS

pytestmark = pytest.mark.anyio


async def test_the_levels_the_agent_feels_are_recorded_once_per_fifteen_minutes(
    desire_host: DesireHostFactory,
) -> None:
    dh = desire_host()
    levels = dh.host.services.get(DESIRE_LEVELS, DesireLevels)
    assert levels is not None
    assert levels.history(AFTERNOON - timedelta(days=1), AFTERNOON + timedelta(days=1)) == []
    dh.plugin.levels()  # reading the service is not feeling: nothing recorded
    assert levels.history(AFTERNOON - timedelta(days=1), AFTERNOON + timedelta(days=1)) == []
    async with mcp_client(dh.host) as client:
        first = level_map(await call_ok(client, "feel_desires"))
        dh.clock.set(AFTERNOON + timedelta(minutes=10))  # the same bucket: not recorded again
        await call_ok(client, "satisfy_desire", {"name": "curiosity", "quality": 1.0})
        await call_ok(client, "feel_desires")
        dh.clock.set(AFTERNOON + timedelta(minutes=16))
        later = level_map(await call_ok(client, "feel_desires"))
        await call_ok(client, "wake_up")  # the same bucket as the feel_desires just before
    samples = levels.history(AFTERNOON - timedelta(hours=1), AFTERNOON + timedelta(hours=1))
    assert [s.at for s in samples] == [AFTERNOON, AFTERNOON + timedelta(minutes=16)]
    assert all(isinstance(s, DesireSample) and set(s.levels) == set(NINE) for s in samples)
    assert {k: round(v, 2) for k, v in samples[0].levels.items()} == first
    assert {k: round(v, 2) for k, v in samples[1].levels.items()} == later
    assert samples[1].levels["curiosity"] < samples[0].levels["curiosity"]  # satisfied in between
    # the window is inclusive at both ends and excludes what lies outside it
    assert [s.at for s in levels.history(AFTERNOON + timedelta(minutes=16), AFTERNOON + timedelta(hours=1))] == [
        AFTERNOON + timedelta(minutes=16)
    ]
    assert levels.history(AFTERNOON + timedelta(minutes=1), AFTERNOON + timedelta(minutes=15)) == []


def test_samples_older_than_ninety_days_are_deleted_and_the_history_survives_a_restart(
    desire_host: DesireHostFactory,
) -> None:
    dh = desire_host()
    dh.plugin.felt()
    dh.clock.set(AFTERNOON + timedelta(days=45))
    dh.plugin.felt()
    dh.host.stop()
    again = desire_host(clock=dh.clock)  # the same data dir: the history is in the store
    window = (AFTERNOON - timedelta(days=1), AFTERNOON + timedelta(days=200))
    assert [s.at for s in again.plugin.history(*window)] == [AFTERNOON, AFTERNOON + timedelta(days=45)]
    again.clock.set(AFTERNOON + timedelta(days=91))
    again.plugin.felt()
    assert [s.at for s in again.plugin.history(*window)] == [
        AFTERNOON + timedelta(days=45),
        AFTERNOON + timedelta(days=91),
    ]
    with sqlite3.connect(again.data_dir / "desires" / FILE_NAME) as db:
        (rows,) = db.execute("SELECT count(*) FROM history").fetchone()
    assert rows == 2 * len(NINE)  # one row per desire per kept sample


def test_a_version_3_store_gains_the_history(desire_host: DesireHostFactory) -> None:
    dh = desire_host()
    dh.host.stop()
    path = dh.data_dir / "desires" / FILE_NAME
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE history")
        db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
        db.execute("PRAGMA user_version = 0")  # as the version 3 release left it
    again = desire_host(clock=dh.clock)
    again.plugin.felt()
    assert [s.at for s in again.plugin.history(AFTERNOON, AFTERNOON)] == [AFTERNOON]
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(LEGACY_VERSION),)
        assert db.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
