"""The SQL store both backends share: schema, the append transaction and every query.

A backend (:mod:`.sqlite`, :mod:`.postgres`) supplies connections, transactions and key locks; the SQL here
is the subset both speak (``?`` placeholders are rewritten for psycopg). Writes to one (scope, dedupe_key)
are serialised — SQLite by its single writer, PostgreSQL by a transaction-scoped advisory lock per key — so
idempotency, last-write-wins heads and conflict records hold across threads and processes.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import secrets
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from typing import Any, Literal, TypeVar, cast

import attrs

from ego_shared_memory.events import (
    Event,
    EventDraft,
    EventError,
    Source,
    check_access,
    iso,
    parse_iso,
    pin_rank,
)
from ego_shared_memory.store.base import (
    AppendResult,
    AuditRecord,
    CleanupDone,
    CleanupPlan,
    CleanupPlanError,
    Conflict,
    EventFilter,
    Pin,
    Role,
    Status,
    StoreBusyError,
    StoreError,
    StoreFullError,
    TokenInfo,
)

T = TypeVar("T")
SCHEMA_VERSION = 2
"""1: the first. 2: the idempotency key covers kind, confidence, supersedes and ttl_days (stored keys are
recomputed on opening); cleanup plans."""
COUNT_CAP = 1000
"""A snapshot counts each scope's entries (and the open conflicts) up to this; more reads as COUNT_CAP + 1."""
CONFIDENCE_WORD = {"high": 3, "med": 2, "low": 1}
PLAN_KEEP = timedelta(days=7)
"""A cleanup plan that expired unconfirmed is kept this long (confirming it says "expired", not "unknown")."""

EVENT_COLUMNS = (
    "e.seq, e.event_id, e.agent_id, e.run_id, e.scope, e.kind, e.dedupe_key, e.confidence, e.content_md, "
    "e.source, e.supersedes, e.ttl_days, e.created_at, e.redacted, "
    "EXISTS (SELECT 1 FROM sm_deprecated d WHERE d.event_id = e.event_id)"
)

