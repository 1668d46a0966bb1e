"""The words: the ``name[0.xx/band]`` line, the wake_up feeling, the introspect section, satisfy's answer."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final

from ego_desires.config import DesiresConfig, band
from ego_desires.levels import Reading, Snapshot

WAKE_UP_MAX_CHARS: Final = 100
"""The wake_up line stays within about 25 tokens (characters / 4, the estimate of ``ego bench tokens``)."""
INTROSPECT_SHOWN: Final = 4
"""At most this many desires (mid or high) are named in introspect; the rest are summed up in words."""

FEELINGS: Final[Mapping[str, tuple[str, str]]] = MappingProxyType(
    {
        "information_hunger": ("hungry to learn something", "a little hungry to learn something"),
        "social_thirst": ("lonely", "a little lonely"),
        "cognitive_coherence": ("a need to sort out your thoughts", "a wish to tidy your thoughts"),
        "pattern_seeking": ("an urge to find the pattern in things", "drawn to look for patterns"),
        "predictability": ("a need to know what comes next", "a wish to know what comes next"),
        "recognition": ("a longing to be seen", "a wish to be noticed"),
        "resonance": ("a longing to share a feeling", "a wish to share how things feel"),
        "expression": ("words pressing to get out", "something you would like to say"),
        "curiosity": ("a strong pull toward something new", "a pull toward something new"),
    }
)
"""How each desire feels when it is high and when it is mid, worded to follow "You feel"."""
WORDED_LONELY: Final = "social_thirst"
"""The desire worded as loneliness, which belongs to time alone: never while you are together with the companion,
and as a wish to talk (not loneliness) while they are around as usual."""
NEAR: Final = ("a strong wish to talk with someone", "a wish to talk with someone")
"""social_thirst while the companion is around as usual, but no moment was shared for a while."""
NOUNS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "information_hunger": "the hunger to learn",
        "social_thirst": "the wish for company",
        "cognitive_coherence": "the need to make things fit",
        "pattern_seeking": "the urge to find a pattern",
        "predictability": "the need to see what comes next",
        "recognition": "the wish to be seen",
        "resonance": "the pull to feel with someone",
        "expression": "the pressure to say something",
        "curiosity": "the itch to know",
    }
)
"""Each desire as a noun phrase, for the sentences made from facts (what eased it and when, what stirs it)."""
FELT_VARIED: Final = 4
"""wake_up's other wordings combine the four strongest desires that are at least mid."""
UNRESOLVED_FEELING: Final = ("a nagging sense of something unresolved", "a faint sense of something unresolved")
"""cognitive_coherence while fading questions raise it."""
SETTLED: Final = "You feel settled; nothing pulls at you much right now."

FEEL_SCAFFOLD: Final = "What is your strongest urge? Should you act on it now?"
COMPANION_SCAFFOLD: Final = "Consider {companion}'s current situation. Act naturally. Restraint is also a choice."
UNRESOLVED_LINE: Final = "Something feels unresolved. You can't quite name it, but there's a nagging feeling."
INTROSPECT_HINT: Final = "Consider running introspect to see if anything surfaces."
SATISFY_SCAFFOLD: Final = "What else, if anything, is pulling at you?"

_COUNT: Final = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def shown(level: float) -> float:
    """The level as displayed (two decimals); bands are taken from this value so they agree with it."""
    return round(level, 2)


def tag(reading: Reading, config: DesiresConfig) -> str:
    value = shown(reading.level)
    return f"{reading.name}[{value:.2f}/{band(value, config)}]"


def levels_line(snap: Snapshot, config: DesiresConfig) -> str:
    """``curiosity[0.80/high] social_thirst[0.62/mid] …``: every desire, strongest first."""
    return " ".join(tag(reading, config) for reading in snap.strongest())


def _feeling(reading: Reading, snap: Snapshot, config: DesiresConfig) -> str:
    strong, mild = FEELINGS[reading.name]
    if reading.name == "cognitive_coherence" and snap.unresolved:
        strong, mild = UNRESOLVED_FEELING
    if reading.name == WORDED_LONELY and not snap.alone:
        strong, mild = NEAR
    return strong if band(shown(reading.level), config) == "high" else mild


def _sentence(phrases: list[str]) -> str:
    if len(phrases) == 1:
        return f"You feel {phrases[0]}."
    return f"You feel {', '.join(phrases[:-1])}, and {phrases[-1]}."


def digest(sentence: str) -> str:
    """What is kept of a sentence said (to say it not again soon): a digest, never the words."""
    return hashlib.sha256(" ".join(sentence.split()).encode("utf-8")).hexdigest()[:16]


