"""Typed contracts for the services every plugin may need through ``ctx.services``: the memory store and the body
sense.

A consumer asks ``ctx.services.get(BODY_SENSE, BodySense)`` and degrades gracefully on ``None``; it never
imports the providing plugin. A contract that belongs to one plugin lives in that plugin's ``api`` module
(``ego_desires.api``, ``ego_self_model.api``, ``ego_notions.api``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

import attrs

from ego_core.embedding import EmbedRole, SimilarityProfile, Vectors
from ego_core.types import Memory

BODY_SENSE = "interoception.body"


@runtime_checkable
class BodySense(Protocol):
    """The body sense (interoception): time phase, load, memory pressure, uptime. Never blocks."""

    def body_state(self) -> Mapping[str, Any]:
        """A small JSON-able mapping, attached to memories as ``body_state`` (time_phase, system_load, ...)."""
        ...

    def time_phase(self) -> str:
        """late_night, early_morning, morning, afternoon, evening or night (local time)."""
        ...


MEMORY_STORE = "memory.store"


def _counts(value: Mapping[str, int] | None) -> Mapping[str, int]:
    return MappingProxyType(dict(value or {}))


@attrs.frozen
class EmotionTally:
    """How the memories of one stretch of time felt, counted without reading their text (``MemoryService.tally``)."""

    count: int = 0
    valence: float = 0.0
    """Mean valence (-1 to 1) of the memories; 0 when there are none."""
    arousal: float = 0.0
    """Mean arousal (0 to 1) of the memories; 0 when there are none."""
    primary: Mapping[str, int] = attrs.field(factory=dict, converter=_counts)
    """How many memories have each primary emotion."""
    secondary: Mapping[str, int] = attrs.field(factory=dict, converter=_counts)
    """How many memories name each secondary emotion."""
    peak_id: str | None = None
    """The most intense memory (the newest of equally intense ones)."""
    last_id: str | None = None
    """The newest memory."""


@runtime_checkable
class MemoryService(Protocol):
    """The memory plugin's store as other plugins see it (dedup, workspace sync, self-model, ...).

    Similarities are cosine similarities in [-1, 1] of the configured embedding model.
    """

    @property
    def embedding_model(self) -> str: ...

    @property
    def similarity_profile(self) -> SimilarityProfile:
        """What similarities of the configured model mean: the calibrated duplicate, merge, link and related
        thresholds (configuration may override them in the plugins that use them)."""
        ...

    def embed(self, texts: Sequence[str], role: EmbedRole = "document") -> Vectors:
        """Unit vectors of ``texts`` as ``role`` (cached: embedding the same text again in one operation is free).
        Texts compared with memories as equals are documents; texts that look for memories are queries."""
        ...

    def contrast(self, first: str, second: str) -> str | None:
        """Why two texts that embed alike still say different things, or None: ``"negation"`` (one denies what
        the other states), ``"number"`` (they state different numbers) or ``"wording"`` (they differ in a
        content word: another name, place, thing or action). Japanese is read word by word."""
        ...

    def count(self) -> int: ...

    def get(self, memory_ids: Sequence[str]) -> list[Memory]:
        """The memories that exist among ``memory_ids``, in the given order."""
        ...

    def find_exact(self, content: str) -> Memory | None:
        """A memory whose content is exactly ``content`` (after whitespace trimming), without embedding."""
        ...

    def nearest(self, text: str, k: int = 1) -> list[tuple[Memory, float]]:
        """The ``k`` most similar memories to ``text`` with their similarity, most similar first."""
        ...

    def recent(self, since: datetime, limit: int = 500) -> list[Memory]:
        """Memories stored at or after ``since``: the newest ``limit`` of them, oldest first."""
        ...

    def strongest(
        self, since: datetime, limit: int = 10, *, min_intensity: float = 0.0, until: datetime | None = None
    ) -> list[Memory]:
        """The most intense memories stored at or after ``since`` (and before ``until``, when given) whose
        emotional intensity is at least ``min_intensity``: at most ``limit`` of them, most intense first, the
        newest first among equally intense ones. Found in the store's intensity index, whatever the size of the
        window; private memories are included (``Memory.is_private``), as in ``recent``."""
        ...

    def embeddings(self, memory_ids: Sequence[str]) -> dict[str, Vectors]:
        """Stored vectors by id (1-D arrays) for the ids that exist."""
        ...

    def tally(self, since: datetime, until: datetime) -> EmotionTally:
        """The memories stored at or after ``since`` and before ``until``, counted by emotion (no text is read,
        so a month of a large store is counted in milliseconds)."""
        ...

    def faded_emotions(
        self,
        emotions: Collection[str],
        before: datetime,
        at: datetime,
        *,
        since: datetime | None = None,
        strength: float = 0.5,
    ) -> dict[str, datetime]:
        """Which of ``emotions`` live on only in faded memories, with when each was last felt.

        An emotion is returned when memories stored before ``before`` (and at or after ``since``) carry it, as
        primary or secondary emotion, and the recall strength at ``at`` of every one of them - the recall
        pipeline's time decay, 1 for a fresh memory - is at most ``strength``.
        """
        ...

    def protected(self, memory_ids: Sequence[str], at: datetime) -> set[str]:
        """The ids among ``memory_ids`` that must never be merged away: precious memories (the self-model's rule,
        :func:`ego_self_model.api.preciousness`) and memories anticipating a moment still after ``at``."""
        ...

    def similar_pairs(
        self, memory_ids: Sequence[str], threshold: float, limit: int | None = None
    ) -> list[tuple[str, str, float]]:
        """Pairs of ``memory_ids`` whose stored vectors are at least ``threshold`` similar, as ``(first, second,
        similarity)`` with ``first`` before ``second`` in ``memory_ids``: the most similar first, at most
        ``limit``. Ids without a stored vector are left out. For merge candidates (dedup, the dashboard)."""
        ...

    def dormant_near(self, text: str, k: int = 5, *, at: datetime) -> list[tuple[Memory, float]]:
        """Dormant memories near ``text``: among its 30 most similar memories, those whose recall strength at
        ``at`` is below 0.3, most similar first, at most ``k``, with their similarity. Nothing is marked as
        accessed."""
        ...
