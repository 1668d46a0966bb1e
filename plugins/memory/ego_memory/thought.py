"""The last introspection, as wake_up quotes it, and the scaffold that asks an introspection for its open end.

A monologue is quoted by its end: from its last ``Still open:`` (any case; also ``まだ開いている:``, and with a
full-width colon) to the end, cut to the budget; without one, whole when it fits, else ``…`` and its last part.
"""

from __future__ import annotations

import re
import unicodedata

from ego_core import ScaffoldItem, ScaffoldLine, truncate

STILL_OPEN = re.compile(r"(?:still\s+open|ま(?:だ|た\u3099)開いている)\s*[:：]", re.IGNORECASE)
"""The marker, also decomposed (NFD: だ as た and a combining dakuten)."""
INTROSPECTION_SCAFFOLD: tuple[ScaffoldItem, ...] = (
    "Did this monologue close, or is something still unfinished?",
    "If something is open, end with 'Still open:' and a line or two: wake_up carries it forward.",
    ScaffoldLine(
        'If a question crystallized, hold it: update_self(field="new_question", value={"question": ...}).',
        needs={"update_self"},
    ),
)
"""What ``remember(category="introspection")`` answers with, instead of remember's usual question."""

_WHOLE = 10**9
"""A width no text reaches: ``truncate`` to it only folds the whitespace."""


def _fits(text: str, budget: int, wide: int, tokens: int | None = None) -> bool:
    """Whether ``text`` is quoted whole in ``budget`` columns and ``tokens`` (compared folded: a leading space
    does not count)."""
    return truncate(text, budget, wide=wide, tokens=tokens) == truncate(text, _WHOLE, wide=wide)


def clip(text: str, budget: int, *, wide: int) -> str:
    """:func:`ego_core.truncate`, but a cut in the middle of a Latin word goes back to the word's start (when
    that keeps at least half the quote)."""
    cut = truncate(text, budget, wide=wide)
    if not cut.endswith("…"):
        return cut
    body = cut[:-1]
    flat = truncate(text, _WHOLE, wide=wide)
    if not (flat.startswith(body) and len(flat) > len(body)):
        return cut
    after, before = flat[len(body)], body[-1:]
    if after.isascii() and after.isalnum() and before.isascii() and before.isalnum():
        space = body.rfind(" ")
        if space >= len(body) // 2:
            body = body[:space]
    return body.rstrip(" ,;:") + "…"


def tail(text: str, budget: int, *, wide: int, tokens: int | None = None) -> str:
    """``…`` and the longest end of ``text`` that fits ``budget`` columns and ``tokens`` (by default ``budget``)
    with it, starting at a word."""
    flat = truncate(text, _WHOLE, wide=wide)
    if _fits(flat, budget, wide, tokens):
        return flat
    room = budget - 1  # the ellipsis is one column and one token
    room_tokens = (budget if tokens is None else tokens) - 1
    low, high = 0, len(flat)
    while low < high:  # the first start whose end fits
        middle = (low + high) // 2
        if _fits(flat[middle:], room, wide, room_tokens):
            high = middle
        else:
            low = middle + 1
    start = low
    while start < len(flat) and unicodedata.combining(flat[start]):
        start += 1
    if 0 < start < len(flat) and flat[start - 1].isalnum() and flat[start].isalnum() and flat[start].isascii():
        space = flat.find(" ", start)  # not in the middle of a word
        start = space + 1 if space != -1 else start
    return "…" + flat[start:].lstrip()


def thought_quote(text: str, budget: int, *, wide: int, least: int = 0, tokens: int | None = None) -> str:
    """How wake_up quotes an introspection in ``budget`` columns and ``tokens``: from its last ``Still open:`` (cut
    at the end when too long), else whole or by its end. A ``Still open:`` part shorter than ``least`` characters
    is quoted with what precedes it, by the end (a private text's redactor masks passages from a length on)."""
    found = list(STILL_OPEN.finditer(text))
    if found and len(text[found[-1].start() :].strip()) >= least:
        return truncate(text[found[-1].start() :], budget, wide=wide, tokens=tokens)
    return tail(text, budget, wide=wide, tokens=tokens)
