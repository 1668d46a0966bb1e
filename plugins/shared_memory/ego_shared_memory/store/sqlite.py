"""SQLite backend: one file in WAL mode; writers take the database's write lock (``BEGIN IMMEDIATE``), so
threads and processes sharing the file are serialised and never lose each other's events.

The file is created 0600 (its -wal and -shm files take the same mode). Deleted and overwritten content is
zeroed (``secure_delete``), and after the janitor masks an event the WAL is checkpointed and truncated, so the
masked value does not linger in the -wal file until SQLite's next automatic checkpoint.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from ego_shared_memory.events import Source
from ego_shared_memory.store.base import StoreError
from ego_shared_memory.store.sql import SCHEMA, SqlStore

BUSY_TIMEOUT_MS = 30_000


class SQLiteStore(SqlStore):
    backend = "sqlite"
    placeholder = "?"

    def __init__(self, path: Path) -> None:
        super().__init__(f"sqlite://{path}" if path.is_absolute() else f"sqlite:{path}")
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            # a new store is readable by its owner only (like the logs); an existing one keeps its mode
            os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))
        except OSError as exc:
            raise StoreError(f"cannot create {path}: {exc.strerror}") from None
        self.create_schema()

    def _schema_sql(self) -> list[str]:
        return [
            s.replace("{seq}", "INTEGER PRIMARY KEY AUTOINCREMENT").replace("{compact}", "WITHOUT ROWID")
            for s in SCHEMA
        ]

    def _connect(self) -> Any:
        try:
            conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA secure_delete = ON")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the SQLite store {self.path}: {exc}") from None
        return conn

    @contextmanager
    def _transaction(self, conn: Any, *, write: bool) -> Iterator[Any]:
        cursor = conn.cursor()
        cursor.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            yield cursor
        except BaseException:
            conn.rollback()
            raise
        else:
            conn.commit()
        finally:
            cursor.close()

    def _lock_key(self, cursor: Any, key: str) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` already holds the only write lock."""

    def _retryable(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))

    def _full(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.Error) and getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL

    def checkpoint(self) -> None:
        """Copies the WAL into the database file and truncates it (waiting for readers, within the busy
        timeout); a reader that stays leaves the WAL for the next checkpoint."""
        try:
            self._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot checkpoint the SQLite store {self.path}: {exc}") from None

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
        changed = super().redact_event(event_id, content_md, source, kinds, actor=actor, now=now, run_id=run_id)
        if changed:
            self.checkpoint()
        return changed

    def redact_key(
        self, scope: str, dedupe_key: str, new_key: str, kinds: Sequence[str], *, actor: str, now: datetime
    ) -> list[str]:
        changed = super().redact_key(scope, dedupe_key, new_key, kinds, actor=actor, now=now)
        if changed:
            self.checkpoint()
        return changed

    def redact_scope(self, scope: str, new_scope: str, kinds: Sequence[str], *, actor: str, now: datetime) -> list[str]:
        changed = super().redact_scope(scope, new_scope, kinds, actor=actor, now=now)
        if changed:
            self.checkpoint()
        return changed
