"""A notion's label: a short thought in the language of the memories it came from, made of its themes, the person
it is bound to and its feeling (``お茶で心が落ち着く``, ``Poetry and rain bring me calm``), never a list of tags.

Pure functions of their arguments; the notions book chooses the words (:func:`ego_notions.book`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Final

from ego_notions.lexicon import lexicon_key, normalize_tag, theme_key, theme_word
from ego_notions.model import first_sentence

LABEL_CHARS: Final = 48
JAPANESE: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3005\u30fc\uff66-\uff9f]")
"""Kana and kanji: a text holding any is Japanese here (the memories of ego's users are mostly Japanese)."""

JA_FEELING: Final = {
    "happy": "{t}が嬉しい",
    "contentment": "{t}で心が落ち着く",
    "sad": "{t}が悲しい",
    "surprised": "{t}にはいつも驚かされる",
    "moved": "{t}に心を動かされる",
    "excited": "{t}にわくわくする",
    "nostalgic": "{t}が懐かしい",
    "curious": "{t}が気になる",
    "neutral": "{t}のある日々",
    "melancholy": "{t}に物悲しくなる",
    "anxious": "{t}が気がかりだ",
    "frustrated": "{t}がもどかしい",
}
EN_FEELING: Final = {
    "happy": ("{T} makes me happy", "{T} make me happy"),
    "contentment": ("{T} brings me calm", "{T} bring me calm"),
    "sad": ("{T} makes me sad", "{T} make me sad"),
    "surprised": ("{T} keeps surprising me", "{T} keep surprising me"),
    "moved": ("{T} moves me", "{T} move me"),
    "excited": ("{T} excites me", "{T} excite me"),
    "nostalgic": ("{T} makes me nostalgic", "{T} make me nostalgic"),
    "curious": ("I'm curious about {t}", "I'm curious about {t}"),
    "neutral": ("{T} is part of my days", "{T} are part of my days"),
    "melancholy": ("{T} leaves me melancholy", "{T} leave me melancholy"),
    "anxious": ("{T} makes me uneasy", "{T} make me uneasy"),
    "frustrated": ("{T} frustrates me", "{T} frustrate me"),
}
"""Each feeling for one theme, then for several (or a plural word)."""
PRIVATE: Final = {"ja": "胸にしまっていること", "en": "Something I keep to myself"}
"""The label of a notion with no public memory to draw words from."""
FORGOTTEN: Final = {"ja": "もう思い出せないこと", "en": "Something I no longer remember"}
"""The label drawn for a notion whose memories were all forgotten."""
QUOTE_RUN: Final = 12
QUOTE_RUN_WIDE: Final = 4
QUOTE_WHOLE: Final = 8
"""A chosen label quotes a private memory when it holds a run of :data:`QUOTE_RUN` of its characters (of
:data:`QUOTE_RUN_WIDE` kana or kanji) or its first sentence, or is itself a passage of it of at least
:data:`QUOTE_WHOLE` characters."""
_SINGULAR_S: Final = ("ss", "us", "is", "ics")


def is_japanese(text: str) -> bool:
    return JAPANESE.search(text) is not None


def language_of(texts: Sequence[str]) -> str:
    """``ja`` when most of ``texts`` are Japanese, ``en`` when most are not; a tie goes to the last one."""
    if not texts:
        return "en"
    japanese = sum(1 for text in texts if is_japanese(text))
    if japanese * 2 == len(texts):
        return "ja" if is_japanese(texts[-1]) else "en"
    return "ja" if japanese * 2 > len(texts) else "en"


def _plural(word: str) -> bool:
    """An English word that reads as a plural (``cats``, ``poems``; not ``news``, ``chess``, ``physics``)."""
    normal = normalize_tag(word)
    key = lexicon_key(normal)
    if key is not None:
        return normal != key and normal.endswith("s") and not key.endswith("s")
    return normal.endswith("s") and not normal.endswith(_SINGULAR_S)


def _phrase(words: Sequence[str], person: str | None, language: str) -> tuple[str, bool]:
    """The theme phrase and whether it is plural."""
    if language == "ja":
        joined = "と".join(words)
        if person:
            return (f"{person}との{joined}" if joined else f"{person}との時間"), False
        return joined, False
    joined = " and ".join(words)
    plural = len(words) > 1 or (len(words) == 1 and _plural(words[0]))
    if person:
        return (f"{joined} with {person}" if joined else f"time with {person}"), plural
    return joined, plural


def _sentence(words: Sequence[str], tone: str, person: str | None, language: str) -> str:
    phrase, plural = _phrase(words, person, language)
    if language == "ja":
        return JA_FEELING.get(tone, JA_FEELING["neutral"]).format(t=phrase)
    one, many = EN_FEELING.get(tone, EN_FEELING["neutral"])
    text = (many if plural else one).format(T=phrase, t=phrase)
    return text[:1].upper() + text[1:]


def compose(words: Sequence[str], tone: str, language: str, person: str | None = None) -> str:
    """The thought a notion stands for: its theme words (the first two), the person it is bound to and its feeling,
    in ``language`` (``ja`` or ``en``), at most :data:`LABEL_CHARS` characters (one theme word when two make it
    longer; a long word is cut)."""
    chosen = [w for w in dict.fromkeys(" ".join(w.split()) for w in words) if w][:2]
    if not chosen and not person:
        return PRIVATE[language if language in PRIVATE else "en"]
    text = _sentence(chosen, tone, person, language)
    if len(text) > LABEL_CHARS and len(chosen) > 1:
        chosen = chosen[:1]
        text = _sentence(chosen, tone, person, language)
    if len(text) > LABEL_CHARS and chosen:
        room = max(4, len(chosen[0]) - (len(text) - LABEL_CHARS) - 1)
        text = _sentence([chosen[0][:room].rstrip() + "…"], tone, person, language)
    return text


def _shape(template: str) -> re.Pattern[str]:
    pattern = re.escape(template).replace(re.escape("{t}"), ".+").replace(re.escape("{T}"), ".+")
    return re.compile(pattern, re.IGNORECASE | re.DOTALL)


DRAWN_SHAPES: Final = tuple(
    _shape(t) for t in (*JA_FEELING.values(), *(form for pair in EN_FEELING.values() for form in pair))
)


def drawn_shape(label: str) -> bool:
    """Whether ``label`` reads as one :func:`compose` draws (a feeling sentence, or the private or forgotten
    phrase), not as words the agent chose."""
    if label in PRIVATE.values() or label in FORGOTTEN.values():
        return True
    return any(shape.fullmatch(label) for shape in DRAWN_SHAPES)


def _folded(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def quotes(label: str, texts: Iterable[str]) -> bool:
    """Whether ``label`` repeats words of one of ``texts``: their first sentence, a run of :data:`QUOTE_RUN`
    characters (:data:`QUOTE_RUN_WIDE` of kana or kanji), or the whole label when it is shorter and at least
    :data:`QUOTE_WHOLE` long (compared in NFKC, case-folded, whitespace runs as one space)."""
    mine = _folded(label)
    if len(mine) < QUOTE_RUN_WIDE:
        return False
    for text in texts:
        theirs = _folded(text)
        head = _folded(first_sentence(text).removesuffix("..."))
        if len(head) >= QUOTE_RUN_WIDE and head in mine:
            return True
        if QUOTE_WHOLE <= len(mine) <= QUOTE_RUN and mine in theirs:
            return True
        for start in range(len(mine) - QUOTE_RUN_WIDE + 1):
            wide = mine[start : start + QUOTE_RUN_WIDE]
            if all(JAPANESE.match(c) for c in wide) and wide in theirs:
                return True
            run = mine[start : start + QUOTE_RUN]
            if len(run) == QUOTE_RUN and run in theirs:
                return True
    return False


def person_word(name: str, language: str, tags: Iterable[str] = ()) -> str:
    """How a label in ``language`` names a person: a tag of the same theme in that script (``マスター`` for
    Master in Japanese), else the lexicon's word for them, else their name as the self-model keeps it."""
    if is_japanese(name) == (language == "ja"):
        return name
    key = theme_key(name)
    for tag in tags:
        if theme_key(tag) == key and is_japanese(tag) == (language == "ja"):
            return " ".join(tag.split())
    word = theme_word(key, language)
    if word is None:
        return name
    return word if language == "ja" else word[:1].upper() + word[1:]


def legacy_label(label: str, tags: Iterable[str], tone: str, person: str | None) -> str | None:
    """The label this version gives a notion whose label the first versions generated (``tea & morning (happy)``,
    ``朝の散歩は気持ちがいい (happy)``, ``untitled (sad)``); None for any other label (one the agent chose)."""
    suffix = f" ({tone})"
    if tone not in JA_FEELING or not label.endswith(suffix):
        return None
    head = label[: -len(suffix)]
    listed = list(tags)
    if head == "untitled":
        return PRIVATE["en"]
    if listed and head == " & ".join(listed[:3]):
        language = "ja" if any(is_japanese(t) for t in listed) else "en"
        who = person_word(person, language, listed) if person else None
        words = [t for t in listed if who is None or theme_key(t) != theme_key(person or "")]
        return compose(words[:2], tone, language, who)
    return head or None
