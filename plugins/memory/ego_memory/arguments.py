"""The memory tools' arguments: remember's draft and recall's query and filters, checked beyond the schema.

An argument the schema lets through but a tool refuses raises :func:`argument_error`, worded like the schema's own
errors.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from typing import Any

from ego_core import (
    BODY_SENSE,
    EMOTIONS,
    BodySense,
    PluginContext,
    RecallQuery,
    RememberDraft,
    ToolError,
    is_blank,
)
from ego_memory.record.emotions import CATEGORIES, EMOTION_PROFILES
from ego_memory.record.limits import (
    MAX_LABEL_CHARS,
    MAX_SECONDARY,
    MAX_TAG_CHARS,
    MAX_TAGS,
    body_state_problem,
    label_problem,
    list_problem,
)
from ego_memory.record.model import (
    normal_category,
    normal_emotion,
    normal_importance,
    normal_secondary,
    normal_tags,
    signed_unit,
    unit,
)
from ego_memory.store.filters import Filters
from ego_memory.surfacing.anticipation import parse_anticipated, when_words


def argument_error(tool: str, parameter: str, expected: str) -> ToolError:
    """An argument the schema let through but the tool refuses, in the form of the schema's own errors."""
    return ToolError(f"Invalid arguments for {tool}: `{parameter}` {expected}. Fix the call and try again.")


def _finite(args: Mapping[str, Any], name: str, default: float) -> float:
    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise argument_error("remember", name, "must be a finite number")
    if isinstance(value, int):  # any size: clamped like other values out of range, never made a float first
        return float(max(-1_000_000, min(1_000_000, value)))
    if not math.isfinite(value):
        raise argument_error("remember", name, "must be a finite number")
    return value


def _labels(args: Mapping[str, Any], name: str, max_items: int, max_chars: int) -> list[object]:
    values = args.get(name) or []
    if not isinstance(values, list | tuple):
        raise argument_error("remember", name, f"must be a list of at most {max_items} items, each a string")
    problem = list_problem(values, max_items, max_chars)
    if problem:
        raise argument_error("remember", name, problem)
    return list(values)


RANGE_LEAST: Mapping[str, float] = {"valence_range": -1.0, "arousal_range": 0.0}
"""The lower bound of each range filter (the upper is 1)."""


def remember_draft(
    args: Mapping[str, Any], ctx: PluginContext, max_content_chars: int
) -> tuple[RememberDraft, list[str]]:
    """Normalise remember's arguments into a draft, with notes about anything substituted."""
    notes: list[str] = []
    limit = max_content_chars
    content = str(args["content"]).strip()
    if is_blank(content):
        raise argument_error(
            "remember", "content", f"must contain text: a non-empty string of at most {limit} characters"
        )
    if len(content) > limit:
        raise argument_error("remember", "content", f"must be a non-empty string of at most {limit} characters")
    for name in ("emotion", "category"):
        problem = label_problem(str(args.get(name) or ""))
        if problem:
            raise argument_error("remember", name, problem)
    emotion, known = normal_emotion(args.get("emotion"))
    if not known:
        notes.append(f"Unknown emotion, stored as neutral. Known: {', '.join(EMOTIONS)}.")
    profile = EMOTION_PROFILES[emotion]
    secondary, dropped = normal_secondary(_labels(args, "secondary", MAX_SECONDARY, MAX_LABEL_CHARS))
    if dropped:
        notes.append(f"Unknown secondary emotion(s) dropped. Known: {', '.join(EMOTIONS)}.")
    tags = normal_tags(_labels(args, "tags", MAX_TAGS, MAX_TAG_CHARS))
    category, known = normal_category(args.get("category"))
    if not known:
        notes.append(f"Unknown category, stored as daily. Known: {', '.join(CATEGORIES)}.")
    given = args.get("body_state") or {}
    if not isinstance(given, Mapping):
        raise argument_error("remember", "body_state", "must be an object")
    problem = body_state_problem(given)
    if problem:
        raise argument_error("remember", "body_state", problem)
    body_state = dict(given)
    if not body_state:
        body = ctx.services.get(BODY_SENSE, BodySense)
        if body is not None:
            body_state = dict(body.body_state())
    anticipated: datetime | None = None
    if "anticipated_at" in args:
        now = ctx.now()
        anticipated, note = parse_anticipated(args["anticipated_at"], ctx.settings.tz, now)
        if note:
            notes.append(note)
        elif anticipated is not None:
            notes.append(f"Looking forward to it: {when_words(anticipated, now, ctx.settings.tz)}.")
    draft = RememberDraft(
        content=content,
        emotion=emotion,
        secondary=secondary,
        intensity=unit(_finite(args, "intensity", profile.intensity)),
        valence=signed_unit(_finite(args, "valence", profile.valence)),
        arousal=unit(_finite(args, "arousal", profile.arousal)),
        importance=normal_importance(_finite(args, "importance", 3)),
        category=category,
        tags=tags,
        is_private=bool(args.get("private", False)),
        force=bool(args.get("force", False)),
        body_state=body_state,
        anticipated=anticipated,
        together=tuple(dict.fromkeys(name.strip() for name in args.get("with", ()) if name.strip())),
    )
    return draft, notes


