"""The process's cache of recently read multilingual vectors: least recently used dropped first, one model's
collection never answers for another's, and the store's answers are the index's own."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ego_core import Memory
from ego_memory.index.vector_cache import VectorCache
from ego_memory.service import new_memory_id


def vector(value: float) -> Any:
    return np.full(4, value, dtype=np.float32)


def test_the_least_recently_used_vector_is_dropped_first() -> None:
    cache = VectorCache(size=2)
    cache.put_many("c", [("a", vector(1)), ("b", vector(2))])
    assert set(cache.get_many("c", ["a"])) == {"a"}  # a is now the most recently used
    cache.put_many("c", [("d", vector(3))])
    assert set(cache.get_many("c", ["a", "b", "d"])) == {"a", "d"}


def test_another_collection_is_another_model() -> None:
    cache = VectorCache()
    cache.put_many("use", [("a", vector(1))])
    assert cache.get_many("onnx", ["a"]) == {}


def test_the_store_answers_with_the_index_vectors_cached_or_not(open_store: Callable[..., Any], embedder: Any) -> None:
    store = open_store()
    texts = ["Melanie painted a lake.", "ジョンはダンス教室を開いた。", "Gina lost her job."]
    ids = []
    for text in texts:
        memory = Memory(id=new_memory_id(), content=text, timestamp=datetime(2026, 1, 1, tzinfo=UTC))
        store.add(memory, embedder.embed([text])[0])
        ids.append(memory.id)
    first = store.embeddings(ids)  # read from the index
    again = store.embeddings([*ids, "mem_missing000"])  # from the cache; an unknown id is absent
    assert set(again) == set(ids)
    for memory_id, text in zip(ids, texts, strict=True):
        assert np.allclose(first[memory_id], embedder.embed([text])[0], atol=1e-5)
        assert np.array_equal(first[memory_id], again[memory_id])


def test_a_forgotten_memory_leaves_the_cache(open_store: Callable[..., Any], embedder: Any) -> None:
    store = open_store()
    memory = Memory(id=new_memory_id(), content="Jon opened a studio.", timestamp=datetime(2026, 1, 1, tzinfo=UTC))
    store.add(memory, embedder.embed([memory.content])[0])
    assert set(store.embeddings([memory.id])) == {memory.id}
    store.delete(memory.id)
    assert store.embeddings([memory.id]) == {}
