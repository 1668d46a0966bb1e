"""Keeping private memories from leaking: a redactor that masks their text wherever it appears.

The memory plugin registers it with the core's redaction pipeline, so log records, workspace files, gateway
payloads and public exports never carry a private memory's content. Texts are compared folded: in Unicode
compatibility form (NFKC), whitespace runs (spaces, tabs, line breaks, non-breaking spaces) as one space and
letters as lower case, so re-normalising (a plugin that stores text NFC), re-wrapping or re-casing a private
text does not get it through. Two passes:

- **Openings.** A match starts at the first ``KEY`` characters of a form of the content (the whole text, or
  one of its lines) and extends as far as the text keeps following that content, so every truncation width
  a tool response may cut to is covered without listing widths. This also catches short private texts.
- **Quotes.** Any passage of at least ``QUOTE_MIN`` characters (``QUOTE_MIN_WIDE`` of Japanese or Chinese)
  that also occurs anywhere in a private text is masked, exactly as far as it follows that text.

Only what is distinctive to private memories is masked: a passage that a public memory said *before* the
private memories holding it reveals nothing private (a diary says "Today Master and I talked about …" in
public and private entries alike). So with a ``public`` check (:class:`~ego_memory.public_passages.
PublicPassages`) a match keeps only its stretches that no such window covers (windows of ``QUOTE_MIN``
characters, ``QUOTE_MIN_WIDE`` wide), from ``MIN_RUN`` characters (``MIN_RUN_WIDE`` wide) on. A public memory
written after a private one and quoting it does not make the quote public: it is masked like any quote. The
guarantee: no window of a private text survives that holds such a stretch of it. Unsure is private: without the
check, or when it cannot answer, a whole match is masked. Every mask is then widened to whole words (and, in
Japanese or Chinese, to whole runs of one script), so that it never leaves a stub of a word beside it; widening
only ever masks more.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable, Iterable

from ego_core import PRIVATE_MARK
from ego_memory.keywords import keywords

MIN_NEEDLE = 8
"""Shorter private texts (or lines) are not masked on their own: too likely to be ordinary words."""
KEY = 24
"""Length of the opening that starts a match."""
QUOTE_MIN = 20
"""A passage of at least this many characters shared with a private text counts as quoting it."""
QUOTE_MIN_WIDE = 8
"""The same for passages in scripts without spaces between words (Japanese, Chinese), denser per character."""

Span = tuple[int, int]


def _continues(char: str) -> bool:
    """A combining mark, or a Hangul vowel or final consonant jamo: NFC composes it with what precedes it."""
    code = ord(char)
    return bool(unicodedata.combining(char)) or 0x1160 <= code <= 0x11FF or 0xD7B0 <= code <= 0xD7FF


def _clusters(text: str) -> Iterable[tuple[int, str]]:
    """Each character with the combining marks (or conjoining jamo) that follow it, and where it starts."""
    start = 0
    for index in range(1, len(text) + 1):
        if index == len(text) or not _continues(text[index]):
            yield start, text[start:index]
            start = index


def fold_with_positions(text: str) -> tuple[str, list[int]]:
    """``text`` in compatibility form (NFKC: a composed and a decomposed "é", a compatibility ideograph and its
    unified one, "ﬁ" and "fi" are the same), every whitespace run made one space and letters lower-cased; and for
    each folded character the index of the original character it stands for."""
    chars: list[str] = []
    positions: list[int] = []
    in_space = False
    normal = unicodedata.is_normalized("NFKC", text)
    for index, piece in enumerate(text) if normal else _clusters(text):
        for char in piece if normal else unicodedata.normalize("NFKC", piece):
            if char.isspace():
                if not in_space:
                    chars.append(" ")
                    positions.append(index)
                    in_space = True
                continue
            in_space = False
            lower = char.lower()
            chars.append(lower if len(lower) == 1 else char)
            positions.append(index)
    return "".join(chars), positions


def fold(text: str) -> str:
    return fold_with_positions(text.strip())[0]


def forms(content: str) -> set[str]:
    """The folded forms in which ``content`` can appear: whole, and line by line."""
    found = {fold(content), *(fold(line) for line in content.splitlines())}
    return {form for form in found if len(form) >= MIN_NEEDLE}


def _wide(char: str) -> bool:
    return ord(char) >= 0x2E80  # CJK and kana


_APOSTROPHES = "'\u2019"


def _script(char: str) -> str | None:
    """What kind of run ``char`` belongs to: a space-separated word (letters and digits), a run of one Japanese or
    Chinese script (han, hiragana, katakana; hangul), a combining mark (part of whatever it is on), or ``None``
    (spaces, punctuation)."""
    category = unicodedata.category(char)
    if category.startswith("M"):
        return "mark"
    if not char.isalnum() and char != "\u30fc":  # ー, the long-vowel mark, continues a katakana word
        return None
    if not _wide(char):
        return "word"
    code = ord(char)
    if 0x3040 <= code <= 0x309F:
        return "hiragana"
    if 0x30A0 <= code <= 0x30FF or 0x31F0 <= code <= 0x31FF or 0xFF66 <= code <= 0xFF9F:
        return "katakana"
    if 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F:
        return "hangul"
    return "han" if category == "Lo" else "wide"


def _script_at(text: str, index: int) -> str | None:
    char = text[index]
    if char in _APOSTROPHES:  # don't, Master's: the apostrophe between two letters is inside the word
        inside = 0 < index < len(text) - 1 and _script(text[index - 1]) == "word" == _script(text[index + 1])
        return "word" if inside else None
    return _script(char)


def _inside(text: str, boundary: int) -> bool:
    """Whether the place before ``text[boundary]`` is inside a word (or a run of one script): a mask must not
    start or end there, or it leaves a stub of a private word beside it ("quoting i[MASK]")."""
    if not 0 < boundary < len(text):
        return False
    left, right = _script_at(text, boundary - 1), _script_at(text, boundary)
    if left is None or right is None:
        return False
    if "mark" in (left, right):
        return True
    # hiragana is particles and endings: a change of word inside a run of it is common, and a mask may stop there
    return left == right != "hiragana"


def snap(text: str, start: int, end: int) -> Span:
    """``text[start:end]`` widened (never narrowed: whatever was masked stays masked) to the nearest boundaries
    of words, and in Japanese or Chinese, which have no spaces between words, of runs of kanji or of katakana
    (a mask may end inside a run of hiragana, where particles and endings part words)."""
    while _inside(text, start):
        start -= 1
    while _inside(text, end):
        end += 1
    return start, end


def _common_prefix(text: str, start: int, form: str) -> int:
    length = 0
    limit = min(len(form), len(text) - start)
    while length < limit and text[start + length] == form[length]:
        length += 1
    return length


def _masked_length(text: str, start: int, form: str) -> int:
    """How much of the folded ``text`` from ``start`` is this private form: all of it, or a truncation of it.

    When the text leaves the form in the middle of a word (a public text sharing an opening with a private
    one and going on differently), the mask stops at the last word boundary instead of eating the next word;
    what remains must still be long enough to be private text at all (0: mask nothing here).
    """
    length = _common_prefix(text, start, form)
    end = start + length
    if length == len(form) or end == len(text) or text[end] == "…":
        return length
    if text[end - 1] == " " or text[end] == " ":
        return length
    boundary = text.rfind(" ", start, end)
    kept = boundary - start if boundary > start else 0
    return kept if len(text[start : start + kept].strip()) >= MIN_NEEDLE else 0


class QuoteIndex:
    """Every window of ``QUOTE_MIN`` characters (and of ``QUOTE_MIN_WIDE`` wide characters) of some folded
    texts, to find in another text every passage it shares with any of them."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        self._windows: dict[str, list[tuple[str, int]]] = {}

    def __bool__(self) -> bool:
        return bool(self._texts)

    def holders(self, passage: str) -> list[str]:
        """Keys of the indexed texts that contain ``passage``."""
        indexed = self._windows.get(passage)
        if indexed is not None:
            return list(dict.fromkeys(key for key, _offset in indexed))
        return [key for key, text in self._texts.items() if passage in text]

    @staticmethod
    def _anchors(folded: str) -> Iterable[tuple[int, str]]:
        for offset in range(len(folded) - QUOTE_MIN_WIDE + 1):
            wide = folded[offset : offset + QUOTE_MIN_WIDE]
            if all(_wide(c) for c in wide):
                yield offset, wide
            if offset + QUOTE_MIN <= len(folded):
                yield offset, folded[offset : offset + QUOTE_MIN]

    def add(self, key: str, folded: str) -> None:
        self.remove(key)
        self._texts[key] = folded
        for offset, window in self._anchors(folded):
            self._windows.setdefault(window, []).append((key, offset))

    def remove(self, key: str) -> None:
        folded = self._texts.pop(key, None)
        if folded is None:
            return
        for offset, window in self._anchors(folded):
            hits = self._windows.get(window, [])
            if (key, offset) in hits:
                hits.remove((key, offset))
            if not hits:
                self._windows.pop(window, None)

    def spans(self, text: str) -> list[Span]:
        """The passages of the folded ``text`` shared with an indexed text, each as far as it follows it."""
        found: list[Span] = []
        covered = 0
        for start in range(len(text) - QUOTE_MIN_WIDE + 1):
            for size in (QUOTE_MIN, QUOTE_MIN_WIDE):
                if start + size <= covered or start + size > len(text):
                    continue
                for key, offset in self._windows.get(text[start : start + size], ()):
                    span = self._extend(text, start, self._texts[key], offset, size)
                    found.append(span)
                    covered = max(covered, span[1])
        return found

    @staticmethod
    def _extend(text: str, start: int, private: str, offset: int, size: int) -> Span:
        begin, back = start, offset
        while begin > 0 and back > 0 and text[begin - 1] == private[back - 1]:
            begin, back = begin - 1, back - 1
        end, ahead = start + size, offset + size
        while end < len(text) and ahead < len(private) and text[end] == private[ahead]:
            end, ahead = end + 1, ahead + 1
        return begin, end


