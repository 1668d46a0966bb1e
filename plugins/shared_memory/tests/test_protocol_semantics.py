"""The protocol's write semantics on both backends: what makes a resend a duplicate, a
supersedes naming a missing event, and which event of a key is live after a supersede from another key."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from shared_support import OpenApi, ThreadGateway, event

from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.events import EventDraft, EventError, parse_event
from ego_shared_memory.janitor import consolidate
from ego_shared_memory.store import SqlStore, open_store, sqlite_path

NOW = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
MISSING = "evt_" + "0" * 24


def draft(agent: str = "claude", **fields: Any) -> EventDraft:
    parsed, _warnings = parse_event(event(**fields), agent_id=agent, max_chars=4000)
    return parsed


def head_ids(store: SqlStore, scope: str = "global") -> list[str]:
    return [e.event_id for e in store.heads(scope, by="recent", limit=100, now=NOW)]


@pytest.mark.parametrize(
    ("field", "value"),
    [("confidence", "low"), ("kind", "constraint"), ("ttl_days", 30), ("supersedes", "first")],
)
def test_a_resend_that_changes_a_field_is_a_new_event_and_the_change_is_read(
    store: SqlStore, field: str, value: Any
) -> None:
    first = store.append(draft(), NOW).event
    changed = first.event_id if value == "first" else value
    again = store.append(draft(**{field: changed}), NOW + timedelta(minutes=1))
    assert again.status in ("created", "superseded_previous")
    assert again.event.event_id != first.event_id
    assert getattr(again.event, field) == changed
    live = store.heads("global", by="recent", limit=10, now=NOW)
    assert [(e.event_id, getattr(e, field)) for e in live] == [(again.event.event_id, changed)]
    if field == "confidence":
        assert any("confidence dropped from high to low" in w for w in again.warnings)
    if field == "supersedes":
        assert again.status == "superseded_previous"
        stored_first = store.get(first.event_id)
        assert stored_first is not None
        assert stored_first.deprecated
    # the changed event, resent as it is, is now the duplicate
    third = store.append(draft(**{field: changed}), NOW + timedelta(minutes=2))
    assert (third.status, third.event.event_id) == ("duplicate", again.event.event_id)
    assert store.event_count() == 2


def test_an_identical_resend_is_a_duplicate_and_a_new_source_is_reported_not_recorded(store: SqlStore) -> None:
    first = store.append(draft(source={"system": "cli", "message_id": "m1"}), NOW).event
    same = store.append(draft(source={"system": "cli", "message_id": "m1"}), NOW)
    assert (same.status, same.event.event_id, same.warnings) == ("duplicate", first.event_id, ())
    moved = store.append(draft(source={"system": "web", "message_id": "m2"}), NOW)
    assert (moved.status, moved.event.event_id) == ("duplicate", first.event_id)
    assert len(moved.warnings) == 1
    assert "source was not recorded" in moved.warnings[0]
    stored = store.get(first.event_id)
    assert stored is not None
    assert stored.source.system == "cli"
    assert store.event_count() == 1


def test_supersedes_naming_a_missing_event_is_refused_even_when_the_rest_repeats_an_event(store: SqlStore) -> None:
    store.append(draft(), NOW)
    with pytest.raises(EventError) as refused:
        store.append(draft(supersedes=MISSING), NOW)
    assert refused.value.field == "supersedes"
    assert store.event_count() == 1


def test_superseding_a_head_from_another_key_leaves_that_key_without_a_live_entry(store: SqlStore) -> None:
    old = store.append(draft(dedupe_key="db:engine", content_md="db is MySQL (old)"), NOW).event
    new = store.append(draft(run_id="r2", dedupe_key="db:engine", content_md="db is PostgreSQL"), NOW).event
    assert head_ids(store) == [new.event_id]
    moved = store.append(
        draft(
            run_id="r3", dedupe_key="db:primary", content_md="the primary db is PostgreSQL 16", supersedes=new.event_id
        ),
        NOW,
    )
    assert moved.status == "superseded_previous"
    assert head_ids(store) == [moved.event.event_id]  # not "db is MySQL (old)"
    rows = store.snapshot_rows(["global"], recent=10, pins=10, now=NOW)
    assert [e.event_id for e in rows[1]] == [moved.event.event_id]
    assert [e.event_id for e in rows[2]] == [moved.event.event_id]
    assert rows[3] == {"global": 1}
    consolidate(store, GatewaySettings(), NOW)
    assert [p.event_id for p in store.pins(["global"])] == [moved.event.event_id]
    assert old.event_id not in {p.event_id for p in store.pins()}
    # a new entry for the key is live again, as usual
    later = store.append(draft(run_id="r4", dedupe_key="db:engine", content_md="db engine: see db:primary"), NOW)
    assert set(head_ids(store)) == {moved.event.event_id, later.event.event_id}


def test_superseding_an_older_event_of_another_key_keeps_that_key_head(store: SqlStore) -> None:
    old = store.append(draft(dedupe_key="db:engine", content_md="db is MySQL (old)"), NOW).event
    new = store.append(draft(run_id="r2", dedupe_key="db:engine", content_md="db is PostgreSQL"), NOW).event
    store.append(draft(run_id="r3", dedupe_key="db:note", content_md="MySQL is gone", supersedes=old.event_id), NOW)
    assert new.event_id in head_ids(store)
    assert old.event_id not in head_ids(store)


def test_a_store_of_schema_1_gets_the_new_idempotency_keys(store_url: str) -> None:
    """A store written before the key covered kind/confidence/supersedes/ttl_days: a resend after the upgrade is
    still the duplicate it was."""
    store = open_store(store_url)
    try:
        stored = store.append(draft(), NOW).event
        body = draft()
        old_key = hashlib.sha256(
            "\x1f".join((body.agent_id, body.run_id, body.scope, body.dedupe_key, body.content_md)).encode()
        ).hexdigest()
        store.write(lambda tx: tx.run("UPDATE sm_events SET idem_key = ?", (old_key,)))
        store.write(lambda tx: tx.run("UPDATE sm_state SET value = '1' WHERE name = 'schema_version'"))
        if sqlite_path(store_url) is not None:  # as the releases of schema 1 left the file
            store.write(lambda tx: tx.run("PRAGMA user_version = 0"))
    finally:
        store.close()
    reopened = open_store(store_url)
    try:
        assert reopened.get_state("schema_version") == "2"
        again = reopened.append(draft(), NOW)
        assert (again.status, again.event.event_id) == ("duplicate", stored.event_id)
        assert reopened.append(draft(confidence="med"), NOW).status == "created"
    finally:
        reopened.close()


def test_over_http_a_changed_resend_is_created_and_a_missing_supersedes_is_422(
    gateway: ThreadGateway, token_for: Callable[..., str]
) -> None:
    openapi = OpenApi()
    headers = {"Authorization": f"Bearer {token_for('claude')}"}
    with httpx.Client(base_url=gateway.url, headers=headers) as client:
        first = client.post("/v1/memory/append", json=event())
        assert openapi.check(first, "/v1/memory/append", "post")["status"] == "created"
        same = client.post("/v1/memory/append", json=event())
        assert same.status_code == 200
        assert openapi.check(same, "/v1/memory/append", "post")["status"] == "duplicate"
        lower = client.post("/v1/memory/append", json=event(confidence="low"))
        body = openapi.check(lower, "/v1/memory/append", "post")
        assert (lower.status_code, body["status"]) == (201, "created")
        assert body["event_id"] != first.json()["event_id"]
        assert any("confidence dropped" in w for w in body["warnings"])
        missing = client.post("/v1/memory/append", json=event(confidence="low", supersedes=MISSING))
        assert missing.status_code == 422
        assert openapi.check(missing, "/v1/memory/append", "post")["field"] == "supersedes"
