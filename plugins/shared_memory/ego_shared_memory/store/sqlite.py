"""SQLite backend: one file in WAL mode; writers take the database's write lock (``BEGIN IMMEDIATE``), so
threads and processes sharing the file are serialised and never lose each other's events."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the directory of {path}: {exc.strerror}") from None
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
        return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
