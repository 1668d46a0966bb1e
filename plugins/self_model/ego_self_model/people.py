"""The people the agent knows: finding a person by name or alias, noticing them named in a memory, updating them.

A name or alias matches case-insensitively, as a whole word: the characters around it must not be letters,
digits or ``_``. Next to Chinese or Japanese characters (written without spaces) no boundary is required.

The companion answers, besides their configured name and the aliases set for them, to that name's
**counterparts** (:data:`COUNTERPARTS`: ``Master`` ≡ ``マスター`` ≡ ``ご主人様`` …), unless another person has
taken one of them as their own name or alias. A memory names someone as evidence of a moment with them only where
it is not about their absence (:mod:`ego_self_model.presence`).
"""

from __future__ import annotations

import math
import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Final

import attrs

from ego_core import InvalidArgumentError
from ego_self_model.config import SelfModelConfig
from ego_self_model.fields import AddItem, PersonUpdate, SetStyle, SetTrust, fold, key_of
from ego_self_model.presence import away, present
from ego_self_model.store import Person, Shared, StateStore

COUNTERPARTS: Final[tuple[tuple[str, ...], ...]] = (
    ("Master", "マスター", "ご主人様", "ご主人さま"),
    ("Boss", "ボス"),
    ("Captain", "キャプテン"),
    ("Partner", "パートナー"),
    ("Sensei", "先生"),
    ("Senpai", "先輩"),
)
"""The same form of address in English and Japanese: a companion called by one answers to the others."""

UNSPACED_SCRIPTS = ("CJK", "HIRAGANA", "KATAKANA", "HALFWIDTH KATAKANA", "IDEOGRAPHIC")
UNSPACED_CHARS = "\u3005\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
"""Kana and kanji: a Latin name written beside them (BenとMasterが) is still a whole word."""


def _unspaced(char: str) -> bool:
    return unicodedata.name(char, "").startswith(UNSPACED_SCRIPTS)


def term_pattern(term: str) -> str:
    """A regular expression finding ``term`` (already case-folded) as a whole word (a Latin name may touch
    Japanese: only a Latin letter or digit beside it makes it part of another word)."""
    left = "" if _unspaced(term[0]) else rf"(?<![^\W{UNSPACED_CHARS}])"
    right = "" if _unspaced(term[-1]) else rf"(?![^\W{UNSPACED_CHARS}])"
    return left + re.escape(term) + right


def names_of(person: Person) -> list[str]:
    return [person.name, *person.aliases]


def find(people: Iterable[Person], name: str) -> Person | None:
    """The person called ``name``, by name first, then by alias."""
    key = key_of(name)
    everyone = list(people)
    for person in everyone:
        if person.key == key:
            return person
    for person in everyone:
        if key in {key_of(alias) for alias in person.aliases}:
            return person
    return None


def companion_names(configured: str) -> tuple[str, ...]:
    """The companion's names with no configuration beyond ``configured``: it first, then its counterparts."""
    key = key_of(configured)
    for group in COUNTERPARTS:
        if key in {key_of(name) for name in group}:
            return (configured, *(name for name in group if key_of(name) != key))
    return (configured,)


COMPANION_LEAST: Final = 5
"""Moments shared before the person the memories keep naming is taken for the companion (no one answering to the
companion's names)."""


def most_named(people: Sequence[Person], counts: Mapping[str, int]) -> Person | None:
    """The person the memories keep naming: at least :data:`COMPANION_LEAST` shared moments and twice as many as
    anyone else, or None."""
    ranked = sorted(people, key=lambda p: (-counts.get(p.key, 0), p.key))
    if not ranked or counts.get(ranked[0].key, 0) < COMPANION_LEAST:
        return None
    runner_up = counts.get(ranked[1].key, 0) if len(ranked) > 1 else 0
    return ranked[0] if counts.get(ranked[0].key, 0) >= 2 * runner_up else None


def companion_of(
    people: Sequence[Person],
    configured: str,
    now: datetime,
    config: SelfModelConfig,
    counts: Mapping[str, int] | None = None,
) -> Person:
    """The companion: the person known by the configured name, else by one of its counterparts, else (given the
    shared moments' ``counts`` by person key) the one the memories keep naming (:func:`most_named`), else someone
    with no record yet (called by the configured name)."""
    for name in companion_names(configured):
        found = find(people, name)
        if found is not None:
            return found
    named = most_named(people, counts) if counts else None
    return named if named is not None else blank(configured, now, config)


def implicit_names(companion: Person, configured: str, people: Sequence[Person]) -> tuple[str, ...]:
    """The counterparts the companion answers to beyond their own name and aliases: those no other person has
    taken as a name or alias."""
    own = {key_of(n) for n in names_of(companion)}
    taken = {key_of(n) for other in people if other.key != companion.key for n in names_of(other)}
    seen: set[str] = set()
    names: list[str] = []
    for name in companion_names(configured):
        key = key_of(name)
        if key not in own and key not in taken and key not in seen:
            seen.add(key)
            names.append(name)
    return tuple(names)


def resolve(
    people: Sequence[Person], name: str, configured: str, now: datetime, config: SelfModelConfig
) -> Person | None:
    """The person called ``name`` (name, then alias), else the companion when ``name`` is one of the
    companion's names (:func:`companion_names`), else None."""
    found = find(people, name)
    if found is not None:
        return found
    if key_of(name) in {key_of(n) for n in companion_names(configured)}:
        return companion_of(people, configured, now, config)
    return None


