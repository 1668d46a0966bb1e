"""Reading text in any script: normalisation, Japanese word segmentation (SudachiPy with its bundled core
dictionary) and the few facts about a sentence that an embedding blurs (negation, numbers, content words).

Japanese is the normal case here: a CJK run is cut into words by Sudachi (short units, mode A, so one- and
two-character words such as 詩 or 雨 are words of their own), each word in its dictionary-normalised form
(見れる → 見る, りんご → 林檎); other scripts are split into words by Unicode word characters.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache
from typing import Any, Final

import attrs

CJK: Final = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u31f0-\u31ff\uff66-\uff9f\u3005\u30fc]+"
)
"""Runs of kana, kanji (with 々 and the long-vowel mark), hangul and half-width katakana."""

_INVISIBLE: Final = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)
_WORD: Final = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_NUMBER: Final = re.compile(r"\d+(?:[.,]\d+)*")

POS_NOUN: Final = "noun"
POS_PROPER: Final = "proper"
POS_NUMBER: Final = "number"
POS_VERB: Final = "verb"
POS_ADJECTIVE: Final = "adjective"
POS_FUNCTION: Final = "function"
"""Particles, auxiliaries, prefixes and suffixes: grammar rather than content."""
POS_SYMBOL: Final = "symbol"
POS_WORD: Final = "word"
"""A word of a script Sudachi does not read (Latin, Cyrillic, ...): content unless it is a stop word."""

CONTENT_POS: Final = frozenset({POS_NOUN, POS_PROPER, POS_NUMBER, POS_VERB, POS_ADJECTIVE, POS_WORD})

_SUDACHI_POS: Final = {
    "名詞": POS_NOUN,
    "代名詞": POS_FUNCTION,
    "動詞": POS_VERB,
    "形容詞": POS_ADJECTIVE,
    "形状詞": POS_ADJECTIVE,
    "副詞": POS_ADJECTIVE,
    "連体詞": POS_FUNCTION,
    "接続詞": POS_FUNCTION,
    "感動詞": POS_FUNCTION,
    "助詞": POS_FUNCTION,
    "助動詞": POS_FUNCTION,
    "接頭辞": POS_FUNCTION,
    "接尾辞": POS_FUNCTION,
    "補助記号": POS_SYMBOL,
    "記号": POS_SYMBOL,
    "空白": POS_SYMBOL,
}

HELPER_VERBS: Final = frozenset({"居る", "為る", "成る", "有る", "呉れる", "貰う", "仕舞う", "置く", "出来る"})
"""Verbs that mostly serve grammar (している, になる, してくれる): not content words."""
JAPANESE_NEGATIONS: Final = frozenset({"ない", "ず", "ぬ", "無い", "まい"})
"""Normalised forms that negate (見なかった → ない, いません → ず, 時間が無い → 無い)."""
ENGLISH_NEGATIONS: Final = frozenset(
    "not no never nothing nobody none nowhere neither nor without cannot can't don't doesn't didn't isn't "
    "aren't wasn't weren't won't wouldn't shouldn't couldn't haven't hasn't hadn't mustn't".split()
)


@attrs.frozen
class Token:
    surface: str
    normal: str
    """The dictionary-normalised form (Japanese), else the lower-cased word."""
    pos: str
    latin: str = ""
    """A Japanese proper noun's reading in Latin letters (:func:`romaji`: 宇治 → ``uji``, 東京 → ``tokyo``), so
    a name written in romaji meets the same name in kanji; empty for every other word."""


def normalize(text: str) -> str:
    """NFKC (full-width letters and digits, half-width katakana, compatibility ideographs) without invisible
    format characters (zero-width spaces and joiners, bidi marks, variation selectors)."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))


class _Sudachi(threading.local):
    """One Sudachi tokenizer per thread (a tokenizer is not safe to share), over one dictionary."""

    def __init__(self) -> None:
        from sudachipy import SplitMode

        self.tokenizer = _dictionary().tokenizer(mode=SplitMode.A)


