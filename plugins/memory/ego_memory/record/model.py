"""(De)serialisation of memories with cattrs: portable JSON for exports, imports and tests.

Timestamps are ISO 8601 with an offset (always UTC when written); lists stay lists; a record written by an
older version that lacks a field reads it with its default (``is_private`` absent → false).

The normalisation rules live here too, shared by ``remember`` (:meth:`Memories.draft`) and ``ego import``
(:func:`read_memory_record`), so that an imported memory obeys exactly what a remembered one does: known
emotions and categories, importance 1-5, intensity/arousal 0-1, valence -1-1, lists as lists, and the bounds
of :mod:`ego_memory.record.limits`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, TypeVar, get_args, get_origin

import attrs
import cattrs
from cattrs.cols import homogenous_tuple_structure_factory
from cattrs.gen import make_dict_structure_fn

from ego_core import EMOTIONS, EmotionalTrace, Memory, MemoryLink, is_blank
from ego_memory.record.emotions import CATEGORIES, DEFAULT_CATEGORY, DEFAULT_EMOTION, clamp
from ego_memory.record.limits import (
    MAX_LABEL_CHARS,
    MAX_LINK_NOTE_CHARS,
    MAX_LINKS,
    MAX_SECONDARY,
    MAX_TAG_CHARS,
    MAX_TAGS,
    body_state_problem,
    label_problem,
    list_problem,
)

T = TypeVar("T")


def _datetime(value: Any, _: type) -> datetime:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        moment = datetime.fromtimestamp(value, UTC)
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError("expected an ISO 8601 timestamp (e.g. 2026-11-22T10:00:00+00:00)") from None
    else:
        raise ValueError("expected an ISO 8601 timestamp")
    if moment.tzinfo is None:
        raise ValueError("timestamps must carry a time zone (e.g. 2026-11-22T10:00:00+00:00)")
    return moment.astimezone(UTC)


def _bool(value: Any, _: type) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in {"true", "false", "1", "0", "yes", "no"}:
        return value.strip().lower() in {"true", "1", "yes"}
    raise ValueError("expected true or false")


def _not_mapping() -> dict[str, Any]:
    raise ValueError("expected an object")


def make_converter() -> cattrs.Converter:
    converter = cattrs.Converter(forbid_extra_keys=False)
    converter.register_structure_hook(datetime, _datetime)
    converter.register_unstructure_hook(datetime, lambda d: d.astimezone(UTC).isoformat())
    converter.register_structure_hook(bool, _bool)
    converter.register_unstructure_hook(MappingProxyType, dict)
    converter.register_structure_hook_func(
        lambda t: t == Mapping[str, Any], lambda v, _: dict(v) if isinstance(v, Mapping) else _not_mapping()
    )
    return converter


converter = make_converter()


def memory_to_dict(memory: Memory) -> dict[str, Any]:
    data: dict[str, Any] = converter.unstructure(memory)
    data["emotional_trace"]["body_state"] = dict(memory.emotional_trace.body_state)
    return data


def memory_from_dict(data: Mapping[str, Any]) -> Memory:
    return converter.structure(dict(data), Memory)


# --------------------------------------------------------------------------------------------------
# Normalisation, the same for remember and import


def normal_emotion(value: object) -> tuple[str, bool]:
    """The emotion label as stored, and whether it was known (an unknown one is stored as neutral)."""
    label = str(value or DEFAULT_EMOTION).strip().lower()
    return (label, True) if label in EMOTIONS else (DEFAULT_EMOTION, False)


def normal_secondary(values: Iterable[object]) -> tuple[tuple[str, ...], bool]:
    """Known secondary emotions, lower case, each once; and whether an unknown one was dropped."""
    labels = [str(v).strip().lower() for v in values if str(v).strip()]
    known = [label for label in labels if label in EMOTIONS]
    return tuple(dict.fromkeys(known)), len(known) != len(labels)


def normal_category(value: object) -> tuple[str, bool]:
    """The category as stored, and whether it was known (an unknown one is stored as daily)."""
    label = str(value or DEFAULT_CATEGORY).strip().lower()
    return (label, True) if label in CATEGORIES else (DEFAULT_CATEGORY, False)


def normal_importance(value: float) -> int:
    return int(clamp(int(value), 1, 5))


def normal_tags(values: Iterable[object]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(t).strip() for t in values if str(t).strip()))


def unit(value: float) -> float:
    return clamp(float(value), 0.0, 1.0)


def signed_unit(value: float) -> float:
    return clamp(float(value), -1.0, 1.0)


# --------------------------------------------------------------------------------------------------
# Import: a strict reading (a value of the wrong type is refused, never coerced), then normalisation


class RecordError(ValueError):
    """A record cannot be imported; ``problems`` name each field and what it must be."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


