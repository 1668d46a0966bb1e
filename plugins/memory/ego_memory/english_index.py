"""The English channel's nearest neighbours: every English vector of the store in one matrix in this process,
searched exactly (a product per memory: about 1 ms per 10,000 memories).

Rows are read incrementally by ``english_vectors.seq`` (which only grows), so what another process wrote is
picked up by the next search. A memory that was forgotten stays in the matrix until the next full reload (when
a tenth of it is stale); recall drops ids the store no longer has. Memory cost: 1.5 KB per English memory.
"""

from __future__ import annotations

import sqlite3
import threading

import numpy as np

from ego_core import Vectors
from ego_memory.embedding.english import ENGLISH_DIMENSION, from_blob

STALE_SHARE = 0.1


class EnglishIndex:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._ids: list[str] = []
        """Per matrix row, its memory ("" for a row that was rewritten)."""
        self._row_of: dict[str, int] = {}
        self._known: set[str] = set()
        """Every memory read, with or without an English vector."""
        self._matrix = np.zeros((0, ENGLISH_DIMENSION), dtype=np.float32)
        self._size = 0
        self._seen = 0
        """The highest ``seq`` read."""

    def nearest(self, db: sqlite3.Connection, vector: Vectors, n: int) -> list[tuple[str, float]]:
        """The ``n`` memories whose English vectors are closest to ``vector``, best first (the caller holds the
        store's read lock)."""
        with self._lock:
            self._refresh(db)
            if self._size == 0 or n <= 0:
                return []
            scores = self._matrix[: self._size] @ np.asarray(vector, dtype=np.float32)
            k = min(n, self._size)
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top], kind="stable")]
            return [(self._ids[i], float(scores[i])) for i in top if self._ids[i]]

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
        needed = self._size + len(rows)
        if needed > len(self._matrix):
            grown = np.zeros((max(needed, 2 * len(self._matrix), 1024), ENGLISH_DIMENSION), dtype=np.float32)
            grown[: self._size] = self._matrix[: self._size]
            self._matrix = grown
        for _seq, memory_id, blob in rows:
            self._known.add(memory_id)
            previous = self._row_of.pop(memory_id, None)
            if previous is not None:  # rewritten: the old row no longer counts
                self._ids[previous] = ""
                self._matrix[previous] = 0.0
            vector = from_blob(blob)
            if vector is None:
                continue
            self._row_of[memory_id] = self._size
            self._ids.append(memory_id)
            self._matrix[self._size] = vector
            self._size += 1
