"""Every argument that reaches storage is bounded: in the tool schemas, in remember's handler and in ``ego import``.

One remember with thousands of tags used to break the vector index for good; a megabyte of body state was stored
as given. Both are refused with an error naming the limit, and the store keeps working.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from memory_support import saved_id

from ego_core import ToolError
from ego_core.testing import PortableError, call_error, call_ok, export_file, import_file, mcp_client
from ego_memory.exchange.portable import check_records
from ego_memory.record.limits import (
    MAX_BODY_STATE_CHARS,
    MAX_BODY_STATE_DEPTH,
    MAX_BODY_STATE_KEYS,
    MAX_LABEL_CHARS,
    MAX_SECONDARY,
    MAX_TAG_CHARS,
    MAX_TAGS,
)

if TYPE_CHECKING:
    from conftest import MemoryHosts

MEGABYTE = 1_000_000


def nested(depth: int) -> dict[str, Any]:
    state: dict[str, Any] = {"level": depth}
    for level in range(depth - 1, 0, -1):
        state = {"level": level, "inner": state}
    return state


OVERSIZED: list[tuple[str, dict[str, Any], list[str]]] = [
    # name, extra remember arguments, parts of the error naming the limit
    ("10,000 tags", {"tags": [f"tag-{i}" for i in range(10_000)]}, ["`tags`", f"at most {MAX_TAGS} items"]),
    ("a long tag", {"tags": ["x" * 1000]}, ["`tags`", f"at most {MAX_TAG_CHARS} characters"]),
    (
        "too many secondary emotions",
        {"secondary": ["happy"] * (MAX_SECONDARY + 1)},
        ["`secondary`", f"at most {MAX_SECONDARY} items"],
    ),
    ("a long secondary emotion", {"secondary": ["s" * 500]}, ["`secondary`", f"at most {MAX_LABEL_CHARS} characters"]),
    ("a long emotion", {"emotion": "e" * 5000}, ["`emotion`", f"at most {MAX_LABEL_CHARS} characters"]),
    ("a long category", {"category": "c" * 5000}, ["`category`", f"at most {MAX_LABEL_CHARS} characters"]),
    ("a 1 MB body_state", {"body_state": {"blob": "x" * MEGABYTE}}, ["`body_state`", f"{MAX_BODY_STATE_CHARS}"]),
    (
        "a 1 MB body_state of many keys",
        {"body_state": {f"key{i}": "x" * 100 for i in range(10_000)}},
        ["`body_state`", f"at most {MAX_BODY_STATE_KEYS}"],
    ),
    (
        "a deeply nested body_state",
        {"body_state": nested(50)},  # the MCP client cannot send 3,000 levels; the import test below does
        ["`body_state`", f"at most {MAX_BODY_STATE_DEPTH} levels"],
    ),
]


@pytest.mark.anyio
async def test_oversized_arguments_are_refused_naming_the_limit_and_the_store_keeps_working(
    memory_hosts: MemoryHosts,
) -> None:
    host, plugin = memory_hosts()
    memories = plugin._require()
    plugin._tools()
    async with mcp_client(host) as client:
        before = saved_id(await call_ok(client, "remember", {"content": "The lighthouse keeper waved at us."}))
        problems = []
        for name, extra, parts in OVERSIZED:
            text = await call_error(client, "remember", {"content": f"An ordinary memory ({name}).", **extra})
            missing = [part for part in parts if part not in text]
            if missing or "tag-9999" in text or "xxxxxxxx" in text:
                problems.append(f"{name}: {text!r}")
        assert problems == []
        assert memories.count() == 1
        assert memories.store.integrity_problems() == []

        # the store keeps working: the largest accepted values are stored and found again
        fits = {
            "content": "The ferry horn sounded twice over the grey water.",
            "tags": [f"t{i:02d}-" + "y" * (MAX_TAG_CHARS - 4) for i in range(MAX_TAGS)],
            "secondary": ["sad", "happy", "moved"],
            "body_state": {"time_phase": "evening", "detail": {"load": {"cpu": [0.3, 0.4]}}},
        }
        after = saved_id(await call_ok(client, "remember", fits))
        found = await call_ok(client, "search_memories", {"context": "the ferry horn over grey water"})
        assert found.splitlines()[1].startswith(after)
        assert before in await call_ok(client, "search_memories", {"context": "lighthouse keeper"})
    stored = memories.store.get_one(after)
    assert stored is not None
    assert len(stored.tags) == MAX_TAGS
    assert memories.store.integrity_problems() == []


def test_the_handler_refuses_what_the_schema_cannot_say(memory_hosts: MemoryHosts) -> None:
    """Depth, size and non-finite numbers are checked by remember itself (also when called without the schema)."""
    host, plugin = memory_hosts()
    ctx = host.context("memory")
    memories = plugin._require()
    tools = plugin._tools()
    for args, parts in (
        ({"body_state": nested(MAX_BODY_STATE_DEPTH + 1)}, [f"at most {MAX_BODY_STATE_DEPTH} levels"]),
        ({"body_state": {"load": float("nan")}}, ["finite"]),
        ({"intensity": float("nan")}, ["`intensity`", "finite"]),
        ({"valence": float("inf")}, ["`valence`", "finite"]),
        ({"tags": ["a"] * (MAX_TAGS + 1)}, ["`tags`", f"at most {MAX_TAGS} items"]),
    ):
        with pytest.raises(ToolError) as refused:
            tools.remember({"content": "A memory with one bad argument.", **args}, ctx)
        assert all(part in refused.value.message for part in parts), refused.value.message
    assert memories.count() == 0
    assert tools.remember({"content": "Nested just enough.", "body_state": nested(MAX_BODY_STATE_DEPTH)}, ctx).data
    saved = tools.remember({"content": "A 5,000-digit importance.", "importance": 10**5000, "force": True}, ctx)
    stored = memories.store.get_one(saved.data.split("(id: ")[1][:16])
    assert stored is not None
    assert stored.importance == 5


def bounded(schema: Mapping[str, Any]) -> list[str]:
    """The properties of a schema (at any depth) that could hold an unbounded amount."""
    loose = []
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type")
        if kind == "string" and "maxLength" not in prop and "enum" not in prop and "format" not in prop:
            loose.append(name)
        if kind == "array":
            if "maxItems" not in prop:
                loose.append(name)
            items = prop.get("items", {})
            if items.get("type") == "string" and "maxLength" not in items and "pattern" not in items:
                loose.append(f"{name}[]")
        if kind == "object" and "maxProperties" not in prop:
            loose.append(name)
    return loose


def test_the_remember_schema_bounds_every_property(memory_hosts: MemoryHosts) -> None:
    host, _plugin = memory_hosts(start=False)
    schemas = {tool.name: tool.input_schema for _plugin, tool in host.tools()}
    # body_state: keys, depth and size are checked by remember itself, whose error names each bound
    assert bounded(schemas["remember"]) == ["body_state"]
    assert bounded(schemas["create_episode"]) == ["memory_ids[]"]  # ids are checked for their form first


@pytest.mark.anyio
async def test_a_list_given_as_a_string_is_explained_in_words(memory_hosts: MemoryHosts) -> None:
    host, _plugin = memory_hosts()
    async with mcp_client(host) as client:
        tags = await call_error(client, "remember", {"content": "Fine text.", "tags": "work,infra"})
        members = await call_error(client, "create_episode", {"memory_ids": "mem_0123456789ab", "summary": "x"})
    assert f"`tags` must be a list of at most {MAX_TAGS} items, each a string of at most {MAX_TAG_CHARS}" in tags
    assert "`memory_ids` must be a list of at most 200 items" in members
    assert "a list items" not in tags + members


@pytest.mark.anyio
async def test_a_whitespace_only_content_is_refused_in_the_form_of_every_argument_error(
    memory_hosts: MemoryHosts,
) -> None:
    host, _plugin = memory_hosts()
    async with mcp_client(host) as client:
        blank = await call_error(client, "remember", {"content": " \n\t "})
        empty = await call_error(client, "remember", {"content": ""})
        typed = await call_error(client, "remember", {"content": "Fine text.", "importance": "high"})
        context = await call_error(client, "recall", {"context": "   "})
    for text in (blank, empty, typed):
        assert text.startswith("Invalid arguments for remember: `"), text
        assert text.endswith(". Fix the call and try again."), text
    assert blank == empty
    assert "`content` must contain text" in blank
    assert (
        context
        == "Invalid arguments for recall: `context` must contain text, not only whitespace. Fix the call and try again."
    )


INVISIBLE = ["\u200b", " \u200b\ufeff\n", "\u2060\u200d", "\u3164", "\u200e\u0301"]
"""Zero-width space, BOM, word joiner, zero-width joiner, a Hangul filler, a bidi mark with a lone accent."""


@pytest.mark.anyio
@pytest.mark.parametrize("invisible", INVISIBLE, ids=[f"{text!r}" for text in INVISIBLE])
async def test_remember_refuses_content_of_only_zero_width_characters(
    memory_hosts: MemoryHosts, invisible: str
) -> None:
    """A new user found: `remember {"content":"\u200b"}` was saved. Text of only invisible characters is refused
    like whitespace, by remember and by every other tool that takes text (the core's check, before any tool
    runs), and by `ego import`; the handler refuses it too when called without the schema."""
    host, plugin = memory_hosts()
    ctx = host.context("memory")
    memories = plugin._require()
    tools = plugin._tools()
    async with mcp_client(host) as client:
        kept = saved_id(await call_ok(client, "remember", {"content": "The tide came in\u200b over the flats."}))
        refused = {
            "remember": await call_error(client, "remember", {"content": invisible}),
            "recall": await call_error(client, "recall", {"context": invisible}),
            "search_memories": await call_error(client, "search_memories", {"context": invisible}),
            "create_episode": await call_error(client, "create_episode", {"memory_ids": [kept], "summary": invisible}),
            "tags": await call_error(client, "remember", {"content": "Fine text.", "tags": ["ok", invisible]}),
        }
    for tool, text in refused.items():
        assert text.startswith("Invalid arguments for "), (tool, text)
        assert "must contain" in text, (tool, text)
        assert text.endswith("Fix the call and try again."), (tool, text)
        assert invisible not in text
    assert "`content` must contain visible text, not only invisible characters" in refused["remember"]
    assert "`tags[1]` must contain visible text" in refused["tags"]
    assert memories.count() == 1  # only the memory with real text around its zero-width space
    with pytest.raises(ToolError, match="`content`"):
        tools.remember({"content": invisible}, ctx)
    problems = check_records([{"type": "meta", "record_version": 1}, record(content=invisible)])
    assert any("`content`: must contain text" in problem for problem in problems), problems
    assert memories.count() == 1


# ---------------------------------------------------------------------------------------------------
# ego import: the same bounds


def record(**fields: Any) -> dict[str, Any]:
    return {
        "type": "memory",
        "id": "mem_0123456789ab",
        "content": "The harbour lights came on one by one.",
        "timestamp": "2026-05-01T09:30:00+00:00",
        **fields,
    }


def test_check_records_refuses_oversized_fields_naming_the_limit() -> None:
    trace = {"primary": "happy"}
    cases = [
        (record(tags=[f"tag-{i}" for i in range(10_000)]), f"`tags`: must be a list of at most {MAX_TAGS} items"),
        (record(emotional_trace={**trace, "body_state": {"blob": "x" * MEGABYTE}}), str(MAX_BODY_STATE_CHARS)),
        (record(emotional_trace={**trace, "body_state": nested(3000)}), f"at most {MAX_BODY_STATE_DEPTH} levels"),
        (
            record(emotional_trace={"primary": "p" * 100}),
            f"`emotional_trace.primary`: must be at most {MAX_LABEL_CHARS}",
        ),
        (record(emotional_trace={**trace, "secondary": ["sad"] * 13}), "`emotional_trace.secondary`: must be a list"),
        (record(category="c" * 100), f"`category`: must be at most {MAX_LABEL_CHARS} characters"),
        (
            record(links=[{"target_id": "mem_ba9876543210", "note": "n" * 1000}]),
            "`links`: each note must be at most 200 characters",
        ),
        (
            {
                "type": "episode",
                "id": "ep_0123456789ab",
                "summary": "s" * 5000,
                "memory_ids": ["mem_0123456789ab"],
                "start": "2026-05-01T09:30:00+00:00",
                "end": "2026-05-01T09:30:00+00:00",
                "importance": 3,
                "created": "2026-05-01T09:30:00+00:00",
            },
            "`summary`: must be at most 2000 characters",
        ),
    ]
    for bad, expected in cases:
        problems = check_records([{"type": "meta", "record_version": 1}, bad])
        assert any(expected in problem for problem in problems), (expected, problems)
        assert not any("xxxxxxxxxx" in problem or "tag-9999" in problem for problem in problems)
    assert check_records([{"type": "meta", "record_version": 1}, record(tags=["work"] * MAX_TAGS)]) == []


def test_an_import_with_an_oversized_record_changes_nothing(memory_hosts: MemoryHosts, tmp_path: Path) -> None:
    header = {"format": "ego-export", "version": 1, "include_private": True, "plugins": {"memory": "0.1.0"}}
    meta = {"plugin": "memory", "type": "meta", "record_version": 1, "embedding_model": "onnx:all-MiniLM-L6-v2"}
    body = [meta, {"plugin": "memory", **record(tags=[f"tag-{i}" for i in range(10_000)])}]
    end = {"format": "ego-export", "end": True, "records": {"memory": len(body)}}
    path = tmp_path / "oversized.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in [header, *body, end]), encoding="utf-8")
    host, plugin = memory_hosts(tmp_path / "data")
    ctx = host.context("memory")
    plugin._tools().remember({"content": "Here before the import.", "force": True}, ctx)
    export_file(host, tmp_path / "before.jsonl", include_private=True)
    with pytest.raises(PortableError) as refused:
        import_file(host, path)
    assert f"`tags`: must be a list of at most {MAX_TAGS} items" in str(refused.value)
    export_file(host, tmp_path / "after.jsonl", include_private=True)
    assert (tmp_path / "after.jsonl").read_text() == (tmp_path / "before.jsonl").read_text()
    assert plugin._require().store.integrity_problems() == []
