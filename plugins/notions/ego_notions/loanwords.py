"""Katakana loanwords and the English words they come from (チェス ← chess, ウクレレ ← ukulele, カラオケ ↔ karaoke):
both are read as a skeleton of consonants as a Japanese ear hears them, so that a loanword and its source compare
equal whatever the vowels, the long-vowel marks and the doubled letters.

The embedding model places many loanwords far from their source word (chess / チェス 0.55 with the default model),
so the notions plugin bridges a loanword to its source when their skeletons are equal and the model finds them at
least related (:mod:`ego_notions.themes`).
"""

from __future__ import annotations

import re
from typing import Final

_KANA: Final = {
    **dict(zip("アイウエオ", ["a", "i", "u", "e", "o"], strict=True)),
    **dict(zip("カキクケコ", ["ka", "ki", "ku", "ke", "ko"], strict=True)),
    **dict(zip("ガギグゲゴ", ["ga", "gi", "gu", "ge", "go"], strict=True)),
    **dict(zip("サシスセソ", ["sa", "shi", "su", "se", "so"], strict=True)),
    **dict(zip("ザジズゼゾ", ["za", "ji", "zu", "ze", "zo"], strict=True)),
    **dict(zip("タチツテト", ["ta", "chi", "tsu", "te", "to"], strict=True)),
    **dict(zip("ダヂヅデド", ["da", "ji", "zu", "de", "do"], strict=True)),
    **dict(zip("ナニヌネノ", ["na", "ni", "nu", "ne", "no"], strict=True)),
    **dict(zip("ハヒフヘホ", ["ha", "hi", "fu", "he", "ho"], strict=True)),
    **dict(zip("バビブベボ", ["ba", "bi", "bu", "be", "bo"], strict=True)),
    **dict(zip("パピプペポ", ["pa", "pi", "pu", "pe", "po"], strict=True)),
    **dict(zip("マミムメモ", ["ma", "mi", "mu", "me", "mo"], strict=True)),
    **dict(zip("ヤユヨ", ["ya", "yu", "yo"], strict=True)),
    **dict(zip("ラリルレロ", ["ra", "ri", "ru", "re", "ro"], strict=True)),
    **dict(zip("ワヲン", ["wa", "o", "n"], strict=True)),
    "ヴ": "bu",
    **dict(zip("ァィゥェォャュョヮ", ["a", "i", "u", "e", "o", "ya", "yu", "yo", "wa"], strict=True)),
}
"""Each katakana as romaji (ヴ as b: English v and b sound alike to a Japanese ear). A small kana takes the vowel's
place in the kana before it (キャ kya, チェ che, ティ ti, ファ fa, ウィ wi); ッ and ー add nothing."""
_SMALL: Final = frozenset("ァィゥェォャュョヮ")
_KATAKANA_WORD: Final = re.compile(r"^[\u30a1-\u30fa\u30fc・ ]+$")
_ENGLISH_WORD: Final = re.compile(r"^[a-z][a-z ]*$")
_VOWELS: Final = frozenset("aeiouyw")
"""Letters that carry no consonant of their own here (y and w glide into the vowel after them)."""


def is_loanword(text: str) -> bool:
    return _KATAKANA_WORD.match(text) is not None


def romaji(katakana: str) -> str:
    """Katakana as romaji: ``チェス`` → ``chesu``, ``ティー`` → ``ti``, ``キャンプ`` → ``kyampu`` (the long-vowel mark
    adds nothing; n before b, p or m is m)."""
    out: list[str] = []
    for char in katakana:
        if char in "ー・ ッ":
            continue
        sound = _KANA.get(char, "")
        if char in _SMALL and out:
            previous = out.pop()
            stem = previous.rstrip("aeiou")
            if sound.startswith("y") and previous.endswith("i"):
                sound = stem + (sound[1:] if stem.endswith(("sh", "ch", "j")) else sound)
            else:
                sound = (stem or "w") + sound.lstrip("y")
        out.append(sound)
    return re.sub(r"n(?=[bpm])", "m", "".join(out))


def _skeleton(text: str) -> str:
    consonants: list[str] = []
    for char in text:
        if char in _VOWELS or char == " ":
            continue
        if not consonants or consonants[-1] != char:
            consonants.append(char)
    return "".join(consonants)


def loan_skeleton(katakana: str) -> str:
    """The consonants of a loanword as heard: ``チェス`` → ``ts``, ``ウクレレ`` → ``kr``, ``テニス`` → ``tns``."""
    return _skeleton(_sounds(romaji(katakana)))


def english_skeleton(word: str) -> str:
    """The consonants of an English word as a Japanese ear hears them: ``chess`` → ``ts``, ``ukulele`` → ``kr``,
    ``harmonica`` → ``hmnk`` (an r before a consonant or at the end is a long vowel)."""
    text = word.casefold()
    text = re.sub(r"r(?=[^aeiouy]|$)", "", text)
    return _skeleton(_sounds(text))


def _sounds(text: str) -> str:
    """Spellings of one sound as one letter, alike for romaji and English (l and r, v and b, c and k, ...)."""
    for spelling, sound in (
        ("wh", "w"),
        ("tch", "t"),
        ("ch", "t"),
        ("sh", "s"),
        ("ts", "t"),
        ("th", "s"),
        ("ph", "f"),
        ("ck", "k"),
        ("qu", "k"),
        ("x", "ks"),
        ("l", "r"),
        ("v", "b"),
        ("c", "k"),
        ("q", "k"),
        ("z", "s"),
        ("j", "g"),
        ("dg", "g"),
    ):
        text = text.replace(spelling, sound)
    return text


def sounds_alike(first: str, second: str) -> bool:
    """A katakana loanword and an English word (either order) with one skeleton of at least two consonants."""
    loan, english = (first, second) if is_loanword(first) else (second, first)
    if not is_loanword(loan) or _ENGLISH_WORD.match(english) is None:
        return False
    skeleton = loan_skeleton(loan)
    return len(skeleton) >= 2 and skeleton == english_skeleton(english)
