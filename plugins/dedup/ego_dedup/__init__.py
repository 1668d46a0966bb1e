"""ego dedup: the duplicate guard on ``remember`` and near-duplicate merge candidates in ``consolidate``."""

from __future__ import annotations

from ego_dedup.config import (
    CONFIG_ENV,
    DEFAULT_MAX_MERGE_CANDIDATES,
    DEFAULT_MAX_RECENT,
    DedupConfig,
)
from ego_dedup.guard import GUARD_SCAFFOLD, NOT_SAVED, Duplicate, duplicate_response, find_duplicate
from ego_dedup.merge import SECTION_KEY, MergePair, find_pairs, merge_section, window_memories
from ego_dedup.plugin import DedupPlugin

__all__ = [
    "CONFIG_ENV",
    "DEFAULT_MAX_MERGE_CANDIDATES",
    "DEFAULT_MAX_RECENT",
    "GUARD_SCAFFOLD",
    "NOT_SAVED",
    "SECTION_KEY",
    "DedupConfig",
    "DedupPlugin",
    "Duplicate",
    "MergePair",
    "duplicate_response",
    "find_duplicate",
    "find_pairs",
    "merge_section",
    "window_memories",
]
