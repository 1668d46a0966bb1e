"""Shared constants for the cross-plugin tests (a module, not conftest, so imports are unambiguous)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from ego_dedup import DedupPlugin
from ego_desires import DesiresPlugin
from ego_emotion_trend import EmotionTrendPlugin
from ego_interoception.plugin import InteroceptionPlugin
from ego_memory.plugin import MemoryPlugin
from ego_notions import NotionsPlugin
from ego_self_model import SelfModelPlugin
from ego_shared_memory import SharedMemoryPlugin
from ego_workspace_sync.plugin import WorkspaceSyncPlugin

REPO = Path(__file__).resolve().parents[2]

PLUGINS: Mapping[str, Callable[[], object]] = {
    "memory": MemoryPlugin,
    "dedup": DedupPlugin,
    "workspace_sync": WorkspaceSyncPlugin,
    "interoception": InteroceptionPlugin,
    "desires": DesiresPlugin,
    "self_model": SelfModelPlugin,
    "emotion_trend": EmotionTrendPlugin,
    "shared_memory": SharedMemoryPlugin,
    "notions": NotionsPlugin,
}
