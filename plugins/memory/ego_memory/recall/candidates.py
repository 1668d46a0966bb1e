"""The first stages: the channels that find the candidate set of one recall (dense, lexical, translations, the
calendar period the context names, the English channel), and what ranking it reads from the store."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from datetime import UTC, datetime

import attrs
import numpy as np

from ego_core import SimilarityProfile, Vectors
from ego_memory.config import RecallConfig
from ego_memory.embedding.english import from_blob
from ego_memory.recall import lexical as lex
from ego_memory.recall.periods import named_period
from ego_memory.store.filters import Filters
from ego_memory.store.memory_store import MemoryStore

DAY = 86400.0

ScoringRow = tuple[float, str, float, int, int, float | None]
"""A candidate's scoring row: timestamp, emotion, intensity, importance, access count, last access."""
PreciousCheck = Callable[[Mapping[str, ScoringRow]], set[str]]
"""Which candidates, given their scoring rows, are precious."""


@attrs.define
class Candidates:
    """What the first stages found for one query: everything ranking reads, so it can be ranked again."""

    context: str
    query_vector: Vectors
    ids: list[str]
    dense_ids: list[str]
    lexical: list[tuple[str, float]]
    patterns: Vectors
    rows: dict[str, ScoringRow]
    link_map: dict[str, list[tuple[str, str, float]]]
    """Outgoing links (target, type, confidence) of the memories ranking has read them for: spreading reads
    its sources' and the first hop's when it needs them."""
    present: float
    contents: dict[str, str | None] = attrs.field(factory=dict)
    """Texts read while ranking (interference cues, spreading targets), kept for the next ranking."""
    period: tuple[float, float] | None = None
    """The calendar period the context names (timestamps, end exclusive), when the ``dated`` stage found one."""
    similarity: dict[str, float] = attrs.field(factory=dict)
    """Cosine to the context of memories spreading brought (read while ranking, kept for the next ranking)."""
    link_strength: dict[str, float] | None = None
    """Per candidate, the summed confidence of its links (decay reads it; None: not read yet)."""
    english: Vectors | None = None
    """Per candidate, the English channel's cosine to the context (NaN for a memory without an English
    embedding); None when the context is not English or no English model is configured."""
    anticipated: dict[str, float] = attrs.field(factory=dict)
    """The anticipated moment of the candidates that look forward to one (they keep their strength until then)."""
    precious: set[str] = attrs.field(factory=set)
    """The precious candidates: decay counts their strength as at least ``PRECIOUS_FLOOR``."""
    frontier: tuple[str, ...] = ()
    """The least similar memory of each nearest-neighbour search that came back full (as many as it asked for):
    when one of them matches, memories beyond it may match too."""
    lexical_full: bool = False
    """A lexical search came back full: memories beyond it may hold a word of the context too."""
    translation: list[tuple[str, float]] = attrs.field(factory=list)
    """The memories holding the context's words in the other language, with how many (``translation_ranking``)."""
    across: int = 0
    """How many candidates, written in the other language from the context, the lexical evidence scored on the
    context's words too (``across_languages``: a store holding both languages)."""

    def texts(self, store: MemoryStore, ids: Sequence[str]) -> dict[str, str]:
        """The text of ``ids`` (memories that no longer exist are absent), read once per candidate set."""
        missing = [m for m in ids if m not in self.contents]
        if missing:
            texts = store.contents(missing)
            for m in missing:
                self.contents[m] = texts.get(m)
        return {m: text for m in ids if (text := self.contents[m]) is not None}

    def read_links(self, store: MemoryStore, ids: Sequence[str]) -> None:
        """Read into :attr:`link_map` the outgoing links of the ``ids`` it does not hold yet."""
        unread = [m for m in ids if m not in self.link_map]
        if unread:
            self.link_map.update({m: [] for m in unread})
            self.link_map.update(store.link_rows(unread))


@attrs.define
class Found:
    """What the channels found so far, before the candidates are read from the store."""

    dense: list[tuple[str, float, Vectors]]
    """The dense channel's memories, with their similarity and vector."""
    frontier: list[str]
    words: lex.Ranked = attrs.field(factory=list)
    """The word index's BM25 ranking."""
    trigram: lex.Ranked = attrs.field(factory=list)
    """The trigram index's BM25 ranking."""
    translated: lex.Translated = attrs.field(factory=list)
    lexical: lex.Ranked = attrs.field(factory=list)
    """The lexical evidence: the word and trigram rankings as one, then the named period's."""
    named: lex.Ranked = attrs.field(factory=list)
    """The lexical ranking within the calendar period the context names."""
    translation: lex.Ranked = attrs.field(factory=list)
    lexical_full: bool = False
    period: tuple[float, float] | None = None
    english: lex.Ranked = attrs.field(factory=list)
    """The English channel's nearest memories."""


