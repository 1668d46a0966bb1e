"""The words: the ``name[0.xx/band]`` line, the wake_up feeling, the introspect section, satisfy's answer."""

from __future__ import annotations

from collections.abc import Mapping
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
    return strong if band(shown(reading.level), config) == "high" else mild


def _sentence(phrases: list[str]) -> str:
    if len(phrases) == 1:
        return f"You feel {phrases[0]}."
    return f"You feel {', '.join(phrases[:-1])}, and {phrases[-1]}."


def feeling_line(snap: Snapshot, config: DesiresConfig) -> str:
    """One sentence for wake_up: the two strongest desires that are at least mid (a third when it is high too),
    as they would feel, e.g. ``You feel a pull toward something new, and a little lonely.``"""
    felt = [r for r in snap.strongest() if band(shown(r.level), config) != "low"][:3]
    if len(felt) == 3 and band(shown(felt[2].level), config) != "high":
        felt = felt[:2]
    if not felt:
        return SETTLED
    phrases = [_feeling(r, snap, config) for r in felt]
    while len(phrases) > 1 and len(_sentence(phrases)) > WAKE_UP_MAX_CHARS:
        phrases.pop()
    return _sentence(phrases)


def introspect_text(snap: Snapshot, config: DesiresConfig) -> str:
    """``Desires: curiosity[0.80/high] expression[0.45/mid]; the other seven low.``"""
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
    if snap.unresolved:
        text += " Something unresolved nags at you."
    return text


def satisfied_text(name: str, before: float, after: float, quality: float) -> str:
    """``curiosity: 0.72 → 0.05 (quality 1). It settles deeply; it will stay quiet for a while.``"""
    head = f"{name}: {shown(before):.2f} → {shown(after):.2f} (quality {round(quality, 2):g})."
    if quality >= 0.7:
        feeling = "It settles deeply; it will stay quiet for a while."
    elif quality >= 0.4:
        feeling = "It eases somewhat."
    elif quality > 0:
        feeling = "It barely eases; it may return soon."
    else:
        feeling = "It does not ease, and it may return sooner."
    return f"{head} {feeling}"
