"""ego emotion_trend: how the last days, week and month felt, read from the memories' emotions."""

from __future__ import annotations

from ego_emotion_trend.config import EmotionTrendConfig, TonePhrases
from ego_emotion_trend.plugin import DESCRIPTION, TOOL, EmotionTrendPlugin
from ego_emotion_trend.trend import Level, Trend, TrendReader, level_for, undercurrent, weighted
from ego_emotion_trend.windows import Windows, windows
from ego_emotion_trend.words import tone, when

__all__ = [
    "DESCRIPTION",
    "TOOL",
    "EmotionTrendConfig",
    "EmotionTrendPlugin",
    "Level",
    "TonePhrases",
    "Trend",
    "TrendReader",
    "Windows",
    "level_for",
    "tone",
    "undercurrent",
    "weighted",
    "when",
    "windows",
]
