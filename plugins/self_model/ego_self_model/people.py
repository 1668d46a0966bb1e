"""The people the agent knows: finding a person by name or alias, noticing them named in a memory, updating them.

A name or alias matches case-insensitively, as a whole word: the characters around it must not be letters,
digits or ``_``. Next to Chinese or Japanese characters (written without spaces) no boundary is required.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, Final

import attrs

from ego_core import InvalidArgumentError
from ego_self_model.config import SelfModelConfig
from ego_self_model.fields import AddItem, PersonUpdate, SetStyle, SetTrust, fold, key_of
from ego_self_model.store import Person, Shared, StateStore

UNSPACED_SCRIPTS = ("CJK", "HIRAGANA", "KATAKANA", "HALFWIDTH KATAKANA", "IDEOGRAPHIC")


def _unspaced(char: str) -> bool:
    return unicodedata.name(char, "").startswith(UNSPACED_SCRIPTS)


def term_pattern(term: str) -> str:
    """A regular expression finding ``term`` (already case-folded) as a whole word."""
    left = "" if _unspaced(term[0]) else r"(?<!\w)"
    right = "" if _unspaced(term[-1]) else r"(?!\w)"
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


def blank(name: str, now: datetime, config: SelfModelConfig) -> Person:
    """Someone the agent knows nothing about yet."""
    folded = fold(name)
    return Person(key=key_of(folded), name=folded, trust=config.default_trust, created=now, updated=now)


def mentioned(text: str, people: Sequence[Person]) -> list[Person]:
    """The people ``text`` names (by name or alias), each once."""
    folded = fold(text).casefold()
    found: list[Person] = []
    for person in people:
        terms = sorted({key_of(n) for n in names_of(person) if key_of(n)}, key=len, reverse=True)
        if terms and re.search("|".join(term_pattern(t) for t in terms), folded):
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


WEEK: Final = timedelta(days=7)


def bond(store: StateStore, db: sqlite3.Connection, person: str, now: datetime) -> Bond:
    """The bond with ``person`` (a key) at ``now``, read in the transaction ``db``."""
    ties = store.ties(db, person)
    return Bond(
        count=ties.count,
        first=store.first_shared(db, person),
        last=ties.last,
        this_week=store.shared_since(db, person, now - WEEK),
    )
