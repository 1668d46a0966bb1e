"""The self_model plugin's part of ``ego export`` / ``ego import``.

Records, in this order: ``meta``; ``self`` (one per self-model field); ``growth`` (oldest first); ``question``
(every one: active, fading, dormant and resolved, with whom it is held, its lineage and when ripening last fed
it); ``person``; ``shared`` (a memory shared with a person: its id and time, never its text; a private one only
with ``--include-private``); ``companion`` (what a resting question gathered: memory or notion ids, never text;
one with a private memory only with ``--include-private``); ``trust`` (each kept change of a person's trust
level: the person's key, its time and value, oldest first; no text about them). Question vectors are not
exported: a question is embedded again, once, when the next memory is saved. Times are ISO 8601 in UTC.

An import checks every record first (types and limits, naming record and field) and writes nothing if one is
wrong; it keeps what the store already has (a field already set, a question or person already known), so
importing the same file twice adds nothing the second time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Final, cast

import attrs

from ego_self_model.config import SelfModelConfig
from ego_self_model.fields import (
    LIST_SELF_FIELDS,
    QUESTION_ID,
    SELF_FIELDS,
    FieldValueError,
    fold,
    importance_of,
    key_of,
)
from ego_self_model.store import (
    COMPANION_KINDS,
    Companion,
    CompanionKind,
    Growth,
    Person,
    Question,
    Shared,
    StateStore,
    from_epoch,
    to_epoch,
)

RECORD_VERSION: Final = 1


def iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def export_records(store: StateStore, include_private: bool) -> Iterator[Mapping[str, Any]]:
    with store.reading() as db:
        fields = store.fields(db)
        times = store.field_times(db)
        growth = store.growth(db)
        questions = store.questions(db, resolved=None)
        people = store.people(db)
        shared = store.shared(db)
        companions = store.companions(db)
        trust = store.trust_history(db)
    yield {"type": "meta", "record_version": RECORD_VERSION}
    for field in sorted(fields):
        yield {"type": "self", "field": field, "value": fields[field], "updated": iso(times[field])}
    for entry in growth:
        yield {"type": "growth", "at": iso(entry.at), "text": entry.text}
    for question in questions:
        yield {
            "type": "question",
            "id": question.id,
            "text": question.text,
            "importance": question.importance,
            "created": iso(question.created),
            "surfaced": iso(question.surfaced),
            "resolved": iso(question.resolved),
            "answer": question.answer,
            "resurfaced": question.resurfaced,
            "triggered": iso(question.triggered),
            "person": question.person,
            "lineage": list(question.lineage),
            "last_fed": iso(question.last_fed),
        }
    for person in people:
        yield {
            "type": "person",
            "name": person.name,
            "trust": person.trust,
            "preferred_topics": list(person.preferred_topics),
            "sensitive_topics": list(person.sensitive_topics),
            "aliases": list(person.aliases),
            "notes": list(person.notes),
            "communication_style": person.communication_style,
            "created": iso(person.created),
            "updated": iso(person.updated),
        }
    for moment in shared:
        if moment.private and not include_private:
            continue
        yield {
            "type": "shared",
            "person": moment.person,
            "memory_id": moment.memory_id,
            "at": iso(moment.at),
            "private": moment.private,
        }
    for companion in companions:
        if companion.private and not include_private:
            continue
        yield {
            "type": "companion",
            "question": companion.question,
            "kind": companion.kind,
            "first": companion.first,
            "second": companion.second,
            "similarity": companion.similarity,
            "added": iso(companion.added),
            "private": companion.private,
        }
    for person_key, at, level in trust:
        yield {"type": "trust", "person": person_key, "at": iso(at), "trust": level}


# --------------------------------------------------------------------------------------------------
# Reading records


class RecordError(ValueError):
    """One field of one record is wrong; the message names the field and the accepted form."""


def _get(
    record: Mapping[str, Any], name: str, check: Callable[[Any], Any], form: str, *, optional: bool = False
) -> Any:
    if name not in record or record[name] is None:
        if optional:
            return None
        raise RecordError(f"`{name}`: missing, expected {form}")
    try:
        return check(record[name])
    except (FieldValueError, TypeError, ValueError):
        raise RecordError(f"`{name}`: expected {form}") from None


def _text(limit: int, *, allow_empty: bool = False) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise FieldValueError("not a string")
        folded = fold(value)
        if (not folded and not allow_empty) or len(folded) > limit:
            raise FieldValueError("length")
        return folded

    return check


def _texts(limit: int, count: int) -> Callable[[Any], tuple[str, ...]]:
    one = _text(limit)

    def check(value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or len(value) > count:
            raise FieldValueError("not a list")
        return tuple(one(item) for item in value)

    return check


def _time(value: Any) -> datetime:
    if not isinstance(value, str):
        raise FieldValueError("not a string")
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise FieldValueError("no time zone")
    return from_epoch(to_epoch(moment))


def _unit(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or not 0 <= value <= 1:
        raise FieldValueError("not a unit number")
    return float(value)


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FieldValueError("not a count")
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise FieldValueError("not a boolean")
    return value


def _question_id(value: Any) -> str:
    if not isinstance(value, str) or not QUESTION_ID.match(value):
        raise FieldValueError("not an id")
    return value


def _question_ids(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise FieldValueError("not a list")
    return tuple(_question_id(item) for item in value)


def _similarity(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or abs(value) > 1:
        raise FieldValueError("not a similarity")
    return float(value)


def _kind(value: Any) -> CompanionKind:
    if value not in COMPANION_KINDS:
        raise FieldValueError("not a kind")
    return cast(CompanionKind, value)


def _skills(limit: int) -> Callable[[Any], dict[str, float]]:
    name = _text(limit)

    def check(value: Any) -> dict[str, float]:
        if not isinstance(value, dict):
            raise FieldValueError("not an object")
        return {name(k): _unit(v) for k, v in value.items()}

    return check


TIME: Final = "an ISO 8601 time with a time zone"


@attrs.frozen
class Parsed:
    fields: Mapping[str, tuple[Any, datetime]] = attrs.field(factory=dict)
    growth: Sequence[Growth] = ()
    questions: Sequence[Question] = ()
    people: Sequence[Person] = ()
    shared: Sequence[Shared] = ()
    companions: Sequence[Companion] = ()
    trust: Sequence[tuple[str, datetime, float]] = ()
    """(person's key, time, trust level)."""


def _self_record(record: Mapping[str, Any], config: SelfModelConfig) -> tuple[str, Any, datetime]:
    field = _get(record, "field", lambda v: v if v in SELF_FIELDS else _bad(), "one of: " + ", ".join(SELF_FIELDS))
    text = f"strings of 1 to {config.max_text_chars} characters"
    if field in LIST_SELF_FIELDS:
        value: Any = list(
            _get(record, "value", _texts(config.max_text_chars, config.max_list_items), f"a list of {text}")
        )
    elif field == "skill_confidence":
        value = _get(record, "value", _skills(config.max_name_chars), "an object of skill names to numbers 0-1")
    else:
        raise RecordError("`field`: growth_log entries are growth records")
    return field, value, _get(record, "updated", _time, TIME)


def _bad() -> Any:
    raise FieldValueError("invalid")


def _question_record(record: Mapping[str, Any], config: SelfModelConfig) -> Question:
    return Question(
        id=_get(record, "id", _question_id, '"q_" and 12 hex digits'),
        text=_get(record, "text", _text(config.max_text_chars), f"1 to {config.max_text_chars} characters"),
        importance=_get(record, "importance", importance_of, "an integer from 1 to 5"),
        created=_get(record, "created", _time, TIME),
        surfaced=_get(record, "surfaced", _time, TIME),
        resolved=_get(record, "resolved", _time, TIME, optional=True),
        answer=_get(record, "answer", _text(config.max_text_chars), "a string", optional=True),
        resurfaced=_get(record, "resurfaced", _count, "an integer >= 0"),
        triggered=_get(record, "triggered", _time, TIME, optional=True),
        person=_get(record, "person", _text(config.max_name_chars), "a person's name", optional=True),
        lineage=_get(record, "lineage", _question_ids, "a list of question ids", optional=True) or (),
        last_fed=_get(record, "last_fed", _time, TIME, optional=True),
    )


def _companion_record(record: Mapping[str, Any]) -> Companion:
    kind = _get(record, "kind", _kind, "one of: " + ", ".join(COMPANION_KINDS))
    return Companion(
        question=_get(record, "question", _question_id, '"q_" and 12 hex digits'),
        kind=kind,
        first=_get(record, "first", _text(64), "a memory or notion id"),
        second=_get(record, "second", _text(64), "a memory or notion id", optional=kind == "companion"),
        similarity=_get(record, "similarity", _similarity, "a number from -1 to 1", optional=True),
        added=_get(record, "added", _time, TIME),
        private=bool(_get(record, "private", _flag, "true or false", optional=True)),
    )


def _person_record(record: Mapping[str, Any], config: SelfModelConfig) -> Person:
    name = _get(record, "name", _text(config.max_name_chars), f"1 to {config.max_name_chars} characters")
    lists = {
        field: _get(
            record,
            field,
            _texts(config.max_name_chars if field == "aliases" else config.max_text_chars, config.max_list_items),
            f"a list of at most {config.max_list_items} strings",
        )
        for field in ("preferred_topics", "sensitive_topics", "aliases", "notes")
    }
    return Person(
        key=key_of(name),
        name=name,
        trust=_get(record, "trust", _unit, "a number from 0 to 1"),
        communication_style=_get(
            record, "communication_style", _text(config.max_text_chars, allow_empty=True), "a string"
        ),
        created=_get(record, "created", _time, TIME),
        updated=_get(record, "updated", _time, TIME),
        **lists,
    )


def _trust_record(record: Mapping[str, Any], config: SelfModelConfig) -> tuple[str, datetime, float]:
    return (
        key_of(_get(record, "person", _text(config.max_name_chars), "a person's key")),
        _get(record, "at", _time, TIME),
        _get(record, "trust", _unit, "a number from 0 to 1"),
    )


def _shared_record(record: Mapping[str, Any], config: SelfModelConfig) -> Shared:
    return Shared(
        person=_get(record, "person", _text(config.max_name_chars), "a person's key"),
        memory_id=_get(record, "memory_id", _text(64), "a memory id"),
        at=_get(record, "at", _time, TIME),
        private=_get(record, "private", _flag, "true or false"),
    )


def parse(records: Sequence[Mapping[str, Any]], config: SelfModelConfig) -> tuple[Parsed, list[str]]:
    """The records as values, and every problem (``record N (type): `field`: expected …``)."""
    fields: dict[str, tuple[Any, datetime]] = {}
    growth: list[Growth] = []
    questions: list[Question] = []
    people: list[Person] = []
    shared: list[Shared] = []
    companions: list[Companion] = []
    trust: list[tuple[str, datetime, float]] = []
    problems: list[str] = []
    for number, record in enumerate(records, start=1):
        kind = record.get("type")
        where = f"record {number} ({kind})"
        try:
            if kind == "meta":
                if record.get("record_version") != RECORD_VERSION:
                    problems.append(f"{where}: `record_version`: expected {RECORD_VERSION}")
            elif kind == "self":
                field, value, updated = _self_record(record, config)
                if field in fields:
                    problems.append(f"{where}: `field`: {field} appears twice")
                fields[field] = (value, updated)
            elif kind == "growth":
                growth.append(
                    Growth(
                        at=_get(record, "at", _time, TIME),
                        text=_get(record, "text", _text(config.max_text_chars), "a string"),
                    )
                )
            elif kind == "question":
                questions.append(_question_record(record, config))
            elif kind == "person":
                people.append(_person_record(record, config))
            elif kind == "shared":
                shared.append(_shared_record(record, config))
            elif kind == "companion":
                companions.append(_companion_record(record))
            elif kind == "trust":
                trust.append(_trust_record(record, config))
            else:
                problems.append(f"{where}: unknown record type")
        except RecordError as exc:
            problems.append(f"{where}: {exc}")
    for label, keys in (("question", [q.id for q in questions]), ("person", [p.key for p in people])):
        twice = sorted({k for k in keys if keys.count(k) > 1})
        problems.extend(f"{label} {key} appears twice" for key in twice)
    held = {q.id for q in questions}
    problems.extend(
        f"companion of question {c.question}: no such question record" for c in companions if c.question not in held
    )
    parsed = Parsed(
        fields=fields,
        growth=growth,
        questions=questions,
        people=people,
        shared=shared,
        companions=companions,
        trust=trust,
    )
    return parsed, problems


def check_records(records: Sequence[Mapping[str, Any]], config: SelfModelConfig) -> list[str]:
    return parse(records, config)[1]


def import_records(store: StateStore, records: Sequence[Mapping[str, Any]], config: SelfModelConfig) -> int:
    parsed, problems = parse(records, config)
    if problems:
        raise ValueError("; ".join(problems))
    added = 0
    with store.writing() as db:
        present = store.fields(db)
        for field, (value, updated) in sorted(parsed.fields.items()):
            if field not in present:
                store.set_field(db, field, value, updated)
                added += 1
        added += sum(store.add_growth(db, entry) for entry in parsed.growth)
        added += sum(store.add_question(db, question) for question in parsed.questions)
        inserted = [
            person for person in parsed.people if store.put_person(db, person, replace=False, record_trust=False)
        ]
        added += len(inserted)
        # a person already known keeps their own trust and its history; a person new here brings theirs, or (an
        # export from before the history) starts it with the level the file gives
        new = {person.key for person in inserted}
        added += sum(store.add_trust(db, key, at, level) for key, at, level in parsed.trust if key in new)
        with_history = {key for key, _at, _level in parsed.trust}
        for person in inserted:
            moment = person.updated or person.created
            if person.key not in with_history and moment is not None:
                store.add_trust(db, person.key, moment, person.trust)
        added += sum(store.add_shared(db, moment) for moment in parsed.shared)
        had = {(c.question, c.kind, c.first, c.second) for c in store.companions(db)}
        for companion in parsed.companions:
            key = (companion.question, companion.kind, companion.first, companion.second)
            if key not in had and store.question(db, companion.question) is not None:
                store.add_companion(db, companion)
                had.add(key)
                added += 1
    return added
