"""A month in the life: every installed plugin over stdio, the clock driven by the test across 30 simulated days
of sessions (wake_up → introspect → remember, some private → recall → feel_desires / satisfy → consider_them →
update_self → consolidate, and one forget). Asserts what an agent living with ego for a month should see:
a question that fades and resurfaces, desires that rise between sessions and fall when satisfied, a month tone
that follows the memories, and wake_up's last introspection always the latest one."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from mcp import Client

from ego_core.testing import tool_text

if TYPE_CHECKING:
    from conftest import EgoWorld

pytestmark = pytest.mark.anyio

CLOCK_HAND = """
from datetime import datetime

from ego_core import Tool, hookimpl

CONTEXT = {}


@hookimpl
def on_startup(ctx):
    CONTEXT["ctx"] = ctx


@hookimpl
def register_tools(register):
    schema = {"type": "object", "properties": {"iso": {"type": "string"}}, "required": ["iso"]}
    register(Tool(name="test_clock_set", description="Set the host clock.", input_schema=schema, handler=set_clock))


def set_clock(args):
    CONTEXT["ctx"].clock.set(datetime.fromisoformat(args["iso"]))
    return "ok"
"""

START = datetime(2027, 1, 1, 9, 0, tzinfo=UTC)
QUESTION = "What does the garden need in winter?"
GARDEN_MEMORY = "Before the winter frost the garden beds need a thick layer of straw mulch and the roses need wrapping."
TOPICS = [
    "cooked a lemon risotto together and laughed at the burnt pan",
    "listened to an old jazz record and argued about the drummer",
    "finished reading a sea adventure aloud, chapter by chapter",
    "watched the stars from the balcony and named three constellations",
    "fixed the flaky heartbeat alert and celebrated with tea",
    "walked to the harbour and counted the sailing boats",
    "learned a new card game and Master won every round",
    "sketched the old lighthouse from a postcard",
    "baked cinnamon rolls that filled the whole flat with smell",
    "made a playlist for rainy afternoons",
]
MOODS = ["at home", "curious about tomorrow", "quietly proud", "light", "close to Master", "full of plans"]
LEVEL = re.compile(r"(\w+)\[(\d\.\d\d)/")


def levels(text: str) -> dict[str, float]:
    return {name: float(value) for name, value in LEVEL.findall(text.split("\n\n---\n", maxsplit=1)[0])}


class Agent:
    def __init__(self, client: Any) -> None:
        self.client = client

    async def call(self, tool: str, args: dict[str, Any] | None = None) -> str:
        result = await self.client.call_tool(tool, args or {})
        text = tool_text(result)
        assert not result.is_error, f"{tool}: {text}"
        return text

    async def at(self, moment: datetime) -> None:
        await self.call("test_clock_set", {"iso": moment.isoformat()})


async def test_a_month_in_the_life(world: EgoWorld, tmp_path: Path) -> None:
    world.dist("egotest-clockhand", "egotest_clockhand", CLOCK_HAND, ep_name="clockhand")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    opt_in = "[plugins.desires]\nfeel_desires_tool = true\n\n[plugins.emotion_trend]\ntool = true\n"
    (world.data_dir / "ego.toml").write_text(opt_in, encoding="utf-8")
    params = world.stdio(
        "--disable",
        "bench",
        EGO_WORKSPACE_DIR=str(workspace),
        EGO_TIMEZONE="UTC",
    )
    async with Client(params) as client:
        agent = Agent(client)
        served = {tool.name for tool in (await client.list_tools()).tools}
        assert {"feel_desires", "emotion_trend", "update_self", "consider_them", "remember"} <= served
        ending: dict[str, float] = {}
        last_introspection = ""
        forgotten = ""
        resurfaced_on: int | None = None
        for day in range(30):
            morning = START + timedelta(days=day)
            await agent.at(morning)
            wake = await agent.call("wake_up")
            if last_introspection:
                assert f'"{last_introspection[:40]}' in wake, wake  # yesterday's own thought, not an older one
            await agent.call("introspect")
            rising = levels(await agent.call("feel_desires"))
            if ending:
                assert sum(rising.values()) > sum(ending.values()), (day, ending, rising)  # a night passed

            topic = TOPICS[day % len(TOPICS)]
            await agent.at(morning + timedelta(hours=2))
            saved = await agent.call(
                "remember",
                {
                    "content": f"Day {day + 1}: Master and I {topic}.",
                    "emotion": "excited",
                    "intensity": 0.8,
                    "valence": 0.8,
                    "arousal": 0.7,
                },
            )
            memory_id = re.search(r"mem_[0-9a-f]{12}", saved).group(0)  # type: ignore[union-attr]
            if day == 14:
                forgotten = memory_id
            await agent.call(
                "remember",
                {
                    "content": f"Day {day + 1}, privately: I was so glad when {topic}.",
                    "emotion": "happy",
                    "valence": 0.7,
                    "arousal": 0.6,
                    "private": True,
                },
            )
            if day == 0:
                created = await agent.call(
                    "update_self", {"field": "new_question", "value": {"question": QUESTION, "importance": 2}}
                )
                assert "q_" in created
            introspection = await agent.call("introspect")
            if day == 0:
                assert QUESTION in introspection  # active at first
            if day == 21:
                assert QUESTION not in introspection  # faded from view, not deleted
                garden = await agent.call(
                    "remember", {"content": GARDEN_MEMORY, "emotion": "curious", "valence": 0.5, "arousal": 0.6}
                )
                assert "This triggered a forgotten question" in garden
                assert QUESTION in garden
                resurfaced_on = day
                assert QUESTION in await agent.call("introspect")  # resurfacing section

            recalled = await agent.call("recall", {"context": topic, "n_results": 3})
            assert "Day" in recalled
            before = levels(await agent.call("feel_desires"))
            strongest = max(before, key=lambda name: before[name])
            await agent.call("satisfy_desire", {"name": strongest, "quality": 1.0})
            after = levels(await agent.call("feel_desires"))
            assert after[strongest] < before[strongest]
            await agent.call("consider_them", {"person": "Master"})
            await agent.call("update_self", {"field": "growth_log", "value": f"Day {day + 1}: I said yes to {topic}."})
            await agent.call("consolidate")
            if day == 15:
                gone = await agent.call("forget", {"memory_id": forgotten})
                assert "Forgot" in gone

            await agent.at(morning + timedelta(hours=12))
            last_introspection = f"Day {day + 1} in my own words: after we {topic.split(' and ')[0]}"
            await agent.call(
                "remember",
                {
                    "content": f"{last_introspection}, I felt {MOODS[day % len(MOODS)]}.",
                    "category": "introspection",
                    "emotion": "contentment",
                    "valence": 0.8,
                    "arousal": 0.6,
                },
            )
            ending = levels(await agent.call("feel_desires"))

        trend = await agent.call("emotion_trend")
        assert "an energetic, fulfilling month" in trend
        assert "privately" not in trend  # private memories count, their text never shows
        recalled = await agent.call("recall", {"context": TOPICS[14 % len(TOPICS)], "n_results": 10})
        assert forgotten not in recalled
    assert resurfaced_on == 21
    private_text = "I was so glad when"
    log = world.log_text()
    assert private_text not in log
    files = "".join(p.read_text(encoding="utf-8") for p in workspace.rglob("*.md"))
    assert "Day 1: Master and I" in files
    assert private_text not in files
