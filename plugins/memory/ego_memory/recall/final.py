"""The last stage: the top ``n`` with each hit's relevance to the context (only memories related to it), and how
many memories match a recall."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs
import numpy as np

from ego_core import SimilarityProfile, Vectors
from ego_memory.config import RecallConfig
from ego_memory.recall.candidates import Candidates
from ego_memory.recall.lexical import has_words
from ego_memory.recall.ranking import Matches, Ranking, Scored, SearchResult
from ego_memory.store.memory_store import MemoryStore
from ego_memory.text.terms import cue_share, cue_terms, word_terms

PERIOD_RELEVANCE = 0.5
"""The relevance of a memory from the calendar period the context names ("what did we do in June 2023?")."""


def final(
    ranking: Ranking,
    found: Candidates,
    cfg: RecallConfig,
    store: MemoryStore,
    *,
    n: int,
    profile: SimilarityProfile | None,
) -> SearchResult:
    """The top ``n``, each with its relevance when that stage is on (only memories related to the context)."""
    score_of, stages = ranking.scores, ranking.stages
    ranked = sorted(score_of, key=lambda m: (-score_of[m], m))
    if cfg.relevance and profile is not None:
        stages.append("relevance")
        hits = _relevant(found, store, ranked, score_of, ranking.cosine, n=n, profile=profile)
    else:
        hits = tuple(Scored(m, score_of[m]) for m in ranked[:n])
    return SearchResult(
        hits=hits,
        pool=len(found.ids),
        stages=tuple(stages),
        completed_patterns=ranking.completed_patterns,
    )


def _relevant(
    found: Candidates,
    store: MemoryStore,
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
        for m, vector in store.embeddings(unread).items():
            found.similarity[m] = float(np.asarray(vector, dtype=np.float32).reshape(-1) @ found.query_vector)
    similarity.update({m: found.similarity[m] for m in spread})
    relevance = _relevance(found, store, window, similarity, profile)
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
    found: Candidates,
    store: MemoryStore,
    ids: Sequence[str],
    similarity: Mapping[str, float],
    profile: SimilarityProfile,
) -> dict[str, float]:
    """Each memory's relevance to the context (0-1, rounded to 4 places): the largest of its calibrated
    similarity, the share of the context's words it holds (:func:`ego_memory.text.terms.cue_share`: a word held
    through an equivalent counts half), and :data:`PERIOD_RELEVANCE` when it is from the
    calendar period the context names. 0: not related at all."""
    cues = cue_terms(found.context)
    texts = found.texts(store, ids)
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


def matches(
    found: Candidates,
    hits: Sequence[Scored],
    cfg: RecallConfig,
    store: MemoryStore,
    profile: SimilarityProfile | None,
) -> Matches | None:
    """How many memories match the context: the candidates the first stages found (every one admitted by the
    filters) that are related to it, with the related ones among ``hits`` (spreading may bring a related
    memory no search found). None when relevance is not measured (the stage is off, or no profile)."""
    if not (cfg.relevance and profile is not None):
        return None
    if not found.ids:
        return Matches(len({hit.id for hit in hits if hit.relevance}))
    cosine = found.patterns @ found.query_vector
    similarity = {m: float(cosine[i]) for i, m in enumerate(found.ids)}
    relevance = _relevance(found, store, found.ids, similarity, profile)
    matched = {m for m, value in relevance.items() if value} | {hit.id for hit in hits if hit.relevance}
    capped = found.lexical_full or any(m in matched for m in found.frontier) or _common_cue(store, found.context, cfg)
    return Matches(len(matched), capped)


def _common_cue(store: MemoryStore, context: str, cfg: RecallConfig) -> bool:
    """Whether the lexical search left out a word of the context as too common (a large store, the word in
    more than ``lexical_max_df`` of it): the memories holding it match, most of them beyond the candidates."""
    terms = word_terms(context)
    total = store.count()
    if total < cfg.lexical_min_corpus or not terms:
        return False
    frequencies = store.document_frequencies("fts_words", terms)
    return any(count > cfg.lexical_max_df * total for count in frequencies.values())