PublicCheck = Callable[[str, float], bool]
"""Whether a folded passage occurs in a public memory stored before the given time (UTC seconds)."""
Said = Callable[[str], bool]
"""Whether a folded passage was said publicly before any private memory said it."""


MIN_RUN = 8
"""A stretch of a match that no earlier public memory covers is private from this many characters on; a shorter
one (" the n" between a shared phrase and where the texts part) reveals nothing."""
MIN_RUN_WIDE = 3
"""The same for Japanese or Chinese, denser per character."""


def distinctive(folded: str, span: Span, said: Said | None) -> list[Span]:
    """The parts of a match that are private: its stretches covered by no window (``QUOTE_MIN`` characters,
    ``QUOTE_MIN_WIDE`` wide) that a public memory said before the private ones, at least ``MIN_RUN`` long."""
    start, end = span
    if said is None:
        return [span]
    if said(folded[start:end]):
        return []
    covered = [False] * (end - start)
    for offset in range(start, end):
        size = QUOTE_MIN_WIDE if all(_wide(c) for c in folded[offset : offset + QUOTE_MIN_WIDE]) else QUOTE_MIN
        if offset + size > end:
            break
        if said(folded[offset : offset + size]):
            covered[offset - start : offset - start + size] = [True] * size
    parts: list[Span] = []
    run_start: int | None = None
    for index in range(end - start + 1):
        inside = index < end - start and not covered[index]
        if inside and run_start is None:
            run_start = index
        elif not inside and run_start is not None:
            run = folded[start + run_start : start + index]
            shortest = MIN_RUN_WIDE if all(_wide(c) for c in run.strip()) else MIN_RUN
            if len(run.strip()) >= shortest:
                parts.append((start + run_start, start + index))
            run_start = None
    return parts


