"""Recall's exact dense search in the process: the same answers as Chroma's index, in step with other processes'
writes, and Chroma's index again past ``exact_search_limit`` or with filters."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ego_core import Memory
from ego_memory.index.vector_rows import VectorRows
from ego_memory.service import new_memory_id
from ego_memory.store.filters import Filters
from ego_memory.store.memory_store import MemoryStore

TEXTS = [
    "Melanie painted a lake at sunrise.",
    "Jon opened a dance studio downtown.",
    "Gina lost her job at the bank.",
    "Caroline joined a support group.",
    "今日はマスターと一緒に夕焼けを見た。",
    "雨の日は詩を読むのが好きだ。",
    "We planned a trip to Kyoto for the cherry blossoms.",
    "停電の夜、ろうそくの灯りで話をした。",
]
QUERIES = ["What did Melanie paint?", "京都の桜", "sunset", "a job at a bank", "詩"]


def fill(store: MemoryStore, embedder: Any, texts: list[str], start: datetime) -> list[str]:
    ids = []
    for offset, text in enumerate(texts):
        memory = Memory(id=new_memory_id(), content=text, timestamp=start + timedelta(minutes=offset))
        store.add(memory, embedder.embed([text])[0])
        ids.append(memory.id)
    return ids


def top_ids(found: list[tuple[str, float, Any]]) -> list[str]:
    return [memory_id for memory_id, _, _ in found]


def test_the_exact_search_answers_as_chroma_does(open_store: Callable[..., Any], embedder: Any) -> None:
    store = open_store()
    fill(store, embedder, TEXTS, datetime(2026, 1, 1, tzinfo=UTC))
    for query in QUERIES:
        vector = embedder.embed([query], "query")[0]
        exact = store.dense(vector, 5)
        indexed = store.chroma.query(vector, 5, None)
        assert top_ids(exact) == top_ids(indexed)
        for (_, similarity, row), (_, chroma_similarity, chroma_row) in zip(exact, indexed, strict=True):
            assert abs(similarity - chroma_similarity) < 1e-4
            assert np.allclose(row, chroma_row, atol=1e-6)


def test_another_processs_writes_are_seen(tmp_path: Path, embedder: Any) -> None:
    directory = tmp_path / "store"
    reader = MemoryStore(directory, embedder.model_id)
    reader.open(embedder.embed)
    writer = MemoryStore(directory, embedder.model_id)
    writer.open(embedder.embed)
    try:
        ids = fill(writer, embedder, TEXTS[:4], datetime(2026, 1, 1, tzinfo=UTC))
        paint = embedder.embed(["What did Melanie paint?"], "query")[0]
        assert top_ids(reader.dense(paint, 1)) == [ids[0]]  # the reader's copy is made here
        writer.delete(ids[0])
        [kyoto] = fill(writer, embedder, [TEXTS[6]], datetime(2026, 2, 1, tzinfo=UTC))
        assert ids[0] not in top_ids(reader.dense(paint, 4))
        assert reader.embeddings([ids[0]]) == {}
        assert top_ids(reader.dense(embedder.embed(["京都の桜"], "query")[0], 1)) == [kyoto]
        reader.delete(kyoto)  # its own forget leaves its copy at once
        assert kyoto not in top_ids(reader.dense(embedder.embed(["京都の桜"], "query")[0], 4))
        assert reader.embeddings([kyoto]) == {}
    finally:
        writer.close()
        reader.close()


def test_past_the_limit_and_with_filters_chroma_answers_the_same(tmp_path: Path, embedder: Any) -> None:
    exact = MemoryStore(tmp_path / "exact", embedder.model_id)
    limited = MemoryStore(tmp_path / "limited", embedder.model_id, exact_search_limit=3)
    try:
        for store in (exact, limited):
            store.open(embedder.embed)
            fill(store, embedder, TEXTS, datetime(2026, 1, 1, tzinfo=UTC))
        for query in QUERIES:
            vector = embedder.embed([query], "query")[0]
            answers = [[m.content for m in store.get(top_ids(store.dense(vector, 4)))] for store in (exact, limited)]
            assert answers[0] == answers[1]
        late = Filters(ts_from=(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=4)).timestamp())
        found = exact.dense(embedder.embed(["sunset"], "query")[0], 8, late)
        assert {m.content for m in exact.get(top_ids(found))} == set(TEXTS[4:])
    finally:
        exact.close()
        limited.close()


OPERATIONS = st.lists(
    st.tuples(st.sampled_from(["put", "remove"]), st.integers(0, 11), st.integers(0, 2**31)), max_size=60
)


@settings(max_examples=150, deadline=None)
@given(OPERATIONS, st.integers(1, 12), st.integers(0, 2**31))
def test_vector_rows_find_what_a_full_comparison_finds(
    operations: list[tuple[str, int, int]], n: int, query_seed: int
) -> None:
    rows = VectorRows()
    model: dict[str, np.ndarray[Any, Any]] = {}
    for operation, key, seed in operations:
        memory_id = f"m{key}"
        if operation == "put":
            vector = np.random.default_rng(seed).normal(size=8).astype(np.float32)
            vector /= np.linalg.norm(vector)
            rows.put_many([(memory_id, vector)])
            model[memory_id] = vector
        else:
            rows.remove(memory_id)
            model.pop(memory_id, None)
    query = np.random.default_rng(query_seed).normal(size=8).astype(np.float32)
    found = rows.nearest(query, n)
    expected = sorted((float(vector @ query) for vector in model.values()), reverse=True)[:n]
    assert len(rows) == len(model)
    assert rows.ids() == set(model)
    assert len({memory_id for memory_id, _, _ in found}) == len(found) == len(expected)
    assert np.allclose([similarity for _, similarity, _ in found], expected, atol=1e-5)  # ties in any order
    for memory_id, similarity, vector in found:
        assert abs(similarity - float(model[memory_id] @ query)) < 1e-5
        assert np.array_equal(vector, model[memory_id])
