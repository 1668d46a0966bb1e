"""The self_model plugin's public contract: its services ``self_model.questions`` (open questions) and
``self_model.people`` (the people it knows), and the one rule for a precious memory, for plugins and the dashboard.

A consumer asks ``ctx.services.get(PEOPLE, People)`` and copes with ``None`` (self_model disabled). This module
imports only ``ego_core``, ``attrs`` and the standard library, never another module of the plugin: a plugin
that uses it has no import cycle with this one.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

import attrs

from ego_core import Memory

__all__ = [
    "OPEN_QUESTIONS",
    "PEOPLE",
    "PRECIOUS_INTENSITY",
    "PRECIOUS_MAX_IMPORTANCE",
    "PRECIOUS_RETURNS",
    "Absence",
    "AbsenceBand",
    "KnownPerson",
    "OpenQuestion",
    "OpenQuestions",
    "People",
    "Preciousness",
    "QuestionState",
    "TrustChange",
    "preciousness",
]

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
