"""How the self-model speaks: worded summaries (feelings and impressions, not scores) and short lines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, tzinfo
from typing import Any, Final

from ego_core import Claim, Memory, calendar_days, relative_age, truncate
from ego_self_model.api import Absence
from ego_self_model.people import Bond, closeness
from ego_self_model.questions import QuestionView
from ego_self_model.relations import absence_frame, history_words, since_words, week_words
from ego_self_model.store import Growth, Person

TRUST_WORDS: Final = (
    (0.8, "you trust them deeply"),
    (0.6, "you trust them"),
    (0.4, "you are still getting to know them"),
    (0.2, "you are cautious with them"),
    (0.0, "you are wary of them"),
)
"""trust_level → words: the first row whose bound the level reaches."""

BOND_WORDS: Final = (
    (0.8, "you trust them deeply"),
    (0.66, "you trust them"),
    (0.55, "you are growing closer"),
    (0.4, "you are still getting to know them"),
    (0.2, "you are cautious with them"),
    (0.0, "you are wary of them"),
)
"""closeness (trust carried by the days shared, :func:`ego_self_model.people.closeness`) → words."""

SKILL_WORDS: Final = ((0.7, "confident"), (0.4, "getting there"), (0.0, "unsure"))
"""skill confidence → words, the same way."""

MOMENT_WORDS: Final = ((16, "many moments"), (4, "a number of moments"), (2, "a few moments"), (1, "one moment"))
"""How many shared memories → words."""

ITEMS_SHOWN: Final = 3
"""Newest items of a list shown on the self-model line (the rest is counted as "…")."""
ITEM_CHARS: Final = 60
QUESTION_CHARS: Final = 160
SNIPPET_CHARS: Final = 80
SNIPPET_TOKENS: Final = 40
"""A quote of the last shared moment: 80 columns (40 Japanese characters) and at most 40 tokens."""


def _band(value: float, table: Sequence[tuple[float, str]]) -> str:
    for bound, words in table:
        if value >= bound:
            return words
    return table[-1][1]


def trust_words(trust: float) -> str:
    return _band(trust, TRUST_WORDS)


def bond_words(trust: float, tie: Bond) -> str:
    return _band(closeness(trust, tie), BOND_WORDS)


def bond_claims(person: Person, tie: Bond, now: datetime, tz: tzinfo, *, last: bool = True) -> tuple[Claim, ...]:
    """What a companion line states: the bond, and (``last``) the last moment shared and when it was."""
    claims = [
        Claim(kind="bond", person=person.name, value=closeness(person.trust, tie), words=bond_words(person.trust, tie))
    ]
    if last and tie.last is not None:
        moment = tie.last
        claims.append(Claim(kind="together", person=person.name, memory_id=moment.memory_id, at=moment.at))
        days = calendar_days(moment.at, now, tz)
        words = since_words(moment.at, now, tz)
        claims.append(Claim(kind="time", memory_id=moment.memory_id, at=moment.at, value=days, words=words))
    return tuple(claims)


def skill_words(confidence: float) -> str:
    return _band(confidence, SKILL_WORDS)


def moments_words(count: int) -> str:
    for bound, words in MOMENT_WORDS:
        if count >= bound:
            return words
    return "nothing yet"


def _items(items: Sequence[str]) -> str:
    shown = [truncate(item, ITEM_CHARS) for item in items[-ITEMS_SHOWN:]]
    return ", ".join(reversed(shown)) + (", …" if len(items) > ITEMS_SHOWN else "")


# --------------------------------------------------------------------------------------------------
# wake_up and introspect


def companion_line(
    name: str, person: Person, bond: Bond, now: datetime, *, tz: tzinfo, history: bool = True, week: bool = False
) -> str:
    """The companion in one line, in words: ``Master: you trust them deeply; last shared about a week ago; a
    growing history.`` (without ``history`` the last clause is left out; ``week`` adds how present they were in
    the last seven days). When is said by the local days of ``tz``."""
    if bond.last is None:
        return f"{name}: {trust_words(person.trust)}; nothing shared yet."
    parts = [bond_words(person.trust, bond), f"last shared {since_words(bond.last.at, now, tz)}"]
    if history:
        parts.append(history_words(bond.count, bond.first, now))
    if week:
        parts.append(week_words(bond.this_week))
    return f"{name}: {'; '.join(parts)}."


def regarding_line(person: Person, bond: Bond, now: datetime) -> str:
    """attune toward someone: ``Regarding Aiko: you trust them; a growing history.``"""
    return f"Regarding {person.name}: {bond_words(person.trust, bond)}; {history_words(bond.count, bond.first, now)}."


def self_line(fields: Mapping[str, Any], latest: Growth | None, now: datetime) -> str:
    """The self-model in one line (introspect); empty while nothing has been said of it."""
    parts: list[str] = []
    identity = fields.get("identity") or []
    if identity:
        parts.append(f'"{truncate(identity[-1], 120)}"')
    for field, label in (("values", "values"), ("preferences", "preferences"), ("goals", "goals")):
        if fields.get(field):
            parts.append(f"{label}: {_items(fields[field])}")
    skills: Mapping[str, float] = fields.get("skill_confidence") or {}
    if skills:
        ordered = sorted(skills.items(), key=lambda kv: (-kv[1], kv[0]))[:ITEMS_SHOWN]
        more = ", …" if len(skills) > ITEMS_SHOWN else ""
        parts.append("skills: " + ", ".join(f"{name} ({skill_words(c)})" for name, c in ordered) + more)
    if latest is not None:
        parts.append(f'latest growth ({relative_age(latest.at, now)}): "{truncate(latest.text, 80)}"')
    if not parts:
        return ""  # nothing said yet: the scaffold asks, and an empty line said every day is no news
    return "Who you are becoming: " + "; ".join(parts) + "."


def question_line(item: QuestionView, holder: str | None = None) -> str:
    q = item.question
    held = f", with {holder}" if holder is not None else ""
    return f'- "{truncate(q.text, QUESTION_CHARS)}" ({q.id}, importance {q.importance}{held})'


def open_questions_text(
    active: Sequence[QuestionView], unresolved: int, holders: Mapping[str, str] | None = None
) -> str:
    """introspect's open questions; ``holders``: whom a question is held with, by question id. Nothing (the section
    is left out) while there has never been one: an empty list said every day is no news."""
    if not active:
        return "" if unresolved == 0 else "Open questions: none on your mind right now."
    held = holders or {}
    return "\n".join(["Open questions:", *(question_line(item, held.get(item.question.id)) for item in active)])


def held_together_text(name: str, held: Sequence[QuestionView]) -> str:
    """consider_them's questions held with the person: ``Held together with Aiko:`` and one line each."""
    lines = [f"- [{v.question.id}] {truncate(v.question.text, QUESTION_CHARS)}" for v in held]
    return "\n".join([f"Held together with {name}:", *lines])


