"""What the agent reads: the emotion_trend tool's layers, the wake_up line and the introspect section."""

from __future__ import annotations

from datetime import datetime, tzinfo

from ego_core import EmotionTally, Memory, ScaffoldItem, ScaffoldLine
from ego_emotion_trend import words
from ego_emotion_trend.config import EmotionTrendConfig
from ego_emotion_trend.trend import Level, Month, Recent, Trend, Week, undercurrent, weighted

NO_HISTORY = "No emotional history yet."
NOTHING_BENEATH = "nothing beneath the surface"

TREND_SCAFFOLD: tuple[ScaffoldItem, ...] = (
    "Does this match how it felt from the inside? What is the undercurrent telling you?",
    ScaffoldLine("Is there a moment here you would like to revisit with recall?", needs={"recall"}),
)
FADING_SCAFFOLD = "What do you make of the feelings that are fading?"
FEW_SCAFFOLD = "Too few memories for a trend yet. Which of these feelings still lingers?"
EMPTY_SCAFFOLD: tuple[ScaffoldItem, ...] = (
    ScaffoldLine("Each memory kept with remember carries a feeling; the trend grows from them.", needs={"remember"}),
)
INTROSPECT_POINTER = ScaffoldLine(
    "How have the last weeks felt? emotion_trend shows the peaks, shifts and what is fading.",
    needs={"emotion_trend"},
)


def _days(days: int) -> str:
    return words.plural(days, "day", "days")


# --------------------------------------------------------------------------------------------------
# The tool


def felt_lines(tally: EmotionTally) -> list[str]:
    line = f"Emotions felt so far ({words.plural(tally.count)}): {words.counted(tally)}."
    beneath = sorted(tally.secondary, key=lambda name: (-tally.secondary[name], name))
    return [line, f"Beneath them: {', '.join(beneath)}."] if beneath else [line]


def event_line(memory: Memory, peak_id: str | None, now: datetime, tz: tzinfo, config: EmotionTrendConfig) -> str:
    peak = words.PEAK if memory.id == peak_id else ""
    return f"- {words.moment(memory, now, tz, config)}{peak}"


def recent_lines(recent: Recent, now: datetime, tz: tzinfo, config: EmotionTrendConfig) -> list[str]:
    tally = recent.tally
    if tally.count == 0:
        return [f"Recent (last {_days(config.recent_days)}): no memories."]
    lines = [f"Recent (last {_days(config.recent_days)}, {words.plural(tally.count)}):"]
    lines += [event_line(memory, tally.peak_id, now, tz, config) for memory in recent.events]
    beneath = words.names(undercurrent(tally, config), config.undercurrent_shown)
    lines.append(f"Undercurrent: {beneath or NOTHING_BENEATH}.")
    return lines


def week_lines(week: Week, config: EmotionTrendConfig) -> list[str]:
    tally = week.tally
    if tally.count == 0:
        return [f"This week (last {_days(config.week_days)}): no memories."]
    dominant = words.names(weighted(tally, config), config.dominant_shown, numbers=True)
    beneath = words.names(undercurrent(tally, config), config.undercurrent_shown, numbers=True)
    return [
        f"This week (last {_days(config.week_days)}, {words.plural(tally.count)}): {dominant}.",
        f"Undercurrent: {beneath or NOTHING_BENEATH}.",
        f"Shift: {words.shift(week, config)}.",
    ]


def month_lines(month: Month, now: datetime, tz: tzinfo, config: EmotionTrendConfig) -> list[str]:
    tally = month.tally
    if tally.count == 0:
        return [f"This month (last {_days(config.month_days)}): no memories."]
    mood = words.tone(tally.valence, tally.arousal, config)
    lines = [f"This month (last {_days(config.month_days)}, {words.plural(tally.count)}): {mood}."]
    peak, end = month.peak, month.end
    if peak is not None and end is not None and peak.id == end.id:
        return [*lines, f"Peak and end: {words.moment(peak, now, tz, config)}"]
    if peak is not None:
        lines.append(f"Peak: {words.moment(peak, now, tz, config)}")
    if end is not None:
        lines.append(f"End: {words.moment(end, now, tz, config)}")
    return lines


def trend_text(
    trend: Trend, now: datetime, tz: tzinfo, config: EmotionTrendConfig
) -> tuple[str, tuple[ScaffoldItem, ...]]:
    """The tool's answer: the layers the number of memories allows, and its scaffold."""
    if trend.level == Level.NONE:
        return NO_HISTORY, EMPTY_SCAFFOLD
    if trend.felt is not None:
        return "\n".join(felt_lines(trend.felt)), (FEW_SCAFFOLD,)
    blocks: list[list[str]] = []
    if trend.recent is not None:
        blocks.append(recent_lines(trend.recent, now, tz, config))
    if trend.week is not None:
        blocks.append(week_lines(trend.week, config))
    if trend.month is not None:
        blocks.append(month_lines(trend.month, now, tz, config))
    if trend.fading:
        blocks[-1].append(f"Fading: {words.fading(trend.fading, now)}.")
    scaffold = (*TREND_SCAFFOLD, FADING_SCAFFOLD) if trend.fading else TREND_SCAFFOLD
    return "\n\n".join("\n".join(block) for block in blocks), scaffold


# --------------------------------------------------------------------------------------------------
# wake_up and introspect


def wake_up_line(trend: Trend, config: EmotionTrendConfig) -> str | None:
    """One line, how the last days felt: ``Lately: mostly curious and happy, with anxious underneath.``"""
    if trend.level == Level.NONE:
        return None
    if trend.felt is not None:
        return f"Felt so far: {words.counted(trend.felt)}."
    windows: list[tuple[str, EmotionTally | None]] = [
        ("Lately", trend.recent.tally if trend.recent else None),
        ("This week", trend.week.tally if trend.week else None),
        ("This month", trend.month.tally if trend.month else None),
    ]
    for label, tally in windows:
        if tally is not None and tally.count:
            return f"{label}: {words.mostly(tally, config)}."
    longest = {Level.RECENT: config.recent_days, Level.WEEK: config.week_days}.get(trend.level, config.month_days)
    return f"No feelings remembered in the last {_days(longest)}."


def introspect_text(trend: Trend, now: datetime, tz: tzinfo, config: EmotionTrendConfig) -> str | None:
    """A few lines for introspect: the feeling of each layer, no memory's text."""
    if trend.level == Level.NONE:
        return None
    if trend.felt is not None:
        return f"Emotional trend: too few memories yet; felt so far: {words.counted(trend.felt)}."
    lines = ["Emotional trend:"]
    if trend.recent is not None:
        tally = trend.recent.tally
        if tally.count:
            peak = next((m for m in trend.recent.events if m.id == tally.peak_id), None)
            at = f"; peak {words.emotion(peak, config)} {words.when(peak.timestamp, now, tz)}" if peak else ""
            lines.append(f"- Lately: {words.mostly(tally, config)}{at}.")
        else:
            lines.append(f"- Lately: nothing remembered in the last {_days(config.recent_days)}.")
    if trend.week is not None and trend.week.tally.count:
        week = trend.week
        lines.append(
            f"- This week: {words.mostly(week.tally, config, beneath=False)}; shift: {words.shift(week, config)}."
        )
    if trend.month is not None and trend.month.tally.count:
        tally = trend.month.tally
        lines.append(f"- This month: {words.tone(tally.valence, tally.arousal, config)}.")
    if trend.fading:
        lines.append(f"- Fading: {words.fading(trend.fading, now, since=False)}.")
    return "\n".join(lines)
