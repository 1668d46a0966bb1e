"""Reweighing by the memory itself: time decay (with retroactive interference between near-identical memories)
and the emotion and importance boosts."""

from __future__ import annotations

import numpy as np

from ego_core import Vectors
from ego_memory.config import RecallConfig
from ego_memory.recall.candidates import Candidates, ScoringRow
from ego_memory.recall.decay import PRECIOUS_FLOOR, link_strength, strength_at
from ego_memory.recall.ranking import Ranking
from ego_memory.record.emotions import EMOTION_PROFILES
from ego_memory.store.memory_store import MemoryStore
from ego_memory.text.terms import cue_terms, cues_in


def reweigh(ranking: Ranking, found: Candidates, cfg: RecallConfig, store: MemoryStore) -> Ranking:
    """Time decay (half-life grows with access and links; age measured against the store's own present; full
    strength until an anticipated moment; a precious memory's strength counted as at least
    :data:`~ego_memory.recall.decay.PRECIOUS_FLOOR`), interference, and the emotion and importance boosts."""
    candidates, rows, patterns, stages = found.ids, found.rows, found.patterns, ranking.stages
    score_of = ranking.scores
    if cfg.decay:
        stages.append("decay")
    if cfg.boosts:
        stages.append("boosts")
    if cfg.decay or cfg.boosts:
        present = found.present
        if cfg.decay and found.link_strength is None:
            found.link_strength = store.link_strengths(candidates)
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
            _interfere(found, cfg, store, score_of, rows=rows, vectors=vectors)
    return ranking


def _interfere(
    found: Candidates,
    cfg: RecallConfig,
    store: MemoryStore,
    score_of: dict[str, float],
    *,
    rows: dict[str, ScoringRow],
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
        answered = {m: cues_in(cues, text) for m, text in found.texts(store, involved).items()}
    closest: dict[int, float] = {}
    for i, j in close:
        if answered.get(top[i], frozenset()) - answered.get(top[j], frozenset()):
            continue  # the older memory holds a cue the newer one lacks: no competition for this context
        closest[i] = max(closest.get(i, 0.0), (float(similarity[i, j]) - cfg.interference_threshold) / span)
    for i, closeness in closest.items():
        # The closest newer memory decides; several newer ones do not add up (a unique detail still wins).
        score_of[top[i]] -= cfg.interference_weight * min(1.0, closeness)
