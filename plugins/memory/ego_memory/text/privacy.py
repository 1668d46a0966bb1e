"""Keeping private memories from leaking: a redactor that masks their text wherever it appears.

The memory plugin registers it with the core's redaction pipeline, so log records, workspace files, gateway
payloads and public exports never carry a private memory's content. Texts are compared folded (:func:`fold`): in
Unicode compatibility form (NFKC), letters in lower case, katakana as hiragana, and every separator dropped —
spaces and line breaks, punctuation (``-``, ``_``, ``.``, ``/``, ``・``, ``、``, ``。``, ``「」`` …), symbols and
invisible format characters — so re-normalising (a plugin that stores text NFC), re-wrapping, re-casing, or
writing a private text as a slug (``my-hidden-diary``), a file name (``my_hidden_diary``) or dotted does not get it
through. What was dropped is remembered as a gap between two kept characters (a word boundary), and every kept
character keeps the index of the original one it stands for, so a mask covers the original span, separators
included. Two passes:

- **Openings.** A match starts at the first ``KEY`` characters of a form of the content (the whole text, or
  one of its lines) and extends as far as the text keeps following that content, so every truncation width
  a tool response may cut to is covered without listing widths. This also catches short private texts.
- **Quotes.** Any passage that also occurs anywhere in a private text and weighs at least ``QUOTE_MIN`` there is
  masked, exactly as far as it follows that text. A letter or digit weighs one, a Japanese or Chinese character
  ``QUOTE_MIN / QUOTE_MIN_WIDE`` (8 of them are a quote, as 20 letters are; a mixed passage such as
  ``秘密のカナリアKANARIA7788`` adds up), and each gap the private text has within the passage or at either end
  of it one, so a passage of the private text 20 characters long (a run of spaces counted once) is a quote
  however its copy is spaced. Every such window is indexed; a text is looked up at each place whose next
  ``SEED`` characters open one. With separators dropped, a quote may begin with the last letters of the word
  before it (``quot|e: …house`` against ``th|e house``): such a stub of the text's own word is left out.

Only what is distinctive to private memories is masked: a passage that a public memory said *before* the
private memories holding it reveals nothing private (a diary says "Today Master and I talked about …" in
public and private entries alike). So with a ``public`` check (:class:`~ego_memory.index.public_passages.
PublicPassages`, asked about a private memory's own wording of a passage, in :func:`public_form`) a match keeps
only its stretches that no such window covers (windows weighing ``QUOTE_MIN``, gaps not counted), from
``MIN_RUN`` (gaps counted) or ``MIN_RUN_WIDE`` Japanese or Chinese characters on. A public memory written after a
private one and quoting it does not make the quote public: it is masked like any quote. The guarantee: no window
of a private text survives that holds such a stretch of it. Unsure is private: without the check, or when it
cannot answer, a whole match is masked. Every mask is then widened to whole words (and, in Japanese or Chinese,
to whole runs of one script), so that it never leaves a stub of a word beside it; widening only ever masks more.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from ego_core import PRIVATE_MARK
from ego_memory.text.keywords import keywords

MIN_NEEDLE = 8
"""Shorter private texts (or lines), in folded characters, are not masked on their own: too likely to be ordinary
words."""
KEY = 24
"""Length of the opening (in folded characters) that starts a match."""
QUOTE_MIN = 20
"""A passage shared with a private text weighing this much there counts as quoting it (a letter or digit weighs
one, a gap of the private text within the passage or at either end of it one)."""
QUOTE_MIN_WIDE = 8
"""Japanese or Chinese characters, denser per character, that make a quote: each weighs ``QUOTE_MIN /
QUOTE_MIN_WIDE``."""
WIDE_WEIGHT = QUOTE_MIN / QUOTE_MIN_WIDE
SEED = math.ceil((QUOTE_MIN - 1) / (WIDE_WEIGHT + 1))
"""The fewest characters a passage weighing ``QUOTE_MIN`` has (6: Japanese ones with gaps around each): every
window starts with one of the index's seeds of this length, so most places of a text are passed over at once."""

Span = tuple[int, int]

_KATAKANA = {chr(code): chr(code - 0x60) for code in range(0x30A1, 0x30F7)}
"""Katakana ァ…ヶ and the hiragana of the same sound: カナリア and かなりあ are one word."""
_FOLDED: dict[str, str] = {}


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


def separator(char: str) -> bool:
    """Whether ``char`` is dropped from the folded form: whitespace, punctuation, a symbol, a control or an
    invisible format character (a zero-width space, a soft hyphen)."""
    category = unicodedata.category(char)
    return char.isspace() or category[0] in "PSZ" or category in ("Cc", "Cf")