def feeling_options(snap: Snapshot, config: DesiresConfig) -> list[tuple[str, tuple[Reading, ...]]]:
    """wake_up's sentence and the desires it words, first the usual one — the two strongest desires that are at
    least mid (a third when it is high too), e.g. ``You feel a pull toward something new, and a little lonely.`` —
    then the other wordings of the four strongest (pairs, then one alone), for when the usual one was said lately.
    social_thirst is not worded while you are together with the companion, and as a wish to talk rather than
    loneliness while they are around as usual (:attr:`Snapshot.alone`)."""
    felt = [
        r
        for r in snap.strongest()
        if band(shown(r.level), config) != "low" and not (snap.together and r.name == WORDED_LONELY)
    ]
    if not felt:
        return [(SETTLED, ())]
    first = felt[:3]
    if len(first) == 3 and band(shown(first[2].level), config) != "high":
        first = first[:2]
    while len(first) > 1 and len(_sentence([_feeling(r, snap, config) for r in first])) > WAKE_UP_MAX_CHARS:
        first.pop()
    options: dict[str, tuple[Reading, ...]] = {_sentence([_feeling(r, snap, config) for r in first]): tuple(first)}
    for size in (2, 1):
        for chosen in itertools.combinations(felt[:FELT_VARIED], size):
            sentence = _sentence([_feeling(r, snap, config) for r in chosen])
            if len(sentence) <= WAKE_UP_MAX_CHARS:
                options.setdefault(sentence, chosen)
    return list(options.items())


def feeling_line(snap: Snapshot, config: DesiresConfig) -> str:
    """One sentence for wake_up: the usual one of :func:`feeling_options`."""
    return feeling_options(snap, config)[0][0]


NAGS: Final = "Something unresolved nags at you."
"""introspect's word for the fading questions that raise cognitive_coherence (not said again soon: see
:func:`introspect_text`)."""


def introspect_text(snap: Snapshot, config: DesiresConfig, fresh: Callable[[str], bool] = lambda _s: True) -> str:
    """``Desires: curiosity[0.80/high] expression[0.45/mid]; the other seven low.``, and ``Something unresolved
    nags at you.`` while fading questions raise cognitive_coherence and that sentence is ``fresh`` (not said in
    the last few introspects)."""
    ordered = snap.strongest()
    felt = [r for r in ordered if band(shown(r.level), config) != "low"][:INTROSPECT_SHOWN]
    if not felt:
        text = f"Desires: all low; the strongest is {tag(ordered[0], config)}."
    else:
        rest = ordered[len(felt) :]
        text = "Desires: " + " ".join(tag(r, config) for r in felt)
        more = sum(1 for r in rest if band(shown(r.level), config) != "low")
        low = len(rest) - more
        if more:
            text += f"; {_COUNT[more]} more mid or high" + (f", {_COUNT[low]} low" if low else "")
        elif low:
            text += f"; the other {_COUNT[low]} low"
        text += "."
    if snap.unresolved and fresh(NAGS):
        text += f" {NAGS}"
    return text


FACTOR_WORDS: Final = MappingProxyType(
    {
        "negative": "recent painful memories",
        "positive": "recent happy memories",
        "surprise": "a recent surprise",
        "topics": "recent memories on its topics",
        "time_phase": "the time of day",
        "system_load": "how busy the machine is",
        "memory_pressure": "how full the machine's memory is",
        "questions": "questions left unresolved",
        "absence": "a longer time apart than usual",
        "impulses": "a memory that came back on its own",
    }
)
"""Each modulation factor as what the agent would recognise (see :data:`ego_desires.modulation.FACTORS`)."""


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" and {words[-1]}"


AT_REST: Final = 0.05
"""A base level this low is a desire at rest: a satisfaction cannot visibly lower it further."""


def satisfied_text(before: Reading, after: Reading, quality: float, raised_by: Mapping[str, float]) -> str:
    """What a satisfaction did, in the levels feel_desires shows.

    ``curiosity: 0.72 → 0.05 (quality 1). It settles deeply; it will stay quiet for a while.`` When the shown
    level does not move although the quality could move it, it says so and why instead of claiming a change: the
    desire's own rise was already at rest (satisfied shortly before), or what surrounds it (``raised_by``: the
    modulation factors adding to it) holds the level where it is — satisfying the desire does not quiet those.
    """
    name = before.name
    head = f"{name}: {shown(before.level):.2f} → {shown(after.level):.2f} (quality {round(quality, 2):g})."
    if quality <= 0:
        return f"{head} It does not ease, and it may return sooner."
    sources = [FACTOR_WORDS.get(factor, factor) for factor, change in raised_by.items() if change > 0]
    quieted_not = f"{_listed(sources)}, which satisfying it does not quiet" if sources else ""
    if shown(after.level) >= shown(before.level):
        was, now = shown(before.base), shown(after.base)
        if now < was:
            why = f"its own pull eased ({was:.2f} → {now:.2f})"
        elif was <= AT_REST:
            why = f"its own pull was already at rest ({was:.2f})"
        else:
            why = f"so slight a satisfaction left its own pull where it was ({was:.2f})"
        if quieted_not:
            why += f", but what you feel comes from {quieted_not}; the level follows them"
        elif shown(before.level) <= 0:
            why += ", and the level was already at its lowest"
        return f"{head} Nothing changed: {why}."
    if quality >= 0.7:
        feeling = "It settles deeply; it will stay quiet for a while."
    elif quality >= 0.4:
        feeling = "It eases somewhat."
    else:
        feeling = "It barely eases; it may return soon."
    if quieted_not and shown(after.modulation) >= AT_REST:  # its own pull stays quiet; the level need not
        feeling = feeling.split(";")[0] + f". What remains comes from {quieted_not}."
    return f"{head} {feeling}"
