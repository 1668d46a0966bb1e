"""Hopfield pattern completion: one modern Hopfield update over the candidates' real embeddings, the lexical
evidence as a prior; the candidates close to the completed pattern rise."""

from __future__ import annotations

import numpy as np

from ego_core import Vectors
from ego_memory.config import RecallConfig
from ego_memory.recall.candidates import Candidates
from ego_memory.recall.ranking import Ranking, zscore


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


def complete(ranking: Ranking, found: Candidates, cfg: RecallConfig) -> Ranking:
    """The scores with the completion's evidence added (``hopfield``, more than one candidate)."""
    candidates, patterns, query_vector = found.ids, found.patterns, found.query_vector
    if cfg.hopfield and len(candidates) > 1:
        completed = hopfield_complete(
            query_vector, patterns, cfg.hopfield_beta, cfg.hopfield_lexical_bias * ranking.lexical
        )
        state = cfg.hopfield_blend * completed + (1.0 - cfg.hopfield_blend) * query_vector
        state /= max(float(np.linalg.norm(state)), 1e-12)
        evidence = cfg.hopfield_weight * zscore(patterns @ state)
        for i, m in enumerate(candidates):
            if m in ranking.scores:
                ranking.scores[m] = float(np.float64(ranking.scores[m]) + evidence[i])
        ranking.completed_patterns = len(candidates)
        ranking.stages.append("hopfield")
    return ranking