@lru_cache(maxsize=1)
def _dictionary() -> Any:
    from sudachipy import Dictionary

    return Dictionary(dict="core")


@lru_cache(maxsize=1)
def _sudachi() -> _Sudachi:
    """The per-thread tokenizers, made at first use (loading the dictionary takes a moment)."""
    return _Sudachi()


MAX_RUN: Final = 4096
"""Characters of one CJK run given to Sudachi at once (it refuses inputs over 49,149 bytes): a longer run
(only in pathological text: real sentences are cut by punctuation) is read in pieces of this length."""


_KANA: Final = dict(
    zip(
        "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヰヱヲン"
        "ガギグゲゴザジズゼゾダヂヅデドバビブベボパピプペポヴァィゥェォャュョヮヵヶ",
        "a i u e o ka ki ku ke ko sa shi su se so ta chi tsu te to na ni nu ne no ha hi fu he ho ma mi mu me mo "
        "ya yu yo ra ri ru re ro wa i e o n ga gi gu ge go za ji zu ze zo da ji zu de do ba bi bu be bo pa pi pu pe "
        "po vu a i u e o ya yu yo wa ka ke".split(),
        strict=True,
    )
)
_KANA_PAIRS: Final = {
    **{
        f"{kana}{small}": f"{stem}{vowel}"
        for kana, stem in zip("キシチニヒミリギジヂビピ", "ky sh ch ny hy my ry gy j j by py".split(), strict=True)
        for small, vowel in zip("ャュョ", ("a", "u", "o"), strict=True)
    },
    **dict(
        zip(
            "シェ ジェ チェ ティ ディ トゥ ドゥ ファ フィ フェ フォ ウィ ウェ ウォ".split(),
            "she je che ti di tu du fa fi fe fo wi we wo".split(),
            strict=True,
        )
    ),
    **dict(zip("ヴァ ヴィ ヴェ ヴォ ツァ デュ".split(), "va vi ve vo tsa dyu".split(), strict=True)),
}
LATIN_READING_MIN: Final = 3
"""Letters of the shortest reading given to a proper noun (two letters would meet English words: 津 → tsu is kept,
伊 → i is not)."""


def romaji(reading: str) -> str:
    """A katakana reading in Latin letters as names are written in English text: Hepburn without long vowels
    (トウキョウ → tokyo, オオサカ → osaka, ホッカイドウ → hokkaido, ウジ → uji). Empty when the reading holds
    anything but katakana (an unknown word's reading is its surface)."""
    out: list[str] = []
    double = False
    i = 0
    while i < len(reading):
        pair = reading[i : i + 2]
        if pair in _KANA_PAIRS:
            syllable, i = _KANA_PAIRS[pair], i + 2
        elif reading[i] == "ッ":
            double, i = True, i + 1
            continue
        elif reading[i] == "ー":  # a long vowel is not written
            i += 1
            continue
        elif reading[i] in _KANA:
            syllable, i = _KANA[reading[i]], i + 1
        else:
            return ""
        last = out[-1][-1] if out else ""
        if (syllable in ("u", "o") and last == "o") or (syllable == "u" and last == "u"):
            continue  # ou, oo, uu: one long vowel, written once
        if double and syllable[0] not in "aeioun":
            syllable = ("t" if syllable.startswith("ch") else syllable[0]) + syllable
        double = False
        out.append(syllable)
    return "".join(out)


def _japanese_tokens(run: str) -> list[Token]:
    if len(run) > MAX_RUN:
        return [
            token for start in range(0, len(run), MAX_RUN) for token in _japanese_tokens(run[start : start + MAX_RUN])
        ]
    found: list[Token] = []
    for morpheme in _sudachi().tokenizer.tokenize(run):
        pos = morpheme.part_of_speech()
        kind = _SUDACHI_POS.get(pos[0], POS_FUNCTION)
        if kind == POS_NOUN and pos[1] == "固有名詞":
            kind = POS_PROPER
        elif kind == POS_NOUN and pos[1] == "数詞":
            kind = POS_NUMBER
        normal = morpheme.normalized_form()
        if kind == POS_VERB and pos[1] == "非自立可能" and normal in HELPER_VERBS:
            kind = POS_FUNCTION
        latin = romaji(morpheme.reading_form()) if kind == POS_PROPER else ""
        found.append(Token(morpheme.surface(), normal, kind, latin if len(latin) >= LATIN_READING_MIN else ""))
    return found


