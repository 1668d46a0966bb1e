"""Configuration of the emotion_trend plugin: the ``[plugins.emotion_trend]`` table (every number and phrase)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import attrs

Validator = Callable[[Any, "attrs.Attribute[Any]", Any], None]


def _whole(low: int, high: int) -> Validator:
    def check(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"{attribute.name}: expected a whole number from {low} to {high}")

    return check


def _number(low: float, high: float, *, open_low: bool = False, open_high: bool = False) -> Validator:
    left, right = "(" if open_low else "[", ")" if open_high else "]"

    def check(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        number = float(value)
        inside = (number > low if open_low else number >= low) and (number < high if open_high else number <= high)
        if not (math.isfinite(number) and inside):
            raise ValueError(f"{attribute.name}: expected a number in {left}{low}, {high}{right}")

    return check


def _phrase(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, str) or not value.strip() or len(value) > 80 or "\n" in value:
        raise ValueError(f"{attribute.name}: expected a phrase of 1 to 80 characters on one line")


@attrs.frozen
class TonePhrases:
    """``[plugins.emotion_trend.phrases]``: the month's tone in words, by quadrant of mean
    valence and arousal."""

    energetic: str = attrs.field(default="an energetic, fulfilling month", validator=_phrase)
    """Positive valence, high arousal."""
    content: str = attrs.field(default="a quietly content month", validator=_phrase)
    """Positive valence, low arousal."""
    turbulent: str = attrs.field(default="a turbulent, unsettled month", validator=_phrase)
    """Negative valence, high arousal."""
    heavy: str = attrs.field(default="a heavy, draining month", validator=_phrase)
    """Negative valence, low arousal."""
    numb: str = attrs.field(default="a numb, uneventful month", validator=_phrase)
    """Neither positive nor negative, very low arousal."""
    mixed: str = attrs.field(default="a month of mixed feelings", validator=_phrase)
    """Everything else."""


@attrs.frozen
class EmotionTrendConfig:
    """``[plugins.emotion_trend]``. Every field is documented in docs/plugins/emotion_trend.md."""

    tool: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    """Serve the ``emotion_trend`` tool; attune and introspect show the trend without it."""
    # The three windows, in local calendar days (today counts as the first).
    recent_days: int = attrs.field(default=3, validator=_whole(1, 366))
    week_days: int = attrs.field(default=7, validator=_whole(2, 366))
    month_days: int = attrs.field(default=30, validator=_whole(2, 3660))

    # How much a memory counts toward an emotion.
    primary_weight: float = attrs.field(default=1.0, validator=_number(0.0, 100.0, open_low=True))
    secondary_weight: float = attrs.field(default=0.4, validator=_number(0.0, 100.0))

    # The month's tone from mean valence and arousal.
    positive_valence: float = attrs.field(default=0.3, validator=_number(-1.0, 1.0))
    """Mean valence above this is positive."""
    negative_valence: float = attrs.field(default=-0.3, validator=_number(-1.0, 1.0))
    """Mean valence below this is negative."""
    high_arousal: float = attrs.field(default=0.5, validator=_number(0.0, 1.0))
    """Mean arousal above this is high (energetic, turbulent); at or below it, low (content, heavy)."""
    numb_arousal: float = attrs.field(default=0.3, validator=_number(0.0, 1.0))
    """Neither positive nor negative, and mean arousal at or below this: numb."""
    phrases: TonePhrases = attrs.field(factory=TonePhrases)

    # Graceful degradation by the number of memories.
    recent_from: int = attrs.field(default=5, validator=_whole(2, 1_000_000))
    """From this many memories the Recent layer is shown (below it: the emotions felt, listed)."""
    week_from: int = attrs.field(default=15, validator=_whole(2, 1_000_000))
    month_from: int = attrs.field(default=30, validator=_whole(2, 1_000_000))

    # Fading emotions.
    fading_strength: float = attrs.field(default=0.5, validator=_number(0.0, 1.0, open_low=True, open_high=True))
    """An emotion fades when every older memory of it has at most this recall strength left (time decay)."""
    fading_lookback_days: int = attrs.field(default=365, validator=_whole(1, 36600))
    """How far back older memories are searched for fading emotions."""
    fading_shown: int = attrs.field(default=3, validator=_whole(1, 12))

    # What is shown.
    recent_events: int = attrs.field(default=3, validator=_whole(1, 10))
    """Individual memories named in the Recent layer (the intensity peak always among them)."""
    dominant_shown: int = attrs.field(default=3, validator=_whole(1, 12))
    undercurrent_shown: int = attrs.field(default=2, validator=_whole(1, 12))
    shift_valence: float = attrs.field(default=0.3, validator=_number(0.0, 2.0, open_low=True))
    """A change of mean valence between the week's halves this large reads as lighter or heavier."""
    vivid_intensity: float = attrs.field(default=0.7, validator=_number(0.0, 1.0))
    """From this intensity an emotion is shown with it, like recall does: ``moved(0.9)``."""
    snippet_chars: int = attrs.field(default=50, validator=_whole(10, 200))

    def __attrs_post_init__(self) -> None:
        if not self.recent_days <= self.week_days <= self.month_days:
            raise ValueError("recent_days, week_days, month_days: expected recent_days ≤ week_days ≤ month_days")
        if not self.recent_from <= self.week_from <= self.month_from:
            raise ValueError("recent_from, week_from, month_from: expected recent_from ≤ week_from ≤ month_from")
        if self.negative_valence > self.positive_valence:
            raise ValueError("negative_valence: expected at most positive_valence")
        if self.fading_lookback_days < self.week_days:
            raise ValueError("fading_lookback_days: expected at least week_days")
