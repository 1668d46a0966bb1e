"""PostgreSQL backend (psycopg 3), for several gateway replicas on one database.

Writes to one (scope, dedupe_key) are serialised by a transaction-scoped advisory lock on the key (hashed with
the current schema, so stores in different schemas of one database do not block each other); a deadlock or
serialisation failure is retried. Reads run statement by statement (a snapshot is two statements).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from ego_shared_memory.store.base import StoreError
from ego_shared_memory.store.sql import SCHEMA, SqlStore

CONNECT_TIMEOUT_SECONDS = 10


def _hide_password(url: str) -> str:
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://…"
    host = info.get("host", "localhost")
    port = info.get("port", "5432")
    user = f"{info['user']}@" if info.get("user") else ""
    return f"postgresql://{user}{host}:{port}/{info.get('dbname', '')}"


@contextmanager
def temporary_schema(url: str, prefix: str) -> Iterator[str]:
    """A fresh schema named ``<prefix>_<random>`` in the database at ``url``, dropped on exit; yields ``url`` with
    its search_path set to that schema (tests and benchmarks keep their stores apart in one database)."""
    schema = f"{prefix}_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    separator = "&" if "?" in url else "?"
    try:
        yield f"{url}{separator}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


class PostgresStore(SqlStore):
    backend = "postgresql"
    placeholder = "%s"

    def __init__(self, url: str) -> None:
        super().__init__(_hide_password(url))
        self.url = url
        self.create_schema(prepare=lambda tx: tx.lock("schema"))

    def _schema_sql(self) -> list[str]:
        return [s.replace("{seq}", "BIGSERIAL PRIMARY KEY").replace("{compact}", "") for s in SCHEMA]

    def _connect(self) -> Any:
        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS)
        except psycopg.Error as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StoreError(f"cannot connect to {self.display_url}: {reason}") from None

    @contextmanager
    def _transaction(self, conn: Any, *, write: bool) -> Iterator[Any]:
        if not write:
            # Reads run statement by statement (autocommit): no BEGIN/COMMIT round trips. Events are
            # immutable, so a read of several statements (a snapshot: keys, then rows) sees consistent events;
            # at most a count includes an entry appended in between.
            with conn.cursor() as cursor:
                yield cursor
            return
        with conn.transaction(), conn.cursor() as cursor:
            yield cursor

    def _lock_key(self, cursor: Any, key: str) -> None:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || '|' || %s, 0))", (key,))

    def _retryable(self, exc: BaseException) -> bool:
        return isinstance(exc, pg_errors.DeadlockDetected | pg_errors.SerializationFailure | pg_errors.UniqueViolation)

    def _broken(self, exc: BaseException) -> bool:
        return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)

    def _full(self, exc: BaseException) -> bool:
        return isinstance(exc, pg_errors.DiskFull)
