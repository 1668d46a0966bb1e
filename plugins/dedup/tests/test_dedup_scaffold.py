"""Responses name only tools that are served, and disabling dedup removes every trace of the guard."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from dedup_support import NEAR_DUPLICATE, PARAPHRASES, UNRELATED, memory_config, remember, saved_id

from ego_core import Clock, PluginContext, PluginHost, ScaffoldLine, Tool, hookimpl
from ego_core.testing import SEPARATOR, HostFactory, mcp_client, tool_text, tools_named
from ego_dedup import GUARD_SCAFFOLD, NOT_SAVED, DedupPlugin
from ego_dedup.merge import REVIEW_WITH_RECALL, REVIEW_WITH_RECALL_AND_FORGET, review_scaffold
from ego_memory.plugin import MemoryPlugin

pytestmark = pytest.mark.anyio


class LimitedMemory(MemoryPlugin):
    """The memory plugin serving only some of its tools (as if the others were switched off)."""

    def __init__(self, served: set[str]) -> None:
        super().__init__()
        self.served = served

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None], ctx: PluginContext) -> None:
        super().register_tools(lambda tool: register(tool) if tool.name in self.served else None, ctx)


def test_lines_that_name_a_tool_declare_it() -> None:
    assert all(isinstance(line, str) and not tools_named(line) for line in GUARD_SCAFFOLD)
    assert REVIEW_WITH_RECALL_AND_FORGET.needs == frozenset({"recall", "forget"})
    assert REVIEW_WITH_RECALL.needs == frozenset({"recall"})
    for recall in (True, False):
        for forget in (True, False):
            for line in review_scaffold(recall=recall, forget=forget):
                text = line.text if isinstance(line, ScaffoldLine) else line
                needs = line.needs if isinstance(line, ScaffoldLine) else frozenset()
                assert tools_named(text) <= needs
                assert needs <= {name for name, on in (("recall", recall), ("forget", forget)) if on}


async def _responses(client: Any) -> list[str]:
    texts = [
        await remember(client, PARAPHRASES[0]),
        await remember(client, PARAPHRASES[0]),
        await remember(client, NEAR_DUPLICATE),
        await remember(client, PARAPHRASES[1]),
        await remember(client, PARAPHRASES[2]),
        await remember(client, UNRELATED[0]),
    ]
    consolidated = await client.call_tool("consolidate", {})
    assert not consolidated.is_error
    texts.append(tool_text(consolidated))
    return texts


async def test_every_tool_named_in_a_response_is_served(dedup_host: Callable[..., PluginHost]) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        served = {tool.name for tool in (await client.list_tools()).tools}
        texts = await _responses(client)
    assert {"remember", "recall", "forget", "consolidate"} <= served
    assert "use recall to review the existing memory" in texts[1]
    assert "Review each pair with recall. If one is redundant, use forget to remove it." in texts[-1]
    for text in texts:
        assert tools_named(text) <= served, text


async def test_without_recall_and_forget_the_responses_do_not_name_them(make_host: HostFactory, clock: Clock) -> None:
    host = make_host(
        {"memory": LimitedMemory({"remember", "consolidate"}), "dedup": DedupPlugin()},
        config=memory_config(),
        clock=clock,
    )
    async with mcp_client(host) as client:
        served = {tool.name for tool in (await client.list_tools()).tools}
        texts = await _responses(client)
    assert served == {"wake_up", "introspect", "attune", "remember", "consolidate"}
    refused = texts[1]
    assert refused.startswith(NOT_SAVED)
    assert (
        "\nIf this is a meaningful update, review the existing memory and consider whether the new perspective "
        f"adds value.{SEPARATOR}" in refused
    )
    scaffold = texts[-1].partition(SEPARATOR)[2].splitlines()
    assert "Review each pair and consider which to keep." in scaffold
    assert "If both have value, consider which perspective to keep." in scaffold
    for text in texts:
        assert tools_named(text) <= served, text


async def test_with_recall_but_without_forget(make_host: HostFactory, clock: Clock) -> None:
    host = make_host(
        {"memory": LimitedMemory({"remember", "recall", "consolidate"}), "dedup": DedupPlugin()},
        config=memory_config(),
        clock=clock,
    )
    async with mcp_client(host) as client:
        served = {tool.name for tool in (await client.list_tools()).tools}
        texts = await _responses(client)
    scaffold = texts[-1].partition(SEPARATOR)[2].splitlines()
    assert "Review each pair with recall and consider which to keep." in scaffold
    assert "forget" not in texts[-1]
    for text in texts:
        assert tools_named(text) <= served, text


async def test_with_dedup_disabled_duplicates_are_stored_and_nothing_mentions_the_guard(
    memory_only_host: Callable[[], PluginHost],
) -> None:
    host = memory_only_host()
    async with mcp_client(host) as client:
        texts = await _responses(client)
    ids = [saved_id(text) for text in texts[:-1]]
    assert len(set(ids)) == 6
    guard_lines = [line for line in GUARD_SCAFFOLD if isinstance(line, str)]
    for text in texts:
        for word in (NOT_SAVED, "already exists", "repetition", "near-duplicate", *guard_lines):
            assert word not in text


async def test_introspect_asks_to_save_only_a_genuinely_new_insight(dedup_host: Callable[..., PluginHost]) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        text = tool_text(await client.call_tool("introspect", {}))
    scaffold = text.split(SEPARATOR, 1)[1]
    assert "If this is a genuinely new insight, save with remember (category: introspection)." in scaffold
    assert "Save with remember" not in text
