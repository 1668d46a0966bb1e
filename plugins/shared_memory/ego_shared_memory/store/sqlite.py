"""SQLite backend: one file in WAL mode; writers take the database's write lock (``BEGIN IMMEDIATE``), so
threads and processes sharing the file are serialised and never lose each other's events.

The file is opened with ``ego_core.open_database``, like every plugin's database: created 0600 (its -wal and
-shm files take the same mode), its schema version in ``user_version``. It is not ``ctx.database``: the file
is wherever the store URL names (the gateway and ``ego shared`` open it without a plugin context), and each
thread has its own connection (``Database.connect``) so that the gateway's readers do not wait for each other.
Deleted and overwritten content is zeroed (``secure_delete``), and after the janitor masks an event the WAL is
checkpointed and truncated, so the masked value does not linger in the -wal file until SQLite's next automatic
checkpoint.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from ego_core import DatabaseVersionError, open_database
from ego_shared_memory.events import Source
from ego_shared_memory.store.base import StoreError
from ego_shared_memory.store.sql import SCHEMA, SCHEMA_VERSION, SqlStore, Tx


class SQLiteStore(SqlStore):
    backend = "sqlite"
    placeholder = "?"

    def __init__(self, path: Path) -> None:
        super().__init__(f"sqlite://{path}" if path.is_absolute() else f"sqlite:{path}")
        self.path = path
        try:
            self._database = open_database(path, (self._adopt,), secure_delete=True)
        except OSError as exc:
            raise StoreError(f"cannot create {path}: {exc.strerror}") from None
        except DatabaseVersionError as exc:
            raise StoreError(f"{exc}; upgrade ego") from None
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the SQLite store {path}: {exc}") from None

    def _adopt(self, db: sqlite3.Connection) -> None:
        """Version 0 to 1 (``user_version``): the schema, for a new file or one of the releases that kept the
        version in ``sm_state`` only (brought up from the version it had there, every event kept). ``sm_state``
        keeps :data:`SCHEMA_VERSION` too: it is what the PostgreSQL backend and the previous release read."""
        tx = Tx(db.cursor(), self.placeholder, self._lock_key)
        for statement in self._schema_sql():
            tx.run(statement)
        row = tx.one("SELECT value FROM sm_state WHERE name = 'schema_version'")
        version = SCHEMA_VERSION if row is None else int(row[0])
        if version > SCHEMA_VERSION:
            raise DatabaseVersionError(
                f"the store has schema version {version}, newer than this ego ({SCHEMA_VERSION})"
            )
        self._migrate(tx, version)
        tx.run("INSERT OR REPLACE INTO sm_state (name, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))

    def _schema_sql(self) -> list[str]:
        return [
            s.replace("{seq}", "INTEGER PRIMARY KEY AUTOINCREMENT").replace("{compact}", "WITHOUT ROWID")
            for s in SCHEMA
        ]

    def _connect(self) -> Any:
        try:
            return self._database.connect()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the SQLite store {self.path}: {exc}") from None

    def close(self) -> None:
        super().close()
        self._database.close()

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