def _folded_char(char: str) -> str:
    """``char`` (in NFKC) as compared: empty for a separator, else lower case, katakana as hiragana."""
    found = _FOLDED.get(char)
    if found is None:
        lower = char.lower()
        kept = lower if len(lower) == 1 else char
        found = "" if separator(char) else _KATAKANA.get(kept, kept)
        if len(_FOLDED) < 65_536:
            _FOLDED[char] = found
    return found


@attrs.frozen
class Folded:
    """A text as compared: ``text`` its folded characters, ``positions[i]`` the index in the original of the
    character ``text[i]`` stands for, ``gaps[i]`` whether separators were dropped before ``text[i]``
    (``gaps[len(text)]``: after the last one)."""

    text: str
    positions: list[int]
    gaps: list[bool]

    def weight(self, start: int, end: int) -> float:
        """What ``text[start:end]`` weighs (:data:`QUOTE_MIN`): its characters, and each gap inside it or at either
        end one."""
        total = sum(WIDE_WEIGHT if _wide(char) else 1.0 for char in self.text[start:end])
        return total + sum(self.gaps[start : end + 1]) if end > start else 0.0


def fold_with_positions(text: str) -> Folded:
    """``text`` in compatibility form (NFKC: a composed and a decomposed "é", a compatibility ideograph and its
    unified one, "ﬁ" and "fi", half- and full-width katakana are the same), letters lower-cased, katakana as
    hiragana and every separator (:func:`separator`) dropped, with where each character came from."""
    chars: list[str] = []
    positions: list[int] = []
    gaps = [False]
    normal = unicodedata.is_normalized("NFKC", text)
    for index, piece in enumerate(text) if normal else _clusters(text):
        for char in piece if normal else unicodedata.normalize("NFKC", piece):
            kept = _FOLDED.get(char)
            if kept is None:
                kept = _folded_char(char)
            if not kept:
                gaps[-1] = True
                continue
            chars.append(kept)
            positions.append(index)
            gaps.append(False)
    return Folded("".join(chars), positions, gaps)


def fold(text: str) -> str:
    """The form texts are compared in (:func:`fold_with_positions`)."""
    return fold_with_positions(text).text


def public_form(text: str) -> str:
    """``text`` as the public check reads it: NFKC, lower case, every whitespace run one space, trimmed."""
    normal = unicodedata.normalize("NFKC", text)
    return " ".join("".join(c.lower() if len(c.lower()) == 1 else c for c in normal).split())


def forms(content: str, whole: str | None = None) -> set[str]:
    """The folded forms in which ``content`` can appear: whole (``whole``, when already folded), and line by
    line."""
    found = {fold(content) if whole is None else whole, *(fold(line) for line in content.splitlines())}
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


def _masked_length(folded: Folded, start: int, form: str) -> int:
    """How much of the folded text from ``start`` is this private form: all of it, or a truncation of it.

    When the text leaves the form in the middle of a word (a public text sharing an opening with a private
    one and going on differently), the mask stops at the last gap instead of eating the next word; what
    remains must still be long enough to be private text at all (0: mask nothing here).
    """
    text, gaps = folded.text, folded.gaps
    length = _common_prefix(text, start, form)
    end = start + length
    if length == len(form) or end == len(text) or gaps[end]:
        return length
    kept = next((boundary - start for boundary in range(end - 1, start, -1) if gaps[boundary]), 0)
    return kept if kept >= MIN_NEEDLE else 0


def _trimmed(folded: Folded, span: Span) -> Span:
    """``span`` less a piece of a word at either end that is glued to letters of the text's own: with the
    separators dropped, a quote may start with the last letters of the word before it ("quot|e: …house" against
    "th|e house"), and the mask, widened to whole words, would take that word. Only letters of scripts written
    with spaces are trimmed, at most up to the first (last) gap in the span: Japanese keeps every character."""
    text, gaps = folded.text, folded.gaps
    start, end = span
    if start > 0 and not gaps[start] and not _wide(text[start - 1]):
        cut = next((index for index in range(start + 1, end) if gaps[index]), None)
        if cut is not None and not any(_wide(char) for char in text[start:cut]):
            start = cut
    if end < len(text) and not gaps[end] and not _wide(text[end]):
        cut = next((index for index in range(end - 1, start, -1) if gaps[index]), None)
        if cut is not None and not any(_wide(char) for char in text[cut:end]):
            end = cut
    return start, end


