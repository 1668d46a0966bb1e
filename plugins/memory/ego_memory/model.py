"""(De)serialisation of memories with cattrs: portable JSON for exports, imports and tests.

Timestamps are ISO 8601 with an offset (always UTC when written); lists stay lists; a record written by an
older version that lacks a field reads it with its default (``is_private`` absent → false).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

import cattrs

from ego_core.types import EmotionalTrace, Memory, MemoryLink


def _datetime(value: Any, _: type) -> datetime:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        moment = datetime.fromtimestamp(value, UTC)
    elif isinstance(value, str):
        moment = datetime.fromisoformat(value)
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


__all__ = ["EmotionalTrace", "MemoryLink", "converter", "memory_from_dict", "memory_to_dict"]
