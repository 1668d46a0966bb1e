"""The storage contract: every backend (SQLite, PostgreSQL) passes the same tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from shared_support import event

from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.detector import kinds_in
from ego_shared_memory.events import AccessError, EventDraft, EventError, Source, parse_event
from ego_shared_memory.janitor import confirm_cleanup, consolidate, propose_cleanup, run_janitor
from ego_shared_memory.store import EventFilter, SqlStore, open_store

NOW = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)


def draft(agent: str = "claude", **fields: Any) -> EventDraft:
    parsed, _warnings = parse_event(event(**fields), agent_id=agent, max_chars=4000)
    return parsed


def test_append_then_duplicate_returns_the_original(store: SqlStore) -> None:
    first = store.append(draft(), NOW)
    again = store.append(draft(), NOW + timedelta(minutes=5))
    assert first.status == "created"
    assert (again.status, again.event.event_id) == ("duplicate", first.event.event_id)
    assert again.event.created_at == NOW
    assert store.event_count() == 1
    other_run = store.append(draft(run_id="run_other"), NOW)
    assert other_run.status == "created"
    assert other_run.event.event_id != first.event.event_id


def test_round_trip_keeps_every_field(store: SqlStore) -> None:
    body = draft(
        scope="project:memory-gateway",
        kind="bug",
        dedupe_key="bug:gateway_auth_401",
        confidence="med",
        content_md="Line one\n\n- a list\n- 日本語も",
        source={"system": "telegram", "thread_id": "thr_1", "message_id": "m:2"},
        ttl_days=90,
    )
    stored = store.append(body, NOW).event
    again = store.get(stored.event_id)
    assert again == stored
    assert (again.scope, again.kind, again.confidence, again.ttl_days) == ("project:memory-gateway", "bug", "med", 90)
    assert again.content_md == "Line one\n\n- a list\n- 日本語も"
    assert again.source == Source("telegram", "thr_1", "m:2")
    assert again.expires_at == NOW + timedelta(days=90)
    assert store.get("evt_000000000000000000000000") is None


def test_last_write_wins_with_warnings_and_a_conflict(store: SqlStore) -> None:
    high = store.append(draft(), NOW).event
    low = store.append(draft("gemini", run_id="r2", confidence="low", content_md="Now in ~/b.toml."), NOW)
    assert any("confidence dropped from high to low" in w for w in low.warnings)
    assert any("different content" in w for w in low.warnings)
    heads = store.heads("global", by="recent", limit=10, now=NOW)
    assert [e.event_id for e in heads] == [low.event.event_id]
    conflicts = store.open_conflicts(["global"])
    assert [(c.event_id, c.previous_event_id) for c in conflicts] == [(low.event.event_id, high.event_id)]
    same = store.append(draft("gemini", run_id="r3", confidence="low", content_md="Now in ~/b.toml."), NOW)
    assert same.warnings == ()
    assert store.count_open_conflicts(["global"]) == 0  # the newest agrees with its predecessor


def test_supersedes_deprecates_and_the_head_falls_back(store: SqlStore) -> None:
    old = store.append(draft(dedupe_key="config:a", content_md="A is 1."), NOW).event
    new = store.append(draft(dedupe_key="config:a", run_id="r2", content_md="A is 2.", supersedes=old.event_id), NOW)
    assert new.status == "superseded_previous"
    assert new.warnings == ()
    assert store.get(old.event_id).deprecated  # type: ignore[union-attr]
    assert [e.event_id for e in store.heads("global", by="recent", limit=5, now=NOW)] == [new.event.event_id]
    retire = store.append(
        draft(
            dedupe_key="config:retired",
            kind="deprecation",
            run_id="r3",
            content_md="A is gone.",
            supersedes=new.event.event_id,
        ),
        NOW,
    )
    assert retire.status == "superseded_previous"
    heads = store.heads("global", by="recent", limit=5, now=NOW)
    assert [e.dedupe_key for e in heads] == ["config:retired"]  # config:a has nothing live left
    again = store.append(draft(dedupe_key="config:x", run_id="r4", content_md="X.", supersedes=old.event_id), NOW)
    assert any("already superseded" in w for w in again.warnings)


def test_supersedes_is_checked(store: SqlStore) -> None:
    with pytest.raises(EventError) as missing:
        store.append(draft(supersedes="evt_000000000000000000000000"), NOW)
    assert missing.value.field == "supersedes"
    private = store.append(draft("gemini", scope="agent:gemini", content_md="Mine."), NOW).event
    with pytest.raises(AccessError):
        store.append(draft(run_id="r9", supersedes=private.event_id), NOW)
    assert store.event_count() == 1
    assert not store.get(private.event_id).deprecated  # type: ignore[union-attr]


def test_listing_and_searching(store: SqlStore) -> None:
    store.append(draft(content_md="Heartbeat every 30 minutes.", dedupe_key="config:heartbeat"), NOW)
    store.append(draft("gemini", scope="agent:gemini", content_md="Heartbeat feels slow 100%_sure."), NOW)
    store.append(draft(scope="project:x", kind="bug", dedupe_key="bug:slow", content_md="Slow start."), NOW)
    everyone = store.list_events(EventFilter(terms=("heartbeat",)))
    assert len(everyone) == 2
    claude_view = store.list_events(EventFilter(terms=("HEARTBEAT",), reader="claude"))
    assert [e.scope for e in claude_view] == ["global"]
    assert len(store.list_events(EventFilter(terms=("100%_sure",)))) == 1
    assert store.list_events(EventFilter(terms=("100%_surely",))) == []
    assert [e.kind for e in store.list_events(EventFilter(kinds=("bug",)))] == ["bug"]
    assert len(store.list_events(EventFilter(scope_patterns=("agent:*",)))) == 1
    assert len(store.list_events(EventFilter(scope_patterns=("project:*", "global")))) == 2
    assert len(store.list_events(EventFilter(agent_id="gemini"))) == 1
    assert len(store.list_events(EventFilter(terms=("heartbeat",)))) == 2
    assert store.list_events(EventFilter(dedupe_key="bug:slow"))[0].content_md == "Slow start."
    assert store.scopes() == ["agent:gemini", "global", "project:x"]
    assert len(store.list_events(EventFilter(limit=1))) == 1


def test_snapshot_rows_are_consistent(store: SqlStore) -> None:
    for index in range(5):
        store.append(draft(dedupe_key=f"config:k{index}", content_md=f"K{index}."), NOW + timedelta(seconds=index))
    store.append(draft(dedupe_key="log:old", kind="log", content_md="Expired.", ttl_days=1), NOW - timedelta(days=3))
    top, recent, pins, counts, conflicts = store.snapshot_rows(["global"], recent=3, pins=50, now=NOW)
    assert top == store.max_seq()
    assert [e.dedupe_key for e in recent] == ["log:old", "config:k4", "config:k3"]
    assert "log:old" not in {e.dedupe_key for e in pins}  # expired entries are not pinned
    assert counts == {"global": 6}
    assert conflicts == 0


def test_ttl_candidates_and_approved_cleanup(store: SqlStore) -> None:
    old = store.append(draft(dedupe_key="log:a", kind="log", content_md="Old.", ttl_days=7), NOW - timedelta(days=10))
    keep = store.append(draft(dedupe_key="log:b", kind="log", content_md="Fresh.", ttl_days=7), NOW)
    report = run_janitor(store, GatewaySettings(), NOW, steps=["ttl"])
    assert report["ttl"] == {"expired": 1, "newly_marked": 1}
    assert [c[0] for c in store.candidates()] == [old.event.event_id]
    plan = propose_cleanup(store, NOW, older_than=None, scope_patterns=(), expired_only=True, actor="test")
    assert plan.event_ids == (old.event.event_id,)
    assert store.event_count() == 2
    done = confirm_cleanup(store, plan.plan_id, actor="test", now=NOW)
    assert done.deleted == (old.event.event_id,)
    assert store.get(old.event.event_id) is None
    assert store.get(keep.event.event_id) is not None
    assert store.candidates() == []
    assert [(a.action, a.event_id, a.actor) for a in store.audit() if a.action == "delete"] == [
        ("delete", old.event.event_id, "test")
    ]
    with pytest.raises(ValueError, match="older-than"):
        propose_cleanup(store, NOW, older_than=None, scope_patterns=(), expired_only=False, actor="test")


def test_deleting_the_head_brings_back_the_previous_entry(store: SqlStore) -> None:
    first = store.append(draft(content_md="First."), NOW - timedelta(days=40)).event
    second = store.append(draft(run_id="r2", content_md="Second."), NOW).event
    plan = propose_cleanup(
        store, NOW, older_than=timedelta(days=1), scope_patterns=("global",), expired_only=False, actor="t"
    )
    assert plan.event_ids == (first.event_id,)
    store.delete_events([second.event_id], "t", NOW)
    assert [e.event_id for e in store.heads("global", by="recent", limit=5, now=NOW)] == [first.event_id]


def test_janitor_asks_about_each_conflict_once_and_settles_it(store: SqlStore) -> None:
    a = store.append(draft(content_md="A."), NOW).event
    b = store.append(draft("gemini", run_id="r2", content_md="B."), NOW).event
    first = run_janitor(store, GatewaySettings(), NOW, steps=["conflicts"])
    assert first["conflicts"]["resolution_events"] == 1
    second = run_janitor(store, GatewaySettings(), NOW, steps=["conflicts"])
    assert second["conflicts"]["resolution_events"] == 0
    asks = store.list_events(EventFilter(kinds=("conflict_resolution",)))
    assert len(asks) == 1
    assert asks[0].agent_id == "janitor"
    assert a.event_id in asks[0].content_md
    assert b.event_id in asks[0].content_md
    assert asks[0].dedupe_key == "conflict:config:example"
    store.append(draft(run_id="r3", content_md="B.", supersedes=a.event_id), NOW)
    third = run_janitor(store, GatewaySettings(), NOW, steps=["conflicts"])
    assert third["conflicts"]["settled"] == 1
    assert store.open_conflicts() == []


def test_janitor_detects_conflicts_the_appends_did_not_record(store: SqlStore) -> None:
    store.append(draft(content_md="A."), NOW)
    head = store.append(draft("gemini", run_id="r2", content_md="B."), NOW).event
    store.write(lambda tx: tx.run("DELETE FROM sm_conflicts"))  # as if imported from an older store
    report = run_janitor(store, GatewaySettings(), NOW, steps=["conflicts"])
    assert report["conflicts"]["detected"] == 1
    assert [c.event_id for c in store.open_conflicts()] == [head.event_id]


def test_scan_masks_what_slipped_in_and_audits_it(store: SqlStore) -> None:
    leaked = EventDraft(
        agent_id="claude",
        run_id="r1",
        scope="global",
        kind="config",
        dedupe_key="config:leak",
        confidence="high",
        content_md="Deploy key AKIAQ3EGRT7YHJKL2MNB, owner taro.yamada@gmail.com.",
        source=Source("cli", "thr-ops@gmail.com", None),
    )
    stored = store.append(leaked, NOW).event  # the store itself does not filter: the gateway does
    clean = store.append(draft(dedupe_key="config:clean"), NOW).event
    report = run_janitor(store, GatewaySettings(), NOW, steps=["scan", "consolidate"])
    assert report["scan"]["scanned"] == 2
    assert report["scan"]["redacted"] == [
        {
            "event_id": stored.event_id,
            "fields": ["content_md", "source.thread_id"],
            "kinds": ["API key", "e-mail address"],
        }
    ]
    after = store.get(stored.event_id)
    assert after is not None
    assert after.redacted
    assert "AKIA" not in after.content_md
    assert "gmail" not in after.content_md
    assert after.source.thread_id == "redacted"
    assert not store.get(clean.event_id).redacted  # type: ignore[union-attr]
    audit = [a for a in store.audit() if a.action == "redact"]
    assert len(audit) == 1
    assert audit[0].detail == "masked: API key, e-mail address"
    assert "AKIA" not in audit[0].detail
    again = run_janitor(store, GatewaySettings(), NOW, steps=["scan"])
    assert again["scan"] == {"scanned": 0, "redacted": [], "flagged": []}
    full = run_janitor(store, GatewaySettings(), NOW, steps=["scan"], full_scan=True)
    assert full["scan"] == {"scanned": 2, "redacted": [], "flagged": []}
    assert all("AKIA" not in pin.line for pin in store.pins())


def stored_before_the_filter(**fields: Any) -> EventDraft:
    """An event as an older version stored it: the store itself does not filter, the gateway does."""
    values: dict[str, Any] = {
        "agent_id": "claude",
        "run_id": "r1",
        "scope": "global",
        "kind": "fact",
        "dedupe_key": "fact:plain",
        "confidence": "high",
        "content_md": "Plain.",
        "source": Source("cli", None, None),
    }
    values.update(fields)
    return EventDraft(**values)


def everything_stored(store: SqlStore) -> str:
    """Every text of every table, to check that a value left the store whole."""
    tables = ("sm_events", "sm_heads", "sm_conflicts", "sm_pins", "sm_audit", "sm_cleanup_plans")
    tables += ("sm_cleanup_plan_events",)
    return repr([store.read(lambda tx, t=table: tx.all(f"SELECT * FROM {t}")) for table in tables])


def test_scan_replaces_a_sensitive_dedupe_key_with_a_token_in_the_whole_key(store: SqlStore) -> None:
    phone_key = "contact:090-1234-5678"
    gone = store.append(stored_before_the_filter(dedupe_key=phone_key, run_id="r0", content_md="Old."), NOW).event
    store.delete_events([gone.event_id], "ops", NOW)  # its audit record quotes the key
    first = store.append(stored_before_the_filter(dedupe_key=phone_key, content_md="Call the owner."), NOW).event
    second = store.append(
        stored_before_the_filter(dedupe_key=phone_key, run_id="r2", content_md="Call the owner after 18:00."),
        NOW + timedelta(minutes=1),
    ).event
    other = store.append(stored_before_the_filter(scope="project:x", dedupe_key=phone_key), NOW).event
    plain = store.append(stored_before_the_filter(), NOW).event
    run_janitor(store, GatewaySettings(), NOW, steps=["consolidate"])
    assert len(store.open_conflicts()) == 1

    report = run_janitor(store, GatewaySettings(), NOW, steps=["scan", "consolidate"])["scan"]

    assert report["flagged"] == []
    assert {item["event_id"] for item in report["redacted"]} == {first.event_id, second.event_id, other.event_id}
    assert all(item == {**item, "fields": ["dedupe_key"], "kinds": ["phone number"]} for item in report["redacted"])
    after = [store.get(e.event_id) for e in (first, second, other)]
    assert all(e is not None and e.redacted for e in after)
    keys = {(e.scope, e.dedupe_key) for e in after if e is not None}
    # one token per key: the two events of global keep one history (the newer is the head, in conflict)
    assert len(keys) == 2
    assert all(key.startswith("redacted-") and kinds_in(key) == [] for _scope, key in keys)
    (global_key,) = [key for scope, key in keys if scope == "global"]
    assert [e.event_id for e in store.heads("global", by="recent", limit=10, now=NOW)] == [
        plain.event_id,
        second.event_id,
    ]
    assert [(c.dedupe_key, c.event_id) for c in store.open_conflicts()] == [(global_key, second.event_id)]
    assert store.list_events(EventFilter(dedupe_key=global_key, include_deprecated=True, limit=10)) != []
    assert "090-1234-5678" not in everything_stored(store)
    assert not store.get(plain.event_id).redacted  # type: ignore[union-attr]
    audit = [a for a in store.audit(limit=1000) if a.action == "redact"]
    assert sorted(a.event_id or "" for a in audit) == sorted([first.event_id, second.event_id, other.event_id])
    assert all(a.detail.startswith("dedupe_key replaced by redacted-") for a in audit)
    assert all(a.detail.endswith(": phone number") for a in audit)
    # the key keeps working: a resend with the token is the same key's newer entry
    resent = store.append(
        stored_before_the_filter(dedupe_key=global_key, run_id="r3", supersedes=second.event_id, content_md="Mail."),
        NOW + timedelta(minutes=2),
    )
    assert resent.status == "superseded_previous"
    full = run_janitor(store, GatewaySettings(), NOW, steps=["scan"], full_scan=True)["scan"]
    assert (full["redacted"], full["flagged"]) == ([], [])


def test_scan_replaces_a_sensitive_project_slug_and_run_id(store: SqlStore) -> None:
    scope = "project:client-4111111111111111"
    keyed = store.append(stored_before_the_filter(scope=scope, dedupe_key="fact:a", run_id="run:taro@gmail.com"), NOW)
    other = store.append(stored_before_the_filter(scope=scope, dedupe_key="fact:b", content_md="Other."), NOW)
    run_janitor(store, GatewaySettings(), NOW, steps=["consolidate"])
    propose_cleanup(store, NOW, older_than=None, scope_patterns=[scope], expired_only=True, actor="ops")

    report = run_janitor(store, GatewaySettings(), NOW, steps=["scan", "consolidate"])["scan"]

    by_id = {item["event_id"]: item for item in report["redacted"]}
    assert by_id[keyed.event.event_id] == {
        "event_id": keyed.event.event_id,
        "fields": ["scope", "run_id"],
        "kinds": ["card number", "e-mail address"],
    }
    assert by_id[other.event.event_id]["fields"] == ["scope"]
    first, second = store.get(keyed.event.event_id), store.get(other.event.event_id)
    assert first is not None
    assert second is not None
    assert first.scope == second.scope
    assert first.scope.startswith("project:redacted-")
    assert first.run_id == "redacted"
    assert scope not in store.scopes()
    assert {e.event_id for e in store.heads(first.scope, by="recent", limit=10, now=NOW)} == {
        keyed.event.event_id,
        other.event.event_id,
    }
    assert [p.scope for p in store.pins()] == [first.scope, first.scope]
    stored = everything_stored(store)
    assert "4111111111111111" not in stored
    assert "taro@gmail.com" not in stored


def test_scan_flags_an_agent_scope_and_leaves_it(store: SqlStore) -> None:
    scope = "agent:taro-090-1234-5678"
    found = store.append(stored_before_the_filter(agent_id="taro-090-1234-5678", scope=scope), NOW).event
    report = run_janitor(store, GatewaySettings(), NOW, steps=["scan"])["scan"]
    assert report == {
        "scanned": 1,
        "redacted": [],
        "flagged": [{"event_id": found.event_id, "field": "scope", "kinds": ["phone number"]}],
    }
    assert store.get(found.event_id) == found


def test_consolidate_stores_budgeted_pins_linked_to_their_events(store: SqlStore) -> None:
    for index in range(30):
        store.append(draft(dedupe_key=f"decision:d{index:02d}", kind="decision", content_md=f"Decision {index}."), NOW)
    store.append(draft(scope="project:x", dedupe_key="constraint:c", kind="constraint", content_md="Never X."), NOW)
    report = consolidate(store, GatewaySettings(pin_budget_tokens=100), NOW)
    by_scope = {line["scope"]: line for line in report}
    assert by_scope["global"]["entries"] == 30
    assert 0 < by_scope["global"]["pinned"] < 30
    assert by_scope["global"]["tokens"] <= 100
    assert by_scope["project:x"]["pinned"] == 1
    pins = store.pins(["global"])
    assert len(pins) == by_scope["global"]["pinned"]
    for pin in pins:
        source = store.get(pin.event_id)
        assert source is not None
        assert pin.event_id in pin.line
        assert source.dedupe_key == pin.dedupe_key
    consolidate(store, GatewaySettings(pin_budget_tokens=100), NOW)
    assert len(store.pins(["global"])) == len(pins)


def test_tokens(store: SqlStore) -> None:
    store.add_token("a" * 64, "claude", "agent", NOW)
    store.add_token("b" * 64, "ops", "admin", NOW)
    assert store.token_owner("a" * 64) == ("claude", "agent")
    assert store.token_owner("b" * 64) == ("ops", "admin")
    assert store.token_owner("c" * 64) is None
    assert store.revoke_tokens("claude", NOW) == 1
    assert store.token_owner("a" * 64) is None
    listed = {t.agent_id: t for t in store.tokens()}
    assert listed["claude"].revoked_at == NOW
    assert listed["ops"].fingerprint == "b" * 12


def test_reopening_keeps_everything(store_url: str, store: SqlStore) -> None:
    stored = store.append(draft(), NOW).event
    store.set_state("janitor.scan_seq", "7")
    again = open_store(store_url)
    try:
        assert again.get(stored.event_id) == stored
        assert again.get_state("janitor.scan_seq") == "7"
        assert again.append(draft(), NOW).status == "duplicate"
    finally:
        again.close()


def test_a_snapshot_counts_a_huge_scope_only_up_to_the_cap(store: SqlStore) -> None:
    from ego_shared_memory.service import SharedMemory
    from ego_shared_memory.store.sql import COUNT_CAP

    drafts = [
        draft(dedupe_key=f"fact:k{index}", kind="fact", content_md=f"Fact {index}.") for index in range(COUNT_CAP + 5)
    ]
    store.append_many(drafts, NOW)
    _top, recent, _pins, counts, _conflicts = store.snapshot_rows(["global"], recent=5, pins=10, now=NOW)
    assert counts == {"global": COUNT_CAP + 1}
    assert len(recent) == 5
    snap = SharedMemory(store, GatewaySettings()).snapshot(agent_id="claude", scopes="global", limit_recent=3, now=NOW)
    assert snap["entries"] == {"global": COUNT_CAP}
    assert snap["entries_complete"] is False
    assert "+ more entries in the log" in snap["pinned_md"]
    assert store.event_count() == COUNT_CAP + 5
