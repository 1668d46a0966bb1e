"""The typed fields of ``update_self`` and ``update_relationship``: what each ``value`` may be.

The tool schemas only say ``field`` (an enum) and ``value`` (any JSON); each field's form is checked here, and
a value of the wrong form is an error that names the field and the accepted form, before anything is written.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from ego_core import InvalidArgumentError
from ego_self_model.config import SelfModelConfig
from ego_self_model.salience import MAX_IMPORTANCE

LIST_SELF_FIELDS: Final = ("preferences", "values", "goals", "identity")
SELF_FIELDS: Final = (*LIST_SELF_FIELDS, "skill_confidence", "growth_log")
QUESTION_FIELDS: Final = ("new_question", "resolve_question", "question_importance")
UPDATE_SELF_FIELDS: Final = (*SELF_FIELDS, *QUESTION_FIELDS)

LIST_PERSON_FIELDS: Final = ("preferred_topics", "sensitive_topics", "aliases", "notes")
RELATIONSHIP_FIELDS: Final = ("trust_level", *LIST_PERSON_FIELDS, "communication_style")

QUESTION_ID: Final = re.compile(r"^q_[0-9a-f]{12}$")
DEFAULT_IMPORTANCE: Final = 3


def forms(config: SelfModelConfig) -> dict[str, str]:
    """The accepted form of every field's ``value``, as error messages and docs/tools.md state it."""
    text = f"1 to {config.max_text_chars} characters"
    name = f"1 to {config.max_name_chars} characters"
    listed = f"a string (adds one item) or a list of at most {config.max_list_items} strings (replaces the list)"
    return {
        **dict.fromkeys(LIST_SELF_FIELDS, f"{listed}, each {text}"),
        "skill_confidence": (
            f"an object mapping skill names ({name}) to numbers from 0 to 1, or null to drop a skill, "
            'e.g. {"python": 0.8}'
        ),
        "growth_log": f"a string of {text} (a new entry; entries are never replaced)",
        "new_question": (
            f'{{"question": <{text}>, "importance": <integer 1-5, default 3>, "with": <a person, {name}, optional>, '
            '"supersedes": <the id of the question it carries forward, optional>}, or the question alone as a string'
        ),
        "resolve_question": 'a question id "q_" + 12 hex digits, or {"id": <question id>, "answer": <string>}',
        "question_importance": '{"id": <question id "q_" + 12 hex digits>, "importance": <integer 1-5>}',
        "trust_level": "a number from 0 to 1",
        **dict.fromkeys(("preferred_topics", "sensitive_topics", "notes"), f"{listed}, each {text}"),
        "aliases": f"{listed}, each {name}, none of them another person's name or alias",
        "communication_style": f"a string of at most {config.max_text_chars} characters (an empty string clears it)",
    }


# --------------------------------------------------------------------------------------------------
# What a valid update is


@attrs.frozen
class AddItem:
    field: str
    item: str


@attrs.frozen
class ReplaceList:
    field: str
    items: tuple[str, ...]


@attrs.frozen
class SetSkills:
    skills: Mapping[str, float | None]


@attrs.frozen
class AddGrowth:
    text: str


@attrs.frozen
class NewQuestion:
    text: str
    importance: int
    person: str | None = None
    """Whom it is held with (a name or alias, as given)."""
    supersedes: str | None = None
    """The id of the question it carries forward."""


@attrs.frozen
class ResolveQuestion:
    id: str
    answer: str | None


@attrs.frozen
class Reweigh:
    id: str
    importance: int


@attrs.frozen
class SetTrust:
    value: float


@attrs.frozen
class SetStyle:
    text: str


SelfUpdate = AddItem | ReplaceList | SetSkills | AddGrowth | NewQuestion | ResolveQuestion | Reweigh
PersonUpdate = AddItem | ReplaceList | SetTrust | SetStyle


# --------------------------------------------------------------------------------------------------
# Parsing


def fold(text: str) -> str:
    """One line: NFC, runs of whitespace become one space, trimmed."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def key_of(text: str) -> str:
    """The comparison key of a name or item: folded and case-folded."""
    return fold(text).casefold()


class FieldValueError(ValueError):
    """A ``value`` that does not have its field's form (the message says which part was wrong)."""