# Each backend fills in {seq} (its auto-increment primary key) and {compact} (SQLite: WITHOUT ROWID). Few
# indexes, partial where most rows would not need them: every index is one more page written per append.
SCHEMA: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS sm_events (
        seq {seq},
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
        redacted INTEGER NOT NULL DEFAULT 0)""",
    "CREATE INDEX IF NOT EXISTS sm_events_key ON sm_events (scope, dedupe_key, seq)",
    "CREATE INDEX IF NOT EXISTS sm_events_expires ON sm_events (expires_at) WHERE expires_at IS NOT NULL",
    """CREATE TABLE IF NOT EXISTS sm_deprecated (
        event_id TEXT PRIMARY KEY, by_event_id TEXT NOT NULL, at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS sm_heads (
        scope TEXT NOT NULL, dedupe_key TEXT NOT NULL, seq BIGINT NOT NULL, rank INTEGER NOT NULL,
        conflict_id BIGINT, PRIMARY KEY (scope, dedupe_key)) {compact}""",
    "CREATE INDEX IF NOT EXISTS sm_heads_recent ON sm_heads (scope, seq DESC)",
    "CREATE INDEX IF NOT EXISTS sm_heads_rank ON sm_heads (scope, rank, seq DESC)",
    "CREATE INDEX IF NOT EXISTS sm_heads_conflict ON sm_heads (conflict_id) WHERE conflict_id IS NOT NULL",
    """CREATE TABLE IF NOT EXISTS sm_conflicts (
        id {seq}, scope TEXT NOT NULL, dedupe_key TEXT NOT NULL, event_id TEXT NOT NULL,
        previous_event_id TEXT NOT NULL, detected_at TEXT NOT NULL, resolution_event_id TEXT,
        resolved_at TEXT, UNIQUE (event_id, previous_event_id))""",
    "CREATE INDEX IF NOT EXISTS sm_conflicts_previous ON sm_conflicts (previous_event_id)",
    """CREATE TABLE IF NOT EXISTS sm_pins (
        scope TEXT NOT NULL, position INTEGER NOT NULL, dedupe_key TEXT NOT NULL, event_id TEXT NOT NULL,
        line TEXT NOT NULL, consolidated_at TEXT NOT NULL, PRIMARY KEY (scope, position))""",
    """CREATE TABLE IF NOT EXISTS sm_candidates (
        event_id TEXT PRIMARY KEY, reason TEXT NOT NULL, marked_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS sm_audit (
        id {seq}, at TEXT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL, event_id TEXT,
        detail TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS sm_tokens (
        token_hash TEXT PRIMARY KEY, agent_id TEXT NOT NULL, role TEXT NOT NULL, created_at TEXT NOT NULL,
        revoked_at TEXT)""",
    "CREATE TABLE IF NOT EXISTS sm_state (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS sm_cleanup_plans (
        plan_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, expires_at TEXT NOT NULL, actor TEXT NOT NULL,
        criteria TEXT NOT NULL, total INTEGER NOT NULL, truncated INTEGER NOT NULL, confirmed_at TEXT,
        confirmed_by TEXT, deleted INTEGER)""",
    """CREATE TABLE IF NOT EXISTS sm_cleanup_plan_events (
        plan_id TEXT NOT NULL, position INTEGER NOT NULL, event_id TEXT NOT NULL, scope TEXT NOT NULL,
        PRIMARY KEY (plan_id, event_id))""",
)


def idempotency_key(draft: EventDraft) -> str:
    """The same event: same agent, run, scope, dedupe_key and content, and the same kind, confidence,
    supersedes and ttl_days — every field that changes what is read. A resend that changes any of them is a
    new event (the change takes effect: last write wins, with its warnings), never a silent ``duplicate``.
    ``source`` (where the event came from) is provenance, not meaning: a resend differing only there is a
    duplicate, and its answer says that the new source was not recorded."""
    parts = (
        draft.agent_id,
        draft.run_id,
        draft.scope,
        draft.dedupe_key,
        draft.content_md,
        draft.kind,
        draft.confidence,
        draft.supersedes or "",
        str(draft.ttl_days),
    )
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


STORABLE_RULE = "text without NUL characters (\\u0000) or unpaired surrogates (\\ud800-\\udfff)"


def storable(text: str) -> bool:
    """Whether both backends store ``text`` as it is: PostgreSQL's text holds no NUL, and UTF-8 (both
    backends') no unpaired surrogate."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_storable(draft: EventDraft) -> None:
    """Refuses (:class:`EventError`, HTTP 422) a text field that one backend could not store as it is: the same
    answer on SQLite and PostgreSQL, and an import from one into the other never stops half-way."""
    for field, text in (
        ("content_md", draft.content_md),
        ("run_id", draft.run_id),
        ("dedupe_key", draft.dedupe_key),
        ("scope", draft.scope),
        ("source.thread_id", draft.source.thread_id),
        ("source.message_id", draft.source.message_id),
    ):
        if text is not None and not storable(text):
            raise EventError(field, STORABLE_RULE)


def new_event_id() -> str:
    return "evt_" + secrets.token_hex(12)


def new_plan_id() -> str:
    return "plan_" + secrets.token_hex(12)


def _counts(scopes: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for scope in scopes:
        counts[scope] = counts.get(scope, 0) + 1
    return dict(sorted(counts.items()))


def _plan_summary(plan: CleanupPlan) -> str:
    per_scope = ", ".join(f"{scope}={count}" for scope, count in plan.counts.items()) or "nothing"
    more = " (truncated)" if plan.truncated else ""
    return f"{len(plan.event_ids)} event(s){more}: {per_scope}; expires {iso(plan.expires_at)}"


def like_pattern(text: str) -> str:
    """A LIKE pattern matching ``text`` literally anywhere (escape character ``\\``)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped.lower()}%"


class Tx:
    """One transaction: queries with ``?`` placeholders, and key locks (a no-op where the backend serialises
    all writers anyway)."""

    def __init__(self, cursor: Any, placeholder: str, lock: Callable[[Any, str], None]) -> None:
        self._cursor = cursor
        self._placeholder = placeholder
        self._lock = lock

    def _sql(self, sql: str) -> str:
        return sql if self._placeholder == "?" else sql.replace("?", self._placeholder)

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        self._cursor.execute(self._sql(sql), tuple(params))
        return int(self._cursor.rowcount or 0)

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        self._cursor.execute(self._sql(sql), tuple(params))
        row = self._cursor.fetchone()
        return tuple(row) if row is not None else None

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self._cursor.execute(self._sql(sql), tuple(params))
        return [tuple(row) for row in self._cursor.fetchall()]

    def lock(self, key: str) -> None:
        self._lock(self._cursor, key)


@functools.lru_cache(maxsize=4096)
def _source(text: str) -> Source:
    """Most events share a handful of sources: parse each one once."""
    source = json.loads(text)
    return Source(
        system=source.get("system", "other"), thread_id=source.get("thread_id"), message_id=source.get("message_id")
    )


def _event(row: Sequence[Any]) -> Event:
    return Event(
        seq=int(row[0]),
        event_id=row[1],
        agent_id=row[2],
        run_id=row[3],
        scope=row[4],
        kind=row[5],
        dedupe_key=row[6],
        confidence=row[7],
        content_md=row[8],
        source=_source(row[9]),
        supersedes=row[10],
        ttl_days=int(row[11]),
        created_at=parse_iso(row[12]),
        redacted=bool(row[13]),
        deprecated=bool(row[14]),
    )


def _source_json(source: Source) -> str:
    return json.dumps(source.as_dict(), sort_keys=True, separators=(",", ":"))


def _placeholders(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


class SqlStore(ABC):
    """The shared implementation; subclasses provide connections and transactions."""

    backend = "sql"
    placeholder = "?"

    def __init__(self, display_url: str) -> None:
        self.display_url = display_url
        self._local = threading.local()
        self._connections: list[Any] = []
        self._connections_lock = threading.Lock()
        self._closed = False

    # -- backend hooks -----------------------------------------------------------------------------

    @abstractmethod
    def _connect(self) -> Any: ...

    @abstractmethod
    def _transaction(self, conn: Any, *, write: bool) -> AbstractContextManager[Any]:
        """A context manager around one transaction, yielding a DB-API cursor."""

    @abstractmethod
    def _lock_key(self, cursor: Any, key: str) -> None: ...

    def _retryable(self, exc: BaseException) -> bool:
        return False

    def _broken(self, exc: BaseException) -> bool:
        """The connection is unusable (the server went away): drop it, the next call reconnects."""
        return False

    def _full(self, exc: BaseException) -> bool:
        """The store has no space left (the write was not made)."""
        return False

    def _schema_sql(self) -> list[str]:
        return list(SCHEMA)

    # -- connections and transactions --------------------------------------------------------------

    def _conn(self) -> Any:
        if self._closed:
            raise StoreError("the store is closed")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
            with self._connections_lock:
                self._connections.append(conn)
        return conn

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            with self._connections_lock:
                if conn in self._connections:
                    self._connections.remove(conn)
            with contextlib.suppress(Exception):  # a broken connection may fail to close; it is dropped anyway
                conn.close()

    def _run(self, fn: Callable[[Tx], T], *, write: bool) -> T:
        attempts = 6
        for attempt in range(attempts):
            conn = self._conn()
            try:
                with self._transaction(conn, write=write) as cursor:
                    return fn(Tx(cursor, self.placeholder, self._lock_key))
            except (EventError, PermissionError):
                raise
            except Exception as exc:
                if self._full(exc):
                    raise StoreFullError(f"the {self.backend} store has no space left; nothing was written") from exc
                if self._broken(exc):
                    self._drop_connection()
                    if attempt == 0:
                        continue
                    raise StoreError(f"the {self.backend} store is unreachable: {type(exc).__name__}") from exc
                if self._retryable(exc):
                    if attempt < attempts - 1:
                        continue
                    raise StoreBusyError(f"the {self.backend} store stayed busy (locked by other writers)") from exc
                raise
        raise StoreError("unreachable")  # pragma: no cover - the loop always returns or raises

    def write(self, fn: Callable[[Tx], T]) -> T:
        return self._run(fn, write=True)

    def read(self, fn: Callable[[Tx], T]) -> T:
        return self._run(fn, write=False)

    def close(self) -> None:
        self._closed = True
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            with contextlib.suppress(Exception):  # closing is best effort
                conn.close()

    def create_schema(self, prepare: Callable[[Tx], None] | None = None) -> None:
        def create(tx: Tx) -> None:
            if prepare is not None:
                prepare(tx)
            for statement in self._schema_sql():
                tx.run(statement)
            row = tx.one("SELECT value FROM sm_state WHERE name = 'schema_version'")
            if row is None:
                tx.run("INSERT INTO sm_state (name, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) > SCHEMA_VERSION:
                raise StoreError(
                    f"the store has schema version {row[0]}, newer than this ego ({SCHEMA_VERSION}); upgrade ego"
                )
            elif int(row[0]) < SCHEMA_VERSION:
                self._migrate(tx, int(row[0]))
                tx.run("UPDATE sm_state SET value = ? WHERE name = 'schema_version'", (str(SCHEMA_VERSION),))

        self.write(create)

    def _migrate(self, tx: Tx, version: int) -> None:
        """Brings a store of an older schema ``version`` up to :data:`SCHEMA_VERSION` (new tables are made by
        the schema statements; this rewrites what changed meaning), in the schema transaction."""
        if version < 2:
            # The idempotency key now covers kind, confidence, supersedes and ttl_days: recompute the stored
            # keys, so that a resend of an event stored before the upgrade is still recognised. (The new key is
            # finer than the old one, so two rows never get the same key.) Redacted rows keep theirs.
            rows = tx.all(
                "SELECT seq, agent_id, run_id, scope, kind, dedupe_key, confidence, content_md, supersedes, ttl_days"
                " FROM sm_events WHERE idem_key NOT LIKE ?",
                ("redacted:%",),
            )
            for seq, agent, run, scope, kind, key, confidence, content, supersedes, ttl in rows:
                draft = EventDraft(
                    agent_id=agent,
                    run_id=run,
                    scope=scope,
                    kind=kind,
                    dedupe_key=key,
                    confidence=confidence,
                    content_md=content,
                    supersedes=supersedes,
                    ttl_days=int(ttl),
                )
                tx.run("UPDATE sm_events SET idem_key = ? WHERE seq = ?", (idempotency_key(draft), seq))

    # -- events ------------------------------------------------------------------------------------

    def append(self, draft: EventDraft, now: datetime) -> AppendResult:
        return self.write(lambda tx: self._append_in(tx, draft, now))

    def append_many(self, drafts: Sequence[EventDraft], now: datetime) -> list[AppendResult]:
        """Several appends in one transaction (bulk loading): each with exactly :meth:`append`'s rules."""
        return self.write(lambda tx: [self._append_in(tx, draft, now) for draft in drafts])

    def import_event(self, event: Event) -> bool:
        """Restores an exported event with its own id, time and redaction flag (in export order, so that
        heads, deprecations and conflicts come out as they were). ``False`` when it is already here."""

        def run(tx: Tx) -> bool:
            if tx.one("SELECT 1 FROM sm_events WHERE event_id = ?", (event.event_id,)) is not None:
                return False
            draft = EventDraft(
                agent_id=event.agent_id,
                run_id=event.run_id,
                scope=event.scope,
                kind=event.kind,
                dedupe_key=event.dedupe_key,
                confidence=event.confidence,
                content_md=event.content_md,
                source=event.source,
                supersedes=event.supersedes,
                ttl_days=event.ttl_days,
            )
            result = self._append_in(tx, draft, event.created_at, event_id=event.event_id, redacted=event.redacted)
            return result.status != "duplicate"

        return self.write(run)

    def _append_in(
        self, tx: Tx, draft: EventDraft, now: datetime, *, event_id: str | None = None, redacted: bool = False
    ) -> AppendResult:
        check_storable(draft)
        idem = f"redacted:{event_id}" if redacted and event_id else idempotency_key(draft)
        tx.lock(f"{draft.scope}|{draft.dedupe_key}")
        # the same event appended before, and the key's head, in one statement (one round trip)
        found = tx.all(
            f"SELECT 0, {EVENT_COLUMNS} FROM sm_events e WHERE e.idem_key = ?"
            f" UNION ALL SELECT 1, {EVENT_COLUMNS} FROM sm_heads h JOIN sm_events e ON e.seq = h.seq"
            " WHERE h.scope = ? AND h.dedupe_key = ?",
            (idem, draft.scope, draft.dedupe_key),
        )
        existing = next((row[1:] for row in found if row[0] == 0), None)
        if existing is not None:
            original = _event(existing)
            ignored: tuple[str, ...] = ()
            if not redacted and original.source != draft.source:
                ignored = (
                    "this event was stored before (same agent, run, scope, dedupe_key, content, kind, confidence, "
                    "supersedes and ttl_days); its new source was not recorded, the original's is kept",
                )
            return AppendResult(event=original, status="duplicate", warnings=ignored)
        head = next((row[1:] for row in found if row[0] == 1), None)
        previous = _event(head) if head is not None else None
        warnings: list[str] = []
        target: Event | None = None
        if draft.supersedes is not None:
            row = tx.one(f"SELECT {EVENT_COLUMNS} FROM sm_events e WHERE e.event_id = ?", (draft.supersedes,))
            if row is None:
                raise EventError("supersedes", "the id of an existing event (none has this id)")
            target = _event(row)
            check_access(draft.agent_id, target.scope, "supersede events in")
            if (target.scope, target.dedupe_key) != (draft.scope, draft.dedupe_key):
                tx.lock(f"{target.scope}|{target.dedupe_key}")
            if target.deprecated:
                warnings.append(f"{target.event_id} was already superseded; it stays deprecated")
        event_id = event_id or new_event_id()
        created = iso(now)  # stored to the microsecond, and read back the same
        expires = iso(now + timedelta(days=draft.ttl_days)) if draft.ttl_days > 0 else None
        row = tx.one(
            "INSERT INTO sm_events (event_id, agent_id, run_id, scope, kind, dedupe_key, confidence, content_md,"
            " source, supersedes, ttl_days, created_at, expires_at, idem_key, redacted)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (
                event_id,
                draft.agent_id,
                draft.run_id,
                draft.scope,
                draft.kind,
                draft.dedupe_key,
                draft.confidence,
                draft.content_md,
                _source_json(draft.source),
                draft.supersedes,
                draft.ttl_days,
                created,
                expires,
                idem,
                int(redacted),
            ),
        )
        assert row is not None
        seq = int(row[0])
        self._set_head(tx, draft.scope, draft.dedupe_key, seq, pin_rank(draft.kind, draft.confidence))
        if target is not None:
            tx.run(
                "INSERT INTO sm_deprecated (event_id, by_event_id, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                (target.event_id, event_id, iso(now)),
            )
            if (target.scope, target.dedupe_key) != (draft.scope, draft.dedupe_key):
                self._recompute_head(tx, target.scope, target.dedupe_key)
            self._settle_conflicts_against(tx, target.event_id)
        if previous is not None and previous.event_id != draft.supersedes:
            old, new = CONFIDENCE_WORD[previous.confidence], CONFIDENCE_WORD[draft.confidence]
            if new < old:
                warnings.append(
                    f"confidence dropped from {previous.confidence} to {draft.confidence} for dedupe_key "
                    f"{draft.dedupe_key} ({previous.event_id} by {previous.agent_id}); the newer event is read "
                    "(last write wins)"
                )
            if previous.content_md != draft.content_md:
                self._insert_conflict(tx, draft.scope, draft.dedupe_key, event_id, previous.event_id, now=now)
                self._mark_head_conflict(tx, draft.scope, draft.dedupe_key, event_id)
                warnings.append(
                    f"dedupe_key {draft.dedupe_key} already held different content ({previous.event_id} by "
                    f"{previous.agent_id}); both are kept, the newer is read, and a conflict was recorded. "
                    "To replace an entry on purpose, send supersedes with its event_id"
                )
        elif previous is not None and previous.event_id == draft.supersedes:
            old, new = CONFIDENCE_WORD[previous.confidence], CONFIDENCE_WORD[draft.confidence]
            if new < old:
                warnings.append(
                    f"confidence dropped from {previous.confidence} to {draft.confidence} for dedupe_key "
                    f"{draft.dedupe_key}"
                )
        stored = Event(
            seq=seq,
            event_id=event_id,
            agent_id=draft.agent_id,
            run_id=draft.run_id,
            scope=draft.scope,
            kind=draft.kind,
            dedupe_key=draft.dedupe_key,
            confidence=draft.confidence,
            content_md=draft.content_md,
            source=draft.source,
            supersedes=draft.supersedes,
            ttl_days=draft.ttl_days,
            created_at=parse_iso(created),
            redacted=redacted,
        )
        status: Status = "superseded_previous" if target is not None else "created"
        return AppendResult(event=stored, status=status, warnings=tuple(warnings))

    def _set_head(self, tx: Tx, scope: str, dedupe_key: str, seq: int, rank: int) -> None:
        """The key's head is event ``seq``; a new head starts without an open conflict (kept if unchanged)."""
        tx.run(
            "INSERT INTO sm_heads (scope, dedupe_key, seq, rank, conflict_id) VALUES (?, ?, ?, ?, NULL)"
            " ON CONFLICT (scope, dedupe_key) DO UPDATE SET seq = excluded.seq, rank = excluded.rank,"
            " conflict_id = CASE WHEN sm_heads.seq = excluded.seq THEN sm_heads.conflict_id ELSE NULL END",
            (scope, dedupe_key, seq, rank),
        )

    def _mark_head_conflict(self, tx: Tx, scope: str, dedupe_key: str, event_id: str) -> None:
        """The head ``event_id`` (if it still is the key's head) has an open conflict, the newest against it."""
        tx.run(
            "UPDATE sm_heads SET conflict_id = (SELECT MAX(c.id) FROM sm_conflicts c WHERE c.event_id = ?)"
            " WHERE scope = ? AND dedupe_key = ? AND seq = (SELECT e.seq FROM sm_events e WHERE e.event_id = ?)",
            (event_id, scope, dedupe_key, event_id),
        )

    def _settle_conflicts_against(self, tx: Tx, event_id: str) -> None:
        """``event_id`` was superseded or deleted: a head's conflict with it is settled."""
        tx.run(
            "UPDATE sm_heads SET conflict_id = NULL WHERE conflict_id IN"
            " (SELECT c.id FROM sm_conflicts c WHERE c.previous_event_id = ?)",
            (event_id,),
        )

    def _recompute_head(self, tx: Tx, scope: str, dedupe_key: str) -> None:
        """The key's head is its newest event, unless that one was superseded: then the key has no live entry.
        An older event of the key was replaced by the newer one (last write wins) and never comes back when
        the newest is superseded — from this key or from another (``db is MySQL (old)`` must not return when
        ``db is PostgreSQL`` is superseded by ``db:primary``). Only deleting an event (an approved cleanup)
        removes it from the key's history, and then the newest remaining event is the head."""
        row = tx.one(
            "SELECT e.seq, e.kind, e.confidence,"
            " EXISTS (SELECT 1 FROM sm_deprecated d WHERE d.event_id = e.event_id)"
            " FROM sm_events e WHERE e.scope = ? AND e.dedupe_key = ? ORDER BY e.seq DESC LIMIT 1",
            (scope, dedupe_key),
        )
        if row is None or bool(row[3]):
            tx.run("DELETE FROM sm_heads WHERE scope = ? AND dedupe_key = ?", (scope, dedupe_key))
        else:
            self._set_head(tx, scope, dedupe_key, int(row[0]), pin_rank(row[1], row[2]))

    def _insert_conflict(
        self, tx: Tx, scope: str, dedupe_key: str, event_id: str, previous: str, *, now: datetime
    ) -> bool:
        return (
            tx.run(
                "INSERT INTO sm_conflicts (scope, dedupe_key, event_id, previous_event_id, detected_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (scope, dedupe_key, event_id, previous, iso(now)),
            )
            > 0
        )

    def get(self, event_id: str) -> Event | None:
        row = self.read(lambda tx: tx.one(f"SELECT {EVENT_COLUMNS} FROM sm_events e WHERE e.event_id = ?", (event_id,)))
        return _event(row) if row is not None else None

    def heads(self, scope: str, *, by: Literal["recent", "rank"], limit: int, now: datetime) -> list[Event]:
        """The live (newest, not deprecated) event of each dedupe_key in ``scope``; ``rank`` leaves out
        expired events and orders by pin rank."""
        if by == "recent":
            sql = (
                f"SELECT {EVENT_COLUMNS} FROM sm_heads h JOIN sm_events e ON e.seq = h.seq WHERE h.scope = ?"
                " ORDER BY h.seq DESC LIMIT ?"
            )
            params: tuple[Any, ...] = (scope, limit)
        else:
            sql = (
                f"SELECT {EVENT_COLUMNS} FROM sm_heads h JOIN sm_events e ON e.seq = h.seq WHERE h.scope = ?"
                " AND (e.expires_at IS NULL OR e.expires_at > ?) ORDER BY h.rank, h.seq DESC LIMIT ?"
            )
            params = (scope, iso(now), limit)
        return [_event(row) for row in self.read(lambda tx: tx.all(sql, params))]

    def snapshot_rows(
        self, scopes: Sequence[str], *, recent: int, pins: int, now: datetime
    ) -> tuple[int, list[Event], list[Event], dict[str, int], int]:
        """One consistent read for a snapshot: max seq, recent heads, pin candidates, head counts per scope and
        open conflicts."""

        def run(tx: Tx) -> tuple[int, list[Event], list[Event], dict[str, int], int]:
            # Two statements whatever the number of scopes (a round trip each on PostgreSQL): the keys of the
            # newest and of the best-ranked heads of each scope with the counts, then the rows of the ~90
            # events shown, however many entries the scopes hold.
            parts: list[str] = []
            params: list[Any] = []
            for scope in scopes:
                parts.append(
                    "SELECT 'r', seq, 0, '' FROM (SELECT seq FROM sm_heads WHERE scope = ? ORDER BY seq DESC LIMIT ?) r"
                )
                params += [scope, recent]
                parts.append(
                    "SELECT 'p', seq, rank, '' FROM (SELECT h.seq, h.rank FROM sm_heads h"
                    " JOIN sm_events e ON e.seq = h.seq WHERE h.scope = ?"
                    " AND (e.expires_at IS NULL OR e.expires_at > ?) ORDER BY h.rank, h.seq DESC LIMIT ?) p"
                )
                params += [scope, iso(now), pins]
                # counted up to COUNT_CAP + 1: a huge scope costs no more than a big one
                parts.append("SELECT 'c', COUNT(*), 0, ? FROM (SELECT 1 FROM sm_heads WHERE scope = ? LIMIT ?) c")
                params += [scope, scope, COUNT_CAP + 1]
            parts.append(
                "SELECT 'k', COUNT(*), 0, '' FROM (SELECT 1 FROM sm_heads WHERE conflict_id IS NOT NULL"
                f" AND scope IN ({_placeholders(scopes)}) LIMIT ?) k"
            )
            params += [*scopes, COUNT_CAP + 1]
            parts.append("SELECT 'm', COALESCE(MAX(seq), 0), 0, '' FROM sm_events")
            newest: list[int] = []
            ranked: list[tuple[int, int]] = []
            counts = dict.fromkeys(scopes, 0)
            conflicts = 0
            top = 0
            for which, first, second, scope in tx.all(" UNION ALL ".join(parts), params):
                if which == "r":
                    newest.append(int(first))
                elif which == "p":
                    ranked.append((int(second), int(first)))
                elif which == "c":
                    counts[scope] = int(first)
                elif which == "k":
                    conflicts = int(first)
                else:
                    top = int(first)
            recent_seqs = sorted(newest, reverse=True)[:recent]
            pin_seqs = [seq for _rank, seq in sorted(ranked, key=lambda rs: (rs[0], -rs[1]))[:pins]]
            wanted = sorted(set(recent_seqs) | set(pin_seqs))
            rows: dict[int, Event] = {}
            for first in range(0, len(wanted), 500):
                chunk = wanted[first : first + 500]
                sql = f"SELECT {EVENT_COLUMNS} FROM sm_events e WHERE e.seq IN ({_placeholders(chunk)})"
                for row in tx.all(sql, chunk):
                    rows[int(row[0])] = _event(row)
            return (
                top,
                [rows[seq] for seq in recent_seqs if seq in rows],
                [rows[seq] for seq in pin_seqs if seq in rows],
                counts,
                conflicts,
            )

        return self.read(run)

    def head_count(self, scope: str) -> int:
        row = self.read(lambda tx: tx.one("SELECT COUNT(*) FROM sm_heads WHERE scope = ?", (scope,)))
        return int(row[0]) if row else 0

    def max_seq(self) -> int:
        row = self.read(lambda tx: tx.one("SELECT MAX(seq) FROM sm_events"))
        return int(row[0] or 0) if row else 0

    def event_count(self) -> int:
        row = self.read(lambda tx: tx.one("SELECT COUNT(*) FROM sm_events"))
        return int(row[0]) if row else 0

    def scopes(self) -> list[str]:
        rows = self.read(lambda tx: tx.all("SELECT DISTINCT scope FROM sm_heads ORDER BY scope"))
        return [row[0] for row in rows]

    def list_events(self, query: EventFilter) -> list[Event]:
        where: list[str] = []
        params: list[Any] = []
        if query.scopes:
            where.append(f"e.scope IN ({_placeholders(query.scopes)})")
            params += query.scopes
        if query.scope_patterns:
            parts = []
            for pattern in query.scope_patterns:
                if pattern.endswith("*"):
                    parts.append("e.scope LIKE ? ESCAPE '\\'")
                    params.append(like_pattern(pattern[:-1])[1:])
                else:
                    parts.append("e.scope = ?")
                    params.append(pattern)
            where.append("(" + " OR ".join(parts) + ")")
        if query.reader is not None:
            where.append("(e.scope NOT LIKE ? OR e.scope = ?)")
            params += ["agent:%", f"agent:{query.reader}"]
        if query.kinds:
            where.append(f"e.kind IN ({_placeholders(query.kinds)})")
            params += query.kinds
        if query.agent_id is not None:
            where.append("e.agent_id = ?")
            params.append(query.agent_id)
        if query.dedupe_key is not None:
            where.append("e.dedupe_key = ?")
            params.append(query.dedupe_key)
        for term in query.terms:
            where.append("(LOWER(e.content_md) LIKE ? ESCAPE '\\' OR e.dedupe_key LIKE ? ESCAPE '\\')")
            params += [like_pattern(term), like_pattern(term)]
        if query.before is not None:
            where.append("e.created_at < ?")
            params.append(iso(query.before))
        if not query.include_deprecated:
            where.append("NOT EXISTS (SELECT 1 FROM sm_deprecated d WHERE d.event_id = e.event_id)")
        clause = (" WHERE " + " AND ".join(where)) if where else ""
        sql = f"SELECT {EVENT_COLUMNS} FROM sm_events e{clause} ORDER BY e.seq DESC LIMIT ?"
        params.append(query.limit)
        return [_event(row) for row in self.read(lambda tx: tx.all(sql, params))]

    # -- conflicts ---------------------------------------------------------------------------------

    def _open_conflicts(self, tx: Tx, scopes: Sequence[str] | None, *, count_only: bool = False) -> Any:
        """Open conflicts: those a head still carries (a newer head, or the other side superseded or deleted,
        settles it)."""
        where = ["h.conflict_id IS NOT NULL"]
        params: list[Any] = []
        if scopes is not None:
            if not scopes:
                return 0 if count_only else []
            where.append(f"h.scope IN ({_placeholders(scopes)})")
            params += scopes
        if count_only:
            row = tx.one(f"SELECT COUNT(*) FROM sm_heads h WHERE {' AND '.join(where)}", params)
            return int(row[0]) if row else 0
        sql = (
            "SELECT c.id, c.scope, c.dedupe_key, c.event_id, c.previous_event_id, c.detected_at,"
            " c.resolution_event_id, c.resolved_at FROM sm_heads h JOIN sm_conflicts c ON c.id = h.conflict_id"
            f" WHERE {' AND '.join(where)} ORDER BY c.id"
        )
        return [_conflict(row) for row in tx.all(sql, params)]

    def open_conflicts(self, scopes: Sequence[str] | None = None) -> list[Conflict]:
        return cast("list[Conflict]", self.read(lambda tx: self._open_conflicts(tx, scopes)))

    def count_open_conflicts(self, scopes: Sequence[str]) -> int:
        return int(self.read(lambda tx: self._open_conflicts(tx, scopes, count_only=True)))

    def record_conflict(self, scope: str, dedupe_key: str, event_id: str, previous: str, *, now: datetime) -> bool:
        def run(tx: Tx) -> bool:
            tx.lock(f"{scope}|{dedupe_key}")
            added = self._insert_conflict(tx, scope, dedupe_key, event_id, previous, now=now)
            if added:
                self._mark_head_conflict(tx, scope, dedupe_key, event_id)
            return added

        return self.write(run)

    def undetected_conflicts(self) -> list[tuple[str, str, str, str]]:
        """(scope, dedupe_key, head event, the newest other live event with different content) for each key
        whose head disagrees with an earlier live event and has no conflict record yet."""
        rows = self.read(
            lambda tx: tx.all(
                "SELECT h.scope, h.dedupe_key, e.event_id, o.event_id, o.seq FROM sm_heads h"
                " JOIN sm_events e ON e.seq = h.seq"
                " JOIN sm_events o ON o.scope = h.scope AND o.dedupe_key = h.dedupe_key AND o.seq < h.seq"
                " AND o.content_md <> e.content_md"
                " WHERE NOT EXISTS (SELECT 1 FROM sm_deprecated d WHERE d.event_id = o.event_id)"
                " AND NOT EXISTS (SELECT 1 FROM sm_conflicts c WHERE c.event_id = e.event_id)"
                " ORDER BY h.scope, h.dedupe_key, o.seq DESC"
            )
        )
        found: dict[tuple[str, str], tuple[str, str, str, str]] = {}
        for scope, key, event_id, other, _seq in rows:
            found.setdefault((scope, key), (scope, key, event_id, other))
        return list(found.values())

    def set_conflict_resolution(self, conflict_id: int, event_id: str) -> None:
        self.write(
            lambda tx: tx.run("UPDATE sm_conflicts SET resolution_event_id = ? WHERE id = ?", (event_id, conflict_id))
        )

    def resolve_settled_conflicts(self, now: datetime) -> int:
        """Marks conflicts that are no longer open (no head carries them any more)."""
        return self.write(
            lambda tx: tx.run(
                "UPDATE sm_conflicts SET resolved_at = ? WHERE resolved_at IS NULL"
                " AND NOT EXISTS (SELECT 1 FROM sm_heads h WHERE h.conflict_id = sm_conflicts.id)",
                (iso(now),),
            )
        )

    # -- pins, ttl, deletion, redaction, audit -----------------------------------------------------

    def replace_pins(self, scope: str, pins: Sequence[Pin]) -> None:
        def run(tx: Tx) -> None:
            tx.lock(f"pins|{scope}")
            tx.run("DELETE FROM sm_pins WHERE scope = ?", (scope,))
            for pin in pins:
                tx.run(
                    "INSERT INTO sm_pins (scope, position, dedupe_key, event_id, line, consolidated_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (scope, pin.position, pin.dedupe_key, pin.event_id, pin.line, iso(pin.consolidated_at)),
                )

        self.write(run)

    def pins(self, scopes: Sequence[str] | None = None) -> list[Pin]:
        sql = "SELECT scope, position, dedupe_key, event_id, line, consolidated_at FROM sm_pins"
        params: list[Any] = []
        if scopes is not None:
            if not scopes:
                return []
            sql += f" WHERE scope IN ({_placeholders(scopes)})"
            params += scopes
        rows = self.read(lambda tx: tx.all(sql + " ORDER BY scope, position", params))
        return [Pin(r[0], int(r[1]), r[2], r[3], r[4], parse_iso(r[5])) for r in rows]

    def expired(self, now: datetime, limit: int) -> list[Event]:
        rows = self.read(
            lambda tx: tx.all(
                f"SELECT {EVENT_COLUMNS} FROM sm_events e WHERE e.expires_at IS NOT NULL AND e.expires_at <= ?"
                " ORDER BY e.seq LIMIT ?",
                (iso(now), limit),
            )
        )
        return [_event(row) for row in rows]

    def mark_candidates(self, event_ids: Sequence[str], reason: str, now: datetime) -> int:
        def run(tx: Tx) -> int:
            added = 0
            for event_id in event_ids:
                added += tx.run(
                    "INSERT INTO sm_candidates (event_id, reason, marked_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                    (event_id, reason, iso(now)),
                )
            return added

        return self.write(run)

    def candidates(self) -> list[tuple[str, str, datetime]]:
        rows = self.read(
            lambda tx: tx.all("SELECT event_id, reason, marked_at FROM sm_candidates ORDER BY marked_at, event_id")
        )
        return [(r[0], r[1], parse_iso(r[2])) for r in rows]

    def _delete_in(self, tx: Tx, event_id: str, actor: str, now: datetime, *, note: str = "") -> bool:
        """Deletes one event (audited; its key's head recomputed). ``False`` when it is not there."""
        row = tx.one(f"SELECT {EVENT_COLUMNS} FROM sm_events e WHERE e.event_id = ?", (event_id,))
        if row is None:
            return False
        event = _event(row)
        tx.lock(f"{event.scope}|{event.dedupe_key}")
        tx.run("DELETE FROM sm_events WHERE event_id = ?", (event_id,))
        tx.run("DELETE FROM sm_deprecated WHERE event_id = ?", (event_id,))
        tx.run("DELETE FROM sm_candidates WHERE event_id = ?", (event_id,))
        tx.run("DELETE FROM sm_pins WHERE event_id = ?", (event_id,))
        self._recompute_head(tx, event.scope, event.dedupe_key)
        self._settle_conflicts_against(tx, event_id)
        self._audit(
            tx,
            actor,
            "delete",
            event_id,
            f"scope={event.scope} dedupe_key={event.dedupe_key} agent={event.agent_id} "
            f"created_at={iso(event.created_at)}{note}",
            now=now,
        )
        return True

    def delete_events(self, event_ids: Sequence[str], actor: str, now: datetime) -> int:
        """Deletes events at once, each audited, heads recomputed. The operator's way is a confirmed cleanup
        plan (:meth:`confirm_cleanup_plan`); this is for tools and tests that already hold the decision."""
        return self.write(lambda tx: sum(self._delete_in(tx, event_id, actor, now) for event_id in event_ids))

    # -- cleanup plans: propose, then confirm -------------------------------------------------------

    def create_cleanup_plan(
        self,
        event_ids: Sequence[str],
        *,
        criteria: Mapping[str, Any],
        truncated: bool,
        actor: str,
        now: datetime,
        expires_at: datetime,
    ) -> CleanupPlan:
        """Stores a plan to delete ``event_ids`` (those that still exist, oldest first), in one transaction,
        audited. Plans
        that expired unconfirmed more than :data:`PLAN_KEEP` ago are dropped on the way."""

        def run(tx: Tx) -> CleanupPlan:
            stale = iso(now - PLAN_KEEP)
            tx.run(
                "DELETE FROM sm_cleanup_plan_events WHERE plan_id IN (SELECT p.plan_id FROM sm_cleanup_plans p"
                " WHERE p.confirmed_at IS NULL AND p.expires_at < ?)",
                (stale,),
            )
            tx.run("DELETE FROM sm_cleanup_plans WHERE confirmed_at IS NULL AND expires_at < ?", (stale,))
            found: dict[str, tuple[int, str]] = {}
            wanted = list(dict.fromkeys(event_ids))
            for first in range(0, len(wanted), 500):
                chunk = wanted[first : first + 500]
                sql = f"SELECT event_id, seq, scope FROM sm_events WHERE event_id IN ({_placeholders(chunk)})"
                found.update((row[0], (int(row[1]), row[2])) for row in tx.all(sql, chunk))
            kept = tuple(sorted(found, key=lambda event_id: found[event_id][0]))  # oldest first
            scopes = {event_id: found[event_id][1] for event_id in kept}
            plan_id = new_plan_id()
            criteria_json = json.dumps(dict(criteria), sort_keys=True, separators=(",", ":"))
            tx.run(
                "INSERT INTO sm_cleanup_plans (plan_id, created_at, expires_at, actor, criteria, total, truncated)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (plan_id, iso(now), iso(expires_at), actor, criteria_json, len(kept), int(truncated)),
            )
            for position, event_id in enumerate(kept):
                tx.run(
                    "INSERT INTO sm_cleanup_plan_events (plan_id, position, event_id, scope) VALUES (?, ?, ?, ?)",
                    (plan_id, position, event_id, scopes[event_id]),
                )
            plan = CleanupPlan(
                plan_id=plan_id,
                created_at=parse_iso(iso(now)),
                expires_at=parse_iso(iso(expires_at)),
                proposed_by=actor,
                criteria=json.loads(criteria_json),
                event_ids=kept,
                counts=_counts(scopes[event_id] for event_id in kept),
                truncated=truncated,
            )
            self._audit(tx, actor, "cleanup_plan", None, f"{plan_id}: {_plan_summary(plan)}", now=now)
            return plan

        return self.write(run)

    def _plan_in(self, tx: Tx, plan_id: str) -> CleanupPlan | None:
        row = tx.one(
            "SELECT plan_id, created_at, expires_at, actor, criteria, truncated, confirmed_at, confirmed_by, deleted"
            " FROM sm_cleanup_plans WHERE plan_id = ?",
            (plan_id,),
        )
        if row is None:
            return None
        members = tx.all(
            "SELECT event_id, scope FROM sm_cleanup_plan_events WHERE plan_id = ? ORDER BY position", (plan_id,)
        )
        return CleanupPlan(
            plan_id=row[0],
            created_at=parse_iso(row[1]),
            expires_at=parse_iso(row[2]),
            proposed_by=row[3],
            criteria=json.loads(row[4]),
            event_ids=tuple(member[0] for member in members),
            counts=_counts(member[1] for member in members),
            truncated=bool(row[5]),
            confirmed_at=parse_iso(row[6]) if row[6] else None,
            confirmed_by=row[7],
            deleted=int(row[8]) if row[8] is not None else None,
        )

    def cleanup_plan(self, plan_id: str) -> CleanupPlan | None:
        return self.read(lambda tx: self._plan_in(tx, plan_id))

    def confirm_cleanup_plan(self, plan_id: str, actor: str, now: datetime) -> CleanupDone:
        """Deletes exactly the plan's events (each audited, naming the plan), in one transaction, once. Raises
        :class:`CleanupPlanError` (nothing deleted) for an unknown, expired or already confirmed plan."""

        def run(tx: Tx) -> CleanupDone:
            tx.lock(f"plan|{plan_id}")
            plan = self._plan_in(tx, plan_id)
            if plan is None:
                raise CleanupPlanError("unknown", f"no cleanup plan has the id {plan_id}; propose one first")
            if plan.confirmed_at is not None:
                raise CleanupPlanError(
                    "confirmed",
                    f"cleanup plan {plan_id} was confirmed at {iso(plan.confirmed_at)} by {plan.confirmed_by} and "
                    f"deleted {plan.deleted} event(s); a plan runs once",
                )
            if now >= plan.expires_at:
                raise CleanupPlanError(
                    "expired",
                    f"cleanup plan {plan_id} expired at {iso(plan.expires_at)}; nothing was deleted. Propose a "
                    "new plan and review it",
                )
            deleted: list[str] = []
            gone: list[str] = []
            for event_id in plan.event_ids:
                if self._delete_in(tx, event_id, actor, now, note=f" plan={plan_id}"):
                    deleted.append(event_id)
                else:
                    gone.append(event_id)
            tx.run(
                "UPDATE sm_cleanup_plans SET confirmed_at = ?, confirmed_by = ?, deleted = ? WHERE plan_id = ?",
                (iso(now), actor, len(deleted), plan_id),
            )
            self._audit(
                tx,
                actor,
                "cleanup_confirm",
                None,
                f"{plan_id} (proposed by {plan.proposed_by}): deleted {len(deleted)} event(s)"
                + (f", {len(gone)} already gone" if gone else ""),
                now=now,
            )
            done = attrs.evolve(plan, confirmed_at=parse_iso(iso(now)), confirmed_by=actor, deleted=len(deleted))
            return CleanupDone(plan=done, deleted=tuple(deleted), already_gone=tuple(gone))

        return self.write(run)

    def events_after(self, seq: int, limit: int) -> list[Event]:
        rows = self.read(
            lambda tx: tx.all(
                f"SELECT {EVENT_COLUMNS} FROM sm_events e WHERE e.seq > ? ORDER BY e.seq LIMIT ?", (seq, limit)
            )
        )
        return [_event(row) for row in rows]

    def redact_event(
        self,
        event_id: str,
        content_md: str,
        source: Source,
        kinds: Sequence[str],
        *,
        actor: str,
        now: datetime,
        run_id: str | None = None,
    ) -> bool:
        """Masks sensitive data that slipped into a stored event (the one in-place change), with an audit
        record naming the kinds (never the data). ``run_id``, when given, replaces the event's run id (no key
        depends on it: the idempotency key of a redacted event is its own id)."""

        def run(tx: Tx) -> bool:
            changed = tx.run(
                "UPDATE sm_events SET content_md = ?, source = ?, run_id = COALESCE(?, run_id), redacted = 1,"
                " idem_key = ? WHERE event_id = ?",
                (content_md, _source_json(source), run_id, f"redacted:{event_id}", event_id),
            )
            if not changed:
                return False
            tx.run("DELETE FROM sm_pins WHERE event_id = ?", (event_id,))
            self._audit(tx, actor, "redact", event_id, "masked: " + ", ".join(kinds), now=now)
            return True

        return self.write(run)

    def _replace_in_audit(self, tx: Tx, old: str, new: str) -> None:
        """Earlier audit records and cleanup plans that quoted an identifier as ``old`` (a deletion's
        ``scope=… dedupe_key=…``, a plan's counts per scope) quote ``new`` instead: the value leaves the store
        whole."""
        tx.run(
            "UPDATE sm_audit SET detail = REPLACE(detail, ?, ?) WHERE REPLACE(detail, ?, ?) <> detail",
            (old, new, old, new),
        )
        tx.run(
            "UPDATE sm_cleanup_plans SET criteria = REPLACE(criteria, ?, ?) WHERE REPLACE(criteria, ?, ?) <> criteria",
            (old, new, old, new),
        )

    def redact_key(
        self, scope: str, dedupe_key: str, new_key: str, kinds: Sequence[str], *, actor: str, now: datetime
    ) -> list[str]:
        """Replaces a dedupe_key that holds sensitive data with ``new_key`` (a token that says nothing) in every
        event of ``(scope, dedupe_key)`` at once, with the key's head, conflicts and pins, so the key's history
        stays one key. Each event is flagged ``redacted`` and audited (the kinds and the new key, never the old
        value). Returns the ids of the events changed (none when no event holds the key any more)."""

        def run(tx: Tx) -> list[str]:
            tx.lock(f"{scope}|{dedupe_key}")
            tx.lock(f"{scope}|{new_key}")
            rows = tx.all(
                "SELECT event_id FROM sm_events WHERE scope = ? AND dedupe_key = ? ORDER BY seq", (scope, dedupe_key)
            )
            ids = [row[0] for row in rows]
            if not ids:
                return []
            tx.run(
                "UPDATE sm_events SET dedupe_key = ?, redacted = 1, idem_key = 'redacted:' || event_id"
                " WHERE scope = ? AND dedupe_key = ?",
                (new_key, scope, dedupe_key),
            )
            tx.run(
                "UPDATE sm_heads SET dedupe_key = ? WHERE scope = ? AND dedupe_key = ?", (new_key, scope, dedupe_key)
            )
            tx.run(
                "UPDATE sm_conflicts SET dedupe_key = ? WHERE scope = ? AND dedupe_key = ?",
                (new_key, scope, dedupe_key),
            )
            tx.run("DELETE FROM sm_pins WHERE scope = ? AND dedupe_key = ?", (scope, dedupe_key))
            old_text, new_text = f"scope={scope} dedupe_key={dedupe_key} ", f"scope={scope} dedupe_key={new_key} "
            self._replace_in_audit(tx, old_text, new_text)
            for event_id in ids:
                detail = f"dedupe_key replaced by {new_key}: " + ", ".join(kinds)
                self._audit(tx, actor, "redact", event_id, detail, now=now)
            return ids

        return self.write(run)

    def redact_scope(self, scope: str, new_scope: str, kinds: Sequence[str], *, actor: str, now: datetime) -> list[str]:
        """Replaces a scope that holds sensitive data (a project slug) with ``new_scope`` in every event of the
        scope at once, with its heads, conflicts, pins and cleanup plans; each event flagged ``redacted`` and
        audited like :meth:`redact_key`. Returns the ids of the events changed."""

        def run(tx: Tx) -> list[str]:
            tx.lock(f"pins|{scope}")
            tx.lock(f"pins|{new_scope}")
            rows = tx.all("SELECT event_id, dedupe_key FROM sm_events WHERE scope = ? ORDER BY seq", (scope,))
            if not rows:
                return []
            for key in sorted({row[1] for row in rows}):
                tx.lock(f"{scope}|{key}")
                tx.lock(f"{new_scope}|{key}")
            tx.run(
                "UPDATE sm_events SET scope = ?, redacted = 1, idem_key = 'redacted:' || event_id WHERE scope = ?",
                (new_scope, scope),
            )
            tx.run("UPDATE sm_heads SET scope = ? WHERE scope = ?", (new_scope, scope))
            tx.run("UPDATE sm_conflicts SET scope = ? WHERE scope = ?", (new_scope, scope))
            tx.run("UPDATE sm_cleanup_plan_events SET scope = ? WHERE scope = ?", (new_scope, scope))
            tx.run("DELETE FROM sm_pins WHERE scope = ?", (scope,))
            self._replace_in_audit(tx, scope, new_scope)
            for event_id, _key in rows:
                self._audit(
                    tx, actor, "redact", event_id, f"scope replaced by {new_scope}: " + ", ".join(kinds), now=now
                )
            return [row[0] for row in rows]

        return self.write(run)

    def _audit(self, tx: Tx, actor: str, action: str, event_id: str | None, detail: str, *, now: datetime) -> None:
        tx.run(
            "INSERT INTO sm_audit (at, actor, action, event_id, detail) VALUES (?, ?, ?, ?, ?)",
            (iso(now), actor, action, event_id, detail),
        )

    def add_audit(self, actor: str, action: str, event_id: str | None, detail: str, *, now: datetime) -> None:
        self.write(lambda tx: self._audit(tx, actor, action, event_id, detail, now=now))

    def audit(self, limit: int = 100) -> list[AuditRecord]:
        rows = self.read(
            lambda tx: tx.all(
                "SELECT id, at, actor, action, event_id, detail FROM sm_audit ORDER BY id DESC LIMIT ?", (limit,)
            )
        )
        return [AuditRecord(int(r[0]), parse_iso(r[1]), r[2], r[3], r[4], r[5]) for r in rows]

    def get_state(self, name: str) -> str | None:
        row = self.read(lambda tx: tx.one("SELECT value FROM sm_state WHERE name = ?", (name,)))
        return str(row[0]) if row else None

    def set_state(self, name: str, value: str) -> None:
        self.write(
            lambda tx: tx.run(
                "INSERT INTO sm_state (name, value) VALUES (?, ?)"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (name, value),
            )
        )

    # -- tokens ------------------------------------------------------------------------------------

    def add_token(self, token_hash: str, agent_id: str, role: Role, now: datetime) -> None:
        self.write(
            lambda tx: tx.run(
                "INSERT INTO sm_tokens (token_hash, agent_id, role, created_at) VALUES (?, ?, ?, ?)",
                (token_hash, agent_id, role, iso(now)),
            )
        )

    def token_owner(self, token_hash: str) -> tuple[str, Role] | None:
        row = self.read(
            lambda tx: tx.one(
                "SELECT agent_id, role FROM sm_tokens WHERE token_hash = ? AND revoked_at IS NULL", (token_hash,)
            )
        )
        return (row[0], cast("Role", row[1])) if row else None

    def tokens(self) -> list[TokenInfo]:
        rows = self.read(
            lambda tx: tx.all(
                "SELECT agent_id, role, created_at, revoked_at, token_hash FROM sm_tokens ORDER BY created_at"
            )
        )
        return [
            TokenInfo(r[0], cast("Role", r[1]), parse_iso(r[2]), parse_iso(r[3]) if r[3] else None, r[4][:12])
            for r in rows
        ]

    def token_rows(self) -> list[tuple[str, str, Role, datetime, datetime | None]]:
        """(hash, agent, role, created, revoked) of every token, for an export (hashes, never tokens)."""
        rows = self.read(
            lambda tx: tx.all(
                "SELECT token_hash, agent_id, role, created_at, revoked_at FROM sm_tokens ORDER BY created_at"
            )
        )
        return [(r[0], r[1], cast("Role", r[2]), parse_iso(r[3]), parse_iso(r[4]) if r[4] else None) for r in rows]

    def import_token(
        self, token_hash: str, agent_id: str, role: Role, created: datetime, revoked: datetime | None
    ) -> bool:
        return (
            self.write(
                lambda tx: tx.run(
                    "INSERT INTO sm_tokens (token_hash, agent_id, role, created_at, revoked_at) VALUES (?, ?, ?, ?, ?)"
                    " ON CONFLICT DO NOTHING",
                    (token_hash, agent_id, role, iso(created), iso(revoked) if revoked else None),
                )
            )
            > 0
        )

    def revoke_tokens(self, agent_id: str, now: datetime) -> int:
        return self.write(
            lambda tx: tx.run(
                "UPDATE sm_tokens SET revoked_at = ? WHERE agent_id = ? AND revoked_at IS NULL", (iso(now), agent_id)
            )
        )


def _conflict(row: Sequence[Any]) -> Conflict:
    return Conflict(
        id=int(row[0]),
        scope=row[1],
        dedupe_key=row[2],
        event_id=row[3],
        previous_event_id=row[4],
        detected_at=parse_iso(row[5]),
        resolution_event_id=row[6],
        resolved_at=parse_iso(row[7]) if row[7] else None,
    )