def companion_detail(companion: Person, people: Sequence[Person], configured: str | None = None) -> str:
    """``ego doctor``'s words on whom ego takes for the companion and by which names."""
    wanted = configured if configured is not None else companion.name
    names = [*names_of(companion), *implicit_names(companion, wanted, people)]
    return f"ego takes {companion.name} for the companion, by the names {', '.join(names)}"


def blank(name: str, now: datetime, config: SelfModelConfig) -> Person:
    """Someone the agent knows nothing about yet."""
    folded = fold(name)
    return Person(key=key_of(folded), name=folded, trust=config.default_trust, created=now, updated=now)


def _names_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    terms = sorted({key_of(n) for n in names if key_of(n)}, key=len, reverse=True)
    return re.compile("|".join(term_pattern(t) for t in terms)) if terms else None


def mentioned(text: str, people: Sequence[Person], also: Mapping[str, Sequence[str]] | None = None) -> list[Person]:
    """The people ``text`` names (by name or alias, or a name in ``also``: more names by person key), each
    once."""
    folded = fold(text).casefold()
    found: list[Person] = []
    for person in people:
        pattern = _names_pattern([*names_of(person), *(also or {}).get(person.key, ())])
        if pattern is not None and pattern.search(folded):
            found.append(person)
    return found


def away_from(text: str, people: Sequence[Person], also: Mapping[str, Sequence[str]] | None = None) -> list[Person]:
    """The people ``text`` says are away or missed (:func:`ego_self_model.presence.away`)."""
    folded = "\n".join(fold(line) for line in text.splitlines()).casefold()
    found: list[Person] = []
    for person in mentioned(text, people, also):
        pattern = _names_pattern([*names_of(person), *(also or {}).get(person.key, ())])
        if pattern is not None and away(folded, pattern):
            found.append(person)
    return found


def present_with(text: str, people: Sequence[Person], also: Mapping[str, Sequence[str]] | None = None) -> list[Person]:
    """The people ``text`` names where it is not about their absence (:func:`ego_self_model.presence.present`):
    those it is a moment with."""
    folded = "\n".join(fold(line) for line in text.splitlines()).casefold()
    found: list[Person] = []
    for person in mentioned(text, people, also):
        pattern = _names_pattern([*names_of(person), *(also or {}).get(person.key, ())])
        if pattern is not None and present(folded, pattern):
            found.append(person)
    return found


def apply(
    person: Person, update: PersonUpdate, others: Sequence[Person], now: datetime, config: SelfModelConfig
) -> tuple[Person, bool]:
    """The person after ``update`` and whether anything changed. Raises when an alias names someone else or a
    list would grow past its limit (nothing is changed then)."""
    if isinstance(update, SetTrust):
        changed = update.value != person.trust
        return attrs.evolve(person, trust=update.value, updated=now), changed
    if isinstance(update, SetStyle):
        changed = update.text != person.communication_style
        return attrs.evolve(person, communication_style=update.text, updated=now), changed
    current: tuple[str, ...] = getattr(person, update.field)
    if isinstance(update, AddItem):
        if key_of(update.item) in {key_of(item) for item in current}:
            return person, False
        items = (*current, update.item)
    else:
        items = update.items
    if update.field == "aliases":
        items = tuple(alias for alias in items if key_of(alias) != person.key)
        taken = {key_of(n) for other in others if other.key != person.key for n in names_of(other)}
        if any(key_of(alias) in taken for alias in items):
            raise InvalidArgumentError(
                "value", "for field aliases, an alias must not be another person's name or alias"
            )
    if len(items) > config.max_list_items:
        raise InvalidArgumentError(
            "value",
            f"for field {update.field}, at most {config.max_list_items} items are kept; give a list to replace "
            "the whole list (and make room)",
        )
    if items == current:
        return person, False
    changes: dict[str, Any] = {update.field: items, "updated": now}
    return attrs.evolve(person, **changes), True


@attrs.frozen
class Bond:
    """What has been shared with one person, as the relationship words need it."""

    count: int
    first: datetime | None
    last: Shared | None
    this_week: int
    """Moments shared in the last seven days."""
    days: int = 0
    """Days with a moment shared, up to now: the depth of the shared history."""


WEEK: Final = timedelta(days=7)
DEPTH_DAYS: Final = 20.0
"""Days together at which the shared history is about two-thirds as deep as it gets (``closeness``)."""
HISTORY_WEIGHT: Final = 0.7
"""How far shared history can carry closeness beyond trust: trust 0.5 and a deep history make about 0.85."""
WARY_TRUST: Final = 0.4
"""Below this trust (set by update_relationship), history does not make the bond closer: caution stands."""


def bond(store: StateStore, db: sqlite3.Connection, person: str, now: datetime) -> Bond:
    """The bond with ``person`` (a key) at ``now``, read in the transaction ``db``."""
    ties = store.ties(db, person)
    days = {moment.date() for moment in store.moments(db, person) if moment <= now}
    return Bond(
        count=ties.count,
        first=store.first_shared(db, person),
        last=ties.last,
        this_week=store.shared_since(db, person, now - WEEK),
        days=len(days),
    )


def closeness(trust: float, tie: Bond) -> float:
    """The bond in one number (0-1): the trust set by update_relationship, carried further by the days shared
    (``1 - exp(-days / DEPTH_DAYS)`` of the way, at most :data:`HISTORY_WEIGHT`). A person one is wary or
    cautious of stays so, whatever was shared."""
    if trust < WARY_TRUST:
        return trust
    depth = 1.0 - math.exp(-tie.days / DEPTH_DAYS)
    return round(trust + (1.0 - trust) * HISTORY_WEIGHT * depth, 3)
