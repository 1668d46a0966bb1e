"""The last introspection, as wake_up quotes it, and the scaffold that asks an introspection for its open end.

A monologue is quoted by its end: from its last ``Still open:`` (any case; also ``まだ開いている:``, and with a
full-width colon) to the end, cut to the budget; without one, whole when it fits, else ``…`` and its last part.
"""

from __future__ import annotations

import re
import unicodedata

from ego_core import WORD_CUT_LEAST, ScaffoldItem, ScaffoldLine, truncate, word_break

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


def clip(text: str, budget: int, *, wide: int = 2, tokens: int | None = None) -> str:
    """:func:`ego_core.truncate` in ``budget`` columns and ``tokens``, but a cut in the middle of a Latin word goes
    back to the word's start (when that keeps at least half the quote); a CJK cut is at a word break already."""
    cut = truncate(text, budget, wide=wide, tokens=tokens)
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
    return "…" + flat[_word_start(flat, low) :].lstrip()


def _letters(text: str) -> int:
    """Characters of ``text``, combining marks not counted."""
    return sum(1 for char in text if not unicodedata.combining(char))


def _word_start(flat: str, longest: int) -> int:
    """Where the end of ``flat`` quoted from ``longest`` on starts: after a clause end (。、) in the first third,
    else at the first word start (:func:`ego_core.word_break`: a space, or where a kanji or katakana word begins),
    as long as the quote keeps :data:`ego_core.WORD_CUT_LEAST` graphemes; else at ``longest``."""
    start = longest
    while start < len(flat) and unicodedata.combining(flat[start]):
        start += 1
    if word_break(flat, start, start=True):
        return start
    least = min(WORD_CUT_LEAST, _letters(flat[start:]))
    third = start + (len(flat) - start) // 3
    for at in range(start + 1, third + 1):  # a clause end near the start: the quote begins with the next clause
        if flat[at - 1] in "。、．，！？」』）" and _letters(flat[at:].lstrip()) >= least:
            return at
    for at in range(start + 1, len(flat)):
        if _letters(flat[at:].lstrip()) < least:
            break
        if word_break(flat, at, start=True):
            return at
    return start


def thought_quote(text: str, budget: int, *, wide: int, least: int = 0, tokens: int | None = None) -> str:
    """How wake_up quotes an introspection in ``budget`` columns and ``tokens``: from its last ``Still open:`` (cut
    at the end when too long), else whole or by its end. A ``Still open:`` part shorter than ``least`` characters
    is quoted with what precedes it, by the end (a private text's redactor masks passages from a length on)."""
    found = list(STILL_OPEN.finditer(text))
    if found and len(text[found[-1].start() :].strip()) >= least:
        return clip(text[found[-1].start() :], budget, wide=wide, tokens=tokens)
    return tail(text, budget, wide=wide, tokens=tokens)
