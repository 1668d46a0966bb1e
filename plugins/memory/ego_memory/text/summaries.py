"""Episode summaries kept clear of their private members: the summary is the agent's own words about its memories,
and no private member's text stays in it — when the episode is created, when a member turns private later
(``revise_memory``), and for the episodes stored before this rule (checked at every start).

A summary passes the private redactor, then :func:`~ego_memory.text.privacy.mask_quotes` (every passage quoted from a
private member), then :func:`mask_sentences`: every sentence of a private member it repeats, however short (from
:data:`SENTENCE_MIN` characters, :data:`SENTENCE_MIN_WIDE` of kana or kanji), is masked too — "Aiko has cancer"
is shorter than any quote the redactor looks for, and it is the whole secret.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from ego_core import PRIVATE_MARK
from ego_memory.text.privacy import mask_quotes

SENTENCE_MIN: Final = 8
"""A private member's sentence this long (folded) is masked wherever a summary repeats it."""
SENTENCE_MIN_WIDE: Final = 4
"""The same for a sentence of Japanese or Chinese characters only."""
_SENTENCE_END: Final = re.compile(r"[.!?。！？\n]+")
_WIDE: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3005\uff66-\uff9f]")
_TRIM: Final = " \t\"'`“”‘’「」『』()[]{}（）【】<>《》〈〉・,、;:：；-—…"


def _fold(text: str) -> tuple[str, list[int]]:
    """``text`` in NFKC, case-folded, whitespace runs as one space; and for each folded character the index of the
    original one it stands for."""
    chars: list[str] = []
    positions: list[int] = []
    for index, char in enumerate(text):
        for piece in unicodedata.normalize("NFKC", char).casefold():
            space = piece.isspace()
            if space and chars and chars[-1] == " ":
                continue
            chars.append(" " if space else piece)
            positions.append(index)
    return "".join(chars), positions


def sentences(content: str) -> list[str]:
    """The sentences of ``content`` (folded, trimmed) long enough to be masked on their own."""
    found: list[str] = []
    for part in _SENTENCE_END.split(_fold(content)[0]):
        sentence = part.strip(_TRIM)
        wide = bool(sentence) and all(_WIDE.match(c) for c in sentence.replace(" ", ""))
        if len(sentence) >= (SENTENCE_MIN_WIDE if wide else SENTENCE_MIN):
            found.append(sentence)
    return list(dict.fromkeys(found))


def _word_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """The span widened to whole words (letters and digits on either side join it)."""
    while start > 0 and text[start - 1].isalnum() and not _WIDE.match(text[start - 1]):
        start -= 1
    while end < len(text) and text[end].isalnum() and not _WIDE.match(text[end]):
        end += 1
    return start, end


def mask_sentences(text: str, private_texts: Iterable[str]) -> str:
    """``text`` with every sentence of one of ``private_texts`` it repeats (in any case or spacing) made one
    :data:`~ego_core.PRIVATE_MARK`, widened to whole words."""
    wanted = [s for private in private_texts for s in sentences(private)]
    if not wanted:
        return text
    folded, positions = _fold(text)
    spans: list[tuple[int, int]] = []
    for sentence in wanted:
        start = folded.find(sentence)
        while start >= 0:
            end = start + len(sentence)
            spans.append(_word_bounds(text, positions[start], positions[end - 1] + 1))
            start = folded.find(sentence, end)
    if not spans:
        return text
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    pieces: list[str] = []
    position = 0
    for start, end in merged:
        pieces += [text[position:start], PRIVATE_MARK]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def guarded(summary: str, redact: Callable[[str], str], private_texts: Sequence[str]) -> str:
    """``summary`` as an episode keeps it: through the private redactor ``redact``, its quotes of the private
    members' texts masked, and their sentences."""
    return mask_sentences(mask_quotes(redact(summary), private_texts), private_texts)
