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


# A shared activity told in six linked memories, then five more: a notion forms and becomes a conviction.
TEA = [
    "Morning tea on the balcony before Master woke up.",
    "Brewed sencha slowly and watched the steam rise.",
    "The kettle sang while the city was still quiet.",
    "Shared a pot of hojicha with Master after breakfast.",
]
MORE_TEA = [
    "Tried a smoky lapsang at dawn.",
    "Genmaicha tastes like toasted rice, I love it.",
    "A cup of tea steadied me before the long meeting.",
    "Matcha whisked in the old bowl, bright green.",
    "Tea with Master again, we talked about nothing.",
]