def _text(value: Any, limit: int, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise FieldValueError("not a string")
    folded = fold(value)
    if not folded and not allow_empty:
        raise FieldValueError("empty")
    if len(folded) > limit:
        raise FieldValueError("too long")
    return folded


def _unit(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FieldValueError("not a number")
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise FieldValueError("out of range")
    return number


def importance_of(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FieldValueError("importance is not a number")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise FieldValueError("importance is not an integer")
    number = int(value)
    if not 1 <= number <= MAX_IMPORTANCE:
        raise FieldValueError("importance out of range")
    return number


def _question_id(value: Any) -> str:
    if not isinstance(value, str) or not QUESTION_ID.match(value):
        raise FieldValueError("not a question id")
    return value


def _only_keys(value: Mapping[str, Any], allowed: Sequence[str], required: Sequence[str]) -> None:
    if set(value) - set(allowed) or not set(required) <= set(value):
        raise FieldValueError("wrong keys")


def _list_update(field: str, value: Any, config: SelfModelConfig, limit: int) -> AddItem | ReplaceList:
    if isinstance(value, str):
        return AddItem(field, _text(value, limit))
    if not isinstance(value, list):
        raise FieldValueError("not a string or list")
    if len(value) > config.max_list_items:  # the list as sent: repeats count, and are dropped after
        raise FieldValueError("too many items")
    items: dict[str, str] = {}
    for item in value:
        text = _text(item, limit)
        items.setdefault(key_of(text), text)
    return ReplaceList(field, tuple(items.values()))


def _parse_self(field: str, value: Any, config: SelfModelConfig) -> SelfUpdate:
    if field in LIST_SELF_FIELDS:
        return _list_update(field, value, config, config.max_text_chars)
    if field == "skill_confidence":
        if not isinstance(value, dict) or not value:
            raise FieldValueError("not a non-empty object")
        skills: dict[str, float | None] = {}
        for name, confidence in value.items():
            skill = _text(name, config.max_name_chars)
            skills[skill] = None if confidence is None else _unit(confidence)
        return SetSkills(skills)
    if field == "growth_log":
        return AddGrowth(_text(value, config.max_text_chars))
    if field == "new_question":
        if isinstance(value, str):
            return NewQuestion(_text(value, config.max_text_chars), DEFAULT_IMPORTANCE)
        if not isinstance(value, dict):
            raise FieldValueError("not a string or object")
        _only_keys(value, ("question", "importance", "with", "supersedes"), ("question",))
        importance = importance_of(value["importance"]) if "importance" in value else DEFAULT_IMPORTANCE
        person = value.get("with")
        supersedes = value.get("supersedes")
        return NewQuestion(
            _text(value["question"], config.max_text_chars),
            importance,
            person=None if person is None else _text(person, config.max_name_chars),
            supersedes=None if supersedes is None else _question_id(supersedes),
        )
    if field == "resolve_question":
        if isinstance(value, str):
            return ResolveQuestion(_question_id(value), None)
        if not isinstance(value, dict):
            raise FieldValueError("not an id or object")
        _only_keys(value, ("id", "answer"), ("id",))
        answer = value.get("answer")
        return ResolveQuestion(
            _question_id(value["id"]), None if answer is None else _text(answer, config.max_text_chars)
        )
    if field == "question_importance":
        if not isinstance(value, dict):
            raise FieldValueError("not an object")
        _only_keys(value, ("id", "importance"), ("id", "importance"))
        return Reweigh(_question_id(value["id"]), importance_of(value["importance"]))
    raise FieldValueError("unknown field")


def _parse_person(field: str, value: Any, config: SelfModelConfig) -> PersonUpdate:
    if field == "trust_level":
        return SetTrust(_unit(value))
    if field == "communication_style":
        return SetStyle(_text(value, config.max_text_chars, allow_empty=True))
    if field == "aliases":
        return _list_update(field, value, config, config.max_name_chars)
    if field in LIST_PERSON_FIELDS:
        return _list_update(field, value, config, config.max_text_chars)
    raise FieldValueError("unknown field")


def _known(field: Any, known: Sequence[str]) -> str:
    if not isinstance(field, str) or field not in known:
        raise InvalidArgumentError("field", "one of: " + ", ".join(known))
    return field


def parse_self_update(field: Any, value: Any, config: SelfModelConfig) -> SelfUpdate:
    """The update ``update_self(field, value)`` asks for; raises an error naming the field and its form."""
    name = _known(field, UPDATE_SELF_FIELDS)
    try:
        return _parse_self(name, value, config)
    except FieldValueError:
        raise InvalidArgumentError("value", f"for field {name}, expected {forms(config)[name]}") from None


def parse_person_update(field: Any, value: Any, config: SelfModelConfig) -> PersonUpdate:
    name = _known(field, RELATIONSHIP_FIELDS)
    try:
        return _parse_person(name, value, config)
    except FieldValueError:
        raise InvalidArgumentError("value", f"for field {name}, expected {forms(config)[name]}") from None


def person_name(value: Any, config: SelfModelConfig) -> str:
    try:
        return _text(value, config.max_name_chars)
    except FieldValueError:
        raise InvalidArgumentError("person", f"a name of 1 to {config.max_name_chars} characters") from None
