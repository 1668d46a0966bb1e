"""The recall pipeline.

dense top-N + FTS5 BM25 top-N (the context's words; a proper noun's reading too, and Japanese synonyms at half
weight) + BM25 top-N of the context's words in the other language (:mod:`ego_memory.equivalents`); in a store
holding both languages, the memories in the other language from the context scored on its words on the same BM25
scale (``across_languages``: the weight of the words they hold through a translation, or their calibrated
similarity times the weight of all) → fusion (by
default a weighted sum of the z-normalised BM25 and cosine scores, with the count of the context's words a memory
holds in the other language at ``translation_weight``; reciprocal rank fusion with ``fusion_method = "rrf"``) →
Hopfield pattern completion over the candidates' real embeddings → time decay (half-life grows with access and
links; age measured against the store's own present so an old corpus is not buried; full strength until an
anticipated moment; a precious memory's strength counted as at least 0.25; retroactive interference between
near-identical memories) → emotion and importance boosts → label-aware matching and temporal cues → spreading
activation over links (one hop, and optionally a second) → top n.

Every stage can be switched off through :class:`~ego_memory.config.RecallConfig`, which is how
``ego bench locomo --ablate`` measures what each one earns.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from datetime import UTC, datetime

import attrs
import numpy as np

from ego_core import SimilarityProfile, Vectors
from ego_memory.config import RecallConfig
from ego_memory.decay import PRECIOUS_FLOOR, link_strength, strength_at
from ego_memory.embedding.english import from_blob
from ego_memory.emotions import EMOTION_PROFILES
from ego_memory.filters import Filters
from ego_memory.periods import named_period
from ego_memory.store import MemoryStore
from ego_memory.text import (
    HEDGES,
    asks_when,
    cue_share,
    cue_terms,
    cues_in,
    cues_translated,
    fts_or,
    has_cjk,
    has_time_expression,
    label_terms,
    readings_query,
    synonyms,
    translated,
    trigram_terms,
    word_terms,
)

DAY = 86400.0
PERIOD_RELEVANCE = 0.5
"""The relevance of a memory from the calendar period the context names ("what did we do in June 2023?")."""
TRIGRAM_WEIGHT = 0.5
"""The trigram index's share beside the word index in :meth:`RecallEngine.lexical_ranking` (CJK queries). On
JSQuAD (lexical channel alone, hit@5 / hit@1): Sudachi words 0.969 / 0.894, trigrams 0.937 / 0.877, both at
weight 1.0 0.969 / 0.910, at 0.5 0.971 / 0.915."""
SYNONYM_WEIGHT = 0.5
"""The share of a Japanese word's synonyms (:func:`ego_memory.text.synonyms`) beside the word itself in
:meth:`RecallEngine.lexical_ranking`: a memory holding the word is the better match, one holding only a synonym is
still found (「最初に書いた詩」 finds 「初めて短い詩を書いた」 among other poems). JSQuAD hit@5 unchanged (0.971)."""


PreciousCheck = Callable[[Mapping[str, tuple[float, str, float, int, int, float | None]]], set[str]]
"""Which candidates, given their scoring rows, are precious."""


def has_words(text: str) -> bool:
    """Whether ``text`` holds a letter or a digit of any script (not emoji, marks and punctuation alone)."""
    return any(char.isalnum() for char in text)


@attrs.frozen
class Scored:
    id: str
    score: float
    relevance: float | None = None
    """How closely the memory matches the context, 0-1, comparable across queries and stores (None when the
    relevance stage is off): the larger of its calibrated similarity (0 at the model's floor, 1 at its duplicate
    similarity) and the share of the context's words it holds."""
    linked: bool = False
    """Spreading activation brought it along a link from a match: it is not related to the context itself
    (relevance 0), only kept beside a memory that is."""


@attrs.frozen
class Matches:
    """How many memories match a recall: related to the context (relevance above 0), admitted by its filters."""

    count: int
    capped: bool = False
    """The first stages' searches came back full with matches to their last: more may match than were counted
    (``count`` is then a lower bound)."""


@attrs.frozen
class SearchResult:
    hits: tuple[Scored, ...]
    pool: int
    """How many distinct candidates the first stages found (diagnostics; not what the header counts)."""
    stages: tuple[str, ...] = ()
    """The stages that actually ran, in order (so a silent fallback is visible to tests and benchmarks)."""
    completed_patterns: int = 0
    """How many real candidate embeddings the Hopfield completion ran over."""


