"""The profile of each of the 12 emotions (``ego_core.EMOTIONS``), the 12 categories of a memory, defaults and
recall boosts."""

from __future__ import annotations

import attrs


@attrs.frozen
class EmotionProfile:
    intensity: float
    valence: float
    arousal: float
    recall_boost: float
    """Multiplier gain at full intensity: vivid emotions are easier to recall."""


# Spread over the valence-arousal plane: negative quadrants as expressive as positive ones.
EMOTION_PROFILES: dict[str, EmotionProfile] = {
    "happy": EmotionProfile(0.6, 0.8, 0.6, 0.10),
    "sad": EmotionProfile(0.6, -0.7, 0.3, 0.10),
    "surprised": EmotionProfile(0.7, 0.2, 0.85, 0.15),
    "moved": EmotionProfile(0.8, 0.7, 0.5, 0.20),
    "excited": EmotionProfile(0.7, 0.7, 0.9, 0.15),
    "nostalgic": EmotionProfile(0.5, 0.3, 0.3, 0.10),
    "curious": EmotionProfile(0.5, 0.4, 0.6, 0.05),
    "neutral": EmotionProfile(0.3, 0.0, 0.3, 0.0),
    "melancholy": EmotionProfile(0.5, -0.4, 0.2, 0.05),
    "anxious": EmotionProfile(0.6, -0.6, 0.8, 0.10),
    "contentment": EmotionProfile(0.4, 0.6, 0.2, 0.0),
    "frustrated": EmotionProfile(0.6, -0.6, 0.75, 0.10),
}
"""Each of ``ego_core.EMOTIONS``, in its order, with the defaults remember stores and its recall boost."""

CATEGORIES: tuple[str, ...] = (
    "daily",
    "philosophical",
    "technical",
    "memory",
    "observation",
    "feeling",
    "conversation",
    "introspection",
    "relationship",
    "self_discovery",
    "dream",
    "lesson",
)

DEFAULT_EMOTION = "neutral"
DEFAULT_CATEGORY = "daily"
VIVID_INTENSITY = 0.7
"""Intensity from which recall shows the emotion with its intensity, e.g. ``moved(0.9)``."""


def clamp(value: float, low: float, high: float) -> float:
    return max(low, min(high, value))
