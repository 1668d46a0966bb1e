"""The notions plugin's public contract: the ``notions.store`` service, for plugins and the dashboard.

A consumer asks ``ctx.services.get(NOTIONS_STORE, NotionStore)`` and copes with ``None`` (notions disabled). This
module imports only ``ego_core``, ``attrs`` and the standard library, never another module of the plugin: a
plugin that uses it has no import cycle with this one.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

import attrs

__all__ = ["NOTIONS_STORE", "NotionStore", "NotionView"]

NOTIONS_STORE = "notions.store"


@attrs.frozen
class NotionView:
    """A notion (a concept formed from densely linked memories), as other plugins see it.

    ``label`` never quotes a private memory. ``confidence`` is the value now (time decay applied).
    """

    id: str
    label: str
    tags: tuple[str, ...]
    tone: str
    """The most frequent primary emotion of its memories."""
    valence: float
    """Mean valence (-1 to 1) of its memories."""
    confidence: float
    """How strongly it is held now, in [0, 1]."""
    is_conviction: bool
    """Reinforced at least 5 times and held with confidence at least 0.7."""
    person: str | None
    """The person it is about (as the self-model names them), or None."""
    reinforced_at: datetime
    """The last reinforcement (its creation when never reinforced)."""
    reinforcement_count: int = 0
    created: datetime | None = None


@runtime_checkable
class NotionStore(Protocol):
    """The notions plugin's concepts, for plugins that show or react to them (desires, self-model)."""

    def notions(self, *, min_confidence: float = 0.0, limit: int | None = None) -> Sequence[NotionView]:
        """Notions held with at least ``min_confidence``, most confident first (then most reinforced, label)."""
        ...

    def convictions(self) -> Sequence[NotionView]:
        """The convictions, most confident first."""
        ...

    def for_person(self, person: str) -> Sequence[NotionView]:
        """The notions bound to ``person`` (compared case-insensitively), most confident first."""
        ...

    def theme(self, word: str) -> str:
        """The theme a tag or topic names, one across languages: ``お茶``, ``tea`` and ``Teas`` give the same key;
        a word the notions plugin has no theme for, normalised (case-folded, NFKC)."""
        ...
