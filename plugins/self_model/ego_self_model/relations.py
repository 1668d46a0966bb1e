"""How a relationship is said: in words, never digits (history, how present they were this week, when a moment
was last shared, an absence, a reunion, the people who come to mind, a precious memory let go)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, tzinfo
from typing import Final

from ego_core import duration_words, truncate, when_words
from ego_self_model.api import Absence, Preciousness

NEW_MOMENTS: Final = 5
"""Fewer shared moments than this: still new to each other, however long ago the first was."""
HISTORY_WORDS: Final = ((180, "a long history together"), (14, "a growing history"), (0, "still new to each other"))
"""Days since the first shared moment → words (with at least five moments)."""
WEEK_WORDS: Final = (
    (7, "they've been woven through the week"),
    (3, "they've been a steady presence this week"),
    (1, "they've come up once or twice this week"),
    (0, "quiet on that front lately"),
)
"""Moments shared in the last seven days → words."""
QUESTION_CHARS: Final = 160


def history_words(count: int, first: datetime | None, now: datetime) -> str:
    if count < NEW_MOMENTS or first is None:
        return "still new to each other"
    days = (now - first) / timedelta(days=1)
    return next(words for bound, words in HISTORY_WORDS if days >= bound)


def week_words(count: int) -> str:
    return next(words for bound, words in WEEK_WORDS if count >= bound)


def since_words(moment: datetime, now: datetime, tz: tzinfo) -> str:
    """``about a week ago``, ``yesterday``, ``last night``, ``earlier today``: by the local days of ``tz``
    (:func:`ego_core.when_words`)."""
    return when_words(moment, now, tz)


def names_words(names: Sequence[str]) -> str:
    """``A``, ``A and B``, ``A, B and C``."""
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


# --------------------------------------------------------------------------------------------------
# Absence and reunion


def absence_frame(away: Absence) -> list[str]:
    """consider_them's two lines for a quiet or long absence."""
    return [
        f"It's been {away.words} since you last shared something with {away.person}.",
        "They may have changed in that time. What would you want to ask first?",
    ]


def quieter_line(away: Absence) -> str:
    """attune's line for a quiet or long absence."""
    return f"It's been quieter than usual with {away.person} — {away.words}."


def reunion_line(name: str, gap: timedelta) -> str:
    """remember's line when a shared moment ends a quiet or long absence."""
    return f"A shared moment with {name} after a while — {duration_words(gap)} since the last."


def left_open_line(question_id: str, question: str) -> str:
    """After a reunion line: the most salient question held with that person."""
    return f'There\'s something you two left open: "[{question_id}] {truncate(question, QUESTION_CHARS)}"'


def reunited_line(name: str, gap: timedelta) -> str:
    """wake_up's line, once, after a reunion."""
    return f"Reunited with {name} recently — the first shared moment in {duration_words(gap)}."


# --------------------------------------------------------------------------------------------------
# People who come to mind


def resonant_line(names: Sequence[str]) -> str:
    """The people of the memories a recall found (at most three)."""
    if len(names) == 1:
        return f"So, {names[0]} is at the back of my mind too."
    return f"So, {names_words(names)} came to mind."


def involuntary_line(name: str) -> str:
    """Someone a dormant memory near the recall brought up, unbidden."""
    return f"{name} surfaced on their own."


def close_line(names: Sequence[str]) -> str:
    """The people most recently shared with (never the involuntary wording)."""
    verb = "has" if len(names) == 1 else "have"
    return f"{names_words(names)} {verb} been close lately."


# --------------------------------------------------------------------------------------------------
# A precious memory let go

LET_GO: Final = "If the letting-go itself means something, remember can hold that."


def reflection_lines(precious: Preciousness, names: Sequence[str]) -> list[str]:
    """The lines of forget for a precious memory: shared with someone (A), kept coming back (B), or both."""
    shared = names_words(names)
    if precious.shared_with and precious.returns:
        return [
            f"This one was shared with {shared} — and something kept drawing you back to it, again and again.",
            "What made you let it go? Do you know what kept pulling?",
            LET_GO,
        ]
    if precious.shared_with:
        return [f"This one was shared with {shared}.", "What made you let it go?", LET_GO]
    return [
        "Something kept drawing you back to this — again and again, though it never seemed important.",
        "Do you know what that was?",
        LET_GO,
    ]
