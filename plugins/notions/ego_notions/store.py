"""The notions plugin's state: one SQLite database (WAL) in its data directory.

Every change is one ``BEGIN IMMEDIATE`` transaction, so a crash leaves the previous state. A lock serialises the
single connection within a process. Only ids of memories are kept, never their text.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from ego_core import write_transaction
from ego_notions.model import Notion

DB_NAME: Final = "notions.sqlite3"
SCHEMA_VERSION: Final = 3
"""2 added ``contradicted`` (when a contradiction last weakened the notion); 3 the confidences the last wake_up saw
(``confidence_seen``)."""
BUSY_TIMEOUT_MS: Final = 30_000
SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notions (
    id TEXT PRIMARY KEY, label TEXT NOT NULL, tone TEXT NOT NULL, valence REAL NOT NULL,
    confidence REAL NOT NULL, anchored REAL NOT NULL, created REAL NOT NULL, reinforced REAL NOT NULL,
    sources TEXT NOT NULL, tags TEXT NOT NULL, related TEXT NOT NULL, reinforcement_count INTEGER NOT NULL,
    person TEXT, meta TEXT NOT NULL, contradicted REAL
);
CREATE TABLE IF NOT EXISTS notion_sources (
    memory_id TEXT NOT NULL, notion_id TEXT NOT NULL, PRIMARY KEY (memory_id, notion_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS notion_tags (
    tag TEXT NOT NULL, notion_id TEXT NOT NULL, PRIMARY KEY (tag, notion_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS notion_sources_by_notion ON notion_sources (notion_id);
CREATE INDEX IF NOT EXISTS notion_tags_by_notion ON notion_tags (notion_id);
CREATE TABLE IF NOT EXISTS confidence_seen (notion_id TEXT PRIMARY KEY, confidence REAL NOT NULL) WITHOUT ROWID;
"""
COLUMNS: Final = (
    "id, label, tone, valence, confidence, anchored, created, reinforced, sources, tags, related, "
    "reinforcement_count, person, meta, contradicted"
)


class StateError(RuntimeError):
    """The notions database cannot be used (written by a newer version, or not a database)."""


def new_id() -> str:
    return "notion_" + secrets.token_hex(6)


def _epoch(moment: datetime) -> float:
    return moment.timestamp()