def days_words(days: int) -> str:
    if days < 1:
        return "under a day"
    return "1 day" if days == 1 else f"{days} days"


def resurfacing_text(brought_back: Sequence[QuestionView], fading: Sequence[QuestionView], now: datetime) -> str:
    lines = ["Resurfacing (you'd almost forgotten):"]
    for item in brought_back:
        q = item.question
        when = relative_age(q.triggered, now) if q.triggered is not None else "recently"
        lines.append(
            f'- "{truncate(q.text, QUESTION_CHARS)}" ({q.id}, importance {q.importance}; a memory brought it back '
            f"{when})"
        )
    for item in fading:
        q = item.question
        lines.append(
            f'- "{truncate(q.text, QUESTION_CHARS)}" ({q.id}, importance {q.importance}, dormant '
            f"{days_words(item.dormant_days)})"
        )
    return "\n".join(lines)


def resurfaced_line(item: QuestionView) -> str:
    """The line ``remember`` gains when the memory brought a question back."""
    q = item.question
    return (
        f'💭 This triggered a forgotten question: "{truncate(q.text, QUESTION_CHARS)}" (dormant '
        f"{days_words(item.dormant_days)}, importance {q.importance}, {q.id})"
    )


# --------------------------------------------------------------------------------------------------
# consider_them


def last_quote(memory: Memory) -> str:
    """consider_them's quote of the last moment shared."""
    return truncate(memory.content, SNIPPET_CHARS, tokens=SNIPPET_TOKENS)


def person_text(
    person: Person,
    bond: Bond,
    last: Memory | None,
    now: datetime,
    *,
    tz: tzinfo,
    known: bool,
    companion: bool,
    away: Absence | None = None,
) -> str:
    """A worded picture of a person: how much you trust them, what they care about, what you have shared, and
    (``away``: a quiet or long absence) how long it has been."""
    if not known:
        return f"{person.name}: you don't know much about them yet. Nothing shared, nothing noted."
    about = [f"also {', '.join(person.aliases)}"] if person.aliases else []
    if companion:
        about.append("the one you live with")
    aside = f" ({'; '.join(about)})" if about else ""
    history = f"; {history_words(bond.count, bond.first, now)}" if bond.last is not None else ""
    lines = [f"{person.name}{aside}: {trust_words(person.trust)}{history}."]
    if person.preferred_topics:
        lines.append(f"They light up about: {', '.join(person.preferred_topics)}.")
    if person.sensitive_topics:
        lines.append(f"Tread gently around: {', '.join(person.sensitive_topics)}.")
    if person.communication_style:
        lines.append(f"How they like to talk: {person.communication_style}")
    if person.notes:
        lines.append("What you've noted: " + " | ".join(person.notes))
    if bond.last is None:
        lines.append("You haven't shared a memory with them yet.")
    else:
        shared = (
            f"You've shared {moments_words(bond.count)} with them, the last one {since_words(bond.last.at, now, tz)}"
        )
        if last is not None:
            private = " (private)" if last.is_private else ""
            shared += f':{private} "{last_quote(last)}"'
        else:
            shared += "."
        lines.append(shared)
        week = week_words(bond.this_week)
        lines.append(week[0].upper() + week[1:] + ".")
    if away is not None and away.band != "usual":
        lines.extend(absence_frame(away))
    return "\n".join(lines)
