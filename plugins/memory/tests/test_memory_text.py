"""Turning free text into FTS5 queries (``ego_memory.text.terms``): never a syntax error, whatever the text."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ego_core import Memory
from ego_memory.config import RecallConfig
from ego_memory.embedding import OnnxEmbedder
from ego_memory.recall.engine import RecallEngine
from ego_memory.store.memory_store import MemoryStore
from ego_memory.text.terms import (
    cjk_trigrams,
    cue_terms,
    cues_in,
    has_cjk,
    trigram_query,
    word_terms,
    words_query,
)

FTS_SPECIALS = st.sampled_from(
    ['"', "'", "’", "*", "^", ":", "(", ")", "{", "}", "-", "+", "\\", "NEAR", "AND", "OR", "NOT", " ", "\n", "_"]
)
ANY_TEXT = st.lists(st.one_of(st.text(), FTS_SPECIALS, st.text(alphabet="夕焼けを見た日本語한국어中文"))).map("".join)

CONTENTS = [
    "今日は夕焼けを一緒に見た",
    "The invoice carries the reference XQZ-4471.",
    'She said "NEAR" AND "OR" are FTS5 keywords (really).',
    "Ünïcödé wörds, naïve café, and emoji 🎉 in one line.",
    "한국어 문장과 中文句子",
]


@pytest.fixture(scope="module")
def text_store(tmp_path_factory: pytest.TempPathFactory, onnx_embedder: OnnxEmbedder) -> Iterator[MemoryStore]:
    store = MemoryStore(tmp_path_factory.mktemp("text"), onnx_embedder.model_id)
    store.open(onnx_embedder.embed)
    memories = [
        Memory(id=f"mem_{n:012x}", content=text, timestamp=datetime(2025, 1, 1, tzinfo=UTC))
        for n, text in enumerate(CONTENTS)
    ]
    store.add_many(memories, onnx_embedder.embed(CONTENTS))
    yield store
    store.close()


class Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@settings(max_examples=300, deadline=None)
@given(text=ANY_TEXT)
def test_queries_of_any_text_run_against_real_fts5_tables(text_store: MemoryStore, text: str) -> None:
    for table, query in (("fts_words", words_query(text)), ("fts_trigram", trigram_query(text))):
        if not query:
            continue
        try:
            text_store.db.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (query,)).fetchone()
        except sqlite3.OperationalError as exc:  # pragma: no cover - the failure being tested for
            pytest.fail(f"{table} MATCH {query!r} (from {text!r}) failed: {exc}")


@settings(max_examples=200, deadline=None)
@given(text=ANY_TEXT)
def test_lexical_search_never_raises_nor_fails_quietly(text_store: MemoryStore, text: str) -> None:
    handler = Warnings()
    logger = logging.getLogger("ego.plugin.memory")
    logger.addHandler(handler)
    try:
        words = text_store.lexical(words_query(text), 10)
        trigram = text_store.lexical(trigram_query(text), 10, table="fts_trigram")
        combined = RecallEngine(text_store, RecallConfig()).lexical_ranking(text, 10, None)
    finally:
        logger.removeHandler(handler)
    assert handler.messages == []
    known = {f"mem_{n:012x}" for n in range(len(CONTENTS))}
    for ranking in (words, trigram, combined):
        assert {memory_id for memory_id, _ in ranking} <= known


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("XQZ-4471", "mem_000000000001"),
        ("xqz 4471", "mem_000000000001"),
        ("夕焼けを見た日", "mem_000000000000"),
        ('"NEAR" keywords', "mem_000000000002"),
        ("naive cafe", "mem_000000000003"),
        ("中文句子", "mem_000000000004"),
    ],
)
def test_lexical_ranking_finds_rare_tokens_and_cjk(text_store: MemoryStore, query: str, expected: str) -> None:
    ranking = RecallEngine(text_store, RecallConfig()).lexical_ranking(query, 5, None)
    assert ranking
    assert ranking[0][0] == expected


def test_word_terms_and_trigrams() -> None:
    assert word_terms("The cat and THE dog, don’t you think? 42 a b") == ["cat", "dog", "think", "42"]
    assert words_query("XQZ-4471") == '"xqz" OR "4471"'
    assert words_query("the and of") == ""
    assert words_query('say "hi"') == '"say" OR "hi"'
    assert cjk_trigrams("夕焼けを見た") == ["夕焼け", "焼けを", "けを見", "を見た"]
    assert cjk_trigrams("夕焼") == []
    assert trigram_query("XQZ-4471 夕焼けを") == '"夕焼け" OR "焼けを" OR "xqz" OR "4471"'
    assert has_cjk("abc 日本")
    assert not has_cjk("abc")


def _distinct(items: list[str]) -> list[str]:
    """The reference de-duplication (quadratic, fine for small inputs): first occurrence, in order."""
    kept: list[str] = []
    for item in items:
        if item not in kept:
            kept.append(item)
    return kept


@settings(max_examples=200, deadline=None)
@given(text=ANY_TEXT)
def test_terms_are_distinct_and_in_order_of_first_occurrence(text: str) -> None:
    for split in (word_terms, cjk_trigrams, cue_terms):
        terms = split(text)
        assert terms == _distinct(terms)
        assert split(f"{text} . {text}") == terms  # repeated text adds nothing and keeps the order


def test_a_huge_context_is_split_in_linear_time() -> None:
    """100,000 distinct words or CJK characters: quadratic de-duplication took minutes here, linear takes ms."""
    words = " ".join(f"w{n}" for n in range(100_000))
    assert len(word_terms(words)) == 100_000
    cjk = "".join(chr(0x4E00 + n % 20_000) for n in range(100_000))
    assert len(cjk_trigrams(cjk)) == 20_000
    cues = cue_terms(words + cjk)  # the CJK run is read by Sudachi in pieces (it refuses long inputs)
    assert cues[:100_000] == word_terms(words)
    assert len(cues) > 100_000


def test_cues_are_latin_words_and_japanese_content_words() -> None:
    assert cue_terms("Mia's favourite tea") == ["mia", "favourite", "tea"]
    assert cue_terms("夕焼けを見た") == ["夕焼け", "見る"]  # Sudachi words, normalised, particles left out
    assert cue_terms("映画 tea") == ["tea", "映画"]
    assert cue_terms("詩") == ["詩"]
    cues = cue_terms("When did Mia like jasmine tea? 夕焼け 映画")
    assert cues_in(cues, "Mia's favourite tea is jasmine.") == {"mia", "jasmine", "tea"}
    assert cues_in(cues, "Mia's favourite tea is sencha.") == {"mia", "tea"}
    assert cues_in(cues, "今日は夕焼けを一緒に見た") == {"夕焼け"}
    assert cues_in(cues, "今日は一緒に映画を見た") == {"映画"}
    assert cues_in(cues, "teapot") == frozenset()  # words match whole, not as substrings
    assert cues_in([], "anything") == frozenset()
