"""Validate tool arguments against a tool's JSON Schema and explain violations without echoing values.

Messages name the parameter and the accepted form ("`n_results` must be an integer from 1 to 10"), never
the rejected value: it could be private.
"""

from __future__ import annotations

import copy
import math
import re
import unicodedata
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import jsonschema
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


_FORMAT_WORDS = {
    "date": "a date YYYY-MM-DD (e.g. 2026-11-22)",
    "date-time": "an ISO 8601 date and time with a time zone (e.g. 2026-11-22T14:05:00+09:00)",
    "email": "an e-mail address",
    "uri": "a URI",
}


def _type_word(schema_type: Any) -> str:
    if isinstance(schema_type, list):
        return " or ".join(_TYPE_WORDS.get(t, str(t)) for t in schema_type)
    return _TYPE_WORDS.get(str(schema_type), str(schema_type))


def _param(path: Sequence[Any]) -> str:
    name = ""
    for part in path:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name


def _bounds(schema: Mapping[str, Any]) -> str:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if low is not None and high is not None:
        return f"from {low} to {high}"
    if low is not None:
        return f"of at least {low}"
    if high is not None:
        return f"of at most {high}"
    return ""


def _string_form(low: int, high: int | None) -> str:
    """``a string``, ``a non-empty string of at most 40 characters``, ``a string of 3 to 8 characters``, ..."""
    if low > 1 and high is not None:
        return f"a string of {low} to {high} characters"
    if low > 1:
        return f"a string of at least {low} characters"
    text = "a non-empty string" if low == 1 else "a string"
    return f"{text} of at most {high} characters" if high is not None else text


