"""Bounds on everything a caller can store: the tool schemas, ``remember`` and ``ego import`` apply the same.

Without them one call could store a value the vector index cannot apply (a list of thousands of tags makes
Chroma's compaction fail for good) or a body state of megabytes. docs/tools.md lists them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

MAX_LABEL_CHARS = 40
"""The longest emotion, secondary emotion or category label (the known ones are at most 14 characters)."""
MAX_SECONDARY = 12
"""The most secondary emotions (there are 12 emotions)."""
MAX_TAGS = 32
MAX_TAG_CHARS = 64
MAX_BODY_STATE_KEYS = 32
MAX_BODY_STATE_DEPTH = 4
"""``{"load": {"cpu": 0.3}}`` is two levels deep."""
MAX_BODY_STATE_CHARS = 4000
"""The body state as compact JSON."""
MAX_LINK_NOTE_CHARS = 200
MAX_LINKS = 10_000
"""The most links one imported memory may carry (links live in SQLite only)."""
MAX_SUMMARY_CHARS = 2000
"""The longest episode summary."""
MAX_EPISODE_MEMBERS = 200


def label_problem(value: str) -> str | None:
    if len(value) > MAX_LABEL_CHARS:
        return f"must be at most {MAX_LABEL_CHARS} characters"
    return None


def list_problem(values: Iterable[object], max_items: int, max_chars: int) -> str | None:
    """Why a list of strings is too long (number of items, or an item's length); None when it fits."""
    items = list(values)
    if len(items) > max_items:
        return f"must be a list of at most {max_items} items, each at most {max_chars} characters"
    if any(len(str(item)) > max_chars for item in items):
        return f"must be a list of at most {max_items} items, each at most {max_chars} characters"
    return None


def body_state_problem(state: Mapping[str, Any]) -> str | None:
    """Why a body state cannot be stored (keys, depth, a non-finite number, size); None when it can."""
    if len(state) > MAX_BODY_STATE_KEYS:
        return f"must be an object of at most {MAX_BODY_STATE_KEYS} keys"
    # iterative, so that a deeply nested value is refused without recursing into it
    pending: list[tuple[Any, int]] = [(state, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, Mapping):
            children: Iterable[Any] = value.values()
        elif isinstance(value, list | tuple):
            children = value
        else:
            if isinstance(value, float) and not math.isfinite(value):
                return "must hold only finite numbers (no NaN or Infinity)"
            continue
        if depth > MAX_BODY_STATE_DEPTH:
            return f"must be an object nested at most {MAX_BODY_STATE_DEPTH} levels deep"
        pending.extend((child, depth + 1) for child in children)
    size = len(json.dumps(state, ensure_ascii=False, separators=(",", ":"), default=str))
    if size > MAX_BODY_STATE_CHARS:
        return f"must be an object of at most {MAX_BODY_STATE_CHARS} characters as JSON"
    return None