def _trimmed(folded: str, span: Span) -> Span | None:
    start, end = span
    while start < end and folded[start] == " ":
        start += 1
    while end > start and folded[end - 1] == " ":
        end -= 1
    return (start, end) if end > start else None


def _replace(text: str, positions: list[int], folded: str, spans: Iterable[Span]) -> str:
    """``text`` with each span of its folded form (mapped back through ``positions``), widened to whole words
    (:func:`snap`), made one mark."""
    original: list[Span] = []
    for span in spans:
        trimmed = _trimmed(folded, span)
        if trimmed is None:
            continue
        original.append(snap(text, positions[trimmed[0]], positions[trimmed[1] - 1] + 1))
    if not original:
        return text
    pieces: list[str] = []
    position = 0
    for start, end in sorted(original):
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


def mask_quotes(text: str, private_texts: Iterable[str]) -> str:
    """``text`` with every passage quoted from one of ``private_texts`` masked, whatever its case and spacing
    and wherever in the private text it starts, widened to whole words (for texts written to be read, such as
    an episode summary)."""
    index = QuoteIndex()
    for number, private in enumerate(private_texts):
        index.add(str(number), fold(private))
    if not index:
        return text
    folded, positions = fold_with_positions(text)
    return _replace(text, positions, folded, index.spans(folded))