def _strict_str(value: Any, _: type) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, not {_json_type(value)}")
    return value


def _strict_float(value: Any, _: type) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, not {_json_type(value)}")
    if not math.isfinite(value):
        raise ValueError("expected a finite number")
    return float(value)


def _strict_int(value: Any, _: type) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected an integer, not {_json_type(value)}")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError("expected an integer, not a fraction")
    return int(value)


def _strict_bool(value: Any, _: type) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, not {_json_type(value)}")
    return value


def _strict_mapping(value: Any, _: type) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"expected an object, not {_json_type(value)}")
    return dict(value)


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__


def make_strict_converter() -> cattrs.Converter:
    """What ``ego import`` reads records with: JSON types must match (a string is never split into a list)."""
    strict = cattrs.Converter(forbid_extra_keys=False, detailed_validation=True)
    strict.register_structure_hook(datetime, _datetime)
    strict.register_structure_hook(str, _strict_str)
    strict.register_structure_hook(float, _strict_float)
    strict.register_structure_hook(int, _strict_int)
    strict.register_structure_hook(bool, _strict_bool)
    strict.register_structure_hook_func(lambda t: t == Mapping[str, Any], _strict_mapping)

    def is_tuple(cls: Any) -> bool:
        return get_origin(cls) is tuple and len(get_args(cls)) == 2 and get_args(cls)[1] is Ellipsis

    def tuple_hook(cls: Any) -> Callable[[Any, Any], tuple[Any, ...]]:
        inner = homogenous_tuple_structure_factory(cls, strict)

        def structure(value: Any, target: Any) -> tuple[Any, ...]:
            if not isinstance(value, list | tuple):
                raise ValueError(f"expected a list, not {_json_type(value)}")
            result: tuple[Any, ...] = inner(value, target)
            return result

        return structure

    def object_hook(cls: Any) -> Callable[[Any, Any], Any]:
        inner = make_dict_structure_fn(cls, strict)

        def structure(value: Any, target: Any) -> Any:
            if not isinstance(value, Mapping):
                raise ValueError(f"expected an object, not {_json_type(value)}")
            return inner(value, target)

        return structure

    strict.register_structure_hook_factory(is_tuple, tuple_hook)
    strict.register_structure_hook_factory(attrs.has, object_hook)
    return strict


strict_converter = make_strict_converter()


def _problems(exc: BaseException) -> list[str]:
    def describe(error: BaseException, _type: Any) -> str:
        if isinstance(error, KeyError):
            return "required field missing"
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        if isinstance(error, cattrs.errors.CattrsError) and " not in literal " in text:
            return "must be one of " + ", ".join(str(v) for v in get_args(_type))
        return text

    found = []
    for line in cattrs.transform_error(exc, path="$", format_exception=describe):
        message, _at, path = line.rpartition(" @ ")
        field = path.removeprefix("$").removeprefix(".") or "record"
        found.append(f"`{field}`: {message}")
    return found


