"""The trend in words: the month's tone, moments in local time, emotions, dominant feelings and the shift."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, tzinfo

from ego_core import EmotionTally, Memory, relative_age, truncate, when_words
from ego_emotion_trend.config import EmotionTrendConfig
from ego_emotion_trend.trend import Scores, Week, undercurrent, weighted

PRIVATE = "(private)"
"""Shown instead of a private memory's text: the trend never repeats it."""
PEAK = " (peak)"
FADING = "[fading]"


def tone(valence: float, arousal: float, config: EmotionTrendConfig) -> str:
    """The month's tone phrase from mean valence and arousal."""
    phrases = config.phrases
    if valence > config.positive_valence:
        return phrases.energetic if arousal > config.high_arousal else phrases.content
    if valence < config.negative_valence:
        return phrases.turbulent if arousal > config.high_arousal else phrases.heavy
    return phrases.numb if arousal <= config.numb_arousal else phrases.mixed


def when(moment: datetime, now: datetime, tz: tzinfo) -> str:
    """A moment as a person says it, in local time: ``this morning``, ``last night``, ``yesterday evening``,
    ``Monday night``, ``12 days ago``, ``4mo ago`` (ego_core's :func:`~ego_core.when_words` in detail). The small
    hours belong to the night before."""
    return when_words(moment, now, tz, detail=True)


def emotion(memory: Memory, config: EmotionTrendConfig) -> str:
    trace = memory.emotional_trace
    if trace.intensity >= config.vivid_intensity:
        return f"{trace.primary}({trace.intensity:.1f})"
    return trace.primary


def snippet(memory: Memory, config: EmotionTrendConfig) -> str:
    """The memory's text, short and quoted; a private memory's text is never shown."""
    return PRIVATE if memory.is_private else f'"{truncate(memory.content, config.snippet_chars)}"'


def moment(memory: Memory, now: datetime, tz: tzinfo, config: EmotionTrendConfig) -> str:
    """``anxious(0.8), yesterday evening — "Debugging the heartbeat…"``"""
    return f"{emotion(memory, config)}, {when(memory.timestamp, now, tz)} — {snippet(memory, config)}"


def names(scores: Scores, limit: int, *, numbers: bool = False) -> str:
    shown = scores[:limit]
    if numbers:
        return ", ".join(f"{name} {score:.1f}" for name, score in shown)
    return ", ".join(name for name, _ in shown)


def counted(tally: EmotionTally) -> str:
    """``happy ×2, curious``: the primary emotions, most frequent first."""
    order = sorted(tally.primary.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{name} ×{times}" if times > 1 else name for name, times in order)


def plural(count: int, noun: str = "memory", nouns: str = "memories") -> str:
    return f"{count} {noun if count == 1 else nouns}"


def mostly(tally: EmotionTally, config: EmotionTrendConfig, *, top: int = 2, beneath: bool = True) -> str:
    """``mostly curious and happy, with anxious underneath`` (the undercurrent only when it adds something)."""
    dominant = [name for name, _ in weighted(tally, config)[:top]]
    text = "mostly " + " and ".join(dominant)
    under = [name for name, _ in undercurrent(tally, config) if name not in dominant][:1] if beneath else []
    return f"{text}, with {under[0]} underneath" if under else text


def shift(week: Week, config: EmotionTrendConfig) -> str:
    """From the first half of the week to the second: ``from sad to happy, lighter toward the end``."""
    if week.first.count == 0 or week.second.count == 0:
        return "too little in one half of the week to compare"
    before, after = weighted(week.first, config)[0][0], weighted(week.second, config)[0][0]
    change = week.second.valence - week.first.valence
    direction = ""
    if change >= config.shift_valence:
        direction = "lighter"
    elif change <= -config.shift_valence:
        direction = "heavier"
    if before != after:
        return f"from {before} to {after}" + (f", {direction} toward the end" if direction else "")
    if direction:
        return f"{before} throughout, but {direction} toward the end"
    return f"none; {before} throughout"


def fading(faded: Sequence[tuple[str, datetime]], now: datetime, *, since: bool = True) -> str:
    """``melancholy [fading] (last felt 4mo ago), nostalgic [fading] (…)``"""
    if not since:
        return ", ".join(f"{name} {FADING}" for name, _ in faded)
    return ", ".join(f"{name} {FADING} (last felt {relative_age(last, now)})" for name, last in faded)