class PrivateContentRedactor:
    """Callable redactor over the set of private memory contents (thread-safe; updated per memory)."""

    def __init__(self, public: PublicCheck | None = None) -> None:
        self.public = public
        self._lock = threading.Lock()
        self._times: dict[str, float] = {}
        self._forms: dict[str, set[str]] = {}
        self._by_key: dict[str, list[str]] = {}
        self._pattern: re.Pattern[str] | None = None
        self._quotes = QuoteIndex()

    def load(self, items: Iterable[tuple[str, str] | tuple[str, str, float]]) -> None:
        """Every private memory as (id, content) or (id, content, timestamp in UTC seconds)."""
        with self._lock:
            self._forms = {}
            self._times = {}
            self._quotes = QuoteIndex()
            for item in items:
                self._index(item[0], item[1], item[2] if len(item) > 2 else None)
            self._rebuild()

    def add(self, memory_id: str, content: str, timestamp: float | None = None) -> None:
        with self._lock:
            self._index(memory_id, content, timestamp)
            self._rebuild()

    def remove(self, memory_id: str) -> None:
        with self._lock:
            if self._forms.pop(memory_id, None) is not None:
                self._times.pop(memory_id, None)
                self._quotes.remove(memory_id)
                self._rebuild()

    def _index(self, memory_id: str, content: str, timestamp: float | None) -> None:
        # its keywords as fuzzy recall shows them are private content too
        self._forms[memory_id] = forms(content) | forms(", ".join(keywords(content)))
        # no time known: no public memory can be older (the cautious side)
        self._times[memory_id] = float("-inf") if timestamp is None else timestamp
        self._quotes.add(memory_id, fold(content))

    def _said_publicly_first(self, passage: str) -> bool:
        """Whether a public memory older than every private memory holding ``passage`` says it."""
        if self.public is None:
            return False
        holders = self._quotes.holders(passage)
        before = min((self._times.get(key, float("-inf")) for key in holders), default=float("-inf"))
        return before != float("-inf") and self.public(passage, before)

    def _rebuild(self) -> None:
        by_key: dict[str, list[str]] = {}
        for found in self._forms.values():
            for form in found:
                by_key.setdefault(form[:KEY], []).append(form)
        self._by_key = by_key
        if not by_key:
            self._pattern = None
            return
        keys = sorted(by_key, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(key) for key in keys))

    def __call__(self, text: str) -> str:
        with self._lock:
            pattern, by_key, quotes = self._pattern, self._by_key, self._quotes
            if pattern is None:
                return text
            folded, positions = fold_with_positions(text)
            spans: list[Span] = []
            for match in pattern.finditer(folded):
                start = match.start()
                length = max(_masked_length(folded, start, form) for form in by_key[match.group(0)])
                if length:
                    spans.append((start, start + length))
            spans.extend(quotes.spans(folded))
            if self.public is not None and spans:
                spans = [part for span in spans for part in distinctive(folded, span, self._said_publicly_first)]
        return _replace(text, positions, folded, spans)
