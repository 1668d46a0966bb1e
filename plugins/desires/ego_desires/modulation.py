"""What colours the desires besides time: recent memories, the body sense, fading questions, the companion's
absence and impulses from memories that came back unbidden.

:func:`modulate` is a pure function of its inputs and ``now``. Each factor is a small additive change per
desire; a factor whose source is missing (no memory plugin, no body sense, no self-model) adds nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Any, Final

import attrs

from ego_core import Memory
from ego_desires.catalog import DESIRES
from ego_desires.config import DesiresConfig, MemoryModulation
from ego_self_model.api import AbsenceBand

FACTORS: Final = (
    "negative",
    "positive",
    "surprise",
    "topics",
    "time_phase",
    "system_load",
    "memory_pressure",
    "questions",
    "absence",
    "impulses",
)
SURPRISED: Final = "surprised"


def _amounts(value: Mapping[str, float]) -> Mapping[str, float]:
    return MappingProxyType(dict(value))


@attrs.frozen
class Inputs:
    """Everything outside the desires' own state that their levels depend on, read at one moment."""

    memories: tuple[Memory, ...] = ()
    """Recent memories (the window of ``memories.window_hours``), any order."""
    body: Mapping[str, Any] | None = None
    """The body sense's ``body_state()`` (``time_phase``, ``system_load``, ``memory_pressure``), if any."""
    fading_questions: int = 0
    """Unresolved questions that are fading and important enough (``questions.min_importance``)."""
    absence: AbsenceBand | None = None
    """How long the companion has been away against their usual rhythm (the self-model), if known."""
    shared_at: datetime | None = None
    """The last moment shared with the companion (the self-model), if any: a lived satisfaction."""
    knows_company: bool = False
    """A self-model is there to say who the companion is and when they were together (``absence`` None then
    means it knows no one yet, not that no one knows)."""
    impulses: Mapping[str, float] = attrs.field(factory=dict, converter=_amounts)
    """Pending impulses by desire (already capped)."""


@attrs.frozen
class Modulation:
    """Additive changes, by factor (:data:`FACTORS`) and then by desire."""

    factors: Mapping[str, Mapping[str, float]]

    def total(self, desire: str) -> float:
        return sum(changes.get(desire, 0.0) for changes in self.factors.values())

    @property
    def question_boost(self) -> float:
        """What fading questions add to cognitive_coherence (the "something feels unresolved" feeling)."""
        return self.factors.get("questions", {}).get("cognitive_coherence", 0.0)


def saturate(amount: float) -> float:
    """1 − e^−amount: 0 for nothing, about 0.63 for one full-weight memory, approaching 1 for many."""
    return 1.0 - math.exp(-max(0.0, amount))


def _unit(value: float, low: float, default: float) -> float:
    number = float(value)
    return min(1.0, max(low, number)) if math.isfinite(number) else default


def _decay(age_hours: float, half_life_hours: float) -> float:
    return math.exp2(-age_hours / half_life_hours)


def _age_hours(memory: Memory, now: datetime) -> float:
    """Hours since the memory was stored; a memory from the future (clock set back) is just stored."""
    return max(0.0, (now - memory.timestamp).total_seconds() / 3600.0)


def _memory_factors(memories: Sequence[Memory], now: datetime, table: MemoryModulation) -> dict[str, dict[str, float]]:
    negativity = positivity = surprise = 0.0
    topics: dict[str, float] = {}
    arousals = [_unit(m.emotional_trace.arousal, 0.0, table.baseline_arousal) for m in memories]
    total_arousal = sum(arousals)
    for memory, arousal in zip(memories, arousals, strict=True):
        trace = memory.emotional_trace
        age = _age_hours(memory, now)
        weight = _decay(age, table.half_life_hours)
        valence = _unit(trace.valence, -1.0, 0.0)
        intensity = _unit(trace.intensity, 0.0, 0.0)
        negativity += weight * intensity * max(0.0, -valence)
        positivity += weight * intensity * max(0.0, valence)
        others = len(arousals) - 1
        mean = (total_arousal - arousal) / others if others else table.baseline_arousal
        surprised = SURPRISED in (trace.primary, *trace.secondary) or arousal - mean >= table.surprise_arousal_margin
        if surprised:
            surprise = max(surprise, _decay(age, table.surprise_half_life_hours))
        for desire in table.topics.get(memory.category, ()):
            topics[desire] = topics.get(desire, 0.0) + weight
    negative, positive = saturate(negativity), saturate(positivity)
    return {
        "negative": {
            "social_thirst": table.negative_social_thirst * negative,
            "cognitive_coherence": table.negative_cognitive_coherence * negative,
        },
        "positive": {
            "curiosity": table.positive_curiosity * positive,
            "expression": table.positive_expression * positive,
        },
        "surprise": {"curiosity": table.surprise_curiosity * surprise},
        "topics": {desire: table.topic_weight * saturate(amount) for desire, amount in topics.items()},
    }


def _body_factors(body: Mapping[str, Any], config: DesiresConfig) -> dict[str, dict[str, float]]:
    tables = config.body
    return {
        "time_phase": dict(tables.time_phase.get(str(body.get("time_phase")), {})),
        "system_load": dict(tables.system_load.get(str(body.get("system_load")), {})),
        "memory_pressure": dict(tables.memory_pressure.get(str(body.get("memory_pressure")), {})),
    }


def modulate(inputs: Inputs, now: datetime, config: DesiresConfig) -> Modulation:
    factors: dict[str, dict[str, float]] = {factor: {} for factor in FACTORS}
    if inputs.memories:
        factors.update(_memory_factors(inputs.memories, now, config.memories))
    if inputs.body is not None:
        factors.update(_body_factors(inputs.body, config))
    if inputs.fading_questions > 0:
        questions = config.questions
        boost = min(questions.boost_each * inputs.fading_questions, questions.boost_max)
        factors["questions"] = {"cognitive_coherence": boost}
    away = {"long": config.absence.long_social_thirst, "quiet": config.absence.quiet_social_thirst}
    if inputs.absence in away:
        factors["absence"] = {"social_thirst": away[inputs.absence]}
    factors["impulses"] = {desire: min(amount, config.impulses.cap) for desire, amount in inputs.impulses.items()}
    cleaned = {
        factor: MappingProxyType({d: v for d, v in changes.items() if d in DESIRES and v != 0.0})
        for factor, changes in factors.items()
    }
    return Modulation(factors=MappingProxyType(cleaned))
