"""The lexical channel reads Japanese: a real store (SQLite FTS5 + Chroma) and real Sudachi segmentation.

One- and two-character words (詩, 雨, 散歩) match as words, NFKC variants match each other, mixed Japanese and
English memories are found from either language, and a store made before the word index read Japanese migrates
by itself when it opens (resuming an interrupted migration, redoing it for another segmentation).
"""

from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ego_core import Memory, Vectors
from ego_memory.config import RecallConfig
from ego_memory.recall.engine import RecallEngine
from ego_memory.store import maintenance
from ego_memory.store.memory_store import MemoryStore
from ego_memory.store.schema import open_file
from ego_memory.store.tables import Tables
from ego_memory.text.terms import language, word_terms, words_query

MODEL = "test:hashed-words-32"
BASE = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def embed(texts: Sequence[str]) -> Vectors:
    """Deterministic unit vectors (the dense channel plays no part here; the store needs one vector each)."""
    rows = []
    for text in texts:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
        vector = np.random.default_rng(seed).normal(size=32)
        rows.append(vector / np.linalg.norm(vector))
    return np.asarray(rows, dtype=np.float32)


DIARY = [
    "今日は公園を散歩した。",
    "昨夜は詩を書いた。",
    "朝から雨が降っていた。",
    "マスターと一緒に映画を見た。",
    "夕焼けがとても綺麗だった。",
    "京都の桜を見に行った。",
    "旅行の計画を立てた。",
    "停電で部屋が真っ暗になった。",
    "新しいカメラを買った。",
    "友達とラーメンを食べた。",
    "図書館で本を借りた。",
    "夜遅くまで仕事をしていた。",
    "猫が窓辺で眠っていた。",
    "梅雨の季節が始まった。",
    "コーヒーを淹れて一息ついた。",
    "駅前の商店街は賑やかだった。",
    "雪の中を歩いて帰った。",
    "ピアノの練習を続けている。",
    "海辺で貝殻を拾った。",
    "誕生日にケーキを焼いた。",
    "電車の中で音楽を聴いた。",
    "庭の花に水をやった。",
]


def memories_of(texts: Sequence[str], first: int = 0) -> list[Memory]:
    return [
        Memory(id=f"mem_{first + n:012x}", content=text, timestamp=BASE + timedelta(minutes=n))
        for n, text in enumerate(texts)
    ]


@pytest.fixture
def diary(tmp_path: Path) -> Iterator[tuple[MemoryStore, dict[str, str]]]:
    store = MemoryStore(tmp_path / "memory", MODEL)
    store.open(embed)
    extra = ["ＡＢＣ社の会議に出た。", "ｶﾗｵｹで歌った。", "今日の会話は楽しかった。Masterから多くのことを学んだ。"]
    memories = memories_of([*DIARY, *extra])
    store.add_many(memories, embed([m.content for m in memories]))
    try:
        yield store, {m.content: m.id for m in memories}
    finally:
        store.close()


def lexical(store: MemoryStore, query: str) -> list[tuple[str, float]]:
    return RecallEngine(store, RecallConfig()).lexical_ranking(query, 10, None)


def test_one_character_queries_find_their_memory_and_the_ranking_depends_on_the_query(
    diary: tuple[MemoryStore, dict[str, str]],
) -> None:
    store, ids = diary
    poem = lexical(store, "詩")
    rain = lexical(store, "雨")
    assert [m for m, _ in poem] == [ids["昨夜は詩を書いた。"]]
    assert [m for m, _ in rain] == [ids["朝から雨が降っていた。"]]  # 梅雨 is a word of its own
    assert poem != rain
    assert lexical(store, "猫")[0][0] == ids["猫が窓辺で眠っていた。"]


def test_a_two_character_word_is_found_among_twenty_memories(diary: tuple[MemoryStore, dict[str, str]]) -> None:
    store, ids = diary
    walk = ids["今日は公園を散歩した。"]
    assert lexical(store, "散歩")[0][0] == walk
    assert lexical(store, "散歩しました")[0][0] == walk  # the query is segmented too: 散歩 + する + ます + た
    assert lexical(store, "桜")[0][0] == ids["京都の桜を見に行った。"]
    assert lexical(store, "停電")[0][0] == ids["停電で部屋が真っ暗になった。"]
    assert lexical(store, "降る")[0][0] == ids["朝から雨が降っていた。"]  # dictionary forms meet inflected ones


def test_full_width_and_half_width_forms_match_their_nfkc_forms(diary: tuple[MemoryStore, dict[str, str]]) -> None:
    store, ids = diary
    company = ids["ＡＢＣ社の会議に出た。"]
    karaoke = ids["ｶﾗｵｹで歌った。"]
    assert lexical(store, "ABC")[0][0] == company
    assert lexical(store, "abc")[0][0] == company
    assert lexical(store, "ＡＢＣ")[0][0] == company
    assert lexical(store, "カラオケ")[0][0] == karaoke
    assert lexical(store, "ｶﾗｵｹ")[0][0] == karaoke


