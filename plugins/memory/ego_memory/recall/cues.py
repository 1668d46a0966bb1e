"""Cues the context gives beyond its words: a ``<label>: `` it names (speaker), a question asking when
(temporal), and a calendar period it names (dated)."""

from __future__ import annotations

from ego_memory.config import RecallConfig
from ego_memory.recall.candidates import DAY, Candidates
from ego_memory.recall.ranking import Ranking
from ego_memory.store.memory_store import MemoryStore
from ego_memory.text.terms import asks_when, has_time_expression, label_terms, word_terms


def fields(ranking: Ranking, found: Candidates, cfg: RecallConfig, store: MemoryStore) -> Ranking:
    """Field-aware matching (a memory whose ``<label>: `` the context names rises by ``speaker_weight``) and
    temporal cues (for a context asking when, a memory holding a time expression rises by ``temporal_weight``)."""
    score_of, stages = ranking.scores, ranking.stages
    if not ((cfg.speaker or cfg.temporal) and score_of):
        return ranking
    texts = found.texts(store, list(score_of))
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
    return ranking


def dated(ranking: Ranking, found: Candidates, cfg: RecallConfig) -> Ranking:
    """The memories from the calendar period the context names (with ``dated_slack_days`` after it) rise."""
    rows, score_of = found.rows, ranking.scores
    if cfg.dated and found.period is not None and score_of:
        ranking.stages.append("dated")
        start, end = found.period[0], found.period[1] + cfg.dated_slack_days * DAY
        for m in score_of:
            if start <= rows[m][0] < end:
                score_of[m] += cfg.dated_weight
    return ranking
