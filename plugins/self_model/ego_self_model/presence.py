"""Presence is evidence: whether a memory that names someone was a moment with them, or one about their absence.

A memory names a person in one or more **clauses**. The text is cut at sentence and clause punctuation
(``。！？，.!?;:,`` and line breaks), at a Japanese ``、`` after けど／けれど／のに or before
でも／しかし／だけど／それでも, and before the English ``but``, ``while``, ``though``, ``although``,
``whereas``. A clause that names them and says they are away or missed is an **absence**: it records no shared
moment. A clause that names them with none of those words (or with a word of their return, which wins) is
**presence**. The memory is a moment with the person when at least one clause naming them is presence.

The words, per language (matched case-insensitively; English ones as whole words):

- Japanese absence: いない・居ない・いなく・居なく (not after 違, as in 違いない), 留守, 出張, 不在,
  会いたい・会いたく・逢いたい・逢いたく, 会えない, 恋し (恋しい, 恋しくて), 帰ってこない・帰ってこなく, 帰らない,
  帰りを待.
- Japanese return: 帰ってきた, 帰ってくれた, 戻ってきた, 帰宅, おかえり, お帰り, ただいま.
- English absence: away, without, miss, misses, missed, missing, gone, absent, not here, not home, isn't here,
  wasn't here, far from, left for, on a trip, longing, long for, longed for, and "wish … were here" (or was).
- English return: came back, comes back, come back, got back, is back, was back, back home, returned, home again.

The rule reads words, not meaning: it is deliberately small, so what it decides can be predicted and explained.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

CLAUSE_BREAK: Final = re.compile(
    r"[。．！？，,.!?;；:：\n]+"
    r"|(?:(?<=けど)|(?<=けれど)|(?<=のに))、?|、(?=でも|しかし|だけど|それでも)"
    r"|\s+(?=(?:but|while|though|although|whereas)\b)",
    re.IGNORECASE,
)
"""Where a clause ends: sentence punctuation and the comma (a Japanese 、 only after けど／けれど／のに or before
でも／しかし／だけど／それでも: elsewhere it joins a scene to its setting), or before an English conjunction that
turns to another scene."""

JAPANESE_ABSENCE: Final = (
    r"(?<!違)いない",
    r"(?<!違)居ない",
    r"(?<!違)いなく",
    r"居なく",
    "留守",
    "出張",
    "不在",
    "会いたい",
    "会いたく",
    "逢いたい",
    "逢いたく",
    "会えない",
    "恋し",
    "帰ってこない",
    "帰ってこなく",
    "帰らない",
    "帰りを待",
)
JAPANESE_RETURN: Final = ("帰ってきた", "帰ってくれた", "戻ってきた", "帰宅", "おかえり", "お帰り", "ただいま")
ENGLISH_ABSENCE: Final = (
    "away",
    "without",
    "miss",
    "misses",
    "missed",
    "missing",
    "gone",
    "absent",
    "not here",
    "not home",
    "isn't here",
    "wasn't here",
    "far from",
    "left for",
    "on a trip",
    "longing",
    "long for",
    "longed for",
)
ENGLISH_RETURN: Final = (
    "came back",
    "comes back",
    "come back",
    "got back",
    "is back",
    "was back",
    "back home",
    "returned",
    "home again",
)
WISH_HERE: Final = r"\bwish(?:ed)?\b.*\b(?:were|was)\s+here\b"


def _words(english: Iterable[str], japanese: Iterable[str], extra: Iterable[str] = ()) -> re.Pattern[str]:
    spelled = [r"(?<!\w)" + re.escape(word).replace(r"\ ", r"\s+") + r"(?!\w)" for word in english]
    return re.compile("|".join([*spelled, *japanese, *extra]))


ABSENCE: Final = _words(ENGLISH_ABSENCE, JAPANESE_ABSENCE, (WISH_HERE,))
RETURN: Final = _words(ENGLISH_RETURN, (re.escape(word) for word in JAPANESE_RETURN))


def clauses(text: str) -> list[str]:
    """``text`` (already case-folded) cut into clauses; empty ones dropped."""
    return [clause for clause in CLAUSE_BREAK.split(text) if clause.strip()]


def absent_in(clause: str) -> bool:
    """Whether ``clause`` (case-folded) says someone is away or missed, with no word of their return."""
    return ABSENCE.search(clause) is not None and RETURN.search(clause) is None


def present(text: str, name: re.Pattern[str]) -> bool:
    """Whether ``text`` (case-folded) names someone (``name`` finds any of their names) in a clause that is not
    about their absence."""
    return any(name.search(clause) and not absent_in(clause) for clause in clauses(text))