def _date(ctx: PluginContext, tool: str, args: Mapping[str, Any], name: str, *, end: bool) -> float | None:
    value = args.get(name)
    if value is None:
        return None
    try:
        day = date.fromisoformat(str(value))
    except ValueError:
        raise argument_error(tool, name, "must be a date YYYY-MM-DD, e.g. 2026-11-22") from None
    moment = datetime.combine(day, time.min, tzinfo=ctx.settings.tz)
    if end:
        moment += timedelta(days=1)
        return moment.timestamp() - 1e-6
    return moment.timestamp()


def _range(tool: str, args: Mapping[str, Any], name: str) -> tuple[float, float] | None:
    value = args.get(name)
    if value is None:
        return None
    low, high = float(value[0]), float(value[1])
    if not (math.isfinite(low) and math.isfinite(high)):
        raise argument_error(tool, name, "must be [min, max] of finite numbers")
    least = RANGE_LEAST[name]
    if not (least <= low <= 1 and least <= high <= 1):
        raise argument_error(tool, name, f"must be exactly 2 numbers [min, max], each from {least:g} to 1")
    if low > high:
        raise argument_error(tool, name, "must be [min, max] with min ≤ max")
    return (low, high)


def recall_query(args: Mapping[str, Any], ctx: PluginContext, tool: str = "recall") -> tuple[RecallQuery, Filters]:
    """The query and filters of a recall (or ``search_memories``: ``tool`` names it in errors)."""
    context = str(args["context"]).strip()
    if is_blank(context):
        raise argument_error(tool, "context", "must contain text, not only whitespace")
    emotion = args.get("emotion_filter")
    if emotion is not None and str(emotion).lower() not in EMOTIONS:
        raise argument_error(tool, "emotion_filter", f"must be one of: {', '.join(EMOTIONS)}")
    category = args.get("category_filter")
    if category is not None and str(category).lower() not in CATEGORIES:
        raise argument_error(tool, "category_filter", f"must be one of: {', '.join(CATEGORIES)}")
    ts_from = _date(ctx, tool, args, "date_from", end=False)
    ts_to = _date(ctx, tool, args, "date_to", end=True)
    if ts_from is not None and ts_to is not None and ts_from > ts_to:
        raise argument_error(tool, "date_to", "must not be before date_from")
    filters = Filters(
        emotion=str(emotion).lower() if emotion is not None else None,
        category=str(category).lower() if category is not None else None,
        ts_from=ts_from,
        ts_to=ts_to,
        valence=_range(tool, args, "valence_range"),
        arousal=_range(tool, args, "arousal_range"),
    )
    query = RecallQuery(
        context=context,
        n_results=int(args.get("n_results", 3)),
        emotion_filter=filters.emotion,
        category_filter=filters.category,
        date_from=datetime.fromtimestamp(ts_from, ctx.settings.tz) if ts_from is not None else None,
        date_to=datetime.fromtimestamp(ts_to, ctx.settings.tz) if ts_to is not None else None,
        valence_range=filters.valence,
        arousal_range=filters.arousal,
    )
    return query, filters
