"""No response ever names a tool that is not served, whatever the combination of plugins."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ego_core import PluginHost
from ego_core.testing import mcp_client, tool_text

pytestmark = pytest.mark.anyio

COMBINATIONS = [
    (),
    ("memory",),
    ("memory", "dedup"),
    ("memory", "workspace_sync"),
    ("memory", "interoception"),
    ("desires",),
    ("memory", "desires", "interoception"),
    ("self_model",),
    ("memory", "self_model"),
    ("memory", "emotion_trend"),
    ("memory", "desires", "emotion_trend", "self_model", "interoception"),
]


async def exercise(host: PluginHost) -> list[str]:
    """Call every served tool, the way an agent would, and return every response text."""
    texts: list[str] = []
    async with mcp_client(host) as client:
        served = {tool.name for tool in (await client.list_tools()).tools}
        calls: list[tuple[str, dict[str, Any]]] = [("wake_up", {}), ("introspect", {}), ("feel_desires", {})]
        if "remember" in served:
            calls += [
                ("remember", {"content": "Master and I watched the violet sky from the balcony tonight."}),
                ("remember", {"content": "Master and I watched the violet sky from the balcony tonight."}),
                ("remember", {"content": "The heartbeat alert woke everyone at 3 a.m.", "category": "nope"}),
                ("recall", {"context": "the evening sky"}),
                ("recall", {"context": "nothing matches xyzzy", "emotion_filter": "happy"}),
                ("search_memories", {"context": "heartbeat"}),
                ("consolidate", {}),
                ("forget", {"memory_id": "mem_000000000000"}),
                ("get_episode", {"episode_id": "ep_000000000000"}),
                ("link_memories", {"source_id": "mem_000000000000", "target_id": "mem_000000000001"}),
            ]
        calls += [
            ("satisfy_desire", {"name": "curiosity"}),
            ("satisfy_desire", {"name": "nope"}),
            ("emotion_trend", {}),
        ]
        calls += [
            ("consider_them", {"person": "Master"}),
            (
                "update_self",
                {"field": "new_question", "value": {"question": "What makes a day good?", "importance": 4}},
            ),
            ("update_self", {"field": "no_such_field", "value": 1}),
            ("update_relationship", {"person": "Master", "field": "trust_level", "value": 0.8}),
            ("am_i_being_genuine", {}),
        ]
        calls += [("introspect", {}), ("wake_up", {})]
        for name, args in calls:
            if name in served:
                texts.append(tool_text(await client.call_tool(name, args)))
    return texts


@pytest.mark.parametrize("plugins", COMBINATIONS, ids=lambda c: "+".join(c) or "core")
async def test_scaffolds_only_name_served_tools(combo_host, plugins: tuple[str, ...]) -> None:
    everything: PluginHost = combo_host()
    every_tool = {tool.name for _plugin, tool in everything.tools()}
    host = combo_host(*plugins) if plugins else combo_host("interoception")
    served = {tool.name for _plugin, tool in host.tools()}
    for text in await exercise(host):
        named = {word for word in re.findall(r"[a-z_]+", text) if word in every_tool}
        assert named <= served, f"names unserved tool(s) {sorted(named - served)} in: {text!r}"