def _moment(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


def _row(notion: Notion) -> tuple[Any, ...]:
    return (
        notion.id,
        notion.label,
        notion.tone,
        notion.valence,
        notion.confidence,
        _epoch(notion.anchored),
        _epoch(notion.created),
        _epoch(notion.reinforced),
        json.dumps(list(notion.sources)),
        json.dumps(list(notion.tags), ensure_ascii=False),
        json.dumps(list(notion.related)),
        notion.reinforcement_count,
        notion.person,
        json.dumps(dict(notion.meta), ensure_ascii=False, sort_keys=True),
        None if notion.contradicted is None else _epoch(notion.contradicted),
    )


def _notion(row: Sequence[Any]) -> Notion:
    return Notion(
        id=row[0],
        label=row[1],
        tone=row[2],
        valence=row[3],
        confidence=row[4],
        anchored=_moment(row[5]),
        created=_moment(row[6]),
        reinforced=_moment(row[7]),
        sources=tuple(json.loads(row[8])),
        tags=tuple(json.loads(row[9])),
        related=tuple(json.loads(row[10])),
        reinforcement_count=row[11],
        person=row[12],
        meta=json.loads(row[13]),
        contradicted=None if row[14] is None else _moment(row[14]),
    )


def _migrate(db: sqlite3.Connection) -> None:
    """Bring a database of an earlier schema up to this one (within the opening transaction)."""
    columns = {r[1] for r in db.execute("PRAGMA table_info(notions)")}
    if "contradicted" not in columns:
        db.execute("ALTER TABLE notions ADD COLUMN contradicted REAL")


class NotionDB:
    """Notions by id, with indexes from memory id and from tag to the notions that hold them."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / DB_NAME
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            try:
                db = sqlite3.connect(
                    self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
                )
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                with write_transaction(db):
                    for statement in SCHEMA.split(";"):
                        if statement.strip():
                            db.execute(statement)
                    row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                    if row is not None and int(row[0]) > SCHEMA_VERSION:
                        raise StateError(f"{self.path} was written by a newer version of ego-notions")
                    _migrate(db)
                    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            except sqlite3.DatabaseError as exc:
                raise StateError(f"{self.path} cannot be used: {exc}") from exc
            self._db = db
        return self._db

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def all(self) -> list[Notion]:
        with self._lock:
            rows = self._connection().execute(f"SELECT {COLUMNS} FROM notions ORDER BY created DESC, id").fetchall()
        return [_notion(r) for r in rows]

    def count(self) -> int:
        with self._lock:
            return int(self._connection().execute("SELECT count(*) FROM notions").fetchone()[0])

    def get(self, notion_id: str) -> Notion | None:
        with self._lock:
            row = self._connection().execute(f"SELECT {COLUMNS} FROM notions WHERE id = ?", (notion_id,)).fetchone()
        return _notion(row) if row else None

    def many(self, ids: Iterable[str]) -> list[Notion]:
        wanted = list(dict.fromkeys(ids))
        found: list[Notion] = []
        with self._lock:
            db = self._connection()
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                found.extend(
                    _notion(r) for r in db.execute(f"SELECT {COLUMNS} FROM notions WHERE id IN ({marks})", chunk)
                )
        return sorted(found, key=lambda n: wanted.index(n.id)) if len(found) < 200 else found

    def holding(self, memory_ids: Iterable[str]) -> list[Notion]:
        """The notions that have any of ``memory_ids`` among their sources."""
        ids = list(dict.fromkeys(memory_ids))
        with self._lock:
            db = self._connection()
            notion_ids: list[str] = []
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                notion_ids.extend(
                    r[0]
                    for r in db.execute(f"SELECT notion_id FROM notion_sources WHERE memory_id IN ({marks})", chunk)
                )
        return self.many(notion_ids)

    def tagged(self, tags: Iterable[str]) -> list[Notion]:
        """The notions that share a tag with ``tags`` (compared case-insensitively)."""
        folded = list(dict.fromkeys(t.casefold() for t in tags))
        if not folded:
            return []
        marks = ",".join("?" * len(folded))
        with self._lock:
            rows = (
                self._connection()
                .execute(f"SELECT DISTINCT notion_id FROM notion_tags WHERE tag IN ({marks})", folded)
                .fetchall()
            )
        return self.many(r[0] for r in rows)

    def apply(self, save: Sequence[Notion] = (), delete: Sequence[str] = ()) -> None:
        """Write ``save`` (insert or replace) and delete ``delete`` in one transaction."""
        if not save and not delete:
            return
        with self._lock, write_transaction(self._connection()) as db:
            for notion_id in [*delete, *(n.id for n in save)]:
                db.execute("DELETE FROM notions WHERE id = ?", (notion_id,))
                db.execute("DELETE FROM notion_sources WHERE notion_id = ?", (notion_id,))
                db.execute("DELETE FROM notion_tags WHERE notion_id = ?", (notion_id,))
            for notion in save:
                db.execute(f"INSERT INTO notions ({COLUMNS}) VALUES ({','.join('?' * 15)})", _row(notion))
                db.executemany(
                    "INSERT OR IGNORE INTO notion_sources (memory_id, notion_id) VALUES (?, ?)",
                    [(m, notion.id) for m in notion.sources],
                )
                db.executemany(
                    "INSERT OR IGNORE INTO notion_tags (tag, notion_id) VALUES (?, ?)",
                    [(t.casefold(), notion.id) for t in notion.tags],
                )

    def look_back(self, confidences: Mapping[str, float], drop: float, now: datetime) -> list[str] | None:
        """The notions whose confidence fell by at least ``drop`` since the previous look, then ``confidences`` kept
        in place of what that look saw, in one transaction (a crash keeps one or the other, and two processes never
        both report a drop). None at the first look; notions gone since are not reported."""
        with self._lock, write_transaction(self._connection()) as db:
            looked = db.execute("SELECT value FROM meta WHERE key = 'confidence_seen_at'").fetchone()
            before = {str(i): float(c) for i, c in db.execute("SELECT notion_id, confidence FROM confidence_seen")}
            db.execute("DELETE FROM confidence_seen")
            db.executemany("INSERT INTO confidence_seen (notion_id, confidence) VALUES (?, ?)", confidences.items())
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('confidence_seen_at', ?)", (now.isoformat(),))
        if looked is None:
            return None
        return [i for i, c in confidences.items() if i in before and before[i] - c >= drop - 1e-9]
