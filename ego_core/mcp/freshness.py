"""Lines that rest: a section with ``Section.rest`` gives way while the very same words were shown by the same
tool within that time, so no sentence is said in most wake_ups or attunes of a month.

The core keeps, per tool, a digest of each resting section's text and when it was last shown, in
``<data dir>/core/shown.db`` (SQLite: one write transaction per answer, safe for several processes). Only digests
are kept, never the words; rows older than :data:`KEPT` are deleted as new ones are written.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Final

from ego_core.kernel.storage import Database, open_database
from ego_core.types import Section

KEPT: Final = timedelta(days=30)
MIGRATIONS: Final = (
    """
    CREATE TABLE IF NOT EXISTS shown (
        tool TEXT NOT NULL, key TEXT NOT NULL, digest TEXT NOT NULL, at REAL NOT NULL,
        PRIMARY KEY (tool, key, digest)
    );
    CREATE INDEX IF NOT EXISTS shown_by_time ON shown (at);
    """,
)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.strip().encode("utf-8"), digest_size=12).hexdigest()


class ShownLines:
    """When each resting section's words were last shown by each tool."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._database: Database | None = None
        self._lock = threading.Lock()

    def _db(self) -> Database:
        with self._lock:
            if self._database is None:
                self._database = open_database(self.path, MIGRATIONS)
            return self._database

    def resting(self, tool: str, section: Section, now: datetime) -> bool:
        """Whether ``section`` (one with a ``rest``) showed these very words in ``tool`` less than ``rest`` ago."""
        if section.rest is None or not section.text.strip():
            return False
        row = (
            self._db()
            .db.execute(
                "SELECT at FROM shown WHERE tool = ? AND key = ? AND digest = ?",
                (tool, section.key, _digest(section.text)),
            )
            .fetchone()
        )
        return row is not None and now.timestamp() - float(row[0]) < section.rest.total_seconds()

    def shown(self, tool: str, sections: Sequence[Section], now: datetime) -> None:
        """Record that ``tool`` showed ``sections`` (those with a ``rest``) at ``now``."""
        resting = [s for s in sections if s.rest is not None and s.text.strip()]
        if not resting:
            return
        with self._db().write() as db:
            db.executemany(
                "INSERT OR REPLACE INTO shown (tool, key, digest, at) VALUES (?, ?, ?, ?)",
                [(tool, s.key, _digest(s.text), now.timestamp()) for s in resting],
            )
            db.execute("DELETE FROM shown WHERE at < ?", ((now - KEPT).timestamp(),))

    def close(self) -> None:
        with self._lock:
            if self._database is not None:
                self._database.close()
                self._database = None