def hopfield_complete(query: Vectors, patterns: Vectors, beta: float, bias: Vectors | None = None) -> Vectors:
    """One modern Hopfield update (Ramsauer et al. 2020) from the query: ξ = Xᵀ softmax(β X q + b).

    ``patterns`` are the stored patterns X (unit rows), ``bias`` an optional prior per pattern (the lexical
    evidence). The result is the completed pattern, normalised.
    """
    logits = beta * (patterns.astype(np.float64) @ query.astype(np.float64))
    if bias is not None:
        logits = logits + bias
    logits -= logits.max()
    weights = np.exp(logits)
    weights /= weights.sum()
    completed = patterns.T.astype(np.float64) @ weights
    norm = float(np.linalg.norm(completed))
    return (completed / norm if norm > 0.0 else completed).astype(np.float32)


def _narrowed(filters: Filters | None, period: tuple[float, float]) -> Filters:
    """``filters`` further limited to ``period`` (its end exclusive, to the microsecond)."""
    base = filters or Filters()
    start = period[0] if base.ts_from is None else max(base.ts_from, period[0])
    end = period[1] - 1e-6 if base.ts_to is None else min(base.ts_to, period[1] - 1e-6)
    return attrs.evolve(base, ts_from=start, ts_to=end)


def _merged(first: list[tuple[str, float]], extra: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """``first`` followed by what only ``extra`` found (BM25 scores of one query are comparable)."""
    seen = {memory_id for memory_id, _ in first}
    return sorted([*first, *((m, s) for m, s in extra if m not in seen)], key=lambda item: -item[1])


def _blended(
    own: list[tuple[str, float]], other: list[tuple[str, float]], n: int, weight: float = 1.0
) -> list[tuple[str, float]]:
    """The BM25 scores of the query's own words plus ``weight`` times those of other words for them (one index:
    comparable), best first, at most ``n``."""
    combined = dict(own)
    for memory_id, score in other:
        combined[memory_id] = combined.get(memory_id, 0.0) + weight * score
    return sorted(combined.items(), key=lambda item: -item[1])[:n]


def _combined(words: list[tuple[str, float]], trigram: list[tuple[str, float]], n: int) -> list[tuple[str, float]]:
    """The word and trigram rankings as one: z-normalised, the trigrams' weighted by :data:`TRIGRAM_WEIGHT`, summed
    (either alone as it is)."""
    if not trigram or not words:
        return words or trigram
    combined: dict[str, float] = {}
    for weight, ranking in ((1.0, words), (TRIGRAM_WEIGHT, trigram)):
        scores = zscore(np.array([score for _, score in ranking], dtype=np.float32))
        for (memory_id, _), z in zip(ranking, scores, strict=True):
            combined[memory_id] = combined.get(memory_id, 0.0) + weight * (float(z) + 1.0)
    return sorted(combined.items(), key=lambda item: -item[1])[:n]


def _idf(total: int, holding: int) -> float:
    """FTS5's BM25 inverse document frequency of a term ``holding`` of ``total`` memories hold (at least 1e-6)."""
    value = math.log((total - holding + 0.5) / (holding + 0.5))
    return value if value > 0.0 else 1e-6


def rank_map(ids: Sequence[str]) -> dict[str, int]:
    ranks: dict[str, int] = {}
    for rank, memory_id in enumerate(ids, start=1):
        ranks.setdefault(memory_id, rank)
    return ranks


def zscore(values: Vectors) -> Vectors:
    """Standard scores; values that differ by float32 rounding only (the same text embedded in two batches) tie:
    a spread below 1e-6 is no signal, and dividing by it would make the two ends of a tie one standard deviation
    apart."""
    std = float(values.std())
    if std < 1e-6:
        return np.zeros(values.shape, dtype=np.float32)
    normalised: Vectors = ((values - values.mean()) / std).astype(np.float32)
    return normalised


@attrs.define
class Candidates:
    """What the first stages found for one query: everything ranking reads, so it can be ranked again."""

    context: str
    query_vector: Vectors
    ids: list[str]
    dense_ids: list[str]
    lexical: list[tuple[str, float]]
    patterns: Vectors
    rows: dict[str, tuple[float, str, float, int, int, float | None]]
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


class RecallEngine:
    def __init__(self, store: MemoryStore, config: RecallConfig, profile: SimilarityProfile | None = None) -> None:
        self.store = store
        self.config = config
        self.profile = profile
        """The embedding model's similarity profile: its ``floor`` and ``duplicate`` similarities scale relevance."""
        self.precious: PreciousCheck | None = None
        """Which candidates (by their scoring rows) are precious; None: none is."""

    def _selective(self, table: str, terms: list[str], cfg: RecallConfig) -> list[str]:
        """The query terms worth ranking by: on a large store, those not found in most memories."""
        total = self.store.count()
        if total < cfg.lexical_min_corpus or not terms:
            return terms
        frequencies = self.store.document_frequencies(table, terms)
        limit = cfg.lexical_max_df * total
        return [t for t in terms if 0 < frequencies.get(t, 0) <= limit]

    def lexical_ranking(
        self, context: str, n: int, filters: Filters | None, config: RecallConfig | None = None
    ) -> list[tuple[str, float]]:
        """BM25 over the word index (Latin words, Japanese Sudachi words); CJK text (and word-less queries) also
        over the trigram index.

        When both indexes answer, their scores are z-normalised and summed, the trigrams' weighted by
        :data:`TRIGRAM_WEIGHT`, so one list is returned. The reading of a proper noun of the context is searched
        too, in the memories that do not hold the noun itself (宇治 finds "Uji"): it counts as the noun; and the
        synonyms of its Japanese words, their BM25 added at :data:`SYNONYM_WEIGHT`.
        """
        return _combined(*self._lexical_parts(context, n, filters, config or self.config), n)

    def _lexical_parts(
        self, context: str, n: int, filters: Filters | None, cfg: RecallConfig
    ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """The word index's and the trigram index's BM25 rankings of :meth:`lexical_ranking`, not combined yet."""
        terms = word_terms(context)
        if cfg.hedges:
            terms = [t for t in terms if t not in HEDGES] or terms
        terms = self._selective("fts_words", terms, cfg)
        words = self.store.lexical(fts_or(terms), n, filters, table="fts_words")
        trigram: list[tuple[str, float]] = []
        if has_cjk(context) or not words:
            grams = self._selective("fts_trigram", trigram_terms(context), cfg)
            trigram = self.store.lexical(fts_or(grams), n, filters, table="fts_trigram")
        if named := readings_query(terms):  # the same name in romaji: as good as the name itself
            words = _blended(words, self.store.lexical(named, n, filters, table="fts_words"), n)
        if cfg.equivalents and (similar := self._selective("fts_words", synonyms(terms), cfg)):
            found = self.store.lexical(fts_or(similar), n, filters, table="fts_words")
            words = _blended(words, found, n, SYNONYM_WEIGHT)
        return words, trigram

    def translation_ranking(
        self, context: str, n: int, filters: Filters | None, config: RecallConfig | None = None
    ) -> list[tuple[str, float]]:
        """The memories holding the context's words in the other language (:func:`ego_memory.text.translated`:
        scolded → 叱る, 褒める → praise), the ``n`` best by BM25, each with how many of the context's words it holds
        only that way (every word of a line counts alike: BM25 would favour the rarer one, 列車 over 電車 for
        "train"); empty when the context's words have none."""
        return [(m, float(len(held))) for m, held, _text in self._translated(context, n, filters, config)]

    def _translated(
        self, context: str, n: int, filters: Filters | None, config: RecallConfig | None = None
    ) -> list[tuple[str, frozenset[str], str]]:
        """:meth:`translation_ranking`'s memories, each with the context's words it holds only in the other
        language and its text."""
        cfg = config or self.config
        terms = word_terms(context)
        if cfg.hedges:
            terms = [t for t in terms if t not in HEDGES] or terms
        others = self._selective("fts_words", translated(terms), cfg)
        if not others:
            return []
        found = self.store.lexical(fts_or(others), n, filters, table="fts_words")
        texts = self.store.contents([m for m, _ in found])
        return [(m, cues_translated(terms, texts[m]), texts[m]) for m, _ in found if m in texts]

    def _across(
        self,
        context: str,
        candidates: Sequence[str],
        cosine: Vectors,
        *,
        texts: Mapping[str, str],
        lexical: tuple[list[tuple[str, float]], list[tuple[str, float]]],
        translated: Mapping[str, frozenset[str]],
        cfg: RecallConfig,
    ) -> tuple[list[tuple[str, float]], int] | None:
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
        cues = word_terms(context)
        if cfg.hedges:
            cues = [t for t in cues if t not in HEDGES] or cues
        total = self.store.count()
        frequencies = self.store.document_frequencies("fts_words", cues)  # a word weighs what its own search pays
        limit = cfg.lexical_max_df * total if total >= cfg.lexical_min_corpus else total
        weight = {c: _idf(total, frequencies.get(c, 0)) for c in cues if frequencies.get(c, 0) <= limit}
        whole = sum(weight.values())
        profile = self.profile
        span = 1.0 if profile is None else max(1e-6, profile.duplicate - profile.floor)
        scores = dict(lexical[0])
        for i in other:
            m = candidates[i]
            held = scores.get(m, 0.0) + sum(weight.get(c, 0.0) for c in translated.get(m, ()))
            seen = 0.0 if profile is None else whole * min(1.0, max(0.0, (float(cosine[i]) - profile.floor) / span))
            if max(held, seen) > 0.0:
                scores[m] = max(held, seen)
        return sorted(scores.items(), key=lambda item: -item[1]), len(other)

    def search(
        self,
        context: str,
        query_vector: Vectors,
        n: int,
        now: datetime,
        filters: Filters | None = None,
        *,
        english: Vectors | Future[Vectors] | None = None,
    ) -> SearchResult:
        return self.rank(self.gather(context, query_vector, now, filters, english=english), n, filters)

    def gather(
        self,
        context: str,
        query_vector: Vectors,
        now: datetime,
        filters: Filters | None = None,
        config: RecallConfig | None = None,
        *,
        english: Vectors | Future[Vectors] | None = None,
    ) -> Candidates:
        """The first stages: dense and lexical candidates, with what ranking them reads from the store; with
        ``config`` (default: the engine's own). ``english``: the context's English-channel vector, if any, or
        its embedding still under way (awaited once the multilingual and lexical searches are done)."""
        cfg = config or self.config
        dense = self.store.dense(query_vector, cfg.dense_candidates, filters)
        words, trigram = self._lexical_parts(context, cfg.lexical_candidates, filters, cfg) if cfg.fusion else ([], [])
        translated_hits = (
            self._translated(context, cfg.translation_candidates, filters, cfg)
            if cfg.fusion and cfg.equivalents and (cfg.translation_weight > 0.0 or cfg.across_languages)
            else []
        )
        lexical = _combined(words, trigram, cfg.lexical_candidates)
        named: list[tuple[str, float]] = []
        translation = (
            [(m, float(len(held))) for m, held, _text in translated_hits] if cfg.translation_weight > 0.0 else []
        )
        frontier = [dense[-1][0]] if dense and len(dense) >= cfg.dense_candidates else []
        lexical_full = len(lexical) >= cfg.lexical_candidates or len(translation) >= cfg.translation_candidates
        period = self._period(context, now) if cfg.dated else None
        if period is not None:  # the named period's own best matches join the candidates
            within = _narrowed(filters, period)
            in_period = self.store.dense(query_vector, cfg.dated_candidates, within)
            dense += in_period
            if in_period and len(in_period) >= cfg.dated_candidates:
                frontier.append(in_period[-1][0])
            if cfg.fusion:
                named = self.lexical_ranking(context, cfg.dated_candidates, within, cfg)
                lexical_full = lexical_full or len(named) >= cfg.dated_candidates
                lexical = _merged(lexical, named)
        if isinstance(english, Future):
            english = english.result()
        english_on = english is not None and cfg.english_weight > 0.0
        nearest_english = (
            self.store.english_nearest(english, cfg.english_candidates)
            if english is not None and english_on and filters is None
            else []
        )
        if nearest_english and len(nearest_english) >= cfg.english_candidates:
            frontier.append(nearest_english[-1][0])
        vectors: dict[str, Vectors] = {memory_id: vec for memory_id, _, vec in dense}
        candidates = list(
            dict.fromkeys(
                [m for m, _, _ in dense]
                + [m for m, _ in lexical]
                + [m for m, _, _ in translated_hits]
                + [m for m, _ in nearest_english]
            )
        )
        missing = [m for m in candidates if m not in vectors]
        if missing:
            vectors.update(self.store.embeddings(missing))
            candidates = [m for m in candidates if m in vectors]
        if not candidates:
            return Candidates(context, query_vector, [], [], lexical, np.zeros((0, 0), np.float32), {}, {}, 0.0)
        rows = self.store.scoring_rows(candidates)
        link_strength = self.store.link_strengths(candidates) if cfg.decay else None
        anticipated = self.store.anticipations(candidates) if cfg.decay else {}
        precious = self.precious(rows) if cfg.decay and self.precious is not None else set()
        contents: dict[str, str | None] = {}
        if cfg.speaker or cfg.temporal or (cfg.fusion and cfg.across_languages):
            contents.update(self.store.contents(candidates))
        across = 0
        if cfg.fusion and cfg.across_languages:
            scored = self._across(
                context,
                candidates,
                np.stack([vectors[m] for m in candidates]) @ query_vector,
                texts={m: text for m, text in contents.items() if text is not None},
                lexical=(words, trigram),
                translated={m: held for m, held, _text in translated_hits if held},
                cfg=cfg,
            )
            if scored is not None:
                ranking, across = scored
                lexical = _merged(_combined(ranking, trigram, len(ranking) + len(trigram)), named)
        return Candidates(
            context=context,
            query_vector=query_vector,
            ids=candidates,
            dense_ids=[m for m, _, _ in dense],
            lexical=lexical,
            patterns=np.stack([vectors[m] for m in candidates]),
            rows=rows,
            link_map={},
            link_strength=link_strength,
            present=self.present(now),
            contents=contents,
            period=period,
            english=self._english(candidates, english) if english is not None and english_on else None,
            anticipated=anticipated,
            precious=precious,
            frontier=tuple(frontier),
            lexical_full=lexical_full,
            translation=translation,
            across=across,
        )

    def _english(self, candidates: Sequence[str], english: Vectors) -> Vectors:
        """Each candidate's English-channel cosine to the context (NaN: the memory has no English vector)."""
        blobs = self.store.english_vectors(candidates)
        cosines = np.full(len(candidates), np.nan, dtype=np.float32)
        for i, memory_id in enumerate(candidates):
            vector = from_blob(blobs.get(memory_id, b""))
            if vector is not None:
                cosines[i] = float(vector @ english)
        return cosines

    def _period(self, context: str, now: datetime) -> tuple[float, float] | None:
        """The period ``context`` names, a month without a year read against the store's own present."""
        present = datetime.fromtimestamp(self.present(now), tz=now.tzinfo or UTC)
        window = named_period(context, present)
        return None if window is None else (window[0].timestamp(), window[1].timestamp())

    def _contents(self, found: Candidates, ids: Sequence[str]) -> dict[str, str]:
        """The text of ``ids`` (memories that no longer exist are absent), read once per candidate set."""
        missing = [m for m in ids if m not in found.contents]
        if missing:
            texts = self.store.contents(missing)
            for m in missing:
                found.contents[m] = texts.get(m)
        return {m: text for m in ids if (text := found.contents[m]) is not None}

    def rank(
        self, found: Candidates, n: int, filters: Filters | None = None, config: RecallConfig | None = None
    ) -> SearchResult:
        """Score and order gathered candidates with ``config`` (default: the engine's own)."""
        cfg = config or self.config
        candidates = found.ids
        if not candidates:
            return SearchResult(hits=(), pool=0)
        query_vector = found.query_vector
        dense, lexical = found.dense_ids, found.lexical
        stages = ["dense", "lexical"] if lexical else ["dense"]
        if found.across:
            stages.append("across")
        lexical_scores = dict(lexical)
        patterns = found.patterns
        cosine = patterns @ query_vector
        lexical_z = zscore(np.array([lexical_scores.get(m, 0.0) for m in candidates], dtype=np.float32))

        # Fusion of the two rankings.
        if cfg.fusion and cfg.fusion_method == "rrf":
            dense_rank = rank_map(dense)
            lexical_rank = rank_map([m for m, _ in lexical])
            rrf = np.array(
                [
                    ((1.0 - cfg.lexical_weight) / (cfg.rrf_k + dense_rank[m]) if m in dense_rank else 0.0)
                    + (cfg.lexical_weight / (cfg.rrf_k + lexical_rank[m]) if m in lexical_rank else 0.0)
                    for m in candidates
                ],
                dtype=np.float32,
            )
            fused = zscore(rrf)
            stages.append("fusion:rrf")
        elif cfg.fusion:
            fused = cfg.lexical_weight * lexical_z + (1.0 - cfg.lexical_weight) * zscore(cosine)
            stages.append("fusion:zscore")
        else:
            fused = zscore(cosine)
        if cfg.fusion and cfg.equivalents and found.translation and cfg.translation_weight > 0.0:
            held = dict(found.translation)
            translation_z = zscore(np.array([held.get(m, 0.0) for m in candidates], dtype=np.float32))
            weight = cfg.translation_weight * self._unseen(float(cosine.max()))
            fused = (fused + weight * translation_z).astype(np.float32)
            stages.append("translations")
        english_z = self._english_z(found) if cfg.english_weight > 0.0 else None
        if english_z is not None:
            stages.append("english")
            fused = ((fused + cfg.english_weight * english_z) / (1.0 + cfg.english_weight)).astype(np.float32)
        scores = fused.astype(np.float64)

        # Hopfield pattern completion over the candidates' embeddings, the lexical evidence as a prior.
        completed_patterns = 0
        if cfg.hopfield and len(candidates) > 1:
            completed = hopfield_complete(
                query_vector, patterns, cfg.hopfield_beta, cfg.hopfield_lexical_bias * lexical_z
            )
            state = cfg.hopfield_blend * completed + (1.0 - cfg.hopfield_blend) * query_vector
            state /= max(float(np.linalg.norm(state)), 1e-12)
            scores += cfg.hopfield_weight * zscore(patterns @ state)
            completed_patterns = len(candidates)
            stages.append("hopfield")

        rows = found.rows
        link_map = found.link_map
        score_of = {m: float(scores[i]) for i, m in enumerate(candidates) if m in rows}

        if cfg.decay:
            stages.append("decay")
        if cfg.boosts:
            stages.append("boosts")
        if cfg.decay or cfg.boosts:
            present = found.present
            if cfg.decay and found.link_strength is None:
                found.link_strength = self.store.link_strengths(candidates)
            strength = found.link_strength or {}
            for m in score_of:
                ts, emotion, intensity, importance, access_count, _last = rows[m]
                if cfg.decay:
                    links = link_strength(strength.get(m, 0.0))
                    recency = strength_at(
                        ts,
                        present,
                        cfg.half_life_days,
                        access_count=access_count,
                        links=links,
                        anticipated=found.anticipated.get(m),
                    )
                    if m in found.precious:
                        recency = max(recency, PRECIOUS_FLOOR)
                    score_of[m] += cfg.decay_weight * (recency - 1.0)
                if cfg.boosts:
                    profile = EMOTION_PROFILES.get(emotion)
                    score_of[m] += cfg.emotion_weight * (profile.recall_boost if profile else 0.0) * intensity
                    score_of[m] += cfg.importance_gain * (importance - 3)
            if cfg.decay and cfg.interference_weight > 0.0:
                vectors = {m: patterns[i] for i, m in enumerate(candidates)}
                self._interfere(found, cfg, score_of, rows, vectors)

        if (cfg.speaker or cfg.temporal) and score_of:
            self._fields(found, cfg, score_of, stages)

        if cfg.dated and found.period is not None and score_of:
            stages.append("dated")
            start, end = found.period[0], found.period[1] + cfg.dated_slack_days * DAY
            for m in score_of:
                if start <= rows[m][0] < end:
                    score_of[m] += cfg.dated_weight

        if cfg.spreading and score_of:
            stages.append("spreading")
            floor = min(score_of.values())
            ordered = sorted(score_of, key=lambda m: -score_of[m])
            sources = ordered[: cfg.spreading_sources]
            # What a source passes on: its lead over the best memory that is not a source (contrast), or over
            # the weakest candidate (the earlier rule, which grows with the pool the first stages found).
            baseline = score_of[ordered[min(len(ordered) - 1, len(sources))]] if cfg.spreading_contrast else floor
            self._read_links(link_map, sources)
            activation: dict[str, float] = {}
            for source in sources:
                lift = score_of[source] - baseline
                if cfg.spreading_contrast:  # a source keeps exciting itself, as if linked to itself
                    activation[source] = activation.get(source, 0.0) + cfg.sequence_gain * lift
                for target, link_type, confidence in link_map.get(source, []):
                    gain = cfg.similar_gain if link_type == "similar" else cfg.sequence_gain
                    activation[target] = activation.get(target, 0.0) + gain * confidence * lift
            if cfg.two_hop:
                stages.append("two_hop")
                self._read_links(link_map, list(activation))  # the first hop's, read once per candidate set
                second: dict[str, float] = {}
                for node, passed in activation.items():
                    for target, link_type, confidence in link_map.get(node, []):
                        if target in sources:
                            continue
                        gain = cfg.similar_gain if link_type == "similar" else cfg.sequence_gain
                        second[target] = second.get(target, 0.0) + cfg.two_hop_gain * gain * confidence * passed
                for target, value in second.items():
                    activation[target] = activation.get(target, 0.0) + value
            newcomers = [m for m in activation if m not in score_of]
            if newcomers:
                if filters is None:  # the ones that still exist
                    present_ids = set(self._contents(found, newcomers))
                else:
                    present_ids = {
                        mem.id for mem in self.store.get(newcomers, with_links=False) if filters.matches(mem)
                    }
                activation = {m: a for m, a in activation.items() if m in score_of or m in present_ids}
            for m, a in activation.items():
                score_of[m] = score_of.get(m, floor) + a

        ranked = sorted(score_of, key=lambda m: (-score_of[m], m))
        if cfg.relevance and self.profile is not None:
            stages.append("relevance")
            hits = self._relevant(found, ranked, score_of, cosine, n=n, profile=self.profile)
        else:
            hits = tuple(Scored(m, score_of[m]) for m in ranked[:n])
        return SearchResult(
            hits=hits,
            pool=len(candidates),
            stages=tuple(stages),
            completed_patterns=completed_patterns,
        )

    def _unseen(self, top: float) -> float:
        """How little the embedding model sees of the context among the candidates, from the similarity of the
        closest one: 1 at the model's ``floor`` or below (nothing related: "scolded" against a diary in Japanese,
        0.21), 0 from its ``link`` similarity up (it found what the context is about: a Tanaka sentence's
        translation, median 0.70), linear between; 1 without a similarity profile. The words of the context
        found in the other language count that much: where the model sees the match, they would only reorder
        its finds by a shared common word."""
        if self.profile is None:
            return 1.0
        span = max(1e-6, self.profile.link - self.profile.floor)
        return min(1.0, max(0.0, (self.profile.link - top) / span))

    def _read_links(self, link_map: dict[str, list[tuple[str, str, float]]], ids: Sequence[str]) -> None:
        """Read into ``link_map`` the outgoing links of the ``ids`` it does not hold yet."""
        unread = [m for m in ids if m not in link_map]
        if unread:
            link_map.update({m: [] for m in unread})
            link_map.update(self.store.link_rows(unread))

    @staticmethod
    def _english_z(found: Candidates) -> Vectors | None:
        """The English channel's evidence, z-normalised over the candidates that have an English vector; one
        without (a Japanese memory) gets the multilingual model's standard score instead, its stand-in for what
        the English model cannot read. (Counted as average, every English memory the English model liked ranked
        above the Japanese memories of a mixed store: "stars in Hakone" brought "…talked about stars." before
        「箱根の温泉に行って、露天風呂から星を見た。」.) None when the context has no English vector or fewer than
        two candidates do."""
        english = found.english
        if english is None:
            return None
        known = ~np.isnan(english)
        if known.sum() < 2:
            return None
        english_z = zscore(found.patterns @ found.query_vector)
        english_z[known] = zscore(english[known])
        return english_z

    def _relevant(
        self,
        found: Candidates,
        ranked: list[str],
        score_of: dict[str, float],
        cosine: Vectors,
        *,
        n: int,
        profile: SimilarityProfile,
    ) -> tuple[Scored, ...]:
        """The top ``n`` of ``ranked`` that are related to the context at all, each with its relevance.

        A memory is related when its similarity is above the model's floor (for a memory without a letter or
        digit, emoji only, only when the context has none either), it holds a word of the context, or it is from
        the calendar period the context names; a memory that spreading brought is kept beside a related one.
        Nothing related: nothing is returned ("No related memories found.")."""
        similarity = {m: float(cosine[i]) for i, m in enumerate(found.ids)}
        window = ranked[: max(n * 3, n + 5)]
        spread = [m for m in window if m not in similarity]
        unread = [m for m in spread if m not in found.similarity]
        if unread:  # linked memories the first stages did not find: their own similarity, read once
            found.similarity.update(dict.fromkeys(unread, -1.0))
            for m, vector in self.store.embeddings(unread).items():
                found.similarity[m] = float(np.asarray(vector, dtype=np.float32).reshape(-1) @ found.query_vector)
        similarity.update({m: found.similarity[m] for m in spread})
        relevance = self._relevance(found, window, similarity, profile)
        related: list[Scored] = []
        linked: list[Scored] = []
        for m in window:
            hit = Scored(m, score_of[m], relevance[m])
            if hit.relevance:
                related.append(hit)
            elif m in spread:
                linked.append(attrs.evolve(hit, linked=True))
        if not related:
            return ()
        kept = sorted([*related, *linked], key=lambda hit: (-hit.score, hit.id))
        return tuple(kept[:n])

    def _relevance(
        self, found: Candidates, ids: Sequence[str], similarity: Mapping[str, float], profile: SimilarityProfile
    ) -> dict[str, float]:
        """Each memory's relevance to the context (0-1, rounded to 4 places): the largest of its calibrated
        similarity, the share of the context's words it holds (:func:`ego_memory.text.cue_share`: a word held
        through an equivalent counts half), and :data:`PERIOD_RELEVANCE` when it is from the
        calendar period the context names. 0: not related at all."""
        cues = cue_terms(found.context)
        texts = self._contents(found, ids)
        context_has_words = has_words(found.context)
        span = max(1e-6, profile.duplicate - profile.floor)
        period = found.period
        relevance: dict[str, float] = {}
        for m in ids:
            dense = min(1.0, max(0.0, (similarity.get(m, profile.floor) - profile.floor) / span))
            if context_has_words and m in texts and not has_words(texts[m]):
                dense = 0.0  # a memory of emoji or marks only: its vector sits near any nonsense
            lexical = cue_share(cues, texts[m]) if m in texts else 0.0
            row = found.rows.get(m)
            dated = PERIOD_RELEVANCE if period and row and period[0] <= row[0] < period[1] else 0.0
            relevance[m] = round(max(dense, lexical, dated), 4)
        return relevance

    def matches(self, found: Candidates, hits: Sequence[Scored]) -> Matches | None:
        """How many memories match the context: the candidates the first stages found (every one admitted by the
        filters) that are related to it, with the related ones among ``hits`` (spreading may bring a related
        memory no search found). None when relevance is not measured (the stage is off, or no profile)."""
        if not (self.config.relevance and self.profile is not None):
            return None
        if not found.ids:
            return Matches(len({hit.id for hit in hits if hit.relevance}))
        cosine = found.patterns @ found.query_vector
        similarity = {m: float(cosine[i]) for i, m in enumerate(found.ids)}
        relevance = self._relevance(found, found.ids, similarity, self.profile)
        matched = {m for m, value in relevance.items() if value} | {hit.id for hit in hits if hit.relevance}
        capped = found.lexical_full or any(m in matched for m in found.frontier) or self._common_cue(found.context)
        return Matches(len(matched), capped)

    def _common_cue(self, context: str) -> bool:
        """Whether the lexical search left out a word of the context as too common (a large store, the word in
        more than ``lexical_max_df`` of it): the memories holding it match, most of them beyond the candidates."""
        cfg = self.config
        terms = word_terms(context)
        total = self.store.count()
        if total < cfg.lexical_min_corpus or not terms:
            return False
        frequencies = self.store.document_frequencies("fts_words", terms)
        return any(count > cfg.lexical_max_df * total for count in frequencies.values())

    def _fields(self, found: Candidates, cfg: RecallConfig, score_of: dict[str, float], stages: list[str]) -> None:
        """Field-aware matching (a ``<label>: `` the context names) and temporal cues (a context asking when)."""
        texts = self._contents(found, list(score_of))
        terms = set(word_terms(found.context))
        when = cfg.temporal and asks_when(found.context)
        if cfg.speaker:
            stages.append("speaker")
        if when:
            stages.append("temporal")
        for m, text in texts.items():
            if cfg.speaker and label_terms(text) & terms:
                score_of[m] += cfg.speaker_weight
            if when and has_time_expression(text):
                score_of[m] += cfg.temporal_weight

    def _interfere(
        self,
        found: Candidates,
        cfg: RecallConfig,
        score_of: dict[str, float],
        rows: dict[str, tuple[float, str, float, int, int, float | None]],
        vectors: dict[str, Vectors],
    ) -> None:
        """Retroactive interference: a memory fades faster when a newer, nearly identical one exists.

        Among the strongest candidates, each pair with cosine similarity above ``interference_threshold``
        lowers the older one in proportion to how close they are (the newer statement of a changed fact wins
        the tie; unrelated old memories are untouched, so an old corpus is not buried).

        Interference is competition for the same retrieval cue, so it only acts when the newer memory answers
        every cue of the context that the older one answers (its words: Latin words, Japanese content words as
        Sudachi reads them). When the older memory holds a cue the newer one lacks, the context is asking for the older
        one: "Mia's favourite tea" brings the newer statement, "when did Mia like jasmine" the older. This
        also keeps the embedding's blind spots from burying anything: all-MiniLM-L6-v2 maps most kanji to
        [UNK], so unrelated Japanese sentences of one frame (今日は夕焼けを一緒に見た, 今日は一緒に映画を見た)
        have a cosine near 0.95, yet only one of them holds 夕焼け.
        """
        top = [m for m in sorted(score_of, key=lambda m: -score_of[m])[: cfg.interference_pool] if m in vectors]
        if len(top) < 2:
            return
        matrix = np.stack([vectors[m] for m in top])
        similarity = matrix @ matrix.T
        span = max(1e-6, 1.0 - cfg.interference_threshold)
        close = [  # (older, newer) pairs
            (i, j)
            for i, older in enumerate(top)
            for j, newer in enumerate(top)
            if rows[newer][0] > rows[older][0] and similarity[i, j] > cfg.interference_threshold
        ]
        if not close:
            return
        cues = cue_terms(found.context)
        answered: dict[str, frozenset[str]] = {}
        if cues:
            involved = list(dict.fromkeys(top[k] for pair in close for k in pair))
            answered = {m: cues_in(cues, text) for m, text in self._contents(found, involved).items()}
        closest: dict[int, float] = {}
        for i, j in close:
            if answered.get(top[i], frozenset()) - answered.get(top[j], frozenset()):
                continue  # the older memory holds a cue the newer one lacks: no competition for this context
            closest[i] = max(closest.get(i, 0.0), (float(similarity[i, j]) - cfg.interference_threshold) / span)
        for i, closeness in closest.items():
            # The closest newer memory decides; several newer ones do not add up (a unique detail still wins).
            score_of[top[i]] -= cfg.interference_weight * min(1.0, closeness)

    def present(self, now: datetime) -> float:
        """The store's own present: now, unless the newest memory is long before it (a dormant or old store)."""
        newest = self.store.newest_ts()
        return now.timestamp() if newest is None else min(now.timestamp(), newest + DAY)
