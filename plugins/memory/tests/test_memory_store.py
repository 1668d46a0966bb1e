"""The store on real Chroma + SQLite in temporary directories: round trips, links, deletion,
crash recovery from the journal, index verification at startup, filters, and several instances on one dir."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from ego_core import EmotionalTrace, Memory, MemoryLink
from ego_memory.embedding import UseEmbedder
from ego_memory.errors import ModelMismatchError
from ego_memory.store.filters import Filters
from ego_memory.store.memory_store import MemoryStore
from ego_memory.store.vector_index import chroma_metadata
from ego_memory.text.terms import trigram_query, words_query

OpenStore = Callable[..., MemoryStore]
BASE = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def memory(memory_id: str, content: str, *, ts: datetime = BASE, **fields: Any) -> Memory:
    trace_fields = {
        k: fields.pop(k) for k in ("primary", "secondary", "intensity", "valence", "arousal") if k in fields
    }
    return Memory(id=memory_id, content=content, timestamp=ts, emotional_trace=EmotionalTrace(**trace_fields), **fields)


def add(store: MemoryStore, embedder: UseEmbedder, item: Memory, links: tuple[MemoryLink, ...] = ()) -> Memory:
    store.add(item, embedder.embed([item.content])[0], links)
    return item


def link_rows(store: MemoryStore) -> set[tuple[str, str, str]]:
    return {tuple(row) for row in store.db.execute("SELECT source, target, link_type FROM links")}


def fts_hits(store: MemoryStore, table: str, query: str) -> int:
    return int(store.db.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (query,)).fetchone()[0])


def reopen(store: MemoryStore, open_store: OpenStore) -> MemoryStore:
    directory = store.directory
    store.close()
    return open_store(directory)


# ---------------------------------------------------------------------------------------------------
# Round trips


def test_every_field_round_trips(open_store: OpenStore, embedder: UseEmbedder) -> None:
    store = open_store()
    tokyo = timezone(timedelta(hours=9))
    original = Memory(
        id="mem_0123456789ab",
        content="Line one of a memory\nline two, with ünïcode and 日本語.",
        timestamp=datetime(2025, 3, 2, 8, 30, 15, 123000, tzinfo=tokyo),
        emotional_trace=EmotionalTrace(
            primary="melancholy",
            secondary=("nostalgic", "anxious"),
            intensity=0.85,
            valence=-0.35,
            arousal=0.15,
            body_state={"time_phase": "night", "system_load": 0.42, "uptime_hours": 3.5, "nested": {"a": [1, 2]}},
        ),
        importance=5,
        category="feeling",
        tags=("rain", "window", "rain-2"),
        is_private=True,
        access_count=4,
        last_accessed=datetime(2025, 3, 3, 1, 2, 3, 456000, tzinfo=UTC),
    )
    add(store, embedder, original)

    def check(view: MemoryStore) -> None:
        got = view.get_one(original.id)
        assert got == original
        assert got is not None
        for moment in (got.timestamp, got.last_accessed):
            assert moment is not None
            assert moment.utcoffset() == timedelta(0)
        assert isinstance(got.tags, tuple)
        assert isinstance(got.emotional_trace.secondary, tuple)
        assert dict(got.emotional_trace.body_state) == {
            "time_phase": "night",
            "system_load": 0.42,
            "uptime_hours": 3.5,
            "nested": {"a": [1, 2]},
        }

    check(store)
    fresh = open_store(store.directory)  # a second instance on the same directory
    check(fresh)
    check(reopen(store, open_store))

    secondary, tags = fresh.db.execute("SELECT secondary, tags FROM memories").fetchone()
    assert (json.loads(secondary), json.loads(tags)) == (["nostalgic", "anxious"], ["rain", "window", "rain-2"])
    meta = fresh.chroma.collection.get(ids=[original.id], include=["metadatas"])["metadatas"][0]
    assert "tags" not in meta  # free text stays in SQLite
    assert "secondary" not in meta
    assert meta["ts"] == pytest.approx(original.timestamp.timestamp())
    assert meta["embedding_model"] == embedder.model_id
    assert meta["is_private"] is True


def test_timestamps_keep_millisecond_precision(open_store: OpenStore, embedder: UseEmbedder) -> None:
    store = open_store()
    moment = datetime(2025, 3, 2, 8, 30, 15, 123456, tzinfo=UTC)
    add(store, embedder, memory("mem_00000000000a", "precise", ts=moment))
    got = store.get_one("mem_00000000000a")
    assert got is not None
    assert abs(got.timestamp - moment) < timedelta(milliseconds=1)
    assert got.timestamp.microsecond % 1000 == 0


def test_naive_timestamps_are_refused(open_store: OpenStore, embedder: UseEmbedder) -> None:
    store = open_store()
    with pytest.raises(ValueError, match="timezone-aware"):
        add(store, embedder, memory("mem_00000000000a", "naive", ts=datetime(2025, 1, 1, 12, 0)))
    assert store.count() == 0
    assert store.integrity_problems() == []


# ---------------------------------------------------------------------------------------------------
# Links and deletion


def linked_store(open_store: OpenStore, embedder: UseEmbedder) -> MemoryStore:
    store = open_store()
    add(store, embedder, memory("mem_00000000000a", "We planted tomatoes in the garden."))
    add(store, embedder, memory("mem_00000000000b", "The tomatoes turned red in August."))
    add(
        store,
        embedder,
        memory("mem_00000000000c", "Zucchini soup with the garden harvest."),
        (
            MemoryLink("mem_00000000000a", "similar", 0.8),
            MemoryLink("mem_00000000000b", "leads_to", 1.0, "sequence"),
        ),
    )
    return store


def test_links_are_stored_in_both_directions(open_store: OpenStore, embedder: UseEmbedder) -> None:
    store = linked_store(open_store, embedder)
    assert link_rows(store) == {
        ("mem_00000000000c", "mem_00000000000a", "similar"),
        ("mem_00000000000a", "mem_00000000000c", "similar"),
        ("mem_00000000000c", "mem_00000000000b", "leads_to"),
        ("mem_00000000000b", "mem_00000000000c", "leads_to"),
    }
    a = store.get_one("mem_00000000000a")
    assert a is not None
    assert a.links == (MemoryLink("mem_00000000000c", "similar", 0.8),)
    c = store.get_one("mem_00000000000c")
    assert c is not None
    assert set(c.links) == {
        MemoryLink("mem_00000000000a", "similar", 0.8),
        MemoryLink("mem_00000000000b", "leads_to", 1.0, "sequence"),
    }

    assert store.link("mem_00000000000a", "mem_00000000000b", "related", 0.5, "same plants") is True
    assert store.link("mem_00000000000a", "mem_00000000000b", "related", 0.5) is False
    assert ("mem_00000000000b", "mem_00000000000a", "related") in link_rows(store)
    assert ("mem_00000000000a", "mem_00000000000b", "related") in link_rows(store)
    assert store.integrity_problems() == []


def test_delete_removes_rows_links_fts_and_vector(open_store: OpenStore, embedder: UseEmbedder) -> None:
    store = linked_store(open_store, embedder)
    assert fts_hits(store, "fts_words", '"zucchini"') == 1
    assert fts_hits(store, "fts_trigram", '"ucchin"') == 1
    generation = store.generation()

    deleted = store.delete("mem_00000000000c")
    assert deleted is not None
    assert deleted.content == "Zucchini soup with the garden harvest."
    assert store.generation() > generation

    assert store.get_one("mem_00000000000c") is None
    assert store.count() == 2
    assert link_rows(store) == set()
    for memory_id in ("mem_00000000000a", "mem_00000000000b"):
        remaining = store.get_one(memory_id)
        assert remaining is not None
        assert remaining.links == ()
    assert fts_hits(store, "fts_words", '"zucchini"') == 0
    assert fts_hits(store, "fts_trigram", '"ucchin"') == 0
    for table in ("fts_words", "fts_trigram"):
        assert store.db.execute(f"SELECT count(*) FROM {table}_docsize").fetchone()[0] == 2
    assert store.chroma.all_ids() == {"mem_00000000000a", "mem_00000000000b"}
    assert "mem_00000000000c" not in store.embeddings(["mem_00000000000c"])
    assert store.db.execute("SELECT count(*) FROM journal").fetchone()[0] == 0
    assert store.integrity_problems() == []
    assert store.delete("mem_00000000000c") is None


# ---------------------------------------------------------------------------------------------------
# Crash recovery and verification at startup


def test_interrupted_add_leaves_no_orphan_vector(open_store: OpenStore, embedder: UseEmbedder) -> None:
    store = open_store()
    add(store, embedder, memory("mem_00000000000a", "A memory that was committed."))
    orphan = memory("mem_00000000dead", "A memory whose commit never happened.")
    # the write path up to the crash: the journal row, then Chroma; the SQLite commit never ran
    store.db.execute("INSERT INTO journal(id, op, created) VALUES (?, 'add', 0)", (orphan.id,))
    store.chroma.add([orphan.id], embedder.embed([orphan.content]), [chroma_metadata(orphan, store.model_id)])
    assert orphan.id in store.chroma.all_ids()

    store = reopen(store, open_store)
    assert store.chroma.all_ids() == {"mem_00000000000a"}
    assert store.all_ids() == ["mem_00000000000a"]
    assert store.db.execute("SELECT count(*) FROM journal").fetchone()[0] == 0
    assert store.integrity_problems() == []


def test_interrupted_delete_is_completed_on_open(open_store: OpenStore, embedder: UseEmbedder) -> None:
    store = linked_store(open_store, embedder)
    # crash after the SQLite deletion committed (with its journal row), before Chroma forgot the vector
    with store.db:
        store.db.execute("BEGIN")
        store.db.execute("INSERT INTO journal(id, op, created) VALUES ('mem_00000000000c', 'delete', 0)")
        store.db.execute("DELETE FROM links WHERE source = 'mem_00000000000c' OR target = 'mem_00000000000c'")
        store.db.execute("DELETE FROM memories WHERE id = 'mem_00000000000c'")
    # an earlier crash: only the journal row of a delete of mem_...a was written
    store.db.execute("INSERT INTO journal(id, op, created) VALUES ('mem_00000000000a', 'delete', 0)")
    assert "mem_00000000000c" in store.chroma.all_ids()

    store = reopen(store, open_store)
    assert store.all_ids() == ["mem_00000000000b"]
    assert store.chroma.all_ids() == {"mem_00000000000b"}
    assert link_rows(store) == set()
    assert store.db.execute("SELECT count(*) FROM journal").fetchone()[0] == 0
    assert store.integrity_problems() == []


def test_fts_index_is_rebuilt_when_it_disagrees(open_store: OpenStore, embedder: UseEmbedder) -> None:
    store = open_store()
    add(store, embedder, memory("mem_00000000000a", "今日は夕焼けを一緒に見た"))
    add(store, embedder, memory("mem_00000000000b", "Walking the dog along the canal."))
    # the word index loses a row behind the store's back; the trigram index is dropped and recreated empty
    store.db.execute(
        "DELETE FROM fts_words_docsize WHERE id = (SELECT rid FROM memories WHERE id = 'mem_00000000000b')"
    )
    store.db.execute("DROP TABLE fts_trigram")
    store.db.execute(
        "CREATE VIRTUAL TABLE fts_trigram USING fts5(content, content='memories', content_rowid='rid', "
        "tokenize='trigram')"
    )
    assert fts_hits(store, "fts_trigram", '"夕焼け"') == 0

    store = reopen(store, open_store)
    for table in ("fts_words", "fts_trigram"):
        assert store.db.execute(f"SELECT count(*) FROM {table}_docsize").fetchone()[0] == 2
    assert fts_hits(store, "fts_trigram", '"夕焼け"') == 1
    assert [i for i, _ in store.lexical(trigram_query("夕焼けを見た"), 5, table="fts_trigram")] == ["mem_00000000000a"]
    assert [i for i, _ in store.lexical(words_query("dog canal"), 5)] == ["mem_00000000000b"]
    assert store.integrity_problems() == []


def test_missing_vectors_are_re_embedded_on_open(open_store: OpenStore, embedder: UseEmbedder) -> None:
    store = open_store()
    add(store, embedder, memory("mem_00000000000a", "Snow fell on the station platform.", primary="surprised"))
    add(store, embedder, memory("mem_00000000000b", "A letter from an old friend arrived."))
    store.chroma.delete(["mem_00000000000a"])
    assert store.integrity_problems() != []

    store = reopen(store, open_store)
    assert store.chroma.all_ids() == {"mem_00000000000a", "mem_00000000000b"}
    vector = store.embeddings(["mem_00000000000a"])["mem_00000000000a"]
    expected = embedder.embed(["Snow fell on the station platform."])[0]
    assert float(vector @ expected) == pytest.approx(1.0, abs=1e-5)
    # with its metadata: the Chroma-side filters find it
    hits = store.dense(expected, 5, Filters(emotion="surprised"))
    assert [i for i, _, _ in hits] == ["mem_00000000000a"]
    assert store.integrity_problems() == []


def test_reconcile_removes_orphans_and_re_embeds_missing(open_store: OpenStore, embedder: UseEmbedder) -> None:
    store = open_store()
    add(store, embedder, memory("mem_00000000000a", "The kettle whistled at dawn."))
    orphan = memory("mem_00000000dead", "An orphan vector.")
    store.chroma.add([orphan.id], embedder.embed([orphan.content]), [chroma_metadata(orphan, store.model_id)])
    store.chroma.delete(["mem_00000000000a"])
    assert store.reconcile(embedder.embed) == (1, 1)
    assert store.chroma.all_ids() == {"mem_00000000000a"}
    assert store.integrity_problems() == []


def test_open_repairs_vectors_even_when_the_counts_agree(open_store: OpenStore, embedder: UseEmbedder) -> None:
    """One memory without its vector and one orphan vector: the counts agree, the indexes do not."""
    store = open_store()
    add(store, embedder, memory("mem_00000000000a", "The kettle whistled at dawn."))
    orphan = memory("mem_00000000dead", "An orphan vector.")
    store.chroma.add([orphan.id], embedder.embed([orphan.content]), [chroma_metadata(orphan, store.model_id)])
    store.chroma.delete(["mem_00000000000a"])

    store = reopen(store, open_store)
    assert store.chroma.all_ids() == {"mem_00000000000a"}
    assert store.integrity_problems() == []


# ---------------------------------------------------------------------------------------------------
# The embedding model


def test_a_store_refuses_another_embedding_model(open_store: OpenStore, embedder: UseEmbedder) -> None:
    store = open_store()
    add(store, embedder, memory("mem_00000000000a", "Built with the default model."))
    directory = store.directory
    store.close()

    with pytest.raises(ModelMismatchError) as refused:
        open_store(directory, "other-model")
    message = str(refused.value)
    assert embedder.model_id in message
    assert "other-model" in message
    assert "ego memory reindex" in message
    assert (refused.value.stored, refused.value.configured) == (embedder.model_id, "other-model")

    again = open_store(directory)
    assert again.all_ids() == ["mem_00000000000a"]
    assert again.integrity_problems() == []


# ---------------------------------------------------------------------------------------------------
# Filters, in Chroma (``where``) and in SQLite alike


FILTER_CORPUS = [
    memory("mem_0000000000f1", "note about the sea", primary="happy", valence=0.8, arousal=0.6, category="daily"),
    memory(
        "mem_0000000000f2",
        "note about the rain",
        ts=BASE + timedelta(days=1),
        primary="sad",
        valence=-0.7,
        arousal=0.3,
        category="feeling",
    ),
    memory(
        "mem_0000000000f3",
        "note about the code",
        ts=BASE + timedelta(days=2),
        primary="curious",
        valence=0.4,
        arousal=0.6,
        category="technical",
    ),
    memory(
        "mem_0000000000f4",
        "note about a deadline",
        ts=BASE + timedelta(days=3),
        primary="anxious",
        valence=-0.6,
        arousal=0.8,
        category="technical",
    ),
    memory(
        "mem_0000000000f5",
        "note about the old house",
        ts=BASE + timedelta(days=4),
        primary="nostalgic",
        valence=0.3,
        arousal=0.3,
        category="memory",
    ),
    memory(
        "mem_0000000000f6",
        "note about a calm evening",
        ts=BASE + timedelta(days=5),
        primary="contentment",
        valence=0.6,
        arousal=0.2,
        category="daily",
    ),
]

FILTERS = [
    Filters(emotion="frustrated"),
    Filters(emotion="anxious"),
    Filters(category="technical"),
    Filters(ts_from=(BASE + timedelta(days=1)).timestamp(), ts_to=(BASE + timedelta(days=3)).timestamp()),
    Filters(ts_from=(BASE + timedelta(days=4)).timestamp()),
    Filters(ts_to=BASE.timestamp()),
    Filters(valence=(-1.0, 0.0)),
    Filters(valence=(0.3, 0.6)),
    Filters(arousal=(0.6, 1.0)),
    Filters(category="technical", arousal=(0.7, 1.0)),
    Filters(emotion="happy", category="feeling"),
]


@pytest.fixture(scope="module")
def filter_store(tmp_path_factory: pytest.TempPathFactory, embedder: UseEmbedder) -> Any:
    store = MemoryStore(tmp_path_factory.mktemp("filters"), embedder.model_id)
    store.open(embedder.embed)
    for item in FILTER_CORPUS:
        add(store, embedder, item)
    yield store
    store.close()


@pytest.mark.parametrize("filters", FILTERS, ids=repr)
def test_filters_agree_in_chroma_and_sqlite(filter_store: MemoryStore, embedder: UseEmbedder, filters: Filters) -> None:
    expected = {m.id for m in FILTER_CORPUS if filters.matches(m)}
    query = embedder.embed(["a note"])[0]
    dense = {memory_id for memory_id, _, _ in filter_store.dense(query, 50, filters)}
    words = {memory_id for memory_id, _ in filter_store.lexical(words_query("note"), 50, filters)}
    trigram = {
        memory_id for memory_id, _ in filter_store.lexical(trigram_query("note"), 50, filters, table="fts_trigram")
    }
    assert dense == expected
    assert words == expected
    assert trigram == expected


def test_unfiltered_paths_see_everything(filter_store: MemoryStore, embedder: UseEmbedder) -> None:
    everything = {m.id for m in FILTER_CORPUS}
    query = embedder.embed(["a note"])[0]
    assert {i for i, _, _ in filter_store.dense(query, 50)} == everything
    assert {i for i, _ in filter_store.lexical(words_query("note"), 50)} == everything
    assert not Filters().active
    assert Filters(emotion="sad").active


# ---------------------------------------------------------------------------------------------------
# Generations and several instances on one directory


def test_generation_changes_after_every_write(open_store: OpenStore, embedder: UseEmbedder) -> None:
    store = open_store()
    seen = [store.generation()]
    add(store, embedder, memory("mem_00000000000a", "first"))
    seen.append(store.generation())
    add(store, embedder, memory("mem_00000000000b", "second"))
    seen.append(store.generation())
    store.delete("mem_00000000000a")
    seen.append(store.generation())
    assert seen == sorted(set(seen))  # strictly increasing
    store.touch(["mem_00000000000b"], BASE.timestamp())  # bookkeeping is not a content change
    assert store.generation() == seen[-1]


def test_a_second_instance_sees_the_first_ones_writes(open_store: OpenStore, embedder: UseEmbedder) -> None:
    first = open_store()
    second = open_store(first.directory)
    foreign: list[str] = []
    first.on_foreign_write = lambda: foreign.append("first")
    second.on_foreign_write = lambda: foreign.append("second")
    assert second.count() == 0

    item = add(first, embedder, memory("mem_00000000000a", "A heron stood still in the shallow pond."))
    query = embedder.embed(["a bird in the pond"])[0]
    assert second.count() == 1
    assert foreign == ["second"]
    assert second.get_one(item.id) == item
    assert [i for i, _, _ in second.dense(query, 5)] == [item.id]
    assert [i for i, _ in second.lexical(words_query("heron"), 5)] == [item.id]

    add(second, embedder, memory("mem_00000000000b", "The heron flew off over the reeds."))
    assert {i for i, _, _ in first.dense(query, 5)} == {"mem_00000000000a", "mem_00000000000b"}
    assert foreign == ["second", "first"]

    assert second.delete(item.id) is not None
    assert [i for i, _, _ in first.dense(query, 5)] == ["mem_00000000000b"]
    assert first.get_one(item.id) is None
    assert first.integrity_problems() == []
    assert second.integrity_problems() == []


def test_store_files_live_under_the_directory(open_store: OpenStore, tmp_path: Path) -> None:
    store = open_store(tmp_path / "data" / "memory")
    assert (store.directory / "memory.sqlite3").is_file()
    assert (store.directory / "chroma").is_dir()
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
