"""The trust history: each change of a person's trust level is recorded (time and value, never text), the newest
200 per person are kept, and the ``self_model.people`` service reads them (by name or alias) with everyone known."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from self_model_support import NOON

from ego_core import Clock, PluginHost, Settings
from ego_core.testing import HostFactory, call_ok, export_file, import_file, mcp_client
from ego_self_model import SelfModelPlugin
from ego_self_model.api import PEOPLE, KnownPerson, People, TrustChange
from ego_self_model.store import DB_NAME, TRUST_KEPT

pytestmark = pytest.mark.anyio


def people_of(host: PluginHost) -> People:
    service = host.services.get(PEOPLE, People)
    assert service is not None
    return service


async def test_each_change_of_trust_is_recorded_and_read_by_name_or_alias(
    self_host: Callable[..., PluginHost], clock: Clock
) -> None:
    host = self_host()
    async with mcp_client(host) as client:
        await call_ok(client, "update_relationship", {"person": "Aiko", "field": "trust_level", "value": 0.6})
        clock.set(NOON + timedelta(hours=1))
        await call_ok(client, "update_relationship", {"person": "aiko", "field": "aliases", "value": "Ai"})
        await call_ok(client, "update_relationship", {"person": "Aiko", "field": "trust_level", "value": 0.6})
        clock.set(NOON + timedelta(days=2))
        await call_ok(client, "update_relationship", {"person": "Ai", "field": "trust_level", "value": 0.9})
        service = people_of(host)
        expected = [TrustChange(at=NOON, trust=0.6), TrustChange(at=NOON + timedelta(days=2), trust=0.9)]
        assert list(service.trust_history("Aiko")) == expected  # an alias or the same level changes nothing here
        assert list(service.trust_history("ai")) == expected
        assert list(service.trust_history("Nobody")) == []
        assert list(service.trust_history("  ")) == []
        assert list(service.known()) == [KnownPerson(name="Aiko", trust=0.9, trust_words="you trust them deeply")]


async def test_only_the_newest_changes_are_kept(self_host: Callable[..., PluginHost], clock: Clock) -> None:
    host = self_host()
    async with mcp_client(host) as client:
        for step in range(TRUST_KEPT + 5):
            clock.set(NOON + timedelta(minutes=step))
            value = round((step % 10) / 10 + 0.05, 2)
            await call_ok(client, "update_relationship", {"person": "Aiko", "field": "trust_level", "value": value})
        changes = list(people_of(host).trust_history("Aiko"))
    assert len(changes) == TRUST_KEPT
    assert changes[0].at == NOON + timedelta(minutes=5)
    assert changes[-1].at == NOON + timedelta(minutes=TRUST_KEPT + 4)


async def test_the_history_goes_with_an_export_and_an_older_store_gains_it(
    self_host: Callable[..., PluginHost], make_host: HostFactory, clock: Clock, tmp_path: Path
) -> None:
    source = self_host()
    async with mcp_client(source) as client:
        await call_ok(client, "update_relationship", {"person": "Aiko", "field": "trust_level", "value": 0.3})
        clock.set(NOON + timedelta(days=1))
        await call_ok(client, "update_relationship", {"person": "Aiko", "field": "trust_level", "value": 0.7})
        export_file(source, tmp_path / "out.jsonl", include_private=False)
    restored = Settings(data_dir=tmp_path / "restored", timezone="UTC")
    target = make_host({"self_model": SelfModelPlugin()}, settings=restored, clock=clock)
    target.start()
    import_file(target, tmp_path / "out.jsonl")
    assert [c.trust for c in people_of(target).trust_history("Aiko")] == [0.3, 0.7]
    assert import_file(target, tmp_path / "out.jsonl").added["self_model"] == 0  # the same file adds nothing
    target.stop()
    # where Aiko is known already, she keeps her own trust and its history
    known = make_host(
        {"self_model": SelfModelPlugin()}, settings=Settings(data_dir=tmp_path / "known", timezone="UTC"), clock=clock
    )
    async with mcp_client(known) as client:
        await call_ok(client, "update_relationship", {"person": "Aiko", "field": "trust_level", "value": 0.2})
        assert import_file(known, tmp_path / "out.jsonl").added["self_model"] == 0
        assert [c.trust for c in people_of(known).trust_history("Aiko")] == [0.2]
    # a store of schema 4 (before the history) is brought up to date and records from then on
    path = tmp_path / "restored" / "self_model" / DB_NAME
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE trust_history")
        db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
        db.execute("PRAGMA user_version = 0")  # as the releases of schema 4 left it
    again = make_host({"self_model": SelfModelPlugin()}, settings=restored, clock=clock)
    clock.set(NOON + timedelta(days=3))
    async with mcp_client(again) as client:
        assert list(people_of(again).trust_history("Aiko")) == []
        await call_ok(client, "update_relationship", {"person": "Aiko", "field": "trust_level", "value": 0.5})
        assert list(people_of(again).trust_history("Aiko")) == [TrustChange(at=NOON + timedelta(days=3), trust=0.5)]