def accepted_form(schema: Mapping[str, Any]) -> str:
    """A short description of what ``schema`` accepts."""
    if "enum" in schema:
        return "one of: " + ", ".join(str(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind in ("integer", "number"):
        bounds = _bounds(schema)
        if bounds:
            return f"{_type_word(kind)} {bounds}"
        description = schema.get("description")
        return f"{_type_word(kind)} ({description})" if description else _type_word(kind)
    if kind == "string":
        if schema.get("description") and ("format" in schema or "pattern" in schema):
            return str(schema["description"])
        if schema.get("format") in _FORMAT_WORDS:
            return _FORMAT_WORDS[str(schema["format"])]
        if "format" in schema or "pattern" in schema:
            return "a string in the documented format"
        return _string_form(schema.get("minLength") or 0, schema.get("maxLength"))
    if kind == "array":
        items = schema.get("items", {})
        count = ""
        if schema.get("minItems") is not None and schema.get("minItems") == schema.get("maxItems"):
            count = f"of exactly {schema['minItems']} "
        elif schema.get("maxItems") is not None:
            count = f"of at most {schema['maxItems']} "
        inner = accepted_form(items) if isinstance(items, Mapping) and items else "values"
        text = f"a list of {count}items, each {inner}" if not count else f"a list {count}items, each {inner}"
        if schema.get("description"):
            text += f" ({schema['description']})"
        return text
    if kind == "object" and schema.get("maxProperties") is not None:
        return f"{_type_word(kind)} of at most {schema['maxProperties']} keys"
    if kind is not None:
        return _type_word(kind)
    return str(schema.get("description", "a valid value"))


def _explain(error: ValidationError, root: Mapping[str, Any]) -> str:
    path = list(error.absolute_path)
    validator = error.validator
    instance: Any = error.instance
    error_schema: Any = error.schema
    if validator == "required":
        props = root.get("properties", {})
        required: Any = error.validator_value
        missing = [name for name in required if name not in (instance or {})]
        name = _param([*path, missing[0]]) if missing else _param(path)
        sub = props.get(missing[0], {}) if missing and not path else {}
        return (
            f"missing required parameter `{name}` ({accepted_form(sub)})"
            if sub
            else f"missing required parameter `{name}`"
        )
    if validator == "additionalProperties":
        allowed = sorted(error_schema.get("properties", {}))
        extra = sorted(set(instance) - set(allowed)) if isinstance(instance, Mapping) else []
        names = ", ".join(f"`{_param([*path, e])}`" for e in extra) or "a parameter"
        accepted = ", ".join(allowed) or "none"
        return f"unknown parameter {names}; accepted parameters: {accepted}"
    name = _param(path) or "arguments"
    schema = error_schema if isinstance(error_schema, Mapping) else {}
    if validator in ("minItems", "maxItems") and path:
        return f"`{name}` must be {accepted_form(schema)}"
    if path and len(path) >= 2 and isinstance(path[-1], int):
        parent_schema = _schema_at(root, path[:-1])
        if parent_schema:
            return f"`{_param(path[:-1])}` must be {accepted_form(parent_schema)}"
    return f"`{name}` must be {accepted_form(schema)}"


def _schema_at(root: Mapping[str, Any], path: Sequence[Any]) -> Mapping[str, Any] | None:
    node: Any = root
    for part in path:
        if isinstance(part, int):
            node = node.get("items") if isinstance(node, Mapping) else None
        else:
            node = node.get("properties", {}).get(part) if isinstance(node, Mapping) else None
        if node is None:
            return None
    return node if isinstance(node, Mapping) else None


def _is_date_time(value: object) -> bool:
    """``format: date-time`` (jsonschema checks it only when an optional package is installed)."""
    if isinstance(value, str):
        datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value)
    return True


def _format_checker() -> jsonschema.FormatChecker:
    checker = jsonschema.FormatChecker()
    checker.checks("date-time", raises=ValueError)(_is_date_time)
    return checker


_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Mn", "Me", "Zs", "Zl", "Zp"})
"""Controls, format characters (zero-width space and joiners, BOM, bidi marks, word joiner, ...), combining
marks with nothing to combine with, and separators: none is text on its own."""
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Letters and symbols that render as nothing: Hangul fillers and the blank Braille pattern."""


def is_blank(text: str) -> bool:
    """Whether ``text`` has nothing to read: empty, or only whitespace and invisible characters (``"\\u200b"``,
    ``" \\ufeff\\u2060 "``). Tools refuse such text like an empty string; the core already refuses it for every
    tool parameter that is not only whitespace (see :class:`ArgumentValidator`)."""
    return all(
        char.isspace() or char in _FILLERS or unicodedata.category(char) in _INVISIBLE_CATEGORIES for char in text
    )


INVISIBLE_ONLY = "must contain visible text, not only invisible characters (zero-width spaces, joiners, format marks)"


def _invisible_only(value: object) -> bool:
    """Non-empty text made of invisible characters, not all of it whitespace (whitespace alone is each tool's
    to refuse, with its own words)."""
    return isinstance(value, str) and bool(value.strip()) and is_blank(value)


UNSTORABLE = "must not contain the NUL character (U+0000) or a lone surrogate (U+D800-U+DFFF): text cannot keep them"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _unstorable(value: object) -> bool:
    """Text that no store, file or log keeps as it is: a NUL, or half of a surrogate pair."""
    return isinstance(value, str) and _UNSTORABLE.search(value) is not None


def _first_path(args: Mapping[str, Any], wrong: Callable[[object], bool]) -> list[Any] | None:
    """Where in the arguments (a path of keys and indexes) the first ``wrong`` value is, at any depth (a list of
    tags, an object of values), looking at no more than 10,000 values."""
    pending: deque[tuple[list[Any], Any]] = deque(([name], args[name]) for name in sorted(args))
    seen = 0
    while pending and seen < 10_000:
        path, value = pending.popleft()
        seen += 1
        if wrong(value):
            return path
        if len(path) > 64:
            continue
        if isinstance(value, Mapping):
            pending.extend(([*path, str(key)], item) for key, item in value.items())
        elif isinstance(value, list | tuple):
            pending.extend(([*path, index], item) for index, item in enumerate(value))
    return None


class ArgumentError(ValueError):
    """Arguments do not match the tool's schema; ``str()`` is the message for the agent."""


class ArgumentValidator:
    def __init__(self, schema: Mapping[str, Any]) -> None:
        Draft202012Validator.check_schema(schema)
        self.schema = schema
        self._validator = Draft202012Validator(schema, format_checker=_format_checker())
        self._defaults = {
            name: prop["default"]
            for name, prop in schema.get("properties", {}).items()
            if isinstance(prop, Mapping) and "default" in prop
        }

    def validate(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Return the arguments with top-level defaults filled in, or raise :class:`ArgumentError`."""
        args = dict(arguments or {})
        for name, value in sorted(args.items()):
            if not _finite(value):
                raise ArgumentError(f"`{name}`: NaN and infinity are not accepted; expected finite numbers")
        for wrong, message in ((_unstorable, UNSTORABLE), (_invisible_only, INVISIBLE_ONLY)):
            where = _first_path(args, wrong)
            if where is not None:
                raise ArgumentError(f"`{_param(where)}` {message}")
        errors = list(self._validator.iter_errors(args))
        if errors:
            by_parameter: dict[str, list[ValidationError]] = {}
            for error in errors:
                key = str(error.absolute_path[0]) if error.absolute_path else f"_{error.validator}"
                by_parameter.setdefault(key, []).append(error)
            messages = []
            for key in sorted(by_parameter)[:3]:
                best = jsonschema.exceptions.best_match(by_parameter[key]) or by_parameter[key][0]
                message = _explain(best, self.schema)
                if message not in messages:
                    messages.append(message)
            raise ArgumentError("; ".join(messages))
        for name, default in self._defaults.items():
            if name not in args or args[name] is None:
                args[name] = copy.deepcopy(default)
        return args


def _finite(value: object, depth: int = 0) -> bool:
    """No NaN or infinity anywhere in a JSON value (nesting beyond 64 levels is the schema's to refuse)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if depth > 64:
        return True
    if isinstance(value, Mapping):
        return all(_finite(v, depth + 1) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_finite(v, depth + 1) for v in value)
    return True
