"""The English channel's nearest neighbours: every English vector of the store in one matrix in this process,
searched exactly (a product per memory: about 1 ms per 10,000 memories).

Rows are read incrementally by ``english_vectors.seq`` (which only grows), so what another process wrote is
picked up by the next search. A memory that was forgotten stays in the matrix until the next full reload (when
a tenth of it is stale); recall drops ids the store no longer has. Memory cost: 1.5 KB per English memory.
"""

from __future__ import annotations

import sqlite3
import threading

from ego_core import Vectors
from ego_memory.embedding.english import ENGLISH_DIMENSION, from_blob
from ego_memory.index.vector_rows import VectorRows

STALE_SHARE = 0.1


class EnglishIndex:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._rows = VectorRows(ENGLISH_DIMENSION)
        self._known: set[str] = set()
        """Every memory read, with or without an English vector."""
        self._seen = 0
        """The highest ``seq`` read."""

    def nearest(self, db: sqlite3.Connection, vector: Vectors, n: int) -> list[tuple[str, float]]:
        """The ``n`` memories whose English vectors are closest to ``vector``, best first (the caller holds the
        store's read lock)."""
        with self._lock:
            self._refresh(db)
            return [(memory_id, score) for memory_id, score, _ in self._rows.nearest(vector, n)]

    def _refresh(self, db: sqlite3.Connection) -> None:
        live = int(db.execute("SELECT count(*) FROM english_vectors").fetchone()[0])
        if live < (1.0 - STALE_SHARE) * len(self._known):  # many were forgotten: start over
            self._reset()
        rows = db.execute(
            "SELECT seq, id, vector FROM english_vectors WHERE seq > ? ORDER BY seq", (self._seen,)
        ).fetchall()
        if not rows:
            return
        self._seen = int(rows[-1][0])
        for _seq, memory_id, blob in rows:
            self._known.add(memory_id)
            self._rows.remove(memory_id)  # rewritten: the old row no longer counts
            vector = from_blob(blob)
            if vector is not None:
                self._rows.put_many([(memory_id, vector)])
