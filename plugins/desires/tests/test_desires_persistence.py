"""State on disk: restarts keep every level, export/import, concurrent writers, damaged files, rollbacks."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from desires_support import AFTERNOON, NINE, DesireHost, DesireHostFactory, StandInTools, store_rows

from ego_core import Clock
from ego_core.testing import PortableError, call_ok, export_file, import_file, mcp_client
from ego_desires import Anchor, DesireStore
from ego_desires.store import open_file

pytestmark = pytest.mark.anyio


async def lived_in(dh: DesireHost) -> None:
    """A little history: explicit and implicit satisfactions at different times."""
    async with mcp_client(dh.host) as client:
        await call_ok(client, "satisfy_desire", {"name": "curiosity", "quality": 0.9})
        dh.clock.set(AFTERNOON + timedelta(hours=3))
        await call_ok(client, "satisfy_desire", {"name": "resonance", "quality": 0.3})
        await call_ok(client, "introspect")
        dh.clock.set(AFTERNOON + timedelta(hours=7))


async def test_a_restart_keeps_every_level(desire_host: DesireHostFactory) -> None:
    dh = desire_host()
    await lived_in(dh)
    levels = dh.levels()
    assert len(set(levels.values())) > 2
    dh.host.stop()
    dh.host.start()
    assert dh.levels() == levels
    again = desire_host(clock=dh.clock)  # a new process on the same data dir
    assert again.levels() == levels


async def test_export_and_import_move_the_state(desire_host: DesireHostFactory, tmp_path: Path) -> None:
    source = desire_host(name="source")
    await lived_in(source)
    exported = tmp_path / "one.jsonl"
    export_file(source.host, exported, include_private=False)
    lines = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    records = [r for r in lines if r.get("plugin") == "desires"]
    assert records[0] == {"plugin": "desires", "type": "meta", "record_version": 1}
    assert [r["name"] for r in records[1:]] == list(NINE)
    curiosity = next(r for r in records if r.get("name") == "curiosity")
    assert curiosity["source"] == "explicit"
    assert curiosity["anchored_at"] == AFTERNOON.isoformat()

    target = desire_host(name="target", clock=source.clock)
    summary = import_file(target.host, exported)
    assert summary.added["desires"] == 9  # a fresh store takes every desire
    assert target.levels() == source.levels()
    assert import_file(target.host, exported).added["desires"] == 0  # idempotent
    again = tmp_path / "two.jsonl"
    export_file(target.host, again, include_private=False)
    assert again.read_bytes() == exported.read_bytes()


async def test_an_import_keeps_newer_local_satisfactions(desire_host: DesireHostFactory, tmp_path: Path) -> None:
    old = desire_host(name="old")
    await lived_in(old)
    exported = tmp_path / "old.jsonl"
    export_file(old.host, exported, include_private=False)

    newer = desire_host(name="newer", clock=Clock(AFTERNOON + timedelta(days=2)))
    async with mcp_client(newer.host) as client:
        await call_ok(client, "satisfy_desire", {"name": "curiosity", "quality": 0.1})
    kept = next(r for r in store_rows(newer.data_dir) if r[0] == "curiosity")
    assert import_file(newer.host, exported).added["desires"] == 8
    assert next(r for r in store_rows(newer.data_dir) if r[0] == "curiosity") == kept


def desire_records(**changes: Any) -> list[dict[str, Any]]:
    record = {
        "type": "desire",
        "name": "curiosity",
        "anchored_at": AFTERNOON.isoformat(),
        "start": 0.0,
        "quality": 1.0,
        "source": "explicit",
    }
    record.update(changes)
    return [{"type": "meta", "record_version": 1}, {k: v for k, v in record.items() if v is not ...}]


@pytest.mark.parametrize(
    ("records", "problem"),
    [
        (desire_records(name="boredom"), "record 2 (desire): `name`: expected one of information_hunger"),
        (desire_records(anchored_at="2026-03-04T15:00:00"), "`anchored_at`: expected an ISO 8601"),
        (desire_records(anchored_at="0001-01-01T00:00:00+00:00"), "years 1 to 9999"),
        (desire_records(anchored_at=12345), "`anchored_at`"),
        (desire_records(start=-1), "`start`: expected a number from 0 to 1000"),
        (desire_records(start="0.5"), "`start`"),
        (desire_records(start=True), "`start`"),
        (desire_records(quality=1.5), "`quality`: expected null or a number from 0 to 1"),
        (desire_records(source="magic"), "`source`: expected initial, explicit, shared or tool:<tool name>"),
        (desire_records(mood="grumpy"), "unknown field(s) mood"),
        (desire_records(start=...), "`start`"),
        ([{"type": "meta", "record_version": 2}], "record 1 (meta): record_version must be 1"),
        ([{"type": "wish"}], "record 1: unknown record type"),
        ([*desire_records(), *desire_records()[1:]], "record 3 (desire): curiosity appears twice"),
    ],
)
def test_check_records_names_the_record_and_field(
    desire_host: DesireHostFactory, records: list[dict[str, Any]], problem: str
) -> None:
    dh = desire_host()
    problems = dh.plugin.check_records(records)
    assert any(problem in found for found in problems), problems


def test_any_tool_name_of_the_implicit_table_survives_an_import(desire_host: DesireHostFactory) -> None:
    dh = desire_host()
    assert dh.plugin.check_records(desire_records(source="tool:my tool.v2")) == []
    for bad in ("tool:", "tool:x\n", "tool:" + "x" * 101, "tool:\x00"):
        assert dh.plugin.check_records(desire_records(source=bad)), bad


def test_a_bad_file_imports_nothing(desire_host: DesireHostFactory, tmp_path: Path) -> None:
    dh = desire_host()
    rows = store_rows(dh.data_dir)
    path = tmp_path / "bad.jsonl"
    header = {"format": "ego-export", "version": 1, "include_private": False, "plugins": {"desires": "0.1.0"}}
    body = [{"plugin": "desires", **r} for r in desire_records(quality=7)]
    end = {"format": "ego-export", "end": True, "records": {"desires": len(body)}}
    path.write_text("\n".join(json.dumps(line) for line in (header, *body, end)) + "\n", encoding="utf-8")
    with pytest.raises(PortableError, match="quality"):
        import_file(dh.host, path)
    assert store_rows(dh.data_dir) == rows


def test_two_hosts_on_one_data_dir_lose_no_satisfaction(desire_host: DesireHostFactory) -> None:
    clock = Clock(AFTERNOON)
    one = desire_host(name="shared", clock=clock, others={"tools": StandInTools()})
    two = desire_host(name="shared", clock=clock)
    barrier = threading.Barrier(len(NINE))
    errors: list[BaseException] = []

    def satisfy(index: int, name: str) -> None:
        try:
            barrier.wait()
            for _ in range(3):
                (one if index % 2 else two).plugin.satisfy([name], 0.5, "explicit")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=satisfy, args=(i, name)) for i, name in enumerate(NINE)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    # three satisfactions of quality 0.5 each halve the base level: none was lost
    for dh in (one, two):
        assert dh.levels() == pytest.approx(dict.fromkeys(NINE, 0.5 / 2**3))


def test_the_same_desire_satisfied_from_two_hosts_counts_twice(desire_host: DesireHostFactory) -> None:
    clock = Clock(AFTERNOON)
    hosts = [desire_host(name="shared", clock=clock) for _ in range(2)]
    threads = [
        threading.Thread(target=lambda dh=dh: [dh.plugin.satisfy(["curiosity"], 0.5, "explicit") for _ in range(2)])
        for dh in hosts
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert hosts[0].levels()["curiosity"] == pytest.approx(0.5 / 2**4)


def test_a_failure_inside_a_change_rolls_everything_back(desire_host: DesireHostFactory) -> None:
    dh = desire_host()
    rows = store_rows(dh.data_dir)
    store = DesireStore(open_file(dh.data_dir / "desires"))
    store.open(AFTERNOON.timestamp(), lambda _name: Anchor(AFTERNOON.timestamp(), 1.0))

    def change(name: str, _old: Anchor | None) -> Anchor:
        if name == "curiosity":
            raise RuntimeError("in the middle")
        return Anchor(AFTERNOON.timestamp(), 0.0, 1.0, "explicit")

    with pytest.raises(RuntimeError):
        store.update(["expression", "resonance", "curiosity"], change, AFTERNOON.timestamp())
    store.close()
    assert store_rows(dh.data_dir) == rows


def test_a_damaged_store_fails_the_plugin_and_is_left_alone(desire_host: DesireHostFactory) -> None:
    dh = desire_host(start=False)
    folder = dh.data_dir / "desires"
    folder.mkdir(parents=True)
    damaged = b"this is not a database, and it is someone's file" * 100
    (folder / "desires.sqlite3").write_bytes(damaged)
    dh.host.start()
    assert [f.plugin for f in dh.host.failures] == ["desires"]
    assert "not a usable desires store" in dh.host.failures[0].reason
    assert not dh.host.tool_served("feel_desires")
    assert (folder / "desires.sqlite3").read_bytes() == damaged


def test_a_newer_schema_is_refused(desire_host: DesireHostFactory) -> None:
    dh = desire_host()
    dh.host.stop()
    path = dh.data_dir / "desires" / "desires.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    dh.host.start()
    assert [f.plugin for f in dh.host.failures] == ["desires"]
    assert "schema version 99" in dh.host.failures[0].reason


def test_an_unusable_row_starts_anew_with_a_warning(
    desire_host: DesireHostFactory, caplog: pytest.LogCaptureFixture
) -> None:
    dh = desire_host()
    dh.host.stop()
    path = dh.data_dir / "desires" / "desires.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("UPDATE desires SET anchored_at = 1e300 WHERE name = 'curiosity'")
        db.execute("UPDATE desires SET start = 'soon' WHERE name = 'expression'")
    with caplog.at_level(logging.WARNING):
        dh.host.start()
    assert not dh.host.failures
    assert "unusable state of expression, curiosity started anew" in caplog.text
    assert dh.levels() == dict.fromkeys(NINE, 0.5)
    checks = dict(dh.host.hooks.doctor_checks())["desires"]
    assert checks[0].ok
    assert "9 of 9 desires kept" in checks[0].detail
