"""Fusion: the dense and lexical rankings of the candidate set as one score (z-scores or reciprocal ranks), with
the translations' and the English channel's evidence. It makes the :class:`~ego_memory.recall.ranking.Ranking`
the later stages pass on."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ego_core import SimilarityProfile, Vectors
from ego_memory.config import RecallConfig
from ego_memory.recall.candidates import Candidates
from ego_memory.recall.ranking import Ranking, zscore


def rank_map(ids: Sequence[str]) -> dict[str, int]:
    ranks: dict[str, int] = {}
    for rank, memory_id in enumerate(ids, start=1):
        ranks.setdefault(memory_id, rank)
    return ranks


def fuse(found: Candidates, cfg: RecallConfig, profile: SimilarityProfile | None) -> Ranking:
    """The candidates' fused scores (those still in the store), with the stages the first ones ran."""
    stages = ["dense", "lexical"] if found.lexical else ["dense"]
    if found.across:
        stages.append("across")
    candidates = found.ids
    cosine = found.patterns @ found.query_vector
    lexical_scores = dict(found.lexical)
    lexical_z = zscore(np.array([lexical_scores.get(m, 0.0) for m in candidates], dtype=np.float32))
    if cfg.fusion and cfg.fusion_method == "rrf":
        dense_rank = rank_map(found.dense_ids)
        lexical_rank = rank_map([m for m, _ in found.lexical])
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
        weight = cfg.translation_weight * _unseen(profile, float(cosine.max()))
        fused = (fused + weight * translation_z).astype(np.float32)
        stages.append("translations")
    english_z = _english_z(found) if cfg.english_weight > 0.0 else None
    if english_z is not None:
        stages.append("english")
        fused = ((fused + cfg.english_weight * english_z) / (1.0 + cfg.english_weight)).astype(np.float32)
    return Ranking(
        scores={m: float(fused[i]) for i, m in enumerate(candidates) if m in found.rows},
        stages=stages,
        cosine=cosine,
        lexical=lexical_z,
    )


def _unseen(profile: SimilarityProfile | None, top: float) -> float:
    """How little the embedding model sees of the context among the candidates, from the similarity of the
    closest one: 1 at the model's ``floor`` or below (nothing related: "scolded" against a diary in Japanese,
    0.21), 0 from its ``link`` similarity up (it found what the context is about: a Tanaka sentence's
    translation, median 0.70), linear between; 1 without a similarity profile. The words of the context
    found in the other language count that much: where the model sees the match, they would only reorder
    its finds by a shared common word."""
    if profile is None:
        return 1.0
    span = max(1e-6, profile.link - profile.floor)
    return min(1.0, max(0.0, (profile.link - top) / span))


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
