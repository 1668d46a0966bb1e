"""The multilingual vectors of the whole store in this process, for recall's unfiltered dense search.

Chroma's approximate search took about 5 ms a query at 10,000 memories, and reading the vectors of the lexical
and English candidates another 3 ms; one exact product over every vector takes about 1 ms on one core
(docs/benchmarks.md). Up to :attr:`MemoryConfig.exact_search_limit` memories (2 KB each), recall searches here;
a larger store, or a search with filters, goes to Chroma. Chroma stays the store of record: the matrix is read
from it and kept in step with the memory database's ``generation``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence

from ego_core import Vectors
from ego_memory.index.vector_rows import VectorRows

STALE_SHARE = 0.1
READ_BATCH = 5000

ReadVectors = Callable[[Sequence[str]], dict[str, Vectors]]


class DenseIndex:
    """A copy of one vector collection, synchronised by difference: when the store's generation moved without
    this process noting the write, the ids in the memory database are compared with the matrix's, rows of
    forgotten memories are dropped and the new ones read from the collection (a memory's vector never changes
    within a collection)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows = VectorRows()
        self._collection = ""
        self._generation = -1
        """The store generation the rows match (-1: none)."""

    def clear(self) -> None:
        with self._lock:
            self._reset("")

    def _reset(self, collection: str) -> None:
        self._rows = VectorRows()
        self._collection = collection
        self._generation = -1

    def sync(self, collection: str, generation: int, ids: Callable[[], set[str]], read: ReadVectors) -> None:
        """Bring the rows to ``generation`` of ``collection`` (the caller holds the store's read lock)."""
        with self._lock:
            if collection != self._collection or self._rows.stale_share() > STALE_SHARE:
                self._reset(collection)
            if generation == self._generation:
                return
            stored = ids()
            for memory_id in self._rows.ids() - stored:
                self._rows.remove(memory_id)
            missing = sorted(stored - self._rows.ids())
            for start in range(0, len(missing), READ_BATCH):
                self._rows.put_many(read(missing[start : start + READ_BATCH]).items())
            self._generation = generation

    def wrote(
        self,
        collection: str,
        before: int,
        after: int,
        added: Iterable[tuple[str, Vectors]] = (),
        removed: Iterable[str] = (),
    ) -> None:
        """This process moved the store from generation ``before`` to ``after``. Its change is applied either
        way (a memory's vector is the same whenever it is read); the rows count as in step with ``after`` only
        when they were with ``before`` (otherwise the next :meth:`sync` reads the difference)."""
        with self._lock:
            if collection != self._collection:
                return
            self._rows.put_many(added)
            for memory_id in removed:
                self._rows.remove(memory_id)
            if before == self._generation:
                self._generation = after

    def nearest(self, vector: Vectors, n: int) -> list[tuple[str, float, Vectors]]:
        with self._lock:
            return self._rows.nearest(vector, n)

    def vectors(self, collection: str, generation: int, ids: Sequence[str]) -> dict[str, Vectors]:
        """The vectors of ``ids`` the rows hold, when they are in step with ``generation`` of ``collection``
        (otherwise none: a memory another process forgot could still be among them)."""
        with self._lock:
            if collection != self._collection or generation != self._generation:
                return {}
            found: dict[str, Vectors] = {}
            for memory_id in ids:
                vector = self._rows.get(memory_id)
                if vector is not None:
                    found[memory_id] = vector
            return found

    def __len__(self) -> int:
        with self._lock:
            return len(self._rows)
