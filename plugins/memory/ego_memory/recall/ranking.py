"""What the ranking stages pass on: the :class:`Ranking` of one candidate set, and what a recall returns
(:class:`SearchResult` of :class:`Scored` hits, :class:`Matches`)."""

from __future__ import annotations

import attrs
import numpy as np

from ego_core import Vectors


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


@attrs.define
class Ranking:
    """The scores of one candidate set as the ranking stages pass it on (:meth:`RecallEngine.rank`): fusion
    makes it, each later stage adds to the scores and names itself in :attr:`stages`."""

    scores: dict[str, float]
    """Each memory's score so far (the candidates, then the memories spreading brings)."""
    stages: list[str]
    """The stages that ran, in order."""
    cosine: Vectors
    """Each candidate's cosine to the context (in the order of :attr:`Candidates.ids`)."""
    lexical: Vectors
    """Each candidate's lexical evidence, z-normalised (in the order of :attr:`Candidates.ids`): the Hopfield
    completion's prior."""
    completed_patterns: int = 0


def zscore(values: Vectors) -> Vectors:
    """Standard scores; values that differ by float32 rounding only (the same text embedded in two batches) tie:
    a spread below 1e-6 is no signal, and dividing by it would make the two ends of a tie one standard deviation
    apart."""
    std = float(values.std())
    if std < 1e-6:
        return np.zeros(values.shape, dtype=np.float32)
    normalised: Vectors = ((values - values.mean()) / std).astype(np.float32)
    return normalised
