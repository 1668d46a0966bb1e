"""Keeping private memories from leaking: a redactor that masks their text wherever it appears.

The memory plugin registers it with the core's redaction pipeline, so log records, workspace files, gateway
payloads and public exports never carry a private memory's content — whole, line by line, or cut short the
way tool responses shorten it. A match starts at the first ``KEY`` characters of a form of the content and
extends as far as the text keeps following that content, so every truncation width is covered without
listing widths. Over-masking (a public text that shares a long opening with a private one) is the safe
direction.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

from ego_core import PRIVATE_MARK

MIN_NEEDLE = 8
"""Shorter private texts (or lines) are not masked on their own: too likely to be ordinary words."""
KEY = 24
"""Length of the opening that starts a match."""


def forms(content: str) -> set[str]:
    """The forms in which ``content`` can appear: as written, folded onto one line, and line by line."""
    found = {content.strip(), " ".join(content.split())}
    found.update(line.strip() for line in content.splitlines())
    return {form for form in found if len(form) >= MIN_NEEDLE}


def _common_prefix(text: str, start: int, form: str) -> int:
    length = 0
    limit = min(len(form), len(text) - start)
    while length < limit and text[start + length] == form[length]:
        length += 1
    return length


def _masked_length(text: str, start: int, form: str) -> int:
    """How much of ``text`` from ``start`` is this private form: all of it, or a truncation of it.

    When the text leaves the form in the middle of a word (a public text sharing an opening with a private
    one and going on differently), the mask stops at the last word boundary instead of eating the next word;
    what remains must still be long enough to be private text at all (0: mask nothing here).
    """
    length = _common_prefix(text, start, form)
    end = start + length
    if length == len(form) or end == len(text) or text[end] in "…\n\r":
        return length
    if text[end - 1].isspace() or text[end].isspace():
        return length
    boundary = max(text.rfind(" ", start, end), text.rfind("\t", start, end))
    kept = boundary - start if boundary > start else 0
    return kept if len(text[start : start + kept].strip()) >= MIN_NEEDLE else 0


class PrivateContentRedactor:
    """Callable redactor over the set of private memory contents (thread-safe, rebuilt on change)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._contents: dict[str, str] = {}
        self._by_key: dict[str, list[str]] = {}
        self._pattern: re.Pattern[str] | None = None

    def load(self, items: Iterable[tuple[str, str]]) -> None:
        with self._lock:
            self._contents = dict(items)
            self._rebuild()

    def add(self, memory_id: str, content: str) -> None:
        with self._lock:
            self._contents[memory_id] = content
            self._rebuild()

    def remove(self, memory_id: str) -> None:
        with self._lock:
            if self._contents.pop(memory_id, None) is not None:
                self._rebuild()

    def _rebuild(self) -> None:
        by_key: dict[str, list[str]] = {}
        for content in self._contents.values():
            for form in forms(content):
                by_key.setdefault(form[:KEY], []).append(form)
        self._by_key = by_key
        if not by_key:
            self._pattern = None
            return
        keys = sorted(by_key, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(key) for key in keys))

    def __call__(self, text: str) -> str:
        pattern, by_key = self._pattern, self._by_key
        if pattern is None:
            return text
        pieces: list[str] = []
        position = 0
        for match in pattern.finditer(text):
            start = match.start()
            if start < position:
                continue
            length = max(_masked_length(text, start, form) for form in by_key[match.group(0)])
            if length == 0:
                continue
            pieces.append(text[position:start])
            pieces.append(PRIVATE_MARK)
            position = start + length
        pieces.append(text[position:])
        return "".join(pieces)


QUOTE_MIN = 20
"""A passage of at least this many characters shared with a private text counts as quoting it."""
QUOTE_MIN_WIDE = 8
"""The same for passages in scripts without spaces between words (Japanese, Chinese), denser per character."""


def _fold(text: str) -> str:
    """Lower case, character for character (so positions stay the same), whitespace runs made single."""
    single = " ".join(text.split())
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in single)


def _wide(char: str) -> bool:
    return ord(char) >= 0x2E80  # CJK and kana


def _in_word(char: str) -> bool:
    """Part of a space-separated word (a quote is widened to whole words; CJK has no words to widen to)."""
    return char.isalnum() and not _wide(char)


def _shared_spans(folded: str, private: str) -> list[tuple[int, int]]:
    """Every passage of ``folded`` that also occurs in ``private``, in any order: windows of QUOTE_MIN
    characters, or of QUOTE_MIN_WIDE characters of a wide script, found in the private text."""
    spans: list[tuple[int, int]] = []
    for size, wide_only in ((QUOTE_MIN, False), (QUOTE_MIN_WIDE, True)):
        windows = {private[i : i + size] for i in range(len(private) - size + 1)}
        for i in range(len(folded) - size + 1):
            window = folded[i : i + size]
            if window in windows and (not wide_only or all(_wide(c) for c in window)):
                spans.append((i, i + size))
    return spans


def _whole_words(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without surrounding spaces, widened to the words it cuts into."""
    while text[start].isspace():
        start += 1
    while text[end - 1].isspace():
        end -= 1
    while start > 0 and _in_word(text[start - 1]) and _in_word(text[start]):
        start -= 1
    while end < len(text) and _in_word(text[end - 1]) and _in_word(text[end]):
        end += 1
    return start, end


def mask_quotes(text: str, private_texts: Iterable[str]) -> str:
    """``text`` (whitespace already single) with every passage quoted from one of ``private_texts`` masked,
    whatever its case and wherever in the private text it starts, widened to whole words."""
    folded = _fold(text)
    spans = [span for private in private_texts for span in _shared_spans(folded, _fold(private))]
    if not spans:
        return text
    pieces: list[str] = []
    position = 0
    for span in sorted(spans):
        start, end = _whole_words(text, *span)
        if end <= position:
            continue
        if start > position:
            pieces.append(text[position:start])
            pieces.append(PRIVATE_MARK)
        elif not pieces:
            pieces.append(PRIVATE_MARK)
        position = end
    pieces.append(text[position:])
    return "".join(pieces)
