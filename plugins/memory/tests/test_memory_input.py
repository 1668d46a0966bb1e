"""Bad input through the MCP client: an ``isError`` result naming the parameter
and the accepted form, never echoing the rejected value, and nothing stored."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ego_core.testing import ToolRunner, mcp_client, tool_text

if TYPE_CHECKING:
    from conftest import MemoryHosts

LONG = "An overlong memory about the sea. " * 240  # 8160 characters

CASES: list[tuple[str, dict[str, Any], str, list[str], list[str]]] = [
    # tool, arguments, parameter, parts of the accepted form, values that must not be echoed
    ("remember", {"content": ""}, "content", ["empty"], []),
    ("remember", {"content": "   \n\t  "}, "content", ["text"], []),
    ("remember", {"content": LONG}, "content", ["8000"], ["An overlong memory"]),
    ("remember", {"content": "Fine text.", "importance": "high"}, "importance", ["integer"], ["high"]),
    ("remember", {"content": "Fine text.", "intensity": 3}, "intensity", ["from 0 to 1"], []),
    ("remember", {"content": "Fine text.", "valence": -4.5}, "valence", ["from -1 to 1"], ["4.5"]),
    ("remember", {"content": "Fine text.", "tags": "secret-tag-value"}, "tags", ["list"], ["secret-tag-value"]),
    ("remember", {"content": "Fine text.", "private": "yes-please"}, "private", ["true or false"], ["yes-please"]),
    (
        "remember",
        {"content": "Fine text.", "mood": "secret-mood-77"},
        "mood",
        ["accepted parameters"],
        ["secret-mood-77"],
    ),
    ("remember", {"importance": 3}, "content", ["missing"], []),
    ("recall", {"context": "the sea", "n_results": 500}, "n_results", ["from 1 to 10"], ["500"]),
    ("recall", {"context": "the sea", "n_results": 0}, "n_results", ["from 1 to 10"], []),
    ("recall", {"context": "the sea", "date_from": "yesterday"}, "date_from", ["YYYY-MM-DD"], ["yesterday"]),
    ("recall", {"context": "the sea", "date_from": "2025-02-30"}, "date_from", ["YYYY-MM-DD"], ["2025-02-30"]),
    (
        "recall",
        {"context": "the sea", "valence_range": [2, 3]},
        "valence_range",
        ["exactly 2", "from -1 to 1"],
        ["[2, 3]"],
    ),
    ("recall", {"context": "the sea", "arousal_range": [0.9, 0.1]}, "arousal_range", ["min", "max"], ["0.9"]),
    ("recall", {"context": "the sea", "valence_range": [0.5]}, "valence_range", ["exactly 2"], []),
    (
        "recall",
        {"context": "the sea", "emotion_filter": "furious-xyz"},
        "emotion_filter",
        ["happy", "frustrated"],
        ["furious-xyz"],
    ),
    (
        "recall",
        {"context": "the sea", "category_filter": "nonsense-cat"},
        "category_filter",
        ["daily", "lesson"],
        ["nonsense-cat"],
    ),
    (
        "recall",
        {"context": "the sea", "date_from": "2025-05-02", "date_to": "2025-05-01"},
        "date_to",
        ["date_from"],
        ["2025-05-01", "2025-05-02"],
    ),
    ("recall", {"context": "  "}, "context", ["text"], []),
    ("recall", {"context": "the sea", "since": "secret-since"}, "since", ["accepted parameters"], ["secret-since"]),
    ("search_memories", {"context": "the sea", "n_results": 11}, "n_results", ["from 1 to 10"], ["11"]),
]


@pytest.mark.anyio
async def test_bad_input_is_refused_clearly_and_stores_nothing(memory_hosts: MemoryHosts) -> None:
    host, plugin = memory_hosts()
    memories = plugin._require()
    plugin._tools()
    async with mcp_client(host) as client:
        seeded = await client.call_tool("remember", {"content": "The sea was calm this morning."})
        assert not seeded.is_error
        count = memories.count()
        problems = []
        for tool, arguments, parameter, accepted, rejected in CASES:
            result = await client.call_tool(tool, arguments)
            text = tool_text(result)
            wrong = [f"`{parameter}` not named"] if f"`{parameter}`" not in text else []
            wrong += [f"{part!r} missing" for part in accepted if part not in text]
            wrong += [f"{value!r} echoed" for value in rejected if value in text]
            if not result.is_error or "Internal error" in text:
                wrong.append("not a clean isError result")
            if wrong:
                problems.append(f"{tool} {parameter}: {', '.join(wrong)} in {text!r}")
        assert problems == []
        assert memories.count() == count
        assert memories.store.integrity_problems() == []


@pytest.mark.anyio
async def test_out_of_range_values_are_clamped_or_substituted_not_refused(memory_hosts: MemoryHosts) -> None:
    host, plugin = memory_hosts()
    memories = plugin._require()
    plugin._tools()
    async with mcp_client(host) as client:
        high = await client.call_tool("remember", {"content": "Importance nine.", "importance": 9})
        low = await client.call_tool("remember", {"content": "Importance minus two.", "importance": -2})
    assert not high.is_error
    assert not low.is_error
    stored = {m.content: m.importance for m in memories.store.latest(5)}
    assert stored == {"Importance nine.": 5, "Importance minus two.": 1}


# ---------------------------------------------------------------------------------------------------
# Fuzzed arguments: every call ends in a result or a clean error, never a crash

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
REMEMBER_KEYS = ["content", "emotion", "secondary", "intensity", "valence", "arousal", "importance", "category"]
RECALL_KEYS = ["context", "n_results", "emotion_filter", "category_filter", "date_from", "date_to", "valence_range"]


def plausible(keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    values = st.one_of(
        JSON,
        st.text(min_size=1, max_size=40),
        st.integers(min_value=-3, max_value=12),
        st.floats(min_value=-1.5, max_value=1.5),
        st.lists(st.floats(min_value=-1, max_value=1), min_size=2, max_size=2),
        st.dates().map(str),
        st.lists(st.sampled_from(["happy", "sad", "nope", ""]), max_size=3),
    )
    return st.dictionaries(st.sampled_from([*keys, "tags", "private", "force", "body_state", "extra"]), values)


@pytest.fixture(scope="module")
def runner(module_memory_hosts: MemoryHosts) -> ToolRunner:
    host, plugin = module_memory_hosts()
    ctx = host.context("memory")
    plugin._tools().remember({"content": "A seed memory about the harbour at dawn."}, ctx)
    return ToolRunner(host)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool=st.sampled_from(["remember", "recall", "search_memories"]), data=st.data())
def test_fuzzed_arguments_never_crash_a_tool(runner: ToolRunner, tool: str, data: st.DataObject) -> None:
    keys = REMEMBER_KEYS if tool == "remember" else RECALL_KEYS
    arguments = data.draw(plausible(keys))
    result = anyio.run(runner.call, tool, arguments)
    assert "Internal error" not in tool_text(result), (tool, arguments)
