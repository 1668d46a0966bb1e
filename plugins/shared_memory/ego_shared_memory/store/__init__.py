"""Storage backends behind one interface (:class:`SharedStore`), chosen by URL.

- ``sqlite:///absolute/path.db``, ``sqlite:relative/path.db`` or ``sqlite:~/path.db``: SQLite (WAL);
- ``postgresql://user@host:5432/db`` (any libpq URL, ``postgres://`` too): PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path

from ego_shared_memory.store.base import (
    AppendResult,
    AuditRecord,
    CleanupDone,
    CleanupPlan,
    CleanupPlanError,
    Conflict,
    EventFilter,
    Pin,
    SharedStore,
    StoreError,
    TokenInfo,
)
from ego_shared_memory.store.sql import SqlStore

URL_FORMS = "sqlite:///absolute/path.db, sqlite:relative/path.db or postgresql://user@host:5432/dbname"

__all__ = [
    "URL_FORMS",
    "AppendResult",
    "AuditRecord",
    "CleanupDone",
    "CleanupPlan",
    "CleanupPlanError",
    "Conflict",
    "EventFilter",
    "Pin",
    "SharedStore",
    "SqlStore",
    "StoreError",
    "TokenInfo",
    "open_store",
    "sqlite_path",
]


def sqlite_path(url: str) -> Path | None:
    """The file of a ``sqlite:`` URL, or ``None`` for another scheme."""
    if not url.startswith("sqlite:"):
        return None
    rest = url[len("sqlite:") :]
    if rest.startswith("///"):
        rest = rest[2:]  # sqlite:///abs → /abs (and sqlite:////abs → //abs → /abs below)
        while rest.startswith("//"):
            rest = rest[1:]
    elif rest.startswith("//"):
        rest = rest[2:]
    if not rest:
        raise StoreError(f"a sqlite URL needs a file path, e.g. {URL_FORMS}")
    return Path(rest).expanduser()


def open_store(url: str) -> SqlStore:
    """Open (and create, if new) the store at ``url``. Raises :class:`StoreError` with the accepted forms."""
    path = sqlite_path(url)
    if path is not None:
        from ego_shared_memory.store.sqlite import SQLiteStore

        return SQLiteStore(path)
    if url.startswith(("postgresql://", "postgres://")):
        from ego_shared_memory.store.postgres import PostgresStore

        return PostgresStore(url)
    raise StoreError(f"unsupported store URL; expected {URL_FORMS}")


def _implements_the_interface(store: SqlStore) -> SharedStore:
    """mypy checks here that the SQL store (both backends) implements :class:`SharedStore`."""
    return store
