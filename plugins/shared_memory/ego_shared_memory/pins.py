"""The pinned summary (layer 2): one short line per live entry, most important first, within a token budget.

The janitor stores it (each pin links to its source event); a snapshot composes it with the same rules from
the live heads, so it is never staler than the log.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

import attrs

from ego_shared_memory.events import Event, pin_rank

LINE_CHARS = 160
"""A pin quotes at most this much of the entry's first line."""


def estimate_tokens(text: str) -> int:
    """Roughly: four ASCII characters per token, one token per other character (Japanese, say)."""
    if text.isascii():
        return math.ceil(len(text) / 4)
    ascii_chars = len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)


def first_line(text: str, limit: int = LINE_CHARS) -> str:
    """The first non-empty line, whitespace folded, cut to ``limit`` characters (with an ellipsis)."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    line = " ".join(line.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def pin_line(event: Event) -> str:
    where = "" if event.scope == "global" else f"{event.scope} · "
    confidence = "" if event.confidence == "high" else f" ({event.confidence})"
    return f"- {where}{event.kind} `{event.dedupe_key}`{confidence}: {first_line(event.content_md)} [{event.event_id}]"


@attrs.frozen
class PinSet:
    markdown: str
    events: tuple[Event, ...]
    omitted: int
    tokens: int


def compose_pins(candidates: Sequence[Event], *, total: int, budget_tokens: int, complete: bool = True) -> PinSet:
    """Pins from ``candidates`` (live heads of one or more scopes) in rank order while they fit the budget.

    ``total`` is how many live entries the scopes hold, for the closing "N more" line (``complete`` false: at
    least that many).
    """
    ordered = sorted(candidates, key=lambda e: (pin_rank(e.kind, e.confidence), -e.seq))
    lines: list[str] = []
    chosen: list[Event] = []
    used = 0
    reserve = estimate_tokens(f"({total}+ more entries in the log: search or list them)")
    for event in ordered:
        line = pin_line(event)
        cost = estimate_tokens(line) + 1
        if used + cost + reserve > budget_tokens:
            continue  # a shorter, less important line may still fit
        lines.append(line)
        chosen.append(event)
        used += cost
    omitted = max(total - len(chosen), 0)
    if omitted:
        lines.append(f"({omitted}{'' if complete else '+'} more entries in the log: search or list them)")
    markdown = "\n".join(lines)
    return PinSet(markdown=markdown, events=tuple(chosen), omitted=omitted, tokens=estimate_tokens(markdown))


def pins_header(scopes: Sequence[str], moment: datetime) -> str:
    return f"# Pinned shared memory ({', '.join(scopes)}), {moment:%Y-%m-%d %H:%M} UTC"
