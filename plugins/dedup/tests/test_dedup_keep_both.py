"""keep_both: a pair kept both of is never proposed again by consolidate; an owner tool by default (the
dashboard's merge review), offered to the agent with ``keep_both_tool``; forgotten memories leave their pairs;
the record survives a restart and goes through ``ego export`` / ``ego import``."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from dedup_support import PARAPHRASES, UNRELATED, remember, saved_id

from ego_core import PluginHost
from ego_core.testing import ToolRunner, call_error, call_ok, export_file, import_file, mcp_client, tool_text

pytestmark = pytest.mark.anyio

PAIR_LINE = re.compile(r"^- (mem_[0-9a-f]{12}) <-> (mem_[0-9a-f]{12}) \(similarity", re.MULTILINE)


def listed(text: str) -> set[frozenset[str]]:
    return {frozenset(match) for match in PAIR_LINE.findall(text)}


async def test_a_kept_pair_is_not_proposed_again_and_undo_brings_it_back(
    dedup_host: Callable[..., PluginHost],
) -> None:
    host = dedup_host()
    owner = ToolRunner(host, owner=True)
    async with mcp_client(host) as client:
        ids = [saved_id(await remember(client, content)) for content in (*PARAPHRASES, *UNRELATED)]
        assert "keep_both" not in {tool.name for tool in (await client.list_tools()).tools}
        assert (await call_error(client, "keep_both", {"a": ids[0], "b": ids[1]})).startswith("Unknown tool")
        before = listed(await call_ok(client, "consolidate"))
        assert frozenset((ids[0], ids[1])) in before

        kept = await owner.call("keep_both", {"a": ids[1], "b": ids[0]})
        again = await owner.call("keep_both", {"a": ids[0], "b": ids[1]})
        after = listed(await call_ok(client, "consolidate"))
        undone = await owner.call("keep_both", {"a": ids[0], "b": ids[1], "undo": True})
        restored = listed(await call_ok(client, "consolidate"))

    assert tool_text(kept) == f"Kept both: {ids[1]} and {ids[0]} are not proposed as a pair again."
    assert tool_text(again) == f"Already kept both: {ids[0]} and {ids[1]}. Nothing changed."
    assert after == before - {frozenset((ids[0], ids[1]))}
    assert tool_text(undone) == f"Undone: {ids[0]} and {ids[1]} may be proposed as a pair again."
    assert restored == before


async def test_offered_to_the_agent_when_configured_and_bad_calls_refused(
    dedup_host: Callable[..., PluginHost],
) -> None:
    host = dedup_host(keep_both_tool=True)
    async with mcp_client(host) as client:
        ids = [saved_id(await remember(client, content)) for content in PARAPHRASES[:2]]
        assert "keep_both" in {tool.name for tool in (await client.list_tools()).tools}
        assert (await call_ok(client, "keep_both", {"a": ids[0], "b": ids[1]})).startswith("Kept both:")
        same = await call_error(client, "keep_both", {"a": ids[0], "b": ids[0]})
        missing = await call_error(client, "keep_both", {"a": ids[0], "b": "mem_000000000000"})
        hostile = await call_error(client, "keep_both", {"a": ids[0], "b": "<b>x</b>"})
        not_kept = await call_error(client, "keep_both", {"a": ids[1], "b": "mem_000000000000", "undo": True})
    assert "a different memory than a" in same
    assert missing == "Memory not found: mem_000000000000"
    assert "<b>" not in hostile
    assert not_kept.startswith("Not kept: ")


async def test_forgetting_a_memory_drops_its_pairs_and_the_record_survives_a_restart(
    dedup_host: Callable[..., PluginHost], tmp_path: Path
) -> None:
    host = dedup_host()
    owner = ToolRunner(host, owner=True)
    async with mcp_client(host) as client:
        ids = [saved_id(await remember(client, content)) for content in PARAPHRASES]
        for a, b in ((ids[0], ids[1]), (ids[1], ids[2])):
            assert not (await owner.call("keep_both", {"a": a, "b": b})).is_error
        await call_ok(client, "forget", {"memory_id": ids[2]})
        reviews = host.services.get("dedup.reviews")
        assert reviews is not None
        assert [(a, b) for a, b, _at in reviews.newest(10)] == [tuple(sorted((ids[0], ids[1])))]
        exported = tmp_path / "export.jsonl"
        export_file(host, exported, include_private=True)
    assert '"type":"kept_pair"' in exported.read_text(encoding="utf-8")

    fresh = dedup_host()
    fresh.start()
    import_file(fresh, exported)
    again = fresh.services.get("dedup.reviews")
    assert again is not None
    assert again.kept_among([(ids[1], ids[0])]) == {tuple(sorted((ids[0], ids[1])))}