def quote_windows(folded: Folded) -> Iterable[Span]:
    """From each place of a folded private text, the shortest passage weighing ``QUOTE_MIN`` (gaps counted)."""
    text, gaps = folded.text, folded.gaps
    end, inner = 0, 0.0  # the weight of text[start:end] with the gaps before each of its characters
    for start in range(len(text)):
        if end <= start:
            end, inner = start, 0.0
        while end < len(text) and (end == start or inner + gaps[end] < QUOTE_MIN):
            inner += (WIDE_WEIGHT if _wide(text[end]) else 1.0) + gaps[end]
            end += 1
        if inner + gaps[end] < QUOTE_MIN:
            return
        yield start, end
        inner -= (WIDE_WEIGHT if _wide(text[start]) else 1.0) + gaps[start]


def _window_ends(text: str, start: int, end: int) -> list[int]:
    """For each place in ``text[start:end]``, where the shortest passage from it weighing ``QUOTE_MIN`` (gaps not
    counted) ends, as long as that is within ``end``."""
    ends: list[int] = []
    stop, total = start, 0.0
    for offset in range(start, end):
        while stop < end and total < QUOTE_MIN:
            total += WIDE_WEIGHT if _wide(text[stop]) else 1.0
            stop += 1
        if total < QUOTE_MIN:
            break
        ends.append(stop)
        total -= WIDE_WEIGHT if _wide(text[offset]) else 1.0
    return ends


class QuoteIndex:
    """Every quote-sized window (:func:`quote_windows`) of some private texts, to find in another text every
    passage it shares with any of them."""

    def __init__(self) -> None:
        self._contents: dict[str, str] = {}
        self._texts: dict[str, Folded] = {}
        self._windows: dict[str, list[tuple[str, int]]] = {}
        self._seeds: dict[str, dict[int, int]] = {}

    def __bool__(self) -> bool:
        return bool(self._texts)

    def holders(self, passage: str) -> list[str]:
        """Keys of the indexed texts that contain the folded ``passage``."""
        indexed = self._windows.get(passage)
        if indexed is not None:
            return list(dict.fromkeys(key for key, _offset in indexed))
        return [key for key, folded in self._texts.items() if passage in folded.text]

    def wording(self, key: str, passage: str) -> str | None:
        """How the indexed text ``key`` words the folded ``passage`` (its first occurrence), in
        :func:`public_form`."""
        folded, content = self._texts.get(key), self._contents.get(key)
        if folded is None or content is None or not passage:
            return None
        at = folded.text.find(passage)
        if at < 0:
            return None
        end = folded.positions[at + len(passage) - 1] + 1
        while end < len(content) and _continues(content[end]):
            end += 1
        return public_form(content[folded.positions[at] : end])

    def add(self, key: str, content: str, folded: Folded | None = None) -> None:
        """Index ``content`` (``folded``: its :func:`fold_with_positions`, when already made)."""
        self.remove(key)
        folded = folded if folded is not None else fold_with_positions(content)
        self._contents[key] = content
        self._texts[key] = folded
        for start, end in quote_windows(folded):
            window = folded.text[start:end]
            self._windows.setdefault(window, []).append((key, start))
            lengths = self._seeds.get(window[:SEED])
            if lengths is None:
                lengths = self._seeds[window[:SEED]] = {}
            lengths[end - start] = lengths.get(end - start, 0) + 1

    def remove(self, key: str) -> None:
        folded = self._texts.pop(key, None)
        self._contents.pop(key, None)
        if folded is None:
            return
        for start, end in quote_windows(folded):
            window = folded.text[start:end]
            hits = self._windows.get(window, [])
            if (key, start) in hits:
                hits.remove((key, start))
                seed = window[:SEED]
                lengths = self._seeds[seed]
                lengths[end - start] -= 1
                if not lengths[end - start]:
                    del lengths[end - start]
                if not lengths:
                    del self._seeds[seed]
            if not hits:
                self._windows.pop(window, None)

    def spans(self, folded: Folded) -> list[Span]:
        """The passages of the ``folded`` text shared with an indexed text, each as far as it follows it (less a
        stub of a word of the text's own at either end, :func:`_trimmed`)."""
        text = folded.text
        found: list[Span] = []
        seeds, windows = self._seeds, self._windows
        covered = 0
        for start in range(len(text) - SEED + 1):
            lengths = seeds.get(text[start : start + SEED])
            if lengths is None:
                continue
            for size in lengths:
                end = start + size
                if end <= covered or end > len(text):
                    continue
                for key, offset in windows.get(text[start:end], ()):
                    span = self._extend(text, start, self._texts[key].text, offset, size)
                    found.append(_trimmed(folded, span))
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
"""Whether a passage (in :func:`public_form`) occurs in a public memory stored before the given time (UTC
seconds)."""
Said = Callable[[str], bool]
"""Whether a folded passage was said publicly before any private memory said it."""


