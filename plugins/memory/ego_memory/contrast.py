"""Why two sentences that embed alike may still say different things.

A sentence embedding blurs exactly what makes a memory distinct: 映画を見た and 映画を見なかった, "paid 3,000 yen"
and "paid 5,000 yen", 料理を作った and 掃除をした sit at cosine 0.9 and more. Before a memory is refused as a
duplicate, these cheap checks read the words themselves (Japanese through Sudachi, see :mod:`.language`).
"""

from __future__ import annotations

import functools
import re
from typing import Final, Literal

from ego_memory.text.language import CONTENT_POS, POS_WORD, negation_count, numbers, tokens

Contrast = Literal["negation", "number", "wording"]

_KANJI_DIGITS: Final = str.maketrans("〇一二三四五六七八九", "0123456789")
_KANJI_NUMBER: Final = re.compile(r"[〇一二三四五六七八九]+")

ENGLISH_FUNCTION_WORDS: Final = frozenset(
    """
    a an the and or but if so to of in on at by for with from as is are was were be been being am do does did
    have has had i me my we our you your he him his she her it its they them their this that these those there
    here then than too very just also really again today yesterday now
    """.split()
)
"""Words whose presence or absence does not change what an English sentence says happened."""


def content_sequence(text: str) -> tuple[str, ...]:
    """The content words of ``text`` in order, normalised (Japanese dictionary forms, English lower case)."""
    return tuple(
        token.normal
        for token in tokens(text)
        if token.pos in CONTENT_POS and not (token.pos == POS_WORD and token.normal in ENGLISH_FUNCTION_WORDS)
    )


def stated_numbers(text: str) -> frozenset[str]:
    """Numbers in digits or in kanji numerals (二階建て and ２階建て state the same number)."""
    return numbers(_KANJI_NUMBER.sub(lambda m: m.group(0).translate(_KANJI_DIGITS), text))


@functools.lru_cache(maxsize=4096)
def _facts(text: str) -> tuple[int, frozenset[str], tuple[str, ...]]:
    """What :func:`contrast` compares, read once per text (consolidate compares each memory with many)."""
    return negation_count(text), stated_numbers(text), content_sequence(text)


def contrast(first: str, second: str) -> Contrast | None:
    """``"negation"``, ``"number"`` or ``"wording"`` when the two texts say different things, else None.

    ``wording``: the content words differ, or come in another order (who did what to whom:
    シャワーの隣に洗面台 is not 洗面台の隣にシャワー). A rewording of the same statement is therefore not a
    duplicate here; consolidate still proposes it as a merge candidate when only wording differs.
    """
    negations, stated, words = _facts(first)
    other_negations, other_stated, other_words = _facts(second)
    if negations != other_negations:
        return "negation"
    if stated != other_stated:
        return "number"
    if words != other_words:
        return "wording"
    return None
