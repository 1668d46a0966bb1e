"""Whether a passage occurs in some public memory: what of a private memory is really private.

A diary repeats itself ("Today Master and I talked about …"): a private memory that shares such a phrase with
public ones must not make the private-content redactor mask that phrase in every public line. A passage that
also occurs in a public memory reveals nothing private, so the redactor leaves it (see
:mod:`ego_memory.text.privacy`). The check runs on the trigram full-text index of the store's SQLite file, through
its own read-only database (the redactor is called from any thread, while logging), and answers from a cache
that is dropped whenever the store's generation moves (any memory added, changed or forgotten, in any process).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable

from ego_core import Database

CACHE_LIMIT = 20_000
"""Answers kept per generation (a passage is at most a few hundred characters)."""
MIN_PHRASE = 3
"""The trigram index cannot look up anything shorter."""
BUSY_TIMEOUT_MS = 5000
"""How long a check waits for a locked file before it answers "no" (it runs while logging)."""


class PublicPassages:
    """``passages(text, before)``: whether ``text`` (a private memory's own wording of a passage, in
    :func:`~ego_memory.text.privacy.public_form`: NFKC, one space per whitespace run, lower case) occurs in a public
    memory stored before ``before`` (UTC seconds). Unsure (the file cannot be read, the phrase is too short)
    counts as "no": the redactor masks.

    ``read`` opens the store's file read-only (``ctx.read_database``; ``None`` while there is no file), once it
    is first needed."""

    def __init__(self, read: Callable[[], Database | None]) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._database: Database | None = None
        self._generation = -1
        self._cache: dict[tuple[str, float], bool] = {}

    def _connection(self) -> sqlite3.Connection | None:
        if self._database is None:
            self._database = self._read()
            if self._database is not None:
                self._database.db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        return None if self._database is None else self._database.db

    def __call__(self, passage: str, before: float) -> bool:
        if len(passage.strip()) < MIN_PHRASE:
            return False
        with self._lock:
            try:
                db = self._connection()
                if db is None:
                    return False
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
            if self._database is not None:
                self._database.close()
                self._database = None
