"""Recall strength as other plugins and recall's display read it: dormant memories near a text, precious and
protected memories.

A memory's recall strength is :func:`ego_memory.recall.decay.strength_at`: the time decay of the recall pipeline (its
half-life grows with access and links), 1 until an anticipated moment. A precious memory counts as at least
:data:`~ego_memory.recall.decay.PRECIOUS_FLOOR` in ranking only; what is shown and what counts as dormant is the raw
value.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime

from ego_core import EmotionalTrace, Memory, PluginContext, Vectors
from ego_memory.config import RecallConfig
from ego_memory.recall.decay import DORMANT, link_strength, strength_at
from ego_memory.store.memory_store import MemoryStore
from ego_self_model.api import PEOPLE, PRECIOUS_INTENSITY, PRECIOUS_RETURNS, People, preciousness

DORMANT_POOL = 30
"""``dormant_near`` looks among this many most similar memories."""

ScoringRow = tuple[float, str, float, int, int, float | None]
"""(ts, emotion, intensity, importance, access_count, last_accessed), as ``MemoryStore.scoring_rows`` reads it."""


def people_of(ctx: PluginContext) -> People | None:
    """The self-model's people, when that plugin is enabled."""
    return ctx.services.get(PEOPLE, People)


def shared_with(people: People | None, memory_ids: Sequence[str]) -> dict[str, list[str]]:
    """The people each of ``memory_ids`` was shared with (one call to the people service for all of them)."""
    if people is None or not memory_ids:
        return {}
    found: dict[str, list[str]] = {}
    for person, ids in people.sharing(list(memory_ids)).items():
        for memory_id in ids:
            found.setdefault(memory_id, []).append(person)
    return found


def precious_ids(memories: Sequence[Memory], people: People | None) -> set[str]:
    """The precious memories among ``memories`` (:func:`ego_self_model.api.preciousness`); the people service is asked
    once, and only about the memories intense enough to be a shared peak."""
    peaks = [m.id for m in memories if m.emotional_trace.intensity >= PRECIOUS_INTENSITY]
    persons = shared_with(people, peaks)
    return {m.id for m in memories if preciousness(m, persons.get(m.id, ()))}


def precious_rows(rows: Mapping[str, ScoringRow], people: People | None) -> set[str]:
    """:func:`precious_ids` over ranking rows: only a candidate intense enough or recalled often enough can be
    precious, so only those are made into memories and asked about."""
    maybe = [
        Memory(
            id=memory_id,
            content="",
            timestamp=datetime.fromtimestamp(row[0], UTC),
            emotional_trace=EmotionalTrace(intensity=row[2]),
            importance=row[3],
            access_count=row[4],
        )
        for memory_id, row in rows.items()
        if row[2] >= PRECIOUS_INTENSITY or row[4] >= PRECIOUS_RETURNS
    ]
    return precious_ids(maybe, people)


class Strengths:
    """Recall strength over one store, with the recall pipeline's decay settings."""

    def __init__(self, store: MemoryStore, config: RecallConfig, people: Callable[[], People | None]) -> None:
        self.store = store
        self.config = config
        self.people = people

    def of(self, ids: Sequence[str], at: float) -> dict[str, float]:
        """The raw recall strength at ``at`` (epoch seconds) of each of ``ids`` that exists (1 without decay)."""
        rows = self.store.scoring_rows(ids)
        if not self.config.decay:
            return dict.fromkeys(rows, 1.0)
        links = self.store.link_strengths(list(rows))
        anticipated = self.store.anticipations(list(rows))
        return {
            memory_id: strength_at(
                row[0],
                at,
                self.config.half_life_days,
                access_count=row[4],
                links=link_strength(links.get(memory_id, 0.0)),
                anticipated=anticipated.get(memory_id),
            )
            for memory_id, row in rows.items()
        }

    def of_memory(self, memory: Memory, at: float) -> float:
        """The raw recall strength of a loaded memory (with its links) at ``at``."""
        if not self.config.decay:
            return 1.0
        return strength_at(
            memory.timestamp.timestamp(),
            at,
            self.config.half_life_days,
            access_count=memory.access_count,
            links=link_strength(sum(link.confidence for link in memory.links)),
            anticipated=memory.anticipated.timestamp() if memory.anticipated is not None else None,
        )

    def dormant_near(self, vector: Vectors, k: int, at: datetime) -> list[tuple[Memory, float]]:
        """Among the :data:`DORMANT_POOL` memories most similar to the query ``vector``, those whose strength at
        ``at`` is below :data:`~ego_memory.recall.decay.DORMANT`, most similar first, at most ``k`` (none is
        touched)."""
        if k <= 0:
            return []
        pairs = [(memory_id, similarity) for memory_id, similarity, _ in self.store.dense(vector, DORMANT_POOL)]
        strengths = self.of([memory_id for memory_id, _ in pairs], at.timestamp())
        chosen = [(m, s) for m, s in pairs if strengths.get(m, 1.0) < DORMANT][:k]
        found = {memory.id: memory for memory in self.store.get([m for m, _ in chosen])}
        return [(found[m], s) for m, s in chosen if m in found]

    def protected(self, memory_ids: Collection[str], at: datetime) -> set[str]:
        """The precious memories among ``memory_ids`` and those anticipating a moment after ``at``."""
        ids = list(dict.fromkeys(memory_ids))
        moment = at.timestamp()
        waiting = {m for m, when in self.store.anticipations(ids).items() if when > moment}
        rest = [m for m in ids if m not in waiting]
        return waiting | precious_rows(self.store.scoring_rows(rest), self.people())
