"""The nearest memories of one text, searched once while the store is unchanged (see :class:`NearestMemo`)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from ego_core import Vectors
from ego_memory.store.memory_store import MemoryStore
from ego_memory.store.rows import content_hash


class NearestMemo:
    """The nearest memories (by cosine similarity) of the last text asked about, kept while the store is
    unchanged (its generation).

    One remember asks about the same text three times before it stores it: the duplicate guard (another plugin,
    through the service's ``nearest`` from ``before_remember``), then the echoes and the auto-links
    (:meth:`ego_memory.service.Memories.remember` reads the answer once and passes it on). The index is searched
    once, for ``depth`` memories (as many as the largest of them needs) or more when a caller asks for more.
    """

    def __init__(self, store: MemoryStore, embed: Callable[[str], Vectors], depth: int) -> None:
        self.store = store
        self.embed = embed
        """A text's vector (the document role), by the service's embedder of the moment."""
        self.depth = depth
        self._lock = threading.Lock()
        self._last: tuple[str, int, int, list[tuple[str, float]]] | None = None
        """(content hash, store generation, how many were asked, the answer)."""

    def nearest_ids(self, text: str, k: int = 0) -> list[tuple[str, float]]:
        """The memories nearest ``text`` with their similarity, best first: ``k`` of them, or all that were
        searched (at least ``depth``) when ``k`` is 0."""
        key = content_hash(text)
        generation = self.store.generation()
        with self._lock:
            last = self._last
        if last is not None and last[0] == key and last[1] == generation and last[2] >= k:
            return last[3][:k] if k else list(last[3])
        asked = max(k, self.depth)
        vector = self.embed(text)
        pairs = [(memory_id, sim) for memory_id, sim, _ in self.store.dense(vector, asked)]
        with self._lock:
            self._last = (key, generation, asked, pairs)
        return pairs[:k] if k else list(pairs)
