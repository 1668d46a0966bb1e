"""Typed contracts for the services plugins provide to each other through ``ctx.services``.

A consumer asks ``ctx.services.get(BODY_SENSE, BodySense)`` and degrades gracefully on ``None``; it never
imports the providing plugin.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Any, Literal, Protocol, runtime_checkable

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
        """The ids among ``memory_ids`` that must never be merged away: precious memories (:func:`preciousness`)
        and memories anticipating a moment still after ``at``."""
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


DESIRE_LEVELS = "desires.levels"


def _levels(value: Mapping[str, float]) -> Mapping[str, float]:
    return MappingProxyType(dict(value))


@attrs.frozen
class DesireSample:
    """The desires' levels as the agent felt them at one moment (levels only, never text)."""

    at: datetime
    levels: Mapping[str, float] = attrs.field(factory=dict, converter=_levels)
    """Every desire's level then, in [0, 1], by name."""


@runtime_checkable
class DesireLevels(Protocol):
    """The desires plugin's current levels, for plugins that react to them (the self-model's resurfacing), and
    their recorded history (the dashboard's History view)."""

    def levels(self) -> Mapping[str, float]:
        """Every desire's level now, in [0, 1], by name (``curiosity``, ``cognitive_coherence``, ...)."""
        ...

    def history(self, since: datetime, until: datetime) -> Sequence[DesireSample]:
        """The levels the agent felt from ``since`` to ``until`` (both included), oldest first: at most one sample
        per 15 minutes, kept 90 days. An implementer subclassing this protocol without its own history has none."""
        return ()


QuestionState = Literal["active", "fading", "dormant"]


@attrs.frozen
class OpenQuestion:
    """An unresolved question of the self-model, as other plugins see it (never its private context)."""

    id: str
    text: str
    importance: int
    salience: float
    """(importance / 5) · 2^(−age_days / (14 · importance)), in [0, 1]."""
    state: QuestionState
    """active (salience > 0.3), fading (0.1 < salience ≤ 0.3) or dormant (≤ 0.1)."""
    created: datetime


OPEN_QUESTIONS = "self_model.questions"


@runtime_checkable
class OpenQuestions(Protocol):
    """The self-model's unresolved questions (the desires plugin's nagging feeling reads the fading ones)."""

    def unresolved(self) -> Sequence[OpenQuestion]:
        """Every unresolved question with its salience now, most salient first."""
        ...


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


PEOPLE = "self_model.people"

AbsenceBand = Literal["usual", "quiet", "long"]


@attrs.frozen
class Absence:
    """How long it has been since a moment was last shared with a person, measured against their usual rhythm."""

    person: str
    band: AbsenceBand
    """usual (under twice the typical gap between shared moments), quiet (under four times) or long."""
    words: str
    """The time since the last shared moment in words, never digits (``about two weeks``)."""
    last_shared: datetime
    evident: bool = False
    """A memory said they were away or missed since the last shared moment: an absence known, not inferred from
    silence alone."""


@attrs.frozen
class TrustChange:
    """A person's trust level as it was set at one moment (never any text about them)."""

    at: datetime
    trust: float
    """The trust level set then, in [0, 1]."""


@attrs.frozen
class KnownPerson:
    """A person the self-model knows, as a summary (never notes, topics or any memory text)."""

    name: str
    trust: float
    """The trust level now, in [0, 1]."""
    trust_words: str
    """The trust level as the agent hears it (``you trust them deeply``)."""
    shared: int = 0
    """How many moments (memories naming them) were shared with them."""


@runtime_checkable
class People(Protocol):
    """The people of the self-model as memories name them (a memory naming a person is a moment shared with
    them), for plugins that bind what they keep to a person (the notions plugin)."""

    def sharing(self, memory_ids: Sequence[str]) -> Mapping[str, Sequence[str]]:
        """For each person (by name) the memories among ``memory_ids`` shared with them; people sharing none are
        left out."""
        ...

    def absence(self, person: str | None, at: datetime) -> Absence | None:
        """How long ``person`` (the companion when None; names and aliases both work) has been away at ``at``;
        None for someone unknown or never shared with."""
        ...

    def known(self) -> Sequence[KnownPerson]:
        """Everyone the self-model knows, by name. An implementer subclassing this protocol without its own list
        knows nobody."""
        return ()

    def trust_history(self, person: str) -> Sequence[TrustChange]:
        """The changes of ``person``'s trust level (names and aliases both work), oldest first: the newest 200
        are kept. Empty for someone unknown. An implementer subclassing this protocol without its own history has
        none."""
        return ()


PRECIOUS_INTENSITY = 0.6
PRECIOUS_RETURNS = 3
PRECIOUS_MAX_IMPORTANCE = 2


@attrs.frozen
class Preciousness:
    """Why a memory is irreplaceable (never said to the agent as such): it is a peak shared with someone, or it
    kept coming back although it never seemed important."""

    shared_with: tuple[str, ...] = ()
    """The people it was shared with, when it is a shared peak (intensity at least 0.6); else empty."""
    returns: int = 0
    """How often it was recalled, when it kept coming back (at least 3 recalls, importance at most 2); else 0."""

    def __bool__(self) -> bool:
        return bool(self.shared_with) or self.returns > 0


def preciousness(memory: Memory, shared_with: Collection[str]) -> Preciousness:
    """Whether ``memory`` is precious, given the people it was shared with (the ``People`` service knows them)."""
    peak = tuple(shared_with) if shared_with and memory.emotional_trace.intensity >= PRECIOUS_INTENSITY else ()
    kept = memory.access_count >= PRECIOUS_RETURNS and memory.importance <= PRECIOUS_MAX_IMPORTANCE
    return Preciousness(shared_with=peak, returns=memory.access_count if kept else 0)
