"""A SQLite store written by the releases before ``user_version`` is adopted: every row kept, read back."""

from __future__ import annotations

import os
import sqlite3
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ego_shared_memory.events import EventDraft
from ego_shared_memory.store import StoreError, open_store
from ego_shared_memory.store.sql import SCHEMA_VERSION, idempotency_key

NOW = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
# The SQLite schema exactly as the last of those releases (sm_state schema_version 2) created it.
OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS sm_events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id TEXT NOT NULL UNIQUE,
        agent_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        scope TEXT NOT NULL,
        kind TEXT NOT NULL,
        dedupe_key TEXT NOT NULL,
        confidence TEXT NOT NULL,
        content_md TEXT NOT NULL,
        source TEXT NOT NULL,
        supersedes TEXT,
        ttl_days INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT,
        idem_key TEXT NOT NULL UNIQUE,
        redacted INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS sm_events_key ON sm_events (scope, dedupe_key, seq);
CREATE INDEX IF NOT EXISTS sm_events_expires ON sm_events (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS sm_deprecated (
        event_id TEXT PRIMARY KEY, by_event_id TEXT NOT NULL, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sm_heads (
        scope TEXT NOT NULL, dedupe_key TEXT NOT NULL, seq BIGINT NOT NULL, rank INTEGER NOT NULL,
        conflict_id BIGINT, PRIMARY KEY (scope, dedupe_key)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sm_heads_recent ON sm_heads (scope, seq DESC);
CREATE INDEX IF NOT EXISTS sm_heads_rank ON sm_heads (scope, rank, seq DESC);
CREATE INDEX IF NOT EXISTS sm_heads_conflict ON sm_heads (conflict_id) WHERE conflict_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS sm_conflicts (
        id INTEGER PRIMARY KEY AUTOINCREMENT, scope TEXT NOT NULL, dedupe_key TEXT NOT NULL, event_id TEXT NOT NULL,
        previous_event_id TEXT NOT NULL, detected_at TEXT NOT NULL, resolution_event_id TEXT,
        resolved_at TEXT, UNIQUE (event_id, previous_event_id));
CREATE INDEX IF NOT EXISTS sm_conflicts_previous ON sm_conflicts (previous_event_id);
CREATE TABLE IF NOT EXISTS sm_pins (
        scope TEXT NOT NULL, position INTEGER NOT NULL, dedupe_key TEXT NOT NULL, event_id TEXT NOT NULL,
        line TEXT NOT NULL, consolidated_at TEXT NOT NULL, PRIMARY KEY (scope, position));
CREATE TABLE IF NOT EXISTS sm_candidates (
        event_id TEXT PRIMARY KEY, reason TEXT NOT NULL, marked_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sm_audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,
        event_id TEXT, detail TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sm_tokens (
        token_hash TEXT PRIMARY KEY, agent_id TEXT NOT NULL, role TEXT NOT NULL, created_at TEXT NOT NULL,
        revoked_at TEXT);
CREATE TABLE IF NOT EXISTS sm_state (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sm_cleanup_plans (
        plan_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, expires_at TEXT NOT NULL, actor TEXT NOT NULL,
        criteria TEXT NOT NULL, total INTEGER NOT NULL, truncated INTEGER NOT NULL, confirmed_at TEXT,
        confirmed_by TEXT, deleted INTEGER);
CREATE TABLE IF NOT EXISTS sm_cleanup_plan_events (
        plan_id TEXT NOT NULL, position INTEGER NOT NULL, event_id TEXT NOT NULL, scope TEXT NOT NULL,
        PRIMARY KEY (plan_id, event_id));
INSERT INTO sm_state (name, value) VALUES ('schema_version', '2');
"""
DRAFT = EventDraft(
    agent_id="claude",
    run_id="run_1",
    scope="project:ego",
    kind="fact",
    dedupe_key="db:engine",
    confidence="high",
    content_md="データベースは PostgreSQL",
)


def old_file(path: Path) -> None:
    """A file as the previous release left it (0600, WAL, ``secure_delete``), with one event, its head and a token."""
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA secure_delete = ON")
    db.execute("BEGIN IMMEDIATE")
    for statement in OLD_SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    db.execute(
        "INSERT INTO sm_events (event_id, agent_id, run_id, scope, kind, dedupe_key, confidence, content_md, source,"
        " supersedes, ttl_days, created_at, expires_at, idem_key) VALUES ('evt_1', ?, ?, ?, ?, ?, ?, ?, ?, NULL, 0,"
        " ?, NULL, ?)",
        (
            DRAFT.agent_id,
            DRAFT.run_id,
            DRAFT.scope,
            DRAFT.kind,
            DRAFT.dedupe_key,
            DRAFT.confidence,
            DRAFT.content_md,
            '{"system": "claude_code"}',
            NOW.isoformat(),
            idempotency_key(DRAFT),
        ),
    )
    db.execute(
        "INSERT INTO sm_heads (scope, dedupe_key, seq, rank) VALUES (?, ?, 1, 3)", (DRAFT.scope, DRAFT.dedupe_key)
    )
    db.execute("INSERT INTO sm_tokens VALUES ('hash_1', 'claude', 'agent', ?, NULL)", (NOW.isoformat(),))
    db.execute("COMMIT")
    db.close()


def test_a_store_of_the_previous_release_is_adopted_with_every_row(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    old_file(path)
    store = open_store(f"sqlite:///{path}")
    try:
        event = store.get("evt_1")
        assert event is not None
        assert (event.content_md, event.created_at, event.source.system) == (DRAFT.content_md, NOW, "claude_code")
        assert [e.event_id for e in store.heads(DRAFT.scope, by="recent", limit=5, now=NOW)] == ["evt_1"]
        assert store.token_owner("hash_1") == ("claude", "agent")
        again = store.append(DRAFT, NOW)  # the stored idempotency key still recognises a resend
        assert (again.status, again.event.event_id) == ("duplicate", "evt_1")
        assert store.get_state("schema_version") == str(SCHEMA_VERSION)
    finally:
        store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (1,)
        assert db.execute("SELECT count(*) FROM sm_events").fetchone() == (1,)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_store_of_a_newer_release_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    open_store(f"sqlite:///{path}").close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 7")
    before = path.read_bytes()
    with pytest.raises(StoreError, match="schema version 7"):
        open_store(f"sqlite:///{path}")
    assert path.read_bytes() == before


def test_a_new_store_is_private_and_zeroes_what_it_deletes(tmp_path: Path) -> None:
    path = tmp_path / "new" / "shared.db"
    store = open_store(f"sqlite:///{path}")
    try:
        conn = store._conn()  # the connection the store's thread uses
        assert conn.execute("PRAGMA secure_delete").fetchone() == (1,)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        store.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
