"""Presence is evidence: whether a memory that names someone was a moment with them, or one about their absence.

A memory names a person in one or more **clauses**. The text is cut at sentence and clause punctuation
(``。！？，.!?;:,`` and line breaks), at a Japanese ``、`` after けど／けれど／のに or before
でも／しかし／だけど／それでも, and before the English ``but``, ``while``, ``though``, ``although``,
``whereas``. A clause that names them and says they are away or missed is an **absence**: it records no shared
moment. A clause that names them with none of those words (or with a word of their return, which wins) is
**presence**. The memory is a moment with the person when at least one clause naming them is presence.

The words, per language (matched case-insensitively; English ones as whole words):

- Japanese absence: いない・居ない・いなく・居なく (not after 違, て or で: 違いない, していない), 留守,
  出張中・出張に出・出張で, 不在,
  会いたい・会いたく・逢いたい・逢いたく, 会えない, 恋し (恋しい, 恋しくて), 帰ってこない・帰ってこなく, 帰らない,
  帰りを待, 出発, 旅立, 発った, に行っている・へ行っている (に行ってる), 出かけた・出かけている (not after と),
  寂しい・寂しくて・寂しかった・淋しい, 一緒にいたい・一緒にいられ(ない), and a return still to come: 帰ってくる,
  戻ってくる, 帰ってくれば, 帰ってきたら, 帰ってきてほしい.
- Japanese return (not followed by ら: 帰ってきたら is still to come): 帰ってきた, 帰ってくれた, 戻ってきた, 帰宅,
  おかえり, お帰り, ただいま; and what is done or told face to face: 教えてくれた, 話してくれた, 言ってくれた,
  手伝った, 見せた, 渡した.
- English absence: away, without, miss, misses, missed, missing (with their name or
  him/her/them/you within three words after it: "missing the rain" misses no one), gone, absent, not here, not
  home, isn't here, wasn't here, far from, left for, on a trip, longing, long for, longed for, lonely, and "wish …
  were here" (or was); a return still to come: comes back, come back, coming back, will be back, be back, be
  home, gets back.
- English return: told me, came back, came home, got back, got home, is back, was back, back home, returned, home
  again.

Neither a moment nor an absence:

- Quoted words (「…」, 『…』, “…”, "…") are emptied first: what someone says is not what happens.
- A clause that says together (below) makes every clause naming someone a moment with them, unless it says they
  are away or speaks of the past: 「マスターの締め切りが終わった。朝ごはんを一緒に食べた」 is a moment with マスター.
- Alone or asleep (一人で・ひとりで・独りで, 昼寝, 寝ている間, 眠っている間, alone, by myself, on my own, asleep,
  napping, napped, sleeping) anywhere in the memory: no moment with anyone it names, except in a clause that says
  together (一緒に but not 一緒にいたい, 二人で, ふたりで, 三人で, と私, 私と, together, with me, … and I, me and …)
  or a return; and no sign they are away (they may be napping in the next room).
- Word from elsewhere (届いた, メッセージ, 電話, 連絡, メール, ビデオ通話, message, texted, called me, phoned,
  phone, email, video call): no moment, no absence (they may be at work).
- The past or a time still to come (思い出, 去年, 昔, あの頃, 以前, 予定, つもり, 来週, 来月, いつか, しよう, ましょう,
  last year, years ago, used to, remembered, back then, long ago, will, can, going to, want to, plan to,
  planning, hope to, someday, next week, next month): the clause says nothing of now.
- Only their belongings (先生のセーター, Sam's flight: ``Xの`` not followed by いる／いない／居, ``X's`` not followed by
  a word of being or going): a clause about their things is no moment with them.

The rule reads words, not meaning: it is deliberately small, so what it decides can be predicted and explained.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Final

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
    r"(?<![違てで])いない",
    r"(?<!違)居ない",
    r"(?<![違てで])いなく",
    r"居なく",
    "寂しい",
    "寂しくて",
    "寂しかった",
    "淋しい",
    "留守",
    "出張中",
    "出張に出",
    "出張で",
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
    "一緒にいたい",
    "一緒にいられ",
    "出発",
    "旅立",
    "に行っている",
    "へ行っている",
    "に行ってる",
    "へ行ってる",
    r"(?<!と)出かけた",
    r"(?<!と)出かけている",
    "発った",
    "帰ってくる",
    "戻ってくる",
    "帰ってくれば",
    "帰ってきたら",
    "帰ってきてほしい",
)
JAPANESE_RETURN: Final = (
    "帰ってきた",
    "帰ってくれた",
    "戻ってきた",
    "帰宅",
    "おかえり",
    "お帰り",
    "ただいま",
    "教えてくれた",
    "話してくれた",
    "言ってくれた",
    "手伝った",
    "見せた",
    "渡した",
)
"""A return, or something done together or told face to face now (which wins over the words of an absence
still to come: マスターが来週から出張すると教えてくれた is a moment with them)."""
ENGLISH_ABSENCE: Final = (
    "away",
    "without",
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
    "comes back",
    "come back",
    "coming back",
    "will be back",
    "be back",
    "be home",
    "gets back",
    "lonely",
)
ENGLISH_RETURN: Final = (
    "told me",
    "came back",
    "came home",
    "got home",
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
SOLO: Final = _words(
    ("alone", "by myself", "on my own", "asleep", "napping", "napped", "sleeping"),
    ("一人で", "ひとりで", "独りで", "昼寝", "寝ている間", "寝ているあいだ", "眠っている間", "眠っているあいだ"),
)
"""The agent on its own: no moment with whoever the memory names, but no sign they are away (they may be napping
in the next room). It holds for the whole memory, except a clause that says they were together."""
TOGETHER: Final = _words(
    ("together", "with me", "and i", "me and"),
    (r"一緒に(?!い[たら])", r"いっしょに(?!い[たら])", "二人で", "ふたりで", "三人で", "と私", "私と"),
)
"""A clause that says the agent and someone were together: being alone elsewhere in the memory does not undo it."""
REMOTE: Final = _words(
    ("message", "messaged", "texted", "called me", "phoned", "phone", "email", "emailed", "video call"),
    ("届いた", "届く", "メッセージ", "電話", "連絡", "メール", "ビデオ通話"),
)
"""Word from someone elsewhere: no moment together, and no sign of an absence either (they may be at work)."""
NAMELESS_TOGETHER: Final = re.compile(
    r"(?<!と)(?:一緒に|いっしょに)(?!い[たら])|二人で|ふたりで|(?<!\w)(?:the two of us|both of us|we both)(?!\w)"
)
"""Together with no one named (朝ごはんを一緒に食べた, the two of us): the person the memory names elsewhere.
Aikoと一緒に names its own company, so it vouches for no one else."""
NAMELESS_SKIP: Final = re.compile(r"一人|ひとり|独り|alone")
"""A together clause that is itself about being alone (一人で…一緒に) vouches for no one."""
RECALLED: Final = _words(
    (
        "last year",
        "years ago",
        "used to",
        "remembered",
        "back then",
        "long ago",
        "will",
        "can",
        "going to",
        "want to",
        "plan to",
        "planning",
        "hope to",
        "someday",
        "next week",
        "next month",
    ),
    ("思い出", "去年", "昔", "あの頃", "以前", "予定", "つもり", "来週", "来月", "いつか", "しよう", "ましょう"),
)
"""A clause about the past or a time still to come (remembering last year's trip, planning to bake together):
it says nothing of now, neither way."""
QUOTED: Final = re.compile(r"「[^「」]*」|『[^『』]*』|“[^“”]*”|\"[^\"]*\"")
"""Someone's words, quoted: what they say (「留守のあいだ頼むね」) is not what is happening."""
VERBISH: Final = (
    "back|home|here|there|with|in|at|been|going|coming|just|still|not|always|never|so|really|out|up|off|asleep"
    "|awake|busy|right|fine|away|gone|got|had|done|on|over|around|upstairs|downstairs"
)
RETURN: Final = _words(ENGLISH_RETURN, (re.escape(word) + "(?!ら)" for word in JAPANESE_RETURN))
"""A return, said as done (帰ってきたら, "once they are back", is still to come)."""


def clauses(text: str) -> list[str]:
    """``text`` (already case-folded) cut into clauses, quoted words emptied (「」 stays where they were); empty
    ones dropped."""
    return [clause for clause in CLAUSE_BREAK.split(QUOTED.sub("「」", text)) if clause.strip()]


def _possessive_only(clause: str, name: re.Pattern[str]) -> bool:
    """Whether every mention of the person in ``clause`` is their belonging (先生のセーター, Sam's flight) rather
    than them: ``Xの`` not followed by いる／いない／居 (``マスターのいる部屋`` is them), ``X's`` not followed by a
    word of being or going (``Master's back`` is them)."""
    mentions = list(name.finditer(clause))
    for found in mentions:
        after = clause[found.end() :]
        if after.startswith("の") and not re.match(r"の(?:い[るたな]|居)", after):
            continue
        if re.match(rf"['’]s\s+(?!(?:{VERBISH})\b)\w", after):
            continue
        return False
    return bool(mentions)


MISS: Final = re.compile(r"(?<!\w)miss(?:es|ed|ing)?(?!\w)((?:\W+[\w']+){1,3})")
"""miss, misses, missed, missing and the three words after it."""
PRONOUNS: Final = re.compile(r"(?<!\w)(?:him|her|them|you)(?!\w)")


def _missed(clause: str, name: re.Pattern[str] | None) -> bool:
    """Whether ``clause`` misses the person: their name or him/her/them/you within three words after a form of
    *miss* (``missing the rain`` misses no one)."""
    for found in MISS.finditer(clause):
        after = found.group(1)
        if PRONOUNS.search(after) or (name is not None and name.search(after)):
            return True
    return False


def absent_in(clause: str, name: re.Pattern[str] | None = None) -> bool:
    """Whether ``clause`` (case-folded) says someone (``name``) is away or missed, with no word of their return."""
    away = ABSENCE.search(clause) is not None or _missed(clause, name)
    return away and RETURN.search(clause) is None


def _with_them(clause: str, name: re.Pattern[str], alone: bool, together: bool = False) -> bool:
    """Whether ``clause`` (which names them) is a moment with them: not their absence nor the past; then a clause
    that says together (or ``together``: another clause of the memory does, as in 「マスターの締め切りが終わった。
    朝ごはんを一緒に食べた」), or tells of a return or of something done face to face, is; else not word from
    elsewhere, nor only their belongings, nor in a memory of the agent alone."""
    if absent_in(clause, name):
        return False
    if RETURN.search(clause) is not None:  # done or told face to face, now: whatever else the clause speaks of
        return True
    if RECALLED.search(clause):
        return False
    if together or TOGETHER.search(clause) is not None:
        return True
    return not (alone or SOLO.search(clause) or REMOTE.search(clause) or _possessive_only(clause, name))


def present(text: str, name: re.Pattern[str]) -> bool:
    """Whether ``text`` (case-folded) names someone (``name`` finds any of their names) in a clause that is a moment
    with them (:func:`_with_them`)."""
    parts = clauses(text)
    alone = any(SOLO.search(clause) and not RETURN.search(clause) for clause in parts)
    unnamed_together = any(NAMELESS_TOGETHER.search(clause) and not NAMELESS_SKIP.search(clause) for clause in parts)
    return any(name.search(clause) and _with_them(clause, name, alone, unnamed_together) for clause in parts)


def away(text: str, name: re.Pattern[str]) -> bool:
    """Whether ``text`` (case-folded) says someone (``name``) is away or missed now: the evidence of an absence
    (being alone, word from elsewhere or the past is none)."""
    return any(
        name.search(clause) and absent_in(clause, name) and not RECALLED.search(clause) for clause in clauses(text)
    )


NAMED_ENGLISH: Final = re.compile(
    r"\b([A-Z][a-z]{1,15}) and I\b|\bme and ([A-Z][a-z]{1,15})\b|\b([A-Z][a-z]{1,15}) and me\b"
    r"|\b([A-Z][a-z]{1,15}) (?:told|asked|showed|gave|taught|helped|hugged|thanked|called) me\b"
    r"|\b([A-Z][a-z]{1,15}) (?:said|asked|laughed|smiled|came|got|brought|made|played|cooked|baked|sang|read"
    r"|wrote|texted|wanted|loved|liked|cried|slept|woke|left|returned|planted|picked|watched|worked|walked"
    r"|tried|found|bought|sent|showed|taught|helped|hugged|thanked|called|kissed|smiled|sighed|joked|visited"
    r"|says|thinks|loves|likes|told)\b"
    r"|\b([A-Z][a-z]{1,15})(?=(?:と|さん|くん|ちゃん))"
    r"|\b(?:with|beside) ([A-Z][a-z]{1,15})\b(?!['’]| [A-Z])"
)
"""Someone the agent was with, was told something by, or saw do something, by a capitalised name: ``Sam and I``,
``Noor told me``, ``Sam laughed``, ``dinner with Sam``."""
NAMED_JAPANESE: Final = re.compile(
    r"(?<![お\u4e00-\u9fff\u30a1-\u30fa\u30fc])([\u4e00-\u9fff\u30a1-\u30fa\u30fc]{1,6})(?<![屋店員者])"
    r"(?:さん|くん|ちゃん|さま)"
)
"""Someone called with an honorific: 田中さん, ユウキくん; not a shop or trade (お茶屋さん, 本屋さん, 店員さん) or a
polite noun (お客さん, お隣さん)."""
NOT_NAMES: Final = frozenset(
    "the i we my our your this that then today tonight yesterday tomorrow morning evening night afternoon "
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december english japanese everyone someone nobody god he she they "
    "it there here what who when where why how christmas easter spring summer autumn winter fall "
    "お客 皆 みな みんな 誰 神 仏 お医者 医者 店員 駅員 お隣 隣 大家".split()
)


class _Tokenizers(threading.local):
    """One Sudachi tokenizer per thread (a tokenizer is not safe to share), over one dictionary."""

    def __init__(self) -> None:
        from sudachipy import Dictionary, SplitMode

        self.tokenizer = _dictionary(Dictionary).tokenizer(mode=SplitMode.C)


@lru_cache(maxsize=1)
def _dictionary(dictionary: Any) -> Any:
    return dictionary(dict="core")


@lru_cache(maxsize=1)
def _tokenizers() -> _Tokenizers:
    return _Tokenizers()


_WIDE: Final = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


WITH_SOMEONE: Final = frozenset({"と", "が", "に", "から", "とは", "とも"})
"""The particles after a name that make it someone done something with, by or to (ユウキと, 健太が, 美咲に):
not a poet's name before の (芭蕉の句), which is about their work."""


def japanese_person_names(text: str) -> list[str]:
    """The given and family names Sudachi's dictionary knows in Japanese text (ユウキ, 健太, 田中健太), adjacent
    parts joined, where a particle of :data:`WITH_SOMEONE` follows: a Japanese owner names people without an
    honorific (ユウキと散歩した)."""
    if not _WIDE.search(text):
        return []
    names: list[str] = []
    run: list[str] = []
    for morpheme in _tokenizers().tokenizer.tokenize(text):
        part = morpheme.part_of_speech()
        if part[1] == "固有名詞" and part[2] == "人名":
            run.append(morpheme.surface())
            continue
        if run and morpheme.surface() in WITH_SOMEONE:
            names.append("".join(run))
        run = []
    return names


def names_in(text: str) -> list[str]:
    """The names a memory calls someone by (:data:`NAMED_ENGLISH`, :data:`NAMED_JAPANESE`, and the person names of
    Japanese text, :func:`japanese_person_names`), in order, each once: candidates for people the agent does not
    know yet (``ego_self_model.selfmodel`` keeps them once they recur)."""
    found: list[str] = []
    for pattern in (NAMED_ENGLISH, NAMED_JAPANESE):
        for match in pattern.finditer(text):
            name = next(group for group in match.groups() if group)
            if name.casefold() not in NOT_NAMES and name not in found:
                found.append(name)
    for name in japanese_person_names(text):
        if name.casefold() not in NOT_NAMES and name not in found:
            found.append(name)
    return found
