"""CachedEmbedder: per-call de-duplication, LRU behaviour, thread safety and copy safety."""

from __future__ import annotations

import hashlib
import random
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ego_core import Embedder, Vectors
from ego_memory.embedding import CachedEmbedder


class HashEmbedder:
    """Deterministic fake: each text maps to a unit vector seeded by its hash; records every call."""

    model_id = "fake:hash"
    dimension = 8

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self._lock = threading.Lock()
        self.last_result: Vectors | None = None

    def vector(self, text: str) -> Vectors:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        raw = np.random.default_rng(seed).normal(size=self.dimension)
        return (raw / np.linalg.norm(raw)).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            self.batches.append(list(texts))
        result = np.stack([self.vector(text) for text in texts]) if texts else np.zeros((0, 8), np.float32)
        self.last_result = result
        return result


def test_wraps_inner_identity() -> None:
    cached = CachedEmbedder(HashEmbedder())
    assert cached.model_id == "fake:hash"
    assert cached.dimension == 8
    assert isinstance(cached, Embedder)


def test_duplicates_in_one_call_are_embedded_once() -> None:
    inner = HashEmbedder()
    cached = CachedEmbedder(inner)
    result = cached.embed(["a", "b", "a", "a", "c", "b"])
    assert inner.batches == [["a", "b", "c"]]
    assert (cached.calls, cached.texts_embedded) == (1, 3)
    assert result.shape == (6, 8)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result[0], result[2])
    np.testing.assert_array_equal(result[0], result[3])
    np.testing.assert_array_equal(result[1], result[5])
    for row, text in zip(result, ["a", "b", "a", "a", "c", "b"], strict=True):
        np.testing.assert_array_equal(row, inner.vector(text))


def test_repeated_texts_hit_the_cache() -> None:
    inner = HashEmbedder()
    cached = CachedEmbedder(inner)
    first = cached.embed(["query one"])
    second = cached.embed(["query one"])
    np.testing.assert_array_equal(first, second)
    assert (cached.calls, cached.texts_embedded, cached.hits) == (1, 1, 1)
    cached.embed(["query one", "query two"])
    assert inner.batches == [["query one"], ["query two"]]
    assert (cached.calls, cached.texts_embedded) == (2, 2)


def test_empty_input_makes_no_call() -> None:
    inner = HashEmbedder()
    cached = CachedEmbedder(inner)
    assert cached.embed([]).shape == (0, 8)
    assert inner.batches == []


def test_lru_eviction_order() -> None:
    inner = HashEmbedder()
    cached = CachedEmbedder(inner, max_entries=2)
    cached.embed(["a", "b"])
    cached.embed(["a"])  # "a" becomes most recent, so "b" is next to go
    cached.embed(["c"])
    assert len(cached) == 2
    cached.embed(["a"])
    assert inner.batches == [["a", "b"], ["c"]]
    cached.embed(["b"])
    assert inner.batches == [["a", "b"], ["c"], ["b"]]
    cached.embed(["a"])  # "b" and "a" were the two most recent, "c" was evicted
    cached.embed(["c"])
    assert inner.batches == [["a", "b"], ["c"], ["b"], ["c"]]


def test_call_larger_than_cache_still_returns_every_row() -> None:
    inner = HashEmbedder()
    cached = CachedEmbedder(inner, max_entries=3)
    texts = [f"t{i}" for i in range(10)]
    result = cached.embed(texts)
    np.testing.assert_array_equal(result, inner.embed(texts))
    assert len(cached) == 3


def test_zero_capacity_still_deduplicates_within_a_call() -> None:
    inner = HashEmbedder()
    cached = CachedEmbedder(inner, max_entries=0)
    cached.embed(["x", "x"])
    cached.embed(["x"])
    assert inner.batches == [["x"], ["x"]]
    assert len(cached) == 0


def test_negative_capacity_rejected() -> None:
    with pytest.raises(ValueError, match="max_entries"):
        CachedEmbedder(HashEmbedder(), max_entries=-1)


def test_returned_arrays_cannot_corrupt_the_cache() -> None:
    inner = HashEmbedder()
    cached = CachedEmbedder(inner)
    first = cached.embed(["stable", "stable"])
    first += 1.0
    first[0, 0] = 42.0
    again = cached.embed(["stable"])
    np.testing.assert_array_equal(again[0], inner.vector("stable"))
    assert again.flags.writeable


def test_inner_mutating_its_result_cannot_corrupt_the_cache() -> None:
    inner = HashEmbedder()
    cached = CachedEmbedder(inner)
    cached.embed(["kept"])
    assert inner.last_result is not None
    inner.last_result[:] = 0.0
    np.testing.assert_array_equal(cached.embed(["kept"])[0], inner.vector("kept"))


def test_clear_forgets_everything() -> None:
    inner = HashEmbedder()
    cached = CachedEmbedder(inner)
    cached.embed(["a"])
    cached.clear()
    cached.embed(["a"])
    assert inner.batches == [["a"], ["a"]]


def test_concurrent_use_is_consistent() -> None:
    inner = HashEmbedder()
    cached = CachedEmbedder(inner, max_entries=64)
    vocabulary = [f"word {i}" for i in range(100)]
    rng = random.Random(1234)
    requests = [rng.choices(vocabulary, k=rng.randint(1, 12)) for _ in range(400)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(cached.embed, requests))
    for texts, result in zip(requests, results, strict=True):
        assert result.shape == (len(texts), 8)
        for row, text in zip(result, texts, strict=True):
            np.testing.assert_array_equal(row, inner.vector(text))
    assert len(cached) == 64
    assert cached.calls == len(inner.batches)
    assert cached.texts_embedded == sum(len(batch) for batch in inner.batches)
    assert all(len(batch) == len(set(batch)) for batch in inner.batches)


def test_warm_cache_serves_concurrent_readers_without_inner_calls() -> None:
    inner = HashEmbedder()
    cached = CachedEmbedder(inner, max_entries=1000)
    vocabulary = [f"term {i}" for i in range(50)]
    cached.embed(vocabulary)
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda i: cached.embed([vocabulary[i % 50], vocabulary[(i * 7) % 50]]), range(300)))
    assert inner.batches == [vocabulary]


common_texts = st.sampled_from(["", "a", "b", "same", "日本語"])
text_lists = st.lists(st.one_of(common_texts, st.text(max_size=12)), max_size=20)


@settings(max_examples=200, deadline=None)
@given(calls=st.lists(text_lists, min_size=1, max_size=4), capacity=st.integers(min_value=0, max_value=6))
def test_rows_always_equal_inner_rows(calls: list[list[str]], capacity: int) -> None:
    inner = HashEmbedder()
    cached = CachedEmbedder(inner, max_entries=capacity)
    for texts in calls:
        result = cached.embed(texts)
        assert result.shape == (len(texts), 8)
        assert result.dtype == np.float32
        for row, text in zip(result, texts, strict=True):
            np.testing.assert_array_equal(row, inner.vector(text))
    assert all(len(batch) == len(set(batch)) for batch in inner.batches)


@settings(max_examples=100, deadline=None)
@given(calls=st.lists(text_lists, min_size=1, max_size=4))
def test_large_cache_embeds_each_distinct_text_once(calls: list[list[str]]) -> None:
    inner = HashEmbedder()
    cached = CachedEmbedder(inner, max_entries=1024)
    for texts in calls:
        cached.embed(texts)
    distinct: set[str] = {text for texts in calls for text in texts}
    assert cached.texts_embedded == len(distinct)
    assert sorted(text for batch in inner.batches for text in batch) == sorted(distinct)
