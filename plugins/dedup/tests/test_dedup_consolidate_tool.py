"""Merge candidates through the real ``consolidate`` tool of the memory plugin."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from dedup_support import PARAPHRASES, UNRELATED, remember, saved_id

from ego_core import PluginHost
from ego_core.testing import SEPARATOR, mcp_client, tool_text, tools_named

pytestmark = pytest.mark.anyio

PAIR_LINE = re.compile(r"^- (mem_[0-9a-f]{12}) <-> (mem_[0-9a-f]{12}) \(similarity: 0\.8\d\)$", re.MULTILINE)
REVIEW = "Review each pair with recall. If one is redundant, use forget to remove it."
BOTH = "If both have value, consider which perspective to keep."


async def test_consolidate_lists_the_paraphrase_pairs(dedup_host: Callable[..., PluginHost]) -> None:
    """The paraphrases score 0.874-0.881 with use (dedup_support): saved, and listed at merge_threshold 0.85."""
    host = dedup_host()
    async with mcp_client(host) as client:
        ids = [saved_id(await remember(client, content)) for content in (*PARAPHRASES, *UNRELATED)]
        served = {tool.name for tool in (await client.list_tools()).tools}

        result = await client.call_tool("consolidate", {})

        assert not result.is_error
        text = tool_text(result)
        data, _, scaffold = text.partition(SEPARATOR)
        assert data.startswith("Consolidation complete.")
        assert "\nFound 3 near-duplicate pair(s):\n" in data
        pairs = {frozenset(match) for match in PAIR_LINE.findall(data)}
        assert pairs == {frozenset(p) for p in [(ids[0], ids[1]), (ids[0], ids[2]), (ids[1], ids[2])]}
        for content in PARAPHRASES:
            assert f"  A: {content}" in data or f"  B: {content}" in data
        for content in UNRELATED:
            assert content not in data
        assert REVIEW in scaffold.splitlines()
        assert BOTH in scaffold.splitlines()
        assert tools_named(text) <= served

        # the agent follows the scaffold: forgets one copy; the pairs it was part of are gone
        forgot = await client.call_tool("forget", {"memory_id": ids[1]})
        assert not forgot.is_error, tool_text(forgot)
        again = tool_text(await client.call_tool("consolidate", {}))
        assert "Found 1 near-duplicate pair(s):" in again
        assert {frozenset(match) for match in PAIR_LINE.findall(again)} == {frozenset((ids[0], ids[2]))}


async def test_consolidate_without_dedup_mentions_no_duplicates(
    memory_only_host: Callable[[], PluginHost],
) -> None:
    host = memory_only_host()
    async with mcp_client(host) as client:
        for content in (*PARAPHRASES, *UNRELATED):
            saved_id(await remember(client, content))
        text = tool_text(await client.call_tool("consolidate", {}))
    assert text.startswith("Consolidation complete.")
    assert "near-duplicate" not in text
    assert REVIEW not in text
    assert BOTH not in text