def read_strict(data: Mapping[str, Any], cls: type[T]) -> T:
    """``cls`` from a JSON object, refusing values of the wrong type; raises RecordError naming the fields."""
    if not isinstance(data, Mapping):
        raise RecordError([f"`record`: expected an object, not {_json_type(data)}"])
    try:
        return strict_converter.structure(dict(data), cls)
    except (cattrs.BaseValidationError, ValueError, TypeError) as exc:
        raise RecordError(_problems(exc)) from None


def normalise_memory(memory: Memory, max_content_chars: int | None = None) -> tuple[Memory, list[str]]:
    """``memory`` under remember's rules; the names of the fields changed. Raises RecordError when the content
    is empty or too long (remember refuses both; nothing sensible can be stored instead)."""
    content = memory.content.strip()
    if is_blank(content):
        raise RecordError(["`content`: must contain text, not only whitespace or invisible characters"])
    if max_content_chars is not None and len(content) > max_content_chars:
        raise RecordError([f"`content`: must be at most {max_content_chars} characters"])
    problems = limit_problems(memory)
    if problems:
        raise RecordError(problems)
    trace = memory.emotional_trace
    primary, _known = normal_emotion(trace.primary)
    secondary, _dropped = normal_secondary(trace.secondary)
    category, _known = normal_category(memory.category)
    normal = attrs.evolve(
        memory,
        content=content,
        emotional_trace=attrs.evolve(
            trace,
            primary=primary,
            secondary=secondary,
            intensity=unit(trace.intensity),
            valence=signed_unit(trace.valence),
            arousal=unit(trace.arousal),
        ),
        importance=normal_importance(memory.importance),
        category=category,
        tags=normal_tags(memory.tags),
        links=tuple(attrs.evolve(link, confidence=unit(link.confidence)) for link in memory.links),
        access_count=max(0, memory.access_count),
    )
    changed = _changed_fields(memory, normal)
    return normal, changed


def limit_problems(memory: Memory) -> list[str]:
    """Every field of ``memory`` beyond the bounds remember enforces, named with the bound."""
    trace = memory.emotional_trace
    found = [
        f"`{name}`: {problem}"
        for name, problem in (
            ("emotional_trace.primary", label_problem(trace.primary)),
            ("emotional_trace.secondary", list_problem(trace.secondary, MAX_SECONDARY, MAX_LABEL_CHARS)),
            ("emotional_trace.body_state", body_state_problem(trace.body_state)),
            ("category", label_problem(memory.category)),
            ("tags", list_problem(memory.tags, MAX_TAGS, MAX_TAG_CHARS)),
        )
        if problem
    ]
    if len(memory.links) > MAX_LINKS:
        found.append(f"`links`: must be a list of at most {MAX_LINKS} links")
    if any(len(link.note) > MAX_LINK_NOTE_CHARS for link in memory.links):
        found.append(f"`links`: each note must be at most {MAX_LINK_NOTE_CHARS} characters")
    return found


def _changed_fields(before: Memory, after: Memory) -> list[str]:
    changed = [
        name
        for name in ("content", "importance", "category", "tags", "links", "access_count")
        if getattr(before, name) != getattr(after, name)
    ]
    for name in ("primary", "secondary", "intensity", "valence", "arousal"):
        if getattr(before.emotional_trace, name) != getattr(after.emotional_trace, name):
            changed.append(f"emotional_trace.{name}")
    return changed


def read_memory_record(data: Mapping[str, Any], max_content_chars: int | None = None) -> tuple[Memory, list[str]]:
    """An exported memory record as it may be stored: wrong types refused, values normalised as remember does.

    Returns the memory and the fields normalisation changed; raises RecordError naming every bad field.
    """
    return normalise_memory(read_strict(data, Memory), max_content_chars)


__all__ = [
    "EmotionalTrace",
    "MemoryLink",
    "RecordError",
    "converter",
    "memory_from_dict",
    "memory_to_dict",
    "normal_category",
    "normal_emotion",
    "normal_importance",
    "normal_secondary",
    "normal_tags",
    "normalise_memory",
    "read_memory_record",
    "read_strict",
    "strict_converter",
]
