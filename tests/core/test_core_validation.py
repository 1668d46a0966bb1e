"""Argument validation: messages name the parameter and the accepted form, and never echo a value."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ego_core.mcp.validation import ArgumentError, ArgumentValidator, accepted_form, is_blank

REMEMBER_LIKE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "content": {"type": "string", "minLength": 1, "maxLength": 2000},
        "emotion": {"type": "string", "enum": ["joy", "sadness", "neutral"], "default": "neutral"},
        "intensity": {"type": "number", "minimum": 0, "maximum": 1},
        "importance": {"type": "integer", "minimum": 1, "maximum": 5, "default": 3},
        "n_results": {"type": "integer", "minimum": 1, "maximum": 10},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 30}, "maxItems": 5, "default": []},
        "valence_range": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
        "private": {"type": "boolean"},
        "date_from": {
            "type": "string",
            "format": "date-time",
            "description": "an ISO 8601 date-time such as 2025-01-31T09:00:00+09:00",
        },
        "code": {"type": "string", "pattern": "^[a-z]{3}$"},
        "body_state": {
            "type": "object",
            "properties": {"load": {"type": "number"}},
            "additionalProperties": False,
        },
    },
    "required": ["content"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def validator() -> ArgumentValidator:
    return ArgumentValidator(REMEMBER_LIKE)


def message(validator: ArgumentValidator, args: dict[str, Any]) -> str:
    with pytest.raises(ArgumentError) as info:
        validator.validate(args)
    return str(info.value)


def test_valid_arguments_get_top_level_defaults(validator: ArgumentValidator) -> None:
    args = validator.validate({"content": "hello"})
    assert args == {"content": "hello", "emotion": "neutral", "importance": 3, "tags": []}
    # defaults are copies: changing one result does not change the schema's default
    args["tags"].append("x")
    assert validator.validate({"content": "hi"})["tags"] == []
    # given values win over defaults
    assert validator.validate({"content": "hi", "importance": 5})["importance"] == 5


def test_none_arguments_mean_no_arguments() -> None:
    assert ArgumentValidator({"type": "object", "properties": {}}).validate(None) == {}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, "missing required parameter `content` (a non-empty string of at most 2000 characters)"),
        ({"content": ""}, "`content` must be a non-empty string of at most 2000 characters"),
        ({"content": "x", "n_results": 11}, "`n_results` must be an integer from 1 to 10"),
        ({"content": "x", "n_results": "three"}, "`n_results` must be an integer from 1 to 10"),
        ({"content": "x", "intensity": 2}, "`intensity` must be a number from 0 to 1"),
        ({"content": "x", "emotion": "rage"}, "`emotion` must be one of: joy, sadness, neutral"),
        ({"content": "x", "private": "yes"}, "`private` must be true or false"),
        ({"content": "x", "tags": "a,b"}, "`tags` must be a list of at most 5 items, each a string"),
        ({"content": "x", "tags": ["a", 3]}, "`tags` must be a list of at most 5 items, each a string"),
        ({"content": "x", "valence_range": [0.1]}, "`valence_range` must be a list of exactly 2 items, each a number"),
        ({"content": "x", "date_from": "yesterday"}, "`date_from` must be an ISO 8601 date-time"),
        ({"content": "x", "code": "ABCD"}, "`code` must be a string in the documented format"),
        ({"content": "x", "colour": "red"}, "unknown parameter `colour`; accepted parameters: body_state, code"),
        ({"content": "x", "body_state": {"mood": 1}}, "unknown parameter `body_state.mood`; accepted parameters: load"),
    ],
)
def test_messages_name_the_parameter_and_the_accepted_form(
    validator: ArgumentValidator, args: dict[str, Any], expected: str
) -> None:
    assert expected in message(validator, args)


def test_an_unbounded_number_with_a_description_is_explained_without_the_value() -> None:
    validator = ArgumentValidator(
        {"type": "object", "properties": {"importance": {"type": "integer", "description": "1-5"}}}
    )
    text = message(validator, {"importance": "very, very important"})
    assert text == "`importance` must be an integer (1-5)"


def test_several_problems_are_reported_together(validator: ArgumentValidator) -> None:
    text = message(validator, {"content": "x", "n_results": 0, "intensity": -1})
    assert "`n_results`" in text
    assert "`intensity`" in text


@pytest.mark.parametrize(
    "secret",
    ["my diary: I lied to Aiko", "sk-live-0123456789abcdefghijkl", "2025-99-99", "ABCD"],
)
def test_a_rejected_value_is_never_echoed(validator: ArgumentValidator, secret: str) -> None:
    for args in (
        {"content": 7, "code": secret},
        {"content": "x", "emotion": secret},
        {"content": "x", "date_from": secret},
        {"content": "x", "n_results": secret},
        {"content": "x", "tags": [secret, 1]},
        {"content": "x", "body_state": {"load": secret}},
        {"content": secret * 2001},
    ):
        assert secret not in message(validator, args)


def test_accepted_form_descriptions() -> None:
    assert accepted_form({"type": "integer", "minimum": 1}) == "an integer of at least 1"
    assert accepted_form({"type": "number", "maximum": 1}) == "a number of at most 1"
    assert accepted_form({"type": "string", "minLength": 1, "maxLength": 8000}) == (
        "a non-empty string of at most 8000 characters"
    )
    assert accepted_form({"type": "string", "minLength": 1}) == "a non-empty string"
    assert accepted_form({"type": "string", "maxLength": 30}) == "a string of at most 30 characters"
    assert accepted_form({"type": "string", "minLength": 3}) == "a string of at least 3 characters"
    assert accepted_form({"type": "string", "minLength": 3, "maxLength": 8}) == "a string of 3 to 8 characters"
    # a number without bounds says what its description says
    assert accepted_form({"type": "integer", "description": "1-5"}) == "an integer (1-5)"
    assert accepted_form({"type": "number", "description": "seconds"}) == "a number (seconds)"
    assert accepted_form({"type": "integer", "minimum": 1, "maximum": 5, "description": "1-5"}) == (
        "an integer from 1 to 5"
    )
    assert accepted_form({"type": ["string", "null"]}) == "a string or null"
    assert accepted_form({"enum": [1, 2]}) == "one of: 1, 2"
    assert accepted_form({"description": "a memory id"}) == "a memory id"


def test_an_invalid_schema_is_refused_when_the_tool_is_registered() -> None:
    from jsonschema.exceptions import SchemaError

    with pytest.raises(SchemaError):
        ArgumentValidator({"type": "object", "properties": {"n": {"type": "integr"}}})


# --------------------------------------------------------------------------------------------------
# Fuzzing: arbitrary JSON-ish arguments never crash the validator, and never come back in the message.

MARK = "\u2603v"  # every generated string value starts with this; no schema or message text contains it

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**12), max_value=10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20).map(lambda s: MARK + s),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(["load", "x", "mood", "0"]), children, max_size=3)
    ),
    max_leaves=12,
)
names = st.sampled_from(sorted(REMEMBER_LIKE["properties"])) | st.from_regex(r"[a-z_]{1,8}", fullmatch=True)


FUZZ_VALIDATOR = ArgumentValidator(REMEMBER_LIKE)


def string_values(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in string_values(v)]
    if isinstance(value, list):
        return [s for v in value for s in string_values(v)]
    return []


def rejection(validator: ArgumentValidator, args: dict[str, Any]) -> str | None:
    """The message for ``args``, or ``None`` when they are valid (then the result must still be JSON)."""
    try:
        result = validator.validate(args)
    except ArgumentError as exc:
        return str(exc)
    json.dumps(result)
    return None


@settings(max_examples=150, deadline=None)
@given(args=st.dictionaries(names, values, max_size=6))
def test_fuzzed_arguments_never_crash_and_never_echo(args: dict[str, Any]) -> None:
    text = rejection(FUZZ_VALIDATOR, args)
    if text is None:
        assert isinstance(args.get("content"), str)
        return
    assert text
    assert MARK not in text
    for value in string_values(args):
        assert value not in text


SCHEMAS = st.sampled_from(
    [
        ArgumentValidator(schema)
        for schema in (
            {"type": "object", "properties": {}, "additionalProperties": False},
            {"type": "object", "properties": {"ids": {"type": "array", "items": {"type": "string"}, "minItems": 1}}},
            {
                "type": "object",
                "properties": {"when": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]}},
                "required": ["when"],
            },
            {"type": "object", "properties": {"pair": {"type": "array", "prefixItems": [{"type": "string"}]}}},
            {"type": "object", "properties": {"n": {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 2}}},
            {"type": "object", "properties": {"x": {"oneOf": [{"type": "integer"}, {"type": "boolean"}]}}},
        )
    ]
)


@settings(max_examples=150, deadline=None)
@given(schema=SCHEMAS, args=st.dictionaries(st.sampled_from(["ids", "when", "pair", "n", "x", "y"]), values))
def test_fuzzed_arguments_against_other_schema_shapes(schema: ArgumentValidator, args: dict[str, Any]) -> None:
    text = rejection(schema, args) or ""
    assert MARK not in text


@pytest.mark.parametrize("invisible", ["\u200b", "\ufeff \u200c", "\u2060\n\u200d", "\u3164"])
def test_text_of_only_zero_width_characters_is_refused_for_every_tool(invisible: str) -> None:
    """A new user found `remember {"content":"\\u200b"}` was saved: the core refuses a string argument (or a list
    item) made only of invisible characters, whatever the tool, before its handler runs; whitespace alone stays
    the tool's to refuse, and text around a zero-width character passes."""
    schema = {"type": "object", "properties": {"note": {"type": "string"}, "words": {"type": "array"}}}
    checked = ArgumentValidator(schema)
    with pytest.raises(ArgumentError, match=r"^`note` must contain visible text, not only invisible characters"):
        checked.validate({"note": invisible})
    with pytest.raises(ArgumentError, match=r"^`words\[1\]` must contain visible text"):
        checked.validate({"words": ["fine", invisible]})
    with pytest.raises(ArgumentError, match=r"^`value.goals\[0\]` must contain visible text"):
        ArgumentValidator({"type": "object"}).validate({"value": {"goals": [invisible], "why": "fine"}})
    assert checked.validate({"note": "   "}) == {"note": "   "}
    assert checked.validate({"note": f"zero{invisible}width"}) == {"note": f"zero{invisible}width"}
    assert is_blank(invisible)
    assert is_blank("")
    assert not is_blank("\u200ba")
    assert not is_blank("、")


@pytest.mark.parametrize("text", ["nul\x00byte", "lone \ud800 surrogate", "\udfff", "雨\x00"])
def test_text_no_store_can_keep_is_refused_for_every_tool(text: str) -> None:
    """`remember {"content": "nul\\u0000byte"}` was saved with its NUL; a lone surrogate cannot be encoded
    for SQLite, a file or a log. Both are refused, anywhere in the arguments, before the handler runs."""
    checked = ArgumentValidator(
        {"type": "object", "properties": {"note": {"type": "string"}, "tags": {"type": "array"}}}
    )
    with pytest.raises(ArgumentError, match=r"^`note` must not contain the NUL character \(U\+0000\) or a lone"):
        checked.validate({"note": text})
    with pytest.raises(ArgumentError, match=r"^`tags\[0\]` must not contain"):
        checked.validate({"tags": [text]})
    assert checked.validate({"note": "\U0001f600 雨\t\n"}) == {"note": "\U0001f600 雨\t\n"}  # a pair is whole
