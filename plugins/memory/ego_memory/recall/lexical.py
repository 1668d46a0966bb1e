"""The lexical channel: FTS5 BM25 over the word and trigram indexes (a proper noun's reading, Japanese synonyms),
the context's words in the other language, and the candidates in the other language scored on the context's
words (``across_languages``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ego_core import SimilarityProfile, Vectors
from ego_memory.config import RecallConfig
from ego_memory.recall.ranking import zscore
from ego_memory.store.filters import Filters
from ego_memory.store.memory_store import MemoryStore
from ego_memory.text.terms import (
    HEDGES,
    cues_translated,
    fts_or,
    has_cjk,
    readings_query,
    synonyms,
    translated,
    trigram_terms,
    word_terms,
)

TRIGRAM_WEIGHT = 0.5
"""The trigram index's share beside the word index in :func:`lexical_ranking` (CJK queries). On JSQuAD (lexical
channel alone, hit@5 / hit@1): Sudachi words 0.969 / 0.894, trigrams 0.937 / 0.877, both at weight 1.0
0.969 / 0.910, at 0.5 0.971 / 0.915."""
SYNONYM_WEIGHT = 0.5
"""The share of a Japanese word's synonyms (:func:`ego_memory.text.terms.synonyms`) beside the word itself in
:func:`lexical_ranking`: a memory holding the word is the better match, one holding only a synonym is still found
(「最初に書いた詩」 finds 「初めて短い詩を書いた」 among other poems). JSQuAD hit@5 unchanged (0.971)."""

Ranked = list[tuple[str, float]]
"""Memory ids with their scores, best first."""
Translated = list[tuple[str, frozenset[str], str]]
"""Memories holding the context's words in the other language: each with those words and its text."""


def has_words(text: str) -> bool:
    """Whether ``text`` holds a letter or a digit of any script (not emoji, marks and punctuation alone)."""
    return any(char.isalnum() for char in text)


def merged(first: Ranked, extra: Ranked) -> Ranked:
    """``first`` followed by what only ``extra`` found (BM25 scores of one query are comparable)."""
    seen = {memory_id for memory_id, _ in first}
    return sorted([*first, *((m, s) for m, s in extra if m not in seen)], key=lambda item: -item[1])


def _blended(own: Ranked, other: Ranked, n: int, weight: float = 1.0) -> Ranked:
    """The BM25 scores of the query's own words plus ``weight`` times those of other words for them (one index:
    comparable), best first, at most ``n``."""
    combined = dict(own)
    for memory_id, score in other:
        combined[memory_id] = combined.get(memory_id, 0.0) + weight * score
    return sorted(combined.items(), key=lambda item: -item[1])[:n]


def combined(words: Ranked, trigram: Ranked, n: int) -> Ranked:
    """The word and trigram rankings as one: z-normalised, the trigrams' weighted by :data:`TRIGRAM_WEIGHT`, summed
    (either alone as it is)."""
    if not trigram or not words:
        return words or trigram
    scores: dict[str, float] = {}
    for weight, ranking in ((1.0, words), (TRIGRAM_WEIGHT, trigram)):
        z_scores = zscore(np.array([score for _, score in ranking], dtype=np.float32))
        for (memory_id, _), z in zip(ranking, z_scores, strict=True):
            scores[memory_id] = scores.get(memory_id, 0.0) + weight * (float(z) + 1.0)
    return sorted(scores.items(), key=lambda item: -item[1])[:n]


def _idf(total: int, holding: int) -> float:
    """FTS5's BM25 inverse document frequency of a term ``holding`` of ``total`` memories hold (at least 1e-6)."""
    value = math.log((total - holding + 0.5) / (holding + 0.5))
    return value if value > 0.0 else 1e-6


def _selective(store: MemoryStore, table: str, terms: list[str], cfg: RecallConfig) -> list[str]:
    """The query terms worth ranking by: on a large store, those not found in most memories."""
    total = store.count()
    if total < cfg.lexical_min_corpus or not terms:
        return terms
    frequencies = store.document_frequencies(table, terms)
    limit = cfg.lexical_max_df * total
    return [t for t in terms if 0 < frequencies.get(t, 0) <= limit]


def _unhedged(context: str, cfg: RecallConfig) -> list[str]:
    """The context's words, without the hedges (``hedges``) unless it holds nothing else."""
    terms = word_terms(context)
    if cfg.hedges:
        terms = [t for t in terms if t not in HEDGES] or terms
    return terms


def lexical_ranking(store: MemoryStore, context: str, n: int, filters: Filters | None, cfg: RecallConfig) -> Ranked:
    """BM25 over the word index (Latin words, Japanese Sudachi words); CJK text (and word-less queries) also
    over the trigram index.

    When both indexes answer, their scores are z-normalised and summed, the trigrams' weighted by
    :data:`TRIGRAM_WEIGHT`, so one list is returned. The reading of a proper noun of the context is searched
    too, in the memories that do not hold the noun itself (宇治 finds "Uji"): it counts as the noun; and the
    synonyms of its Japanese words, their BM25 added at :data:`SYNONYM_WEIGHT`.
    """
    return combined(*lexical_parts(store, context, n, filters, cfg), n)