@attrs.frozen
class Query:
    """One recall's question as the channels read it: the context, its vector, the moment, the filters."""

    context: str
    vector: Vectors
    now: datetime
    filters: Filters | None = None


def present(store: MemoryStore, now: datetime) -> float:
    """The store's own present: now, unless the newest memory is long before it (a dormant or old store)."""
    newest = store.newest_ts()
    return now.timestamp() if newest is None else min(now.timestamp(), newest + DAY)


def _narrowed(filters: Filters | None, period: tuple[float, float]) -> Filters:
    """``filters`` further limited to ``period`` (its end exclusive, to the microsecond)."""
    base = filters or Filters()
    start = period[0] if base.ts_from is None else max(base.ts_from, period[0])
    end = period[1] - 1e-6 if base.ts_to is None else min(base.ts_to, period[1] - 1e-6)
    return attrs.evolve(base, ts_from=start, ts_to=end)


def dense_channel(store: MemoryStore, query: Query, cfg: RecallConfig) -> Found:
    """The nearest memories to the context's vector."""
    dense = store.dense(query.vector, cfg.dense_candidates, query.filters)
    frontier = [dense[-1][0]] if dense and len(dense) >= cfg.dense_candidates else []
    return Found(dense=dense, frontier=frontier)


def lexical_channel(found: Found, store: MemoryStore, query: Query, cfg: RecallConfig) -> Found:
    """BM25 over the context's words (:func:`~ego_memory.recall.lexical.lexical_parts`), and the memories
    holding them in the other language (``translation_weight``, ``across_languages``)."""
    if cfg.fusion:
        found.words, found.trigram = lex.lexical_parts(store, query.context, cfg.lexical_candidates, query.filters, cfg)
    if cfg.fusion and cfg.equivalents and (cfg.translation_weight > 0.0 or cfg.across_languages):
        found.translated = lex.translated_memories(store, query.context, cfg.translation_candidates, query.filters, cfg)
    found.lexical = lex.combined(found.words, found.trigram, cfg.lexical_candidates)
    if cfg.translation_weight > 0.0:
        found.translation = lex.translation_ranking(found.translated)
    found.lexical_full = (
        len(found.lexical) >= cfg.lexical_candidates or len(found.translation) >= cfg.translation_candidates
    )
    return found


def period_channel(found: Found, store: MemoryStore, query: Query, cfg: RecallConfig) -> Found:
    """The calendar period the context names (``dated``): its own best matches, dense and lexical, join."""
    found.period = _period(store, query.context, query.now) if cfg.dated else None
    if found.period is None:
        return found
    within = _narrowed(query.filters, found.period)
    in_period = store.dense(query.vector, cfg.dated_candidates, within)
    found.dense += in_period
    if in_period and len(in_period) >= cfg.dated_candidates:
        found.frontier.append(in_period[-1][0])
    if cfg.fusion:
        found.named = lex.lexical_ranking(store, query.context, cfg.dated_candidates, within, cfg)
        found.lexical_full = found.lexical_full or len(found.named) >= cfg.dated_candidates
        found.lexical = lex.merged(found.lexical, found.named)
    return found


def _period(store: MemoryStore, context: str, now: datetime) -> tuple[float, float] | None:
    """The period ``context`` names, a month without a year read against the store's own present."""
    today = datetime.fromtimestamp(present(store, now), tz=now.tzinfo or UTC)
    window = named_period(context, today)
    return None if window is None else (window[0].timestamp(), window[1].timestamp())


def english_channel(
    found: Found, store: MemoryStore, query: Query, cfg: RecallConfig, english: Vectors | None
) -> Found:
    """The English model's nearest memories to ``english``, the context's English vector (no filters)."""
    if english is not None and cfg.english_weight > 0.0 and query.filters is None:
        found.english = store.english_nearest(english, cfg.english_candidates)
    if found.english and len(found.english) >= cfg.english_candidates:
        found.frontier.append(found.english[-1][0])
    return found