MIN_RUN = 8
"""A stretch of a match that no earlier public memory covers is private from this weight on (gaps counted); a
shorter one (" the n" between a shared phrase and where the texts part) reveals nothing."""
MIN_RUN_WIDE = 3
"""The same in Japanese or Chinese characters, denser per character."""


def distinctive(folded: Folded, span: Span, said: Said | None) -> list[Span]:
    """The parts of a match that are private: its stretches covered by no window (weighing ``QUOTE_MIN``, gaps
    not counted) that a public memory said before the private ones, from ``MIN_RUN`` (or ``MIN_RUN_WIDE``
    Japanese or Chinese characters) on."""
    start, end = span
    if said is None:
        return [span]
    text = folded.text
    if said(text[start:end]):
        return []
    covered = [False] * (end - start)
    for offset, stop in enumerate(_window_ends(text, start, end), start):
        if said(text[offset:stop]):
            covered[offset - start : stop - start] = [True] * (stop - offset)
    parts: list[Span] = []
    run_start: int | None = None
    for index in range(end - start + 1):
        inside = index < end - start and not covered[index]
        if inside and run_start is None:
            run_start = index
        elif not inside and run_start is not None:
            first, last = start + run_start, start + index
            if all(_wide(c) for c in text[first:last]):
                private = last - first >= MIN_RUN_WIDE
            else:
                private = folded.weight(first, last) >= MIN_RUN
            if private:
                parts.append((first, last))
            run_start = None
    return parts


def _replace(text: str, folded: Folded, spans: Iterable[Span]) -> str:
    """``text`` with each span of its folded form (mapped back to the original characters, the separators
    between them included), widened to whole words (:func:`snap`), made one mark."""
    positions = folded.positions
    original = [snap(text, positions[start], positions[end - 1] + 1) for start, end in spans if end > start]
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
    """``text`` with every passage quoted from one of ``private_texts`` masked, whatever its case, spacing and
    separators and wherever in the private text it starts, widened to whole words (for texts written to be read,
    such as an episode summary)."""
    index = QuoteIndex()
    for number, private in enumerate(private_texts):
        index.add(str(number), private)
    if not index:
        return text
    folded = fold_with_positions(text)
    return _replace(text, folded, index.spans(folded))


def _trie_pattern(keys: Iterable[str]) -> str:
    """A regular expression matching the longest of ``keys`` that starts at a place, as a trie: one branch per
    next character, not one alternative per key, so a search costs about as much with thousands of keys."""
    trie: dict[str, dict[str, Any]] = {}
    for key in keys:
        node = trie
        for char in key:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        branches = [re.escape(char) + emit(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body  # greedy: the longer key first

    return emit(trie)


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
        folded = fold_with_positions(content)
        self._forms[memory_id] = forms(content, folded.text) | forms(", ".join(keywords(content)))
        # no time known: no public memory can be older (the cautious side)
        self._times[memory_id] = float("-inf") if timestamp is None else timestamp
        self._quotes.add(memory_id, content, folded)

    def _said_publicly_first(self, passage: str) -> bool:
        """Whether a public memory older than every private memory holding ``passage`` says it (as one of them
        words it)."""
        if self.public is None:
            return False
        holders = self._quotes.holders(passage)
        before = min((self._times.get(key, float("-inf")) for key in holders), default=float("-inf"))
        if before == float("-inf"):
            return False
        wordings = {wording for key in holders if (wording := self._quotes.wording(key, passage)) is not None}
        return any(self.public(wording, before) for wording in sorted(wordings))

    def _rebuild(self) -> None:
        by_key: dict[str, list[str]] = {}
        for found in self._forms.values():
            for form in found:
                by_key.setdefault(form[:KEY], []).append(form)
        self._by_key = by_key
        if not by_key:
            self._pattern = None
            return
        self._pattern = re.compile(_trie_pattern(by_key))

    def __call__(self, text: str) -> str:
        with self._lock:
            pattern, by_key, quotes = self._pattern, self._by_key, self._quotes
            if pattern is None:
                return text
            folded = fold_with_positions(text)
            spans: list[Span] = []
            position = 0
            while (match := pattern.search(folded.text, position)) is not None:
                start = match.start()
                length = max(_masked_length(folded, start, form) for form in by_key[match.group(0)])
                if length:
                    spans.append((start, start + length))
                # a key that leads nowhere here may hide one starting inside it
                position = start + max(length, 1)
            spans.extend(quotes.spans(folded))
            if self.public is not None and spans:
                spans = [part for span in spans for part in distinctive(folded, span, self._said_publicly_first)]
        return _replace(text, folded, spans)