def lexical_parts(
    store: MemoryStore, context: str, n: int, filters: Filters | None, cfg: RecallConfig
) -> tuple[Ranked, Ranked]:
    """The word index's and the trigram index's BM25 rankings of :func:`lexical_ranking`, not combined yet."""
    terms = _selective(store, "fts_words", _unhedged(context, cfg), cfg)
    words = store.lexical(fts_or(terms), n, filters, table="fts_words")
    trigram: Ranked = []
    if has_cjk(context) or not words:
        grams = _selective(store, "fts_trigram", trigram_terms(context), cfg)
        trigram = store.lexical(fts_or(grams), n, filters, table="fts_trigram")
    if named := readings_query(terms):  # the same name in romaji: as good as the name itself
        words = _blended(words, store.lexical(named, n, filters, table="fts_words"), n)
    if cfg.equivalents and (similar := _selective(store, "fts_words", synonyms(terms), cfg)):
        found = store.lexical(fts_or(similar), n, filters, table="fts_words")
        words = _blended(words, found, n, SYNONYM_WEIGHT)
    return words, trigram


def translated_memories(
    store: MemoryStore, context: str, n: int, filters: Filters | None, cfg: RecallConfig
) -> Translated:
    """The memories holding the context's words in the other language (:func:`ego_memory.text.terms.translated`:
    scolded → 叱る, 褒める → praise), the ``n`` best by BM25, each with the context's words it holds only that way
    and its text."""
    terms = _unhedged(context, cfg)
    others = _selective(store, "fts_words", translated(terms), cfg)
    if not others:
        return []
    found = store.lexical(fts_or(others), n, filters, table="fts_words")
    texts = store.contents([m for m, _ in found])
    return [(m, cues_translated(terms, texts[m]), texts[m]) for m, _ in found if m in texts]


def translation_ranking(translated_hits: Translated) -> Ranked:
    """Each memory of :func:`translated_memories` with how many of the context's words it holds only in the other
    language (every word of a line counts alike: BM25 would favour the rarer one, 列車 over 電車 for "train")."""
    return [(m, float(len(held))) for m, held, _text in translated_hits]


def across(
    store: MemoryStore,
    profile: SimilarityProfile | None,
    context: str,
    candidates: Sequence[str],
    cosine: Vectors,
    *,
    texts: Mapping[str, str],
    lexical: tuple[Ranked, Ranked],
    translated: Mapping[str, frozenset[str]],
    cfg: RecallConfig,
) -> tuple[Ranked, int] | None:
    """The word index's ranking (``lexical``: its BM25, then the trigram index's) with the candidates written
    in the other language from the context scored on the context's words too, on the same scale
    (``across_languages``), and how many were; None (nothing to change) unless the context's own words found
    a memory written in its language, and one candidate is in the other.

    Such a memory keeps its own BM25 (a name, a reading) plus the BM25 weight (IDF) of each word of the context
    it holds through a translation (``translated``: the words, by memory), as if at average length, or, where
    the embedding model reads more of it, its calibrated similarity (0 at the model's floor, 1 at its duplicate
    similarity) times the weight of all the context's words: what a memory holding that share of them would
    earn."""
    in_cjk = has_cjk(context)
    if not any(m in texts and has_cjk(texts[m]) == in_cjk for m, _ in (*lexical[0], *lexical[1])):
        return None
    other = [  # a memory of emoji or marks only is in no language (its vector sits near any nonsense)
        i for i, m in enumerate(candidates) if m in texts and has_words(texts[m]) and has_cjk(texts[m]) != in_cjk
    ]
    if not other:
        return None
    cues = _unhedged(context, cfg)
    total = store.count()
    frequencies = store.document_frequencies("fts_words", cues)  # a word weighs what its own search pays
    limit = cfg.lexical_max_df * total if total >= cfg.lexical_min_corpus else total
    weight = {c: _idf(total, frequencies.get(c, 0)) for c in cues if frequencies.get(c, 0) <= limit}
    whole = sum(weight.values())
    span = 1.0 if profile is None else max(1e-6, profile.duplicate - profile.floor)
    scores = dict(lexical[0])
    for i in other:
        m = candidates[i]
        held = scores.get(m, 0.0) + sum(weight.get(c, 0.0) for c in translated.get(m, ()))
        seen = 0.0 if profile is None else whole * min(1.0, max(0.0, (float(cosine[i]) - profile.floor) / span))
        if max(held, seen) > 0.0:
            scores[m] = max(held, seen)
    return sorted(scores.items(), key=lambda item: -item[1]), len(other)
