"""Storage helpers for plugins that keep state in SQLite."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def write_transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction on a connection opened with ``isolation_level=None``: ``BEGIN IMMEDIATE`` (so two
    processes never both read before writing), committed when the block ends, rolled back if it raises."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
