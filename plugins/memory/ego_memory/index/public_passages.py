"""Whether a passage occurs in some public memory: what of a private memory is really private.

A diary repeats itself ("Today Master and I talked about …"): a private memory that shares such a phrase with
public ones must not make the private-content redactor mask that phrase in every public line. A passage that
also occurs in a public memory reveals nothing private, so the redactor leaves it (see
:mod:`ego_memory.privacy`). The check runs on the trigram full-text index of the store's SQLite file, through
its own read-only connection (the redactor is called from any thread, while logging), and answers from a cache
that is dropped whenever the store's generation moves (any memory added, changed or forgotten, in any process).
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

CACHE_LIMIT = 20_000
"""Answers kept per generation (a passage is at most a few hundred characters)."""
MIN_PHRASE = 3
"""The trigram index cannot look up anything shorter."""


class PublicPassages:
    """``passages(text, before)``: whether ``text`` (a private memory's own wording of a passage, in
    :func:`~ego_memory.privacy.public_form`: NFKC, one space per whitespace run, lower case) occurs in a public
    memory stored before ``before`` (UTC seconds). Unsure (the file cannot be read, the phrase is too short)
    counts as "no": the redactor masks."""

    def __init__(self, database: Path) -> None:
        self.database = database
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._generation = -1
        self._cache: dict[tuple[str, float], bool] = {}

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            uri = f"{self.database.resolve().as_uri()}?mode=ro"
            self._db = sqlite3.connect(uri, uri=True, timeout=5.0, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA busy_timeout=5000")
        return self._db

    def __call__(self, passage: str, before: float) -> bool:
        if len(passage.strip()) < MIN_PHRASE:
            return False
        with self._lock:
            try:
                db = self._connection()
                generation = int(db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])
                if generation != self._generation or len(self._cache) > CACHE_LIMIT:
                    self._cache = {}
                    self._generation = generation
                key = (passage, before)
                if key not in self._cache:
                    phrase = '"' + passage.replace('"', '""') + '"'
                    row = db.execute(
                        "SELECT 1 FROM fts_trigram JOIN memories m ON m.rid = fts_trigram.rowid "
                        "WHERE fts_trigram MATCH ? AND m.is_private = 0 AND m.ts < ? LIMIT 1",
                        (phrase, before),
                    ).fetchone()
                    self._cache[key] = row is not None
                return self._cache[key]
            except (sqlite3.Error, TypeError, ValueError):
                return False

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