def test_a_mixed_memory_is_found_from_either_language(diary: tuple[MemoryStore, dict[str, str]]) -> None:
    store, ids = diary
    mixed = ids["今日の会話は楽しかった。Masterから多くのことを学んだ。"]
    assert lexical(store, "master")[0][0] == mixed  # "Masterから": the English word is a word of its own
    assert lexical(store, "Master")[0][0] == mixed
    assert lexical(store, "会話")[0][0] == mixed
    assert lexical(store, "学ぶ")[0][0] == mixed
    assert lexical(store, "What did Master say about 会話?")[0][0] == mixed


def test_query_terms_are_content_words_unless_nothing_else_is_left() -> None:
    assert word_terms("詩") == ["詩"]
    assert word_terms("雨が降った") == ["雨", "降る"]
    assert word_terms("公園を散歩した") == ["公園", "散歩"]
    assert word_terms("の") == ["の"]  # particles alone: still a query
    assert word_terms("ＡＢＣ and ﾃｽﾄ") == ["abc", "テスト"]
    # English queries are what they always were
    assert words_query("Where did Mia walk the dog yesterday?") == '"mia" OR "walk" OR "dog" OR "yesterday"'
    assert word_terms("The cat and THE dog, don’t you think? 42 a b") == ["cat", "dog", "think", "42"]


# ---------------------------------------------------------------------------------------------------
# The terms text never loses a Latin word


LATIN_WORD = re.compile(r"[^\W_]+")


def latin_words(text: str) -> Counter[str]:
    """The words a ``unicode61`` tokenizer sees outside CJK runs (its token characters are \\w but ``_``)."""
    return Counter(w.casefold() for w in LATIN_WORD.findall(language.CJK.sub(" ", text)))


MIXED_TEXT = st.lists(
    st.one_of(
        st.text(),
        st.text(alphabet="abcXYZ019 ’'-_.ＡＢＣｶﾗｵｹ"),
        st.text(alphabet="今日は雨が降った散歩詩々ー・。、カタカナひらがな漢字한국어中文"),
        st.sampled_from(["Master", "café", "naïve", "ﬁle", "\u200b", "\u00ad", "Ｍａｓｔｅｒ", " "]),
    ),
    max_size=8,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=MIXED_TEXT)
def test_the_terms_text_keeps_every_latin_word(text: str) -> None:
    normal = language.normalize(text)
    terms = language.segmented(text)
    assert latin_words(terms) >= latin_words(normal)
    if not language.has_cjk(normal):
        assert terms == normal  # Latin text is indexed as it was written (after NFKC)


# ---------------------------------------------------------------------------------------------------
# Migration of a store made before the word index read Japanese

OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memories (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    ts REAL NOT NULL,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    emotion TEXT NOT NULL,
    secondary TEXT NOT NULL DEFAULT '[]',
    intensity REAL NOT NULL,
    valence REAL NOT NULL,
    arousal REAL NOT NULL,
    body_state TEXT NOT NULL DEFAULT '{}',
    importance INTEGER NOT NULL,
    category TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    is_private INTEGER NOT NULL DEFAULT 0,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed REAL
);
CREATE INDEX IF NOT EXISTS memories_ts ON memories(ts);
CREATE INDEX IF NOT EXISTS memories_hash ON memories(content_hash);
CREATE TABLE IF NOT EXISTS links (
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    link_type TEXT NOT NULL,
    confidence REAL NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    PRIMARY KEY (source, target, link_type)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS links_target ON links(target);
CREATE TABLE IF NOT EXISTS episodes (
    id TEXT PRIMARY KEY,
    summary TEXT NOT NULL,
    memory_ids TEXT NOT NULL,
    start_ts REAL NOT NULL,
    end_ts REAL NOT NULL,
    importance INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS journal (id TEXT NOT NULL, op TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (id, op));
CREATE VIRTUAL TABLE IF NOT EXISTS fts_words USING fts5(
    content, content='memories', content_rowid='rid', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS fts_trigram USING fts5(
    content, content='memories', content_rowid='rid', tokenize='trigram'
);
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO fts_words(rowid, content) VALUES (new.rid, new.content);
    INSERT INTO fts_trigram(rowid, content) VALUES (new.rid, new.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO fts_words(fts_words, rowid, content) VALUES ('delete', old.rid, old.content);
    INSERT INTO fts_trigram(fts_trigram, rowid, content) VALUES ('delete', old.rid, old.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO fts_words(fts_words, rowid, content) VALUES ('delete', old.rid, old.content);
    INSERT INTO fts_trigram(fts_trigram, rowid, content) VALUES ('delete', old.rid, old.content);
    INSERT INTO fts_words(rowid, content) VALUES (new.rid, new.content);
    INSERT INTO fts_trigram(rowid, content) VALUES (new.rid, new.content);
END;
"""
"""The schema of version 1, as ego wrote it before the word index read Japanese."""

OLD_CONTENTS = [*DIARY, "The invoice carries the reference XQZ-4471.", "Mia's favourite tea is jasmine."]
WORDS = (
    "散歩 詩 雨 映画 夕焼け 桜 計画 停電 カメラ ラーメン 図書館 "
    "仕事 猫 梅雨 コーヒー 商店街 雪 ピアノ 貝殻 ケーキ 音楽 庭"
)
QUERIES = {  # a query for each memory, by a word the old word index could not match for the Japanese ones
    **dict(zip(DIARY, WORDS.split(), strict=True)),
    "The invoice carries the reference XQZ-4471.": "invoices",
    "Mia's favourite tea is jasmine.": "jasmine",
}


def old_store(directory: Path) -> list[Memory]:
    """A store of schema version 1 written with the old SQL (its vector index is rebuilt when it opens)."""
    directory.mkdir(parents=True)
    db = sqlite3.connect(directory / "memory.sqlite3")
    memories = memories_of(OLD_CONTENTS)
    try:
        db.executescript(OLD_SCHEMA)
        with db:
            for key, value in (("embedding_model", MODEL), ("schema_version", "1"), ("generation", "0")):
                db.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (key, value))
            db.executemany(
                "INSERT INTO memories(id, ts, content, content_hash, emotion, intensity, valence, arousal, "
                "importance, category) VALUES (?, ?, ?, '', 'neutral', 0.5, 0.0, 0.3, 3, 'daily')",
                [(m.id, m.timestamp.timestamp(), m.content) for m in memories],
            )
    finally:
        db.close()
    return memories


def assert_every_memory_is_found(store: MemoryStore, memories: Sequence[Memory]) -> None:
    for memory in memories:
        ranking = lexical(store, QUERIES[memory.content])
        assert ranking, memory.content
        assert ranking[0][0] == memory.id, (memory.content, ranking)


def words_index(store: MemoryStore) -> list[tuple[int, str]]:
    return store.db.execute("SELECT rid, terms FROM memories ORDER BY rid").fetchall()


@contextmanager
def open_store(directory: Path) -> Iterator[MemoryStore]:
    store = MemoryStore(directory, MODEL)
    store.open(embed)
    try:
        yield store
    finally:
        store.close()


def test_an_old_store_migrates_at_open_and_every_memory_stays_searchable(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = tmp_path / "memory"
    memories = old_store(directory)
    caplog.set_level(logging.INFO, logger="ego.plugin.memory.store")
    with open_store(directory) as store:
        assert store.tables.meta("lexicon") == language.LEXICON
        assert store.tables.meta("schema_version") == "2"
        assert store.tables.meta("lexicon_progress") is None
        assert store.count() == len(memories)
        assert store.integrity_problems() == []
        assert_every_memory_is_found(store, memories)
        first = words_index(store)
    assert sum("building the word index" in r.getMessage() for r in caplog.records) == 1

    caplog.clear()
    with open_store(directory) as store:  # idempotent: nothing to do the second time
        assert words_index(store) == first
        assert store.integrity_problems() == []
        assert_every_memory_is_found(store, memories)
        # a memory written after the migration goes through the new triggers
        added = memories_of(["散歩の途中で虹を見た。"], first=100)
        store.add_many(added, embed([m.content for m in added]))
        assert lexical(store, "虹")[0][0] == added[0].id
        assert store.delete(memories[1].id) is not None
        assert lexical(store, "詩") == []
        assert store.integrity_problems() == []
    assert not any("word index" in r.getMessage() for r in caplog.records)


class MigrationInterruptedError(Exception):
    pass


def test_an_interrupted_migration_carries_on_at_the_next_open(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    memories = old_store(directory)

    @contextmanager
    def crash_after_the_first_batch(_total: int, _description: str) -> Iterator[maintenance.Advance]:
        def advance(_n: int) -> None:
            raise MigrationInterruptedError

        yield advance

    tables = Tables(open_file(directory))  # adopted: the terms column added, the word index not rebuilt yet
    try:
        with pytest.raises(MigrationInterruptedError):
            maintenance.migrate_lexicon(tables, progress=crash_after_the_first_batch, batch=5)
        assert tables.meta("lexicon") is None
        assert tables.meta("lexicon_progress") == f"{language.LEXICON} 5"
        done = tables.db.execute("SELECT count(*) FROM memories WHERE terms != ''").fetchone()[0]
        assert done == 5
    finally:
        tables.database.close()

    with open_store(directory) as store:
        assert store.tables.meta("lexicon") == language.LEXICON
        assert store.integrity_problems() == []
        assert_every_memory_is_found(store, memories)


def test_another_segmentation_is_redone_at_open(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    with open_store(directory) as store:
        memories = memories_of(OLD_CONTENTS)
        store.add_many(memories, embed([m.content for m in memories]))
        expected = words_index(store)
        with store.tables.transaction():  # as if a former segmentation had built the index
            store.db.execute("UPDATE memories SET terms = 'stale'")
            store.tables.set_meta("lexicon", "sudachi-core-A-v0")
        assert lexical(store, "散歩") == []
    with open_store(directory) as store:
        assert store.tables.meta("lexicon") == language.LEXICON
        assert words_index(store) == expected
        assert store.integrity_problems() == []
        assert_every_memory_is_found(store, memories)
