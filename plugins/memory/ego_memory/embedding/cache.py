"""A caching, de-duplicating wrapper around any Embedder."""

from __future__ import annotations

import inspect
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ego_core import Embedder, EmbedRole, Vectors

Vector = npt.NDArray[np.float32]


def takes_role(embedder: Embedder) -> bool:
    """Whether ``embedder.embed`` accepts ``role`` (a provider written before roles existed does not)."""
    try:
        parameters = inspect.signature(embedder.embed).parameters
    except (TypeError, ValueError):
        return True
    return "role" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def _frozen_copy(row: Vector) -> Vector:
    copy = np.array(row, dtype=np.float32, copy=True)
    copy.setflags(write=False)
    return copy


class CachedEmbedder:
    """Embeds each distinct text once per call and remembers the last ``max_entries`` vectors (LRU).

    Cached vectors are stored read-only and every ``embed`` result is a fresh array, so callers cannot
    corrupt the cache. Concurrent calls are safe; two threads missing on the same text at once may both
    compute it, which costs time but never correctness.
    """

    def __init__(self, inner: Embedder, max_entries: int = 1024) -> None:
        if max_entries < 0:
            raise ValueError(f"max_entries must be >= 0, got {max_entries}")
        self._inner = inner
        self._takes_role = takes_role(inner)
        self._max_entries = max_entries
        self._entries: OrderedDict[tuple[EmbedRole, str], Vector] = OrderedDict()
        self._lock = threading.Lock()
        self._calls = 0
        self._texts_embedded = 0
        self._hits = 0

    @property
    def inner(self) -> Embedder:
        return self._inner

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    @property
    def calls(self) -> int:
        """How many times the inner embedder was called."""
        return self._calls

    @property
    def texts_embedded(self) -> int:
        """How many texts were sent to the inner embedder in total."""
        return self._texts_embedded

    @property
    def hits(self) -> int:
        """How many distinct texts per call were answered from the cache."""
        return self._hits

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def embed(self, texts: Sequence[str], role: EmbedRole = "document") -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        if role not in ("query", "document"):
            raise ValueError(f"role must be 'query' or 'document', got {role!r}")
        if not self._takes_role:
            role = "document"  # the provider embeds every text alike
        distinct = list(dict.fromkeys(texts))
        found: dict[str, Vector] = {}
        with self._lock:
            for text in distinct:
                vector = self._entries.get((role, text))
                if vector is not None:
                    self._entries.move_to_end((role, text))
                    found[text] = vector
            self._hits += len(found)
        missing = [text for text in distinct if text not in found]
        if missing:
            raw = self._inner.embed(missing, role) if self._takes_role else self._inner.embed(missing)
            computed = np.asarray(raw, dtype=np.float32)
            if computed.ndim != 2 or computed.shape[0] != len(missing):
                raise ValueError(f"inner embedder returned shape {computed.shape} for {len(missing)} texts")
            fresh = {(role, text): _frozen_copy(row) for text, row in zip(missing, computed, strict=True)}
            found.update({text: vector for (_role, text), vector in fresh.items()})
            with self._lock:
                self._calls += 1
                self._texts_embedded += len(missing)
                self._store(fresh)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([found[text] for text in texts]).astype(np.float32, copy=False)

    def _store(self, fresh: dict[tuple[EmbedRole, str], Vector]) -> None:
        if self._max_entries == 0:
            return
        for text, vector in fresh.items():
            self._entries[text] = vector
            self._entries.move_to_end(text)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)
