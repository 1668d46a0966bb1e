"""Configuration of the self_model plugin: the ``[plugins.self_model]`` table (every number of the plugin)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import attrs


def _number(low: float, high: float, *, low_open: bool = False) -> Callable[[Any, attrs.Attribute[Any], Any], None]:
    """A validator: a finite number from ``low`` to ``high`` (``low`` excluded when ``low_open``)."""

    def check(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        number = float(value)
        too_low = number <= low if low_open else number < low
        if not math.isfinite(number) or too_low or number > high:
            lower = f"greater than {low:g}" if low_open else f"from {low:g}"
            upper = "" if math.isinf(high) else f" to {high:g}"
            raise ValueError(f"{attribute.name}: expected a number {lower}{upper}")

    return check


def _count(low: int, high: int) -> Callable[[Any, attrs.Attribute[Any], Any], None]:
    def check(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"{attribute.name}: expected an integer from {low} to {high}")

    return check


def _thresholds_ordered(instance: SelfModelConfig, _attribute: attrs.Attribute[Any], value: float) -> None:
    if not value < instance.active_above:
        raise ValueError("dormant_at_or_below: expected a number below active_above")


@attrs.frozen
class SelfModelConfig:
    """``[plugins.self_model]``: every number the plugin uses (docs/plugins/self_model.md has the table)."""

    half_life_days_per_importance: float = attrs.field(default=14.0, validator=_number(0, math.inf, low_open=True))
    """A question's salience halves every ``half_life_days_per_importance · importance`` days (5 → 70 days)."""
    active_above: float = attrs.field(default=0.3, validator=_number(0, 1))
    """Salience above this: the question is active (introspect lists it)."""
    dormant_at_or_below: float = attrs.field(default=0.1, validator=[_number(0, 1), _thresholds_ordered])
    """Salience at or below this: dormant (never listed, never deleted); between the two: fading."""
    resurface_similarity: float | None = attrs.field(default=None, validator=attrs.validators.optional(_number(-1, 1)))
    """Cosine similarity from which a new memory brings back a fading or dormant question; default: the embedding
    model's calibrated "related" similarity (0.35 for use, 0.40 for onnx all-MiniLM-L6-v2)."""
    resurface_cooldown_hours: float = attrs.field(default=24.0, validator=_number(0, math.inf))
    """A question brought back is not brought back again by another memory within this many hours."""
    resurfacing_window_hours: float = attrs.field(default=24.0, validator=_number(0, math.inf))
    """introspect's resurfacing section shows questions a memory brought back within this many hours."""
    coherence_threshold: float = attrs.field(default=0.6, validator=_number(0, 1))
    """cognitive_coherence (desires plugin) from which introspect also shows the fading questions."""
    max_open_shown: int = attrs.field(default=5, validator=_count(1, 50))
    """Active questions introspect lists (the most salient first)."""
    max_resurfacing_shown: int = attrs.field(default=3, validator=_count(1, 50))
    """Questions the resurfacing section lists."""
    ripening_per_run: int = attrs.field(default=5, validator=_count(0, 100))
    """Fading questions (importance 2 or more) one consolidate feeds, the longest unfed first (0: no ripening)."""
    ripening_search: int = attrs.field(default=15, validator=_count(1, 100))
    """Memories most similar to a question that one feeding looks among."""
    companion_low: float | None = attrs.field(default=None, validator=attrs.validators.optional(_number(-1, 1)))
    """Similarity to the question from which a memory can keep it company; default: the embedding model's
    calibrated relevance floor (0.25 for use, 0.30 for onnx all-MiniLM-L6-v2)."""
    companion_high: float | None = attrs.field(default=None, validator=attrs.validators.optional(_number(-1, 1)))
    """Similarity from which a memory is too obviously related to be a companion (it brings the question back
    instead); default: the model's "related" similarity (0.35 for use, 0.40 for onnx all-MiniLM-L6-v2)."""
    ripe_companions: int = attrs.field(default=3, validator=_count(1, 50))
    """Companions (a disagreeing pair counts one) that make a resting question ripe: introspect brings it back."""
    ripening_hint_chance: float = attrs.field(default=0.25, validator=_number(0, 1))
    """Chance that attune says something is ripening, when a fading question has gathered company."""
    open_edge_active: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    """wake_up's Open edge also names the most salient active question when none has ripened (about ten tokens
    more; off by default for wake_up's budget: introspect lists the active questions first)."""
    max_list_items: int = attrs.field(default=20, validator=_count(1, 500))
    """Items a list field holds (preferences, values, goals, identity, topics, aliases, notes)."""
    max_text_chars: int = attrs.field(default=300, validator=_count(10, 5000))
    """Characters of one item, question, answer, narrative, growth entry or style."""
    max_name_chars: int = attrs.field(default=80, validator=_count(1, 500))
    """Characters of a person's name, an alias or a skill name."""
    default_trust: float = attrs.field(default=0.5, validator=_number(0, 1))
    """trust_level of a person nobody has set it for yet."""
    involuntary_person_chance: float = attrs.field(default=0.08, validator=_number(0, 1))
    """The chance that a recall also brings up, unbidden, someone a dormant memory near it was shared with."""
