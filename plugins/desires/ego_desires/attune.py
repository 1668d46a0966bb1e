"""The desires' part of ``attune``: desire currents in words, and current interests.

Pure functions of their arguments: readings, usual levels, emergent desires, memories and notions at a moment,
and which sentences were said lately (``fresh``): a sentence said lately yields to another made from facts, or
to silence.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime, tzinfo
from typing import Final

import attrs

from ego_core import Memory, when_words
from ego_desires.emergent import Direction
from ego_desires.levels import Reading
from ego_desires.wording import Catalog
from ego_notions.api import NotionView

SHOWN_FROM: Final = 0.3
"""Desires below this level are not spoken of."""
SHOWN: Final = 3
STIRS_ABOVE: Final = 0.5
"""A desire left out that is above this level makes itself felt without a name."""
NOTHING: Final = "Nothing in particular pulls at you right now."
STIRS: Final = "Something else stirs, but you can't name it yet."
USUAL: Final = 0.5
"""The usual level of a desire never sampled yet."""
LONELY: Final = ("social_thirst", "be_with_someone")
"""Desires that speak of wanting company: only their settling words while you are together with the companion."""
_COUNT: Final = ("No", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten")

Fresh = Callable[[str], bool]
"""Whether a sentence may be said now (it was not said lately)."""


def _always(_sentence: str) -> bool:
    return True


INTEREST_HALF_LIFE_HOURS: Final = 12.0
"""Recency weight e^(−age / 12 h)."""
TOPICS_SHOWN: Final = 3
TOPICS_VARIED: Final = 5
"""When the usual interests line was said lately, other choices among the five weighed most are tried."""
TOPIC_CHARS: Final = 40
GENERIC_SHARE: Final = 0.25
"""A category that holds at least this share of the background memories is generic (weighs less)."""
RECENT: Final = 10


@attrs.frozen
class Current:
    name: str
    level: float
    direction: Direction
    noun: str = ""
    """The desire as a noun phrase (``the wish to be seen``), for the sentences made from facts."""
    facts: tuple[str, ...] = ()
    """Other sentences about it, made from facts (what stirs it, when it was last eased), in order of preference:
    said when its catalog sentence was said lately."""


@attrs.frozen
class Spoken:
    """What the desire currents say: the line (None for silence), its sentences and the currents worded."""

    line: str | None
    sentences: tuple[str, ...] = ()
    voiced: tuple[Current, ...] = ()


def capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _listed(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" and {words[-1]}"


def fact_sentences(
    noun: str,
    now: datetime,
    tz: tzinfo,
    *,
    stirred_by: Sequence[str] = (),
    eased: datetime | None = None,
    eased_by: str = "",
    arose: datetime | None = None,
) -> tuple[str, ...]:
    """Short sentences about a desire made from facts: what stirs it (each modulation factor raising it, in words,
    strongest first), when it arose (an emergent desire), when it was last eased and by what (``eased_by``:
    `` by recall``), or that nothing has eased it yet. Never a number."""
    if not noun:
        return ()
    head = capitalised(noun)
    found = [f"{head}, stirred by {words}." for words in stirred_by]
    if arose is not None:
        found.append(f"{head} arose {when_words(arose, now, tz)}.")
    if eased is not None:
        found.append(f"{head}, last eased {when_words(eased, now, tz)}{eased_by}.")
    elif arose is None:
        found.append(f"Nothing has eased {noun} yet.")
    return tuple(found)


def direction_of(level: float, usual: float | None, margin: float) -> Direction:
    """rising above its usual level by more than ``margin``, settling below by more, steady otherwise."""
    baseline = USUAL if usual is None else usual
    if level > baseline + margin:
        return "rising"
    if level < baseline - margin:
        return "settling"
    return "steady"


def fixed_currents(readings: Sequence[Reading], usual: Mapping[str, float], margin: float) -> list[Current]:
    return [Current(r.name, r.level, direction_of(r.level, usual.get(r.name), margin)) for r in readings]


def _stirs(left: Sequence[Current]) -> list[str]:
    """The ways to say that desires left out still stir: each by its noun, then how many, then unnamed."""
    named = [f"Beneath them, {c.noun} stirs too." for c in left if c.noun]
    count = _COUNT[min(len(left), len(_COUNT) - 1)]
    counted = f"{count} more {'stirs' if len(left) == 1 else 'stir'} beneath, unnamed."
    return [*named, counted, STIRS]


def speak_currents(
    currents: Iterable[Current],
    catalog: Catalog,
    emergent: Collection[str] = (),
    *,
    fresh: Fresh = _always,
    together: bool = False,
) -> Spoken:
    """``Desire currents: …``: the strongest (at least 0.3), each in its catalog sentence for its direction.

    The strongest of the ``emergent`` desires always has a place (the last one), so that an emergent pull is
    felt while it lives even when long-neglected fixed desires are all at the top. A sentence not ``fresh`` (said
    lately) yields to the desire's sentences made from facts, or the desire is not spoken of; desires left out
    above 0.5 stir beneath, said likewise. While you are ``together`` with the companion the wish for company is
    spoken of only as it settles. Nothing fresh to say: no line (``line`` None).
    """
    ranked = sorted(
        (
            c
            for c in currents
            if c.level >= SHOWN_FROM and not (together and c.name in LONELY and c.direction != "settling")
        ),
        key=lambda c: (-round(c.level, 3), c.name),
    )
    if not ranked:
        return Spoken(f"Desire currents: {NOTHING}", (NOTHING,)) if fresh(NOTHING) else Spoken(None)
    shown = ranked[:SHOWN]
    pull = next((c for c in ranked if c.name in emergent), None)
    if pull is not None and pull not in shown:
        shown = [*shown[: SHOWN - 1], pull]
    sentences: list[str] = []
    voiced: list[Current] = []
    usual = {}
    for current in shown:
        entry = catalog.entry(current.name)
        usual[current.name] = entry.sentence[current.direction] if entry is not None else f"{current.name}."
    left = [c for c in ranked if c not in shown and c.level > STIRS_ABOVE]
    # other words never make the line longer than the usual words would (the answer's budget is shared)
    room = len(" ".join([*usual.values(), *([STIRS] if left else [])]))

    def say(options: Sequence[str], words: str) -> bool:
        """The first fresh option not said in this line yet; other words than the usual only when they fit."""
        for option in options:
            fits = option == words or len(" ".join([*sentences, option])) <= room
            if option not in sentences and fresh(option) and fits:
                sentences.append(option)
                return True
        return False

    for current in shown:
        if say([usual[current.name], *current.facts], usual[current.name]):
            voiced.append(current)
    if left:
        say(_stirs(left), STIRS)
    if not sentences:
        return Spoken(None)
    return Spoken("Desire currents: " + " ".join(sentences), tuple(sentences), tuple(voiced))


def currents_line(currents: Iterable[Current], catalog: Catalog, emergent: Collection[str] = ()) -> str:
    """The desire currents as they are said when nothing was said lately (:func:`speak_currents`)."""
    return speak_currents(currents, catalog, emergent).line or f"Desire currents: {NOTHING}"


def _recency(at: datetime, now: datetime) -> float:
    hours = max(0.0, (now - at).total_seconds() / 3600.0)
    return math.exp(-hours / INTEREST_HALF_LIFE_HOURS)


def _topic(text: str) -> str:
    cleaned = " ".join(text.split())
    return cleaned if len(cleaned) <= TOPIC_CHARS else cleaned[: TOPIC_CHARS - 1].rstrip() + "…"


def interests(
    background: Sequence[Memory],
    notions: Sequence[NotionView],
    emergent: Sequence[tuple[str, datetime]],
    now: datetime,
    theme: Callable[[str], str] = str.casefold,
) -> list[str]:
    """The top topics by score: tags (1.0) and categories (0.5, or 0.15 when generic) of the 10 newest memories,
    notions' themes (their first tag, else their label: 2.0) and emergent desires (1.0), each weighed by recency. A
    private memory's tags are left out. ``theme`` makes one topic of words that name one theme (the notions plugin's
    ``theme``: お茶 and tea), shown as first met."""
    scores: dict[str, float] = defaultdict(float)
    shown: dict[str, str] = {}
    newest = sorted(background, key=lambda m: m.timestamp, reverse=True)
    share = Counter(m.category for m in newest)
    generic = {c for c, n in share.items() if newest and n / len(newest) >= GENERIC_SHARE}

    def add(text: str, weight: float) -> None:
        topic = _topic(text)
        if not topic or weight <= 0:
            return
        key = theme(topic)
        shown.setdefault(key, topic)
        scores[key] += weight

    for memory in newest[:RECENT]:
        r = _recency(memory.timestamp, now)
        if not memory.is_private:
            for tag in memory.tags:
                add(tag, 1.0 * r)
        add(memory.category, (0.15 if memory.category in generic else 0.5) * r)
    for notion in notions:
        add(notion.tags[0] if notion.tags else notion.label, 2.0 * _recency(notion.reinforced_at, now))
    for name, created in emergent:
        add(name, 1.0 * _recency(created, now))
    ranked = sorted(scores, key=lambda key: (-scores[key], key))
    return [shown[key] for key in ranked[:TOPICS_VARIED]]


def interests_line(topics: Sequence[str], fresh: Fresh = _always) -> str | None:
    """``Current interests: a, b, c``: the three topics weighed most; when that line was said lately, the first
    fresh choice of three (then two, then one) among the five weighed most, in their order, no longer than the
    usual line; else no line."""
    choices = [
        f"Current interests: {', '.join(chosen)}"
        for size in range(TOPICS_SHOWN, 0, -1)
        for chosen in itertools.combinations(topics[:TOPICS_VARIED], size)
    ]
    if not choices:
        return None
    room = len(choices[0])
    return next((line for line in dict.fromkeys(choices) if fresh(line) and len(line) <= room), None)
