"""Configuration of the desires plugin: every number of the model, in ``[plugins.desires]`` and its sub-tables.

The tables keyed by a tool, a category, a time phase or a band (``implicit``, ``memories.topics``,
``body.time_phase``, ``body.system_load``, ``body.memory_pressure``) are merged over the defaults: an entry you
give replaces that entry only (an empty one switches it off), and the other entries keep their defaults.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

import attrs

from ego_desires.catalog import DESIRES, check_desires

# --------------------------------------------------------------------------------------------------
# Default tables

IMPLICIT: Final[Mapping[str, list[str]]] = MappingProxyType(
    {
        "recall": ["information_hunger", "curiosity"],
        "search_memories": ["information_hunger", "curiosity"],
        "consider_them": ["social_thirst", "resonance"],
        "remember": ["expression"],
        "introspect": ["cognitive_coherence"],
        "consolidate": ["cognitive_coherence"],
        "update_self": ["cognitive_coherence"],
    }
)
"""Tool → the desires a successful call partly satisfies (forget and am_i_being_genuine satisfy nothing)."""

TOPICS: Final[Mapping[str, list[str]]] = MappingProxyType(
    {
        "philosophical": ["cognitive_coherence", "curiosity"],
        "technical": ["pattern_seeking", "information_hunger"],
        "observation": ["pattern_seeking", "curiosity"],
        "lesson": ["pattern_seeking", "predictability"],
        "introspection": ["cognitive_coherence"],
        "self_discovery": ["cognitive_coherence", "expression"],
        "feeling": ["resonance", "expression"],
        "relationship": ["social_thirst", "resonance"],
        "conversation": ["social_thirst", "recognition"],
        "dream": ["curiosity", "expression"],
        "memory": ["resonance"],
    }
)
"""Memory category → the desires a recent memory of that topic raises (``daily`` raises nothing)."""

TIME_PHASE: Final[Mapping[str, Mapping[str, float]]] = MappingProxyType(
    {
        "late_night": {"cognitive_coherence": 0.10, "pattern_seeking": 0.06, "resonance": 0.04},
        "early_morning": {"predictability": 0.04},
        "morning": {"information_hunger": 0.05, "curiosity": 0.04},
        "afternoon": {},
        "evening": {"social_thirst": 0.05, "resonance": 0.03},
        "night": {"cognitive_coherence": 0.05, "resonance": 0.04},
    }
)
"""Time phase of the body sense → additive change per desire (late night raises the introspective ones)."""

SYSTEM_LOAD: Final[Mapping[str, Mapping[str, float]]] = MappingProxyType(
    {"high": {"expression": -0.10, "curiosity": -0.05}, "moderate": {"expression": -0.03}}
)
"""System load band of the body sense → additive change per desire (a busy body has less to say)."""

MEMORY_PRESSURE: Final[Mapping[str, Mapping[str, float]]] = MappingProxyType({"high": {"information_hunger": -0.05}})
"""Memory pressure band of the body sense → additive change per desire (a full head wants less input)."""

PHASES: Final = ("late_night", "early_morning", "morning", "afternoon", "evening", "night")
LOAD_BANDS: Final = ("low", "moderate", "high", "unknown")
MEMORY_BANDS: Final = ("calm", "moderate", "high", "unknown")

# --------------------------------------------------------------------------------------------------
# Validators


def _number(low: float, high: float, *, above: bool = False) -> Callable[[Any, attrs.Attribute[Any], Any], None]:
    """A finite number from ``low`` (exclusive when ``above``) to ``high``."""
    form = f"{'above ' if above else 'from '}{low:g} {'and at most' if above else 'to'} {high:g}"

    def check(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        number = float(value)
        if not math.isfinite(number) or number < low or number > high or (above and number == low):
            raise ValueError(f"{attribute.name}: expected a number {form}")

    return check


def _merge_lists(defaults: Mapping[str, list[str]], given: Any) -> Mapping[str, list[str]]:
    merged = {key: list(names) for key, names in defaults.items()}
    for key, names in dict(given or {}).items():
        merged[str(key)] = list(names)
    return MappingProxyType(merged)


def _merge_weights(defaults: Mapping[str, Mapping[str, float]], given: Any) -> Mapping[str, Mapping[str, float]]:
    merged = {key: MappingProxyType(dict(value)) for key, value in defaults.items()}
    for key, weights in dict(given or {}).items():
        merged[str(key)] = MappingProxyType(dict(weights))
    return MappingProxyType(merged)


def _implicit(given: Any) -> Mapping[str, list[str]]:
    return _merge_lists(IMPLICIT, given)


def _topics(given: Any) -> Mapping[str, list[str]]:
    return _merge_lists(TOPICS, given)


def _time_phase(given: Any) -> Mapping[str, Mapping[str, float]]:
    return _merge_weights(TIME_PHASE, given)


def _system_load(given: Any) -> Mapping[str, Mapping[str, float]]:
    return _merge_weights(SYSTEM_LOAD, given)


def _memory_pressure(given: Any) -> Mapping[str, Mapping[str, float]]:
    return _merge_weights(MEMORY_PRESSURE, given)


def _check_desire_lists(_instance: Any, attribute: attrs.Attribute[Any], value: Mapping[str, Any]) -> None:
    for key, names in value.items():
        if not 1 <= len(key) <= 100 or any(ord(c) < 32 or ord(c) == 127 for c in key):
            raise ValueError(f"{attribute.name}: a key must be 1 to 100 characters without control characters")
        check_desires(list(names), f"{attribute.name}.{key}")


def _weights_keyed_by(keys: tuple[str, ...]) -> Callable[[Any, attrs.Attribute[Any], Any], None]:
    def check(_instance: Any, attribute: attrs.Attribute[Any], value: Mapping[str, Mapping[str, float]]) -> None:
        unknown = sorted(set(value) - set(keys))
        if unknown:
            raise ValueError(f"{attribute.name}: unknown key(s) {', '.join(unknown)}; expected {', '.join(keys)}")
        for key, weights in value.items():
            check_desires(list(weights), f"{attribute.name}.{key}")
            for name, weight in weights.items():
                if not (math.isfinite(weight) and -1.0 <= weight <= 1.0):
                    raise ValueError(f"{attribute.name}.{key}.{name}: expected a number from -1 to 1")

    return check


_WEIGHT = _number(-1.0, 1.0)
_HOURS = _number(0.0, 100_000.0, above=True)
_UNIT = _number(0.0, 1.0)

# --------------------------------------------------------------------------------------------------
# The tables


@attrs.frozen
class Periods:
    """``[plugins.desires.periods]``: hours a fully satisfied desire takes to climb back to half (0.5)."""

    information_hunger: float = attrs.field(default=12.0, validator=_HOURS)
    social_thirst: float = attrs.field(default=24.0, validator=_HOURS)
    cognitive_coherence: float = attrs.field(default=18.0, validator=_HOURS)
    pattern_seeking: float = attrs.field(default=48.0, validator=_HOURS)
    predictability: float = attrs.field(default=72.0, validator=_HOURS)
    recognition: float = attrs.field(default=36.0, validator=_HOURS)
    resonance: float = attrs.field(default=30.0, validator=_HOURS)
    expression: float = attrs.field(default=24.0, validator=_HOURS)
    curiosity: float = attrs.field(default=12.0, validator=_HOURS)

    def hours(self, name: str) -> float:
        value: float = getattr(self, name)
        return value


@attrs.frozen
class MemoryModulation:
    """``[plugins.desires.memories]``: how recent memories (the memory plugin's store) colour the desires."""

    window_hours: float = attrs.field(default=24.0, validator=_HOURS)
    """Memories stored this long before now are read; older ones colour nothing."""
    limit: int = attrs.field(default=100, validator=_number(1, 1000))
    """At most this many of the newest memories in the window are read."""
    half_life_hours: float = attrs.field(default=6.0, validator=_HOURS)
    """A memory's weight halves with every this many hours of age (1 when just stored)."""
    negative_social_thirst: float = attrs.field(default=0.20, validator=_WEIGHT)
    negative_cognitive_coherence: float = attrs.field(default=0.12, validator=_WEIGHT)
    positive_curiosity: float = attrs.field(default=0.12, validator=_WEIGHT)
    positive_expression: float = attrs.field(default=0.12, validator=_WEIGHT)
    surprise_curiosity: float = attrs.field(default=0.30, validator=_WEIGHT)
    surprise_half_life_hours: float = attrs.field(default=2.0, validator=_HOURS)
    """A surprise fades faster than a mood: its weight halves with every this many hours."""
    surprise_arousal_margin: float = attrs.field(default=0.35, validator=_number(0.0, 1.0, above=True))
    """A memory this much more aroused than the mean of the others in the window is a surprise."""
    baseline_arousal: float = attrs.field(default=0.3, validator=_UNIT)
    """The mean used when the window holds no other memory (the arousal of a neutral memory)."""
    topic_weight: float = attrs.field(default=0.08, validator=_WEIGHT)
    topics: Mapping[str, list[str]] = attrs.field(
        factory=lambda: TOPICS, converter=_topics, validator=_check_desire_lists
    )


@attrs.frozen
class BodyModulation:
    """``[plugins.desires.body]``: the body sense (interoception) — time of day and machine state."""

    time_phase: Mapping[str, Mapping[str, float]] = attrs.field(
        factory=lambda: TIME_PHASE, converter=_time_phase, validator=_weights_keyed_by(PHASES)
    )
    system_load: Mapping[str, Mapping[str, float]] = attrs.field(
        factory=lambda: SYSTEM_LOAD, converter=_system_load, validator=_weights_keyed_by(LOAD_BANDS)
    )
    memory_pressure: Mapping[str, Mapping[str, float]] = attrs.field(
        factory=lambda: MEMORY_PRESSURE,
        converter=_memory_pressure,
        validator=_weights_keyed_by(MEMORY_BANDS),
    )


@attrs.frozen
class QuestionModulation:
    """``[plugins.desires.questions]``: fading important questions of the self-model nag at coherence."""

    min_importance: int = attrs.field(default=4, validator=_number(1, 5))
    boost_each: float = attrs.field(default=0.04, validator=_WEIGHT)
    boost_max: float = attrs.field(default=0.12, validator=_WEIGHT)


@attrs.frozen
class AbsenceModulation:
    """``[plugins.desires.absence]``: the companion away longer than usual (the self-model's ``People`` service)."""

    long_social_thirst: float = attrs.field(default=0.08, validator=_WEIGHT)
    """Added to social_thirst while the companion's absence is ``long`` (four times their usual gap or more)."""
    quiet_social_thirst: float = attrs.field(default=0.0, validator=_WEIGHT)
    """Added while it is ``quiet`` (twice their usual gap or more); nothing by default."""


@attrs.frozen
class ImpulseSettings:
    """``[plugins.desires.impulses]``: passing pushes from memories that came back unbidden."""

    cap: float = attrs.field(default=0.2, validator=_UNIT)
    """Pending impulses toward one desire add up to at most this much."""
    cooldown_hours: float = attrs.field(default=72.0, validator=_HOURS)
    """A memory that gave an impulse gives no other for this long."""


@attrs.frozen
class EmergentSettings:
    """``[plugins.desires.emergent]``: desires that arise from strong notions and the last hours' feelings."""

    window_hours: float = attrs.field(default=6.0, validator=_HOURS)
    """The short-term emotional flow: memories stored this long before an attune."""
    min_recent_memories: int = attrs.field(default=3, validator=_number(1, 30))
    """At least this many memories in the window before the flow lets a desire arise."""
    notion_confidence: float = attrs.field(default=0.7, validator=_UNIT)
    """A notion held at least this firmly lets its desire arise."""
    period_hours: float = attrs.field(default=24.0, validator=_HOURS)
    """An emergent desire's satisfaction period (as ``periods`` for the nine)."""
    start_position: float = attrs.field(default=2.0, validator=_number(0.0, 3.0))
    """Where a new emergent desire starts, in periods (2 is level 0.98 with the default steepness)."""
    expiry_hours: float = attrs.field(default=72.0, validator=_HOURS)
    """A desire never satisfied is gone this long after it arose."""
    satisfied_ttl_hours: float = attrs.field(default=168.0, validator=_HOURS)
    """A satisfied one is gone this long after its last satisfaction."""
    baseline_margin: float = attrs.field(default=0.15, validator=_UNIT)
    """A desire this far above its usual level reads as rising, this far below as settling."""


@attrs.frozen
class SettleSettings:
    """``[plugins.desires.settle]``: a desire nothing meets rises to ``peak`` at most, then settles toward
    ``plateau`` (it saturates, then habituates) instead of staying pinned at the top."""

    peak: float = attrs.field(default=0.98, validator=_number(0.5, 0.999))
    """The highest a desire's own pull rises (its base level, before modulation)."""
    plateau: float = attrs.field(default=0.55, validator=_UNIT)
    """Where a desire settles when nothing meets it for long."""
    periods: float = attrs.field(default=4.0, validator=_number(0.0, 20.0, above=True))
    """How slowly it settles, in its own satisfaction periods: the distance to the plateau shrinks by e in each."""

    def __attrs_post_init__(self) -> None:
        if self.plateau >= self.peak:
            raise ValueError("settle.plateau: expected a number below settle.peak")


def _qualities(given: Any) -> Mapping[str, float]:
    return MappingProxyType({str(name): float(quality) for name, quality in dict(given or {}).items()})


def _check_qualities(_instance: Any, attribute: attrs.Attribute[Any], value: Mapping[str, float]) -> None:
    check_desires(list(value), attribute.name)
    for name, quality in value.items():
        if not (math.isfinite(quality) and 0.0 <= quality <= 1.0):
            raise ValueError(f"{attribute.name}.{name}: expected a number from 0 to 1")


SHARED: Final[Mapping[str, float]] = MappingProxyType({"social_thirst": 0.8, "resonance": 0.5, "recognition": 0.3})
"""A moment shared with the companion satisfies these desires with these qualities."""


@attrs.frozen
class CompanySettings:
    """``[plugins.desires.company]``: a moment shared with the companion (the self-model's ``People`` service)
    is a lived satisfaction, and for a while after it you are together."""

    shared: Mapping[str, float] = attrs.field(factory=lambda: SHARED, converter=_qualities, validator=_check_qualities)
    """Desire → the quality with which the last shared moment satisfies it (an empty table switches it off)."""
    together_hours: float = attrs.field(default=12.0, validator=_number(0.0, 168.0))
    """For this long after a shared moment you are together: those desires do not rise, and social_thirst is
    never worded as loneliness."""


@attrs.frozen
class VarietySettings:
    """``[plugins.desires.variety]``: a desire sentence said recently yields to one not said, or to silence."""

    answers: int = attrs.field(default=2, validator=_number(0, 20))
    """A sentence of the desires' wake_up (or attune) section said in one of the last this many wake_ups (or
    attunes) is not said again; 0 lets every sentence repeat."""


@attrs.frozen
class DesiresConfig:
    """``[plugins.desires]``: the curve, the bands, implicit satisfaction and the modulation tables."""

    steepness: float = attrs.field(default=4.0, validator=_number(0.5, 50.0))
    """Sigmoid steepness: the level is σ(steepness · (position − 1)); position 1 is level 0.5."""
    initial_position: float = attrs.field(default=1.0, validator=_number(0.0, 3.0))
    """Where a new store's desires start, in periods since a full satisfaction (1 = level 0.5)."""
    recovery_gain: float = attrs.field(default=0.8, validator=_number(0.0, 1.8))
    """Pace of the rise after a satisfaction of quality q: the period is stretched by 1 + gain·(q − 0.5)."""
    soft_from: float = attrs.field(default=0.8, validator=_UNIT)
    """Above this level modulation only approaches 1: what it adds beyond is compressed (1 switches that off)."""
    implicit_quality: float = attrs.field(default=0.5, validator=_UNIT)
    """The quality of a satisfaction through tool use (the ``implicit`` table)."""
    mid_from: float = attrs.field(default=0.4, validator=_UNIT)
    high_from: float = attrs.field(default=0.7, validator=_UNIT)
    feel_desires_tool: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    """Serve ``feel_desires`` (every level as a number); attune says the strongest in words."""
    periods: Periods = attrs.field(factory=Periods)
    memories: MemoryModulation = attrs.field(factory=MemoryModulation)
    body: BodyModulation = attrs.field(factory=BodyModulation)
    questions: QuestionModulation = attrs.field(factory=QuestionModulation)
    emergent: EmergentSettings = attrs.field(factory=EmergentSettings)
    absence: AbsenceModulation = attrs.field(factory=AbsenceModulation)
    impulses: ImpulseSettings = attrs.field(factory=ImpulseSettings)
    settle: SettleSettings = attrs.field(factory=SettleSettings)
    company: CompanySettings = attrs.field(factory=CompanySettings)
    variety: VarietySettings = attrs.field(factory=VarietySettings)
    implicit: Mapping[str, list[str]] = attrs.field(
        factory=lambda: IMPLICIT, converter=_implicit, validator=_check_desire_lists
    )

    def __attrs_post_init__(self) -> None:
        if self.mid_from >= self.high_from:
            raise ValueError("high_from: expected a number above mid_from")


def band(level: float, config: DesiresConfig) -> str:
    """``low``, ``mid`` (from ``mid_from``) or ``high`` (from ``high_from``)."""
    if level >= config.high_from:
        return "high"
    return "mid" if level >= config.mid_from else "low"


__all__ = ["DESIRES", "DesiresConfig", "band"]