def pooled(found: Found, store: MemoryStore) -> dict[str, Vectors]:
    """The distinct candidates of every channel, in order, with their vectors (those without one left out)."""
    vectors: dict[str, Vectors] = {memory_id: vec for memory_id, _, vec in found.dense}
    candidates = list(
        dict.fromkeys(
            [m for m, _, _ in found.dense]
            + [m for m, _ in found.lexical]
            + [m for m, _, _ in found.translated]
            + [m for m, _ in found.english]
        )
    )
    missing = [m for m in candidates if m not in vectors]
    if missing:
        vectors.update(store.embeddings(missing))
    return {m: vectors[m] for m in candidates if m in vectors}


def _english_cosines(store: MemoryStore, candidates: Sequence[str], english: Vectors) -> Vectors:
    """Each candidate's English-channel cosine to the context (NaN: the memory has no English vector)."""
    blobs = store.english_vectors(candidates)
    cosines = np.full(len(candidates), np.nan, dtype=np.float32)
    for i, memory_id in enumerate(candidates):
        vector = from_blob(blobs.get(memory_id, b""))
        if vector is not None:
            cosines[i] = float(vector @ english)
    return cosines


def read(
    found: Found,
    store: MemoryStore,
    vectors: dict[str, Vectors],
    query: Query,
    cfg: RecallConfig,
    *,
    english: Vectors | None,
    precious: PreciousCheck | None,
) -> Candidates:
    """The candidate set: the pooled candidates with what ranking reads of them (scoring rows, link strengths,
    anticipations, the precious ones, texts, English cosines)."""
    candidates = list(vectors)
    rows = store.scoring_rows(candidates)
    link_strength = store.link_strengths(candidates) if cfg.decay else None
    anticipated = store.anticipations(candidates) if cfg.decay else {}
    chosen = precious(rows) if cfg.decay and precious is not None else set()
    contents: dict[str, str | None] = {}
    if cfg.speaker or cfg.temporal or (cfg.fusion and cfg.across_languages):
        contents.update(store.contents(candidates))
    return Candidates(
        context=query.context,
        query_vector=query.vector,
        ids=candidates,
        dense_ids=[m for m, _, _ in found.dense],
        lexical=found.lexical,
        patterns=np.stack([vectors[m] for m in candidates]),
        rows=rows,
        link_map={},
        link_strength=link_strength,
        present=present(store, query.now),
        contents=contents,
        period=found.period,
        english=(
            _english_cosines(store, candidates, english) if english is not None and cfg.english_weight > 0.0 else None
        ),
        anticipated=anticipated,
        precious=chosen,
        frontier=tuple(found.frontier),
        lexical_full=found.lexical_full,
        translation=found.translation,
    )


def across_languages(
    candidates: Candidates, found: Found, store: MemoryStore, profile: SimilarityProfile | None, cfg: RecallConfig
) -> Candidates:
    """In a store holding both languages, the candidates in the other language from the context scored on its
    words too (:func:`~ego_memory.recall.lexical.across`), merged into the lexical evidence."""
    if not (cfg.fusion and cfg.across_languages):
        return candidates
    scored = lex.across(
        store,
        profile,
        candidates.context,
        candidates.ids,
        candidates.patterns @ candidates.query_vector,
        texts={m: text for m, text in candidates.contents.items() if text is not None},
        lexical=(found.words, found.trigram),
        translated={m: held for m, held, _text in found.translated if held},
        cfg=cfg,
    )
    if scored is not None:
        ranking, candidates.across = scored
        whole = lex.combined(ranking, found.trigram, len(ranking) + len(found.trigram))
        candidates.lexical = lex.merged(whole, found.named)
    return candidates


def gather(
    store: MemoryStore,
    query: Query,
    cfg: RecallConfig,
    *,
    english: Vectors | Future[Vectors] | None,
    profile: SimilarityProfile | None,
    precious: PreciousCheck | None,
) -> Candidates:
    """The channels in order (the English vector awaited once the multilingual and lexical searches are done),
    then the candidate set they found."""
    found = dense_channel(store, query, cfg)
    found = lexical_channel(found, store, query, cfg)
    found = period_channel(found, store, query, cfg)
    if isinstance(english, Future):
        english = english.result()
    found = english_channel(found, store, query, cfg, english)
    vectors = pooled(found, store)
    if not vectors:
        empty = np.zeros((0, 0), np.float32)
        return Candidates(query.context, query.vector, [], [], found.lexical, empty, {}, {}, 0.0)
    candidates = read(found, store, vectors, query, cfg, english=english, precious=precious)
    return across_languages(candidates, found, store, profile, cfg)
