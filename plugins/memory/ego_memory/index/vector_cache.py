"""Recently read multilingual vectors, kept in the process (see :class:`VectorCache`)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence

from ego_core import Vectors

VECTOR_CACHE_SIZE = 20_000
"""Vectors of the multilingual model a process keeps (2 KB each): the candidates recall read lately."""


class VectorCache:
    """The multilingual vectors of recently read memories, by vector collection and id (least recently used
    dropped first): recall reads the vectors of candidates the dense search did not return, and most of them
    were candidates before. A memory's vector never changes within a collection (another model is another
    collection); the store drops a memory it forgets, and everything when another process has written."""

    def __init__(self, size: int = VECTOR_CACHE_SIZE) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._vectors: OrderedDict[str, tuple[str, Vectors]] = OrderedDict()
        """By memory id: (collection, vector)."""

    def get_many(self, collection: str, ids: Sequence[str]) -> dict[str, Vectors]:
        found: dict[str, Vectors] = {}
        with self._lock:
            for memory_id in ids:
                entry = self._vectors.get(memory_id)
                if entry is not None and entry[0] == collection:
                    self._vectors.move_to_end(memory_id)
                    found[memory_id] = entry[1]
        return found

    def put_many(self, collection: str, pairs: Iterable[tuple[str, Vectors]]) -> None:
        with self._lock:
            for memory_id, vector in pairs:
                self._vectors[memory_id] = (collection, vector)
                self._vectors.move_to_end(memory_id)
            while len(self._vectors) > self._size:
                self._vectors.popitem(last=False)

    def discard(self, memory_id: str) -> None:
        with self._lock:
            self._vectors.pop(memory_id, None)

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()
