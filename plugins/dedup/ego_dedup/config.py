"""Configuration of the dedup plugin: the ``[plugins.dedup]`` table and its ``EGO_*`` overrides.

Both thresholds are **cosine similarities** of the memory plugin's embedding model (1.0 = the same
direction). Left unset, they come from the model's calibrated similarity profile (``use``: 0.85 / 0.85;
``onnx`` all-MiniLM-L6-v2: 0.95 / 0.90, the original design's cosine distances below 0.05 and 0.10).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

import attrs

from ego_core import SimilarityProfile

DEFAULT_MAX_MERGE_CANDIDATES: Final = 5
DEFAULT_MAX_RECENT: Final = 500


def _similarity(_instance: object, attribute: attrs.Attribute[float | None], value: float | None) -> None:
    if value is None:
        return
    if not (math.isfinite(value) and 0.0 < value <= 1.0):
        raise ValueError(
            f"{attribute.name}: expected a cosine similarity greater than 0 and at most 1 (e.g. 0.95), got {value}"
        )


def _count(_instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 1:
        raise ValueError(f"{attribute.name}: expected a whole number of at least 1, got {value}")


@attrs.frozen
class DedupConfig:
    """``[plugins.dedup]``.

    - ``dedup_threshold``: a new memory with an existing memory at least this similar that says the same (no
      negation, number or wording contrast) is not stored (the guard on ``remember``). Default: the embedding
      model's profile. Environment: ``EGO_DEDUP_THRESHOLD``.
    - ``merge_threshold``: pairs among the recent memories with at least this similarity (and no negation or
      number contrast) are proposed by ``consolidate`` as merge candidates. Default: the model's profile;
      must not exceed ``dedup_threshold``. Environment: ``EGO_MERGE_THRESHOLD``.
    - ``max_merge_candidates``: at most this many pairs are listed, strongest first. Default 5.
    - ``max_recent``: consolidate compares at most this many of the window's memories (the newest).
      Default 500, i.e. at most 124,750 pairs from one 500 x 500 matrix product.
    - ``keep_both_tool``: offer ``keep_both`` (a pair is not proposed again) to the agent; without it only the
      owner's surfaces run it (the dashboard's merge review). Default false.
    """

    dedup_threshold: float | None = attrs.field(default=None, validator=_similarity)
    merge_threshold: float | None = attrs.field(default=None, validator=_similarity)
    max_merge_candidates: int = attrs.field(default=DEFAULT_MAX_MERGE_CANDIDATES, validator=_count)
    max_recent: int = attrs.field(default=DEFAULT_MAX_RECENT, validator=_count)
    keep_both_tool: bool = False

    def thresholds(self, profile: SimilarityProfile) -> tuple[float, float]:
        """(dedup, merge) thresholds: the configured ones, else the embedding model's calibrated profile."""
        dedup = profile.duplicate if self.dedup_threshold is None else self.dedup_threshold
        merge = profile.merge if self.merge_threshold is None else self.merge_threshold
        return dedup, min(merge, dedup)

    def __attrs_post_init__(self) -> None:
        if self.merge_threshold is None or self.dedup_threshold is None:
            return
        if self.merge_threshold > self.dedup_threshold:
            raise ValueError(
                f"merge_threshold: must not exceed dedup_threshold ({self.dedup_threshold}), got "
                f"{self.merge_threshold}; consolidate's net is meant to be the wider one, proposing what the "
                "guard let through (left unset, merge_threshold is the model's, capped at dedup_threshold)"
            )


CONFIG_ENV: Final[Mapping[str, str]] = MappingProxyType(
    {"EGO_DEDUP_THRESHOLD": "dedup_threshold", "EGO_MERGE_THRESHOLD": "merge_threshold"}
)
"""Environment variable -> config key; the environment wins over the config file."""