def tokens(text: str) -> list[Token]:
    """The words of ``text`` in order: CJK runs segmented by Sudachi, other scripts by word characters."""
    text = normalize(text)
    found: list[Token] = []
    position = 0
    for run in CJK.finditer(text):
        found.extend(_latin_tokens(text[position : run.start()]))
        found.extend(_japanese_tokens(run.group(0)))
        position = run.end()
    found.extend(_latin_tokens(text[position:]))
    return found


def _latin_tokens(text: str) -> list[Token]:
    found = []
    for match in _WORD.finditer(text):
        word = match.group(0)
        kind = POS_NUMBER if word.isdigit() else POS_WORD
        found.append(Token(word, word.lower().replace("’", "'"), kind))
    return found


def japanese_words(text: str) -> list[str]:
    """The normalised forms of the words of every CJK run of ``text`` (punctuation left out), in order."""
    words: list[str] = []
    for run in CJK.findall(normalize(text)):
        words.extend(t.normal for t in _japanese_tokens(run) if t.pos != POS_SYMBOL)
    return words


def japanese_tokens(text: str) -> tuple[Token, ...]:
    """The tokens of every CJK run of ``text`` (after :func:`normalize`), punctuation left out, in order."""
    return _japanese_run_tokens(normalize(text))


@lru_cache(maxsize=2048)
def _japanese_run_tokens(text: str) -> tuple[Token, ...]:
    # cached: one recall reads its context several times (word terms, cues, labels) and the same candidates
    return tuple(t for run in CJK.findall(text) for t in _japanese_tokens(run) if t.pos != POS_SYMBOL)


LEXICON: Final = "sudachi-core-A-v2-readings"
"""The identity of :func:`segmented` as the memory store records it (``meta.lexicon``): a store whose word index
was built by another segmentation is re-segmented when it opens. Change it whenever :func:`segmented` changes.
v2: a proper noun is followed by its reading in Latin letters (:attr:`Token.latin`)."""


def segmented(text: str) -> str:
    """The text a word index reads: ``text`` after :func:`normalize`, each CJK run replaced by its Sudachi
    words (normalised forms, punctuation left out) separated by spaces; everything else as it was.

    ``今日は雨が降った。Masterから`` → `` 今日 は 雨 が 降る た 。Master から ``: a tokenizer that splits on
    spaces and punctuation (FTS5 ``unicode61``) then sees Japanese words, and Latin text keeps its words. A
    proper noun is followed by its reading in Latin letters (``宇治で`` → `` 宇治 uji で ``), so "Uji" finds it.
    """
    text = normalize(text)
    parts: list[str] = []
    position = 0
    for run in CJK.finditer(text):
        parts.append(text[position : run.start()])
        words = [w for t in _japanese_tokens(run.group(0)) if t.pos != POS_SYMBOL for w in (t.normal, t.latin) if w]
        parts.append(" " + " ".join(words) + " ")
        position = run.end()
    parts.append(text[position:])
    return "".join(parts)


def has_cjk(text: str) -> bool:
    return CJK.search(text) is not None


def negation_count(text: str) -> int:
    """How many negations ``text`` holds (見なかった, いません, not, never, n't)."""
    count = 0
    for token in tokens(text):
        japanese = token.normal in JAPANESE_NEGATIONS and token.pos in (POS_FUNCTION, POS_ADJECTIVE)
        english = token.pos == POS_WORD and (token.normal in ENGLISH_NEGATIONS or token.normal.endswith("n't"))
        if japanese or english:
            count += 1
    return count


def numbers(text: str) -> frozenset[str]:
    """The numbers ``text`` states, as written after NFKC (１２ → 12; 1,000 and 1000 kept apart)."""
    return frozenset(_NUMBER.findall(normalize(text)))
