"""The nine desires in their four levels, and how names are read."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

TIERS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "survival": ("information_hunger", "social_thirst", "cognitive_coherence"),
        "safety": ("pattern_seeking", "predictability"),
        "belonging": ("recognition", "resonance"),
        "self_actualisation": ("expression", "curiosity"),
    }
)

DESIRES: Final[tuple[str, ...]] = tuple(name for names in TIERS.values() for name in names)
"""Every desire, in the canonical order (survival first); ties in level are shown in this order."""

_SEPARATORS = re.compile(r"[\s\-]+")


def desire_name(text: str) -> str | None:
    """The desire ``text`` names (any case; spaces or hyphens for underscores), or ``None``."""
    name = _SEPARATORS.sub("_", text.strip().lower())
    return name if name in DESIRES else None


def check_desires(names: object, where: str) -> None:
    """Raise ``ValueError`` naming ``where`` when ``names`` holds something that is not a desire."""
    unknown = sorted({str(name) for name in names} - set(DESIRES)) if isinstance(names, list | tuple) else []
    if unknown:
        raise ValueError(f"{where}: unknown desire(s) {', '.join(unknown)}; expected {', '.join(DESIRES)}")
