"""Implicit satisfaction through on_tool_called: the documented table, and what satisfies nothing."""

from __future__ import annotations

from typing import Any

import pytest
from desires_support import DesireHost, DesireHostFactory, StandInTools, store_rows

from ego_core.testing import ToolRunner, call_error, call_ok, mcp_client

pytestmark = pytest.mark.anyio

TABLE = {
    "recall": {"information_hunger", "curiosity"},
    "search_memories": {"information_hunger", "curiosity"},
    "consider_them": {"social_thirst", "resonance"},
    "remember": {"expression"},
    "introspect": {"cognitive_coherence"},
    "consolidate": {"cognitive_coherence"},
    "update_self": {"cognitive_coherence"},
}


def lowered(before: dict[str, float], after: dict[str, float]) -> set[str]:
    assert all(after[name] <= before[name] for name in before)
    return {name for name in before if after[name] < before[name]}


@pytest.mark.parametrize(("tool", "desires"), sorted(TABLE.items()))
async def test_a_successful_call_partly_satisfies_its_desires(
    desire_host: DesireHostFactory, tool: str, desires: set[str]
) -> None:
    dh = desire_host(others={"tools": StandInTools()})
    before = dh.levels()
    async with mcp_client(dh.host) as client:
        await call_ok(client, tool)
    after = dh.levels()
    assert lowered(before, after) == desires
    for name in desires:  # partly: quality 0.5 halves the base level
        assert after[name] == pytest.approx(before[name] * 0.5)
    assert {row[0]: row[4] for row in store_rows(dh.data_dir) if row[0] in desires} == dict.fromkeys(
        desires, f"tool:{tool}"
    )


@pytest.mark.parametrize("tool", ["forget", "am_i_being_genuine", "emotion_trend", "wake_up", "feel_desires"])
async def test_these_tools_satisfy_nothing(desire_host: DesireHostFactory, tool: str) -> None:
    dh = desire_host(others={"tools": StandInTools()})
    before, rows = dh.levels(), store_rows(dh.data_dir)
    async with mcp_client(dh.host) as client:
        await call_ok(client, tool)
    assert dh.levels() == before
    assert store_rows(dh.data_dir) == rows


@pytest.mark.parametrize("args", [{"fail": True}, {"crash": True}, {"decline": True}, {"unknown": 1}])
async def test_a_failed_declined_or_invalid_call_satisfies_nothing(
    desire_host: DesireHostFactory, args: dict[str, Any]
) -> None:
    dh = desire_host(others={"tools": StandInTools()})
    before, rows = dh.levels(), store_rows(dh.data_dir)
    async with mcp_client(dh.host) as client:
        for tool in TABLE:
            if tool == "introspect":
                continue
            if args.get("decline"):
                await call_ok(client, tool, args)
            else:
                await call_error(client, tool, args)
    assert dh.levels() == before
    assert store_rows(dh.data_dir) == rows


async def test_the_table_is_configurable(desire_host: DesireHostFactory) -> None:
    dh = desire_host(
        others={"tools": StandInTools()},
        desires={"implicit": {"recall": [], "emotion_trend": ["pattern_seeking"]}, "implicit_quality": 0.9},
    )
    before = dh.levels()
    async with mcp_client(dh.host) as client:
        await call_ok(client, "recall")
        assert dh.levels() == before
        await call_ok(client, "emotion_trend")
        await call_ok(client, "consider_them")  # a default entry that was not overridden
    after = dh.levels()
    assert lowered(before, after) == {"pattern_seeking", "social_thirst", "resonance"}
    assert after["pattern_seeking"] == pytest.approx(before["pattern_seeking"] * 0.1)


async def test_tools_that_are_not_served_are_simply_never_called(desire_host: DesireHostFactory) -> None:
    dh = desire_host()
    runner = ToolRunner(dh.host)
    assert "recall" not in runner.served()
    before = dh.levels()
    result = await runner.call("recall", {"context": "anything"})
    assert result.is_error
    assert dh.levels() == before


async def test_implicit_and_explicit_satisfaction_share_one_store(desire_host: DesireHostFactory) -> None:
    first: DesireHost = desire_host(name="shared", others={"tools": StandInTools()})
    async with mcp_client(first.host) as client:
        await call_ok(client, "recall")
        await call_ok(client, "satisfy_desire", {"name": "expression", "quality": 0.9})
    levels = first.levels()
    first.host.stop()
    again = desire_host(name="shared", clock=first.clock)
    assert again.levels() == levels
