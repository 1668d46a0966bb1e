"""update_self: typed fields, and a refused update changes nothing, byte for byte."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from self_model_support import export_lines, question_id, state_files

from ego_core import PluginHost
from ego_core.testing import ToolRunner, call_error, call_ok, mcp_client, tool_text
from ego_self_model import UPDATE_SELF_FIELDS

FORM_WORDS = {
    "preferences": "a string (adds one item) or a list",
    "values": "a string (adds one item) or a list",
    "goals": "a string (adds one item) or a list",
    "identity": "a string (adds one item) or a list",
    "skill_confidence": "numbers from 0 to 1",
    "growth_log": "a string of 1 to 300 characters",
    "new_question": '"question"',
    "resolve_question": '"q_" + 12 hex digits',
    "question_importance": "<integer 1-5>",
}

WRONG: list[tuple[str, Any]] = [
    ("preferences", 7),
    ("preferences", {"tea": True}),
    ("preferences", ["fine", 3]),
    ("preferences", ""),
    ("values", None),
    ("values", ["x" * 301]),
    ("goals", [f"goal {n}" for n in range(21)]),
    ("values", ["a"] * 21),
    ("identity", ["静か", "静か", "しずか"] * 7),
    ("identity", True),
    ("skill_confidence", 0.5),
    ("skill_confidence", {"python": 1.5}),
    ("skill_confidence", {"python": "high"}),
    ("skill_confidence", {"python": True}),
    ("skill_confidence", {}),
    ("skill_confidence", ["python"]),
    ("growth_log", ["learned"]),
    ("growth_log", 3),
    ("new_question", ["Why?"]),
    ("new_question", {"question": "Why?", "importance": 6}),
    ("new_question", {"question": "Why?", "importance": "high"}),
    ("new_question", {"question": "Why?", "importance": 2.5}),
    ("new_question", {"question": "   "}),
    ("new_question", {"text": "Why?"}),
    ("new_question", {"question": "Why?", "importance": 3, "extra": 1}),
    ("resolve_question", "Q_123"),
    ("resolve_question", {"answer": "yes"}),
    ("resolve_question", 12),
    ("question_importance", {"id": "q_000000000000"}),
    ("question_importance", {"id": "q_000000000000", "importance": 0}),
    ("question_importance", "q_000000000000"),
]


async def seed(client: Any) -> str:
    """A self-model with something in every field, so that a refused update has something to spoil."""
    for field, value in [
        ("preferences", "quiet mornings"),
        ("values", ["honesty", "curiosity"]),
        ("goals", "learn to write haiku"),
        ("identity", "I am a patient companion who likes slow questions."),
        ("skill_confidence", {"python": 0.8, "poetry": 0.3}),
        ("growth_log", "I stopped apologising for silences."),
    ]:
        await call_ok(client, "update_self", {"field": field, "value": value})
    text = await call_ok(client, "update_self", {"field": "new_question", "value": {"question": "What is home?"}})
    return question_id(text)


@pytest.mark.anyio
@pytest.mark.parametrize(("field", "value"), WRONG, ids=[f"{f}-{i}" for i, (f, _v) in enumerate(WRONG)])
async def test_a_wrong_value_is_refused_naming_field_and_form_and_nothing_changes(
    self_host: Callable[..., PluginHost], ego_settings: Any, tmp_path: Path, field: str, value: Any
) -> None:
    host = self_host()
    async with mcp_client(host) as client:
        await seed(client)
        before_files = state_files(ego_settings.data_dir)
        before_export = export_lines(host, tmp_path / "before.jsonl")
        text = await call_error(client, "update_self", {"field": field, "value": value})
        assert f"for field {field}" in text
        assert FORM_WORDS[field] in text
        assert "`value`" in text
        assert state_files(ego_settings.data_dir) == before_files
        assert export_lines(host, tmp_path / "after.jsonl") == before_export


@pytest.mark.anyio
@pytest.mark.parametrize("field", ["nope", "Preferences", "trust_level", ""])
async def test_an_unknown_field_is_refused_listing_the_fields_and_nothing_changes(
    self_host: Callable[..., PluginHost], ego_settings: Any, tmp_path: Path, field: str
) -> None:
    host = self_host()
    async with mcp_client(host) as client:
        await seed(client)
        before_files = state_files(ego_settings.data_dir)
        before_export = export_lines(host, tmp_path / "before.jsonl")
        text = await call_error(client, "update_self", {"field": field, "value": "anything"})
        assert "`field` must be one of: " + ", ".join(UPDATE_SELF_FIELDS) in text
        assert state_files(ego_settings.data_dir) == before_files
        assert export_lines(host, tmp_path / "after.jsonl") == before_export


@pytest.mark.anyio
async def test_a_private_looking_value_is_never_echoed(self_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(self_host()) as client:
        text = await call_error(client, "update_self", {"field": "skill_confidence", "value": "my diary says hi"})
        assert "diary" not in text
        text = await call_error(client, "update_self", {"field": "values", "value": ["ok", "s3cret-thought" * 40]})
        assert "s3cret" not in text


@pytest.mark.anyio
async def test_every_field_takes_its_form(self_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(self_host()) as client:
        added = await call_ok(client, "update_self", {"field": "values", "value": "  honesty \n"})
        assert added.startswith('Added to values: "honesty" (1 in all).')
        again = await call_ok(client, "update_self", {"field": "values", "value": "HONESTY"})
        assert again.startswith("values already holds that; nothing changed.")
        replaced = await call_ok(client, "update_self", {"field": "values", "value": ["care", "Care", "wit"]})
        assert replaced.startswith("values now holds 2 item(s).")
        cleared = await call_ok(client, "update_self", {"field": "goals", "value": []})
        assert cleared.startswith("goals cleared.")
        skills = await call_ok(client, "update_self", {"field": "skill_confidence", "value": {"Python": 0.9}})
        assert "Python confident (0.90)" in skills
        dropped = await call_ok(
            client, "update_self", {"field": "skill_confidence", "value": {"python": None, "poetry": 0.1}}
        )
        assert "python dropped" in dropped
        assert "poetry unsure (0.10)" in dropped
        growth = await call_ok(client, "update_self", {"field": "growth_log", "value": "Learned to wait."})
        assert growth.startswith("Growth noted (1 in your log).")
        await call_ok(client, "update_self", {"field": "identity", "value": "I listen before I answer."})
        introspect = await call_ok(client, "introspect")
    line = next(line for line in introspect.splitlines() if line.startswith("Who you are becoming:"))
    assert '"I listen before I answer."' in line
    assert "values: wit, care" in line
    assert "skills: poetry (unsure)" in line
    assert 'latest growth (just now): "Learned to wait."' in line


@pytest.mark.anyio
async def test_a_full_list_refuses_one_more_item_and_keeps_the_list(
    self_host: Callable[..., PluginHost], ego_settings: Any
) -> None:
    async with mcp_client(self_host(max_list_items=2)) as client:
        await call_ok(client, "update_self", {"field": "goals", "value": ["one", "two"]})
        before = state_files(ego_settings.data_dir)
        text = await call_error(client, "update_self", {"field": "goals", "value": "three"})
        assert "at most 2 items" in text
        assert "three" not in text
        assert state_files(ego_settings.data_dir) == before
        assert "goals: two, one" in await call_ok(client, "introspect")


def test_non_finite_numbers_are_refused(runner: ToolRunner) -> None:
    for value in (math.nan, math.inf, -math.inf):
        result = anyio.run(runner.call, "update_self", {"field": "skill_confidence", "value": {"python": value}})
        assert result.is_error
        assert "NaN and infinity are not accepted" in tool_text(result)  # refused before the plugin sees it
        result = anyio.run(
            runner.call, "update_self", {"field": "new_question", "value": {"question": "Q?", "importance": value}}
        )
        assert result.is_error
    assert "skill" not in tool_text(anyio.run(runner.call, "introspect", {}))


# finite numbers: NaN and infinity are refused by the core before the plugin sees them (tested above)
FINITE = st.floats(allow_nan=False, allow_infinity=False)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | FINITE | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=6,
)


@pytest.fixture
def runner(self_host: Callable[..., PluginHost]) -> ToolRunner:
    host = self_host()
    host.start()
    return ToolRunner(host)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(UPDATE_SELF_FIELDS), value=JSON)
def test_any_value_is_either_stored_or_refused_naming_the_field(
    runner: ToolRunner, ego_settings: Any, field: str, value: Any
) -> None:
    before = state_files(ego_settings.data_dir)
    result = anyio.run(runner.call, "update_self", {"field": field, "value": value})
    text = tool_text(result)
    assert "Internal error" not in text
    if result.is_error:
        # the core refuses text of only invisible characters (a lone "\x1b", "\u200b") before the tool runs
        named = (f"for field {field}", "No question", "must contain visible text, not only invisible characters")
        assert any(words in text for words in named), text
        assert state_files(ego_settings.data_dir) == before


@pytest.mark.anyio
async def test_a_list_is_limited_as_sent_though_repeats_are_dropped_after(
    self_host: Callable[..., PluginHost], ego_settings: Any
) -> None:
    """A user found: 21 copies of one value were accepted (repeats dropped first, then the limit of 20 checked)
    and the stored values replaced by a single item."""
    async with mcp_client(self_host()) as client:
        await call_ok(client, "update_self", {"field": "values", "value": ["誠実", "好奇心"]})
        before = state_files(ego_settings.data_dir)
        text = await call_error(client, "update_self", {"field": "values", "value": ["a"] * 21})
        assert "Invalid arguments" in text
        assert "a list of at most 20 strings" in text
        assert state_files(ego_settings.data_dir) == before
        assert "values: 好奇心, 誠実" in await call_ok(client, "introspect")
        await call_ok(client, "update_self", {"field": "values", "value": ["正直"] * 20})
        assert "values: 正直" in await call_ok(client, "introspect")
