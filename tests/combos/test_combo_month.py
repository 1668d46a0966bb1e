"""A month in the life: every installed plugin over stdio, the clock driven by the test across 30 simulated days
of sessions (wake_up → introspect → remember, some private → recall → feel_desires / satisfy → consider_them →
update_self → consolidate, and one forget). Asserts what an agent living with ego for a month should see:
a question that fades and resurfaces, desires that rise between sessions and fall when satisfied, a month tone
that follows the memories, and wake_up's last introspection always the latest one. A second month, in process
with a driven clock: a notion that forms, becomes a conviction, calls up an emergent desire that the cascade
satisfies, and is weakened by contradictions, all of it visible in attune."""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from combo_support import PLUGINS
from mcp import Client

from ego_core import Clock
from ego_core.testing import HostFactory, mcp_client, tool_text

if TYPE_CHECKING:
    from conftest import EgoWorld

pytestmark = pytest.mark.anyio

CLOCK_HAND = """
from datetime import datetime

from ego_core import Tool, hookimpl


@hookimpl
def register_tools(register):
    schema = {"type": "object", "properties": {"iso": {"type": "string"}}, "required": ["iso"]}
    register(Tool(name="test_clock_set", description="Set the host clock.", input_schema=schema, handler=set_clock))


def set_clock(args, ctx):
    ctx.clock.set(datetime.fromisoformat(args["iso"]))
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


def currents(attuned: str) -> str:
    """attune's desire currents line."""
    return attuned.split("Desire currents: ", 1)[1].split("\n", 1)[0]


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
                assert f'{last_introspection}"' in wake, wake  # yesterday's own thought (by its end), not an older one
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
            last_introspection = f"I felt {MOODS[day % len(MOODS)]} on day {day + 1}."
            await agent.call(
                "remember",
                {
                    "content": f"In my own words: after we {topic.split(' and ')[0]}. {last_introspection}",
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


STARS = [
    "Watched the stars from the balcony and found Orion's belt.",
    "Read about how stars are born inside dust clouds.",
    "Counted meteors with Master until midnight.",
    "Found the Pleiades with the old binoculars.",
]
MORE_STARS = [
    "Saw Jupiter and four of its moons tonight.",
    "Learned why stars twinkle and planets do not.",
    "Sketched the summer triangle from memory.",
    "Master pointed out Vega before the clouds came.",
    "Stayed up for the Perseids, one every minute.",
]
PULL = "There's a pull toward something that doesn't have a name yet."
GRASP = re.compile(r"grasp_something\[(\d\.\d\d)/")


async def test_a_month_of_a_notion_becoming_a_conviction_and_a_desire_it_calls_up(
    make_host: HostFactory, tmp_path: Path
) -> None:
    """A notion forms from repeated, linked, tagged experiences; reinforcing memories over the following days
    make it a conviction (am_i_being_genuine and attune show it); the emergent desire it calls up rises in attune
    and is satisfied through the cascade from its fixed desire; contradictions weaken the conviction, and attune
    says so."""
    clock = Clock(START)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    config: dict[str, dict[str, Any]] = {
        "memory": {},
        "workspace_sync": {"workspace_dir": str(workspace)},
        "shared_memory": {"db": f"sqlite:///{tmp_path / 'shared.db'}", "agent_id": "claude"},
        "desires": {"feel_desires_tool": True},
    }
    host = make_host({plugin_id: PLUGINS[plugin_id]() for plugin_id in PLUGINS}, config=config, clock=clock)
    async with mcp_client(host) as client:
        agent = Agent(client)
        ids = []
        for day, content in enumerate(STARS):  # four evenings under the stars, linked as one experience
            clock.set(START + timedelta(days=day, hours=21))
            saved = await agent.call(
                "remember", {"content": content, "emotion": "excited", "valence": 0.7, "tags": ["stars"], "force": True}
            )
            ids.append(re.search(r"mem_[0-9a-f]{12}", saved).group(0))  # type: ignore[union-attr]
        for source, target in itertools.combinations(ids, 2):
            await agent.call("link_memories", {"source_id": source, "target_id": target, "link_type": "related"})
        clock.set(START + timedelta(days=3, hours=23))
        assert "Formed 1 notion(s)." in await agent.call("consolidate")
        assert '"Stars excite me" conf=0.70 reinf=1' in await agent.call("curate_notions", {"action": "list"})
        assert "Your convictions" not in await agent.call("am_i_being_genuine")

        for day, content in enumerate(MORE_STARS, start=4):  # the idea keeps being confirmed, one night a day
            clock.set(START + timedelta(days=day, hours=21))
            await agent.call(
                "remember", {"content": content, "emotion": "excited", "valence": 0.7, "tags": ["stars"], "force": True}
            )
        assert '"Stars excite me" conf=1.00 reinf=6' in await agent.call("curate_notions", {"action": "list"})
        assert 'Your convictions: "Stars excite me".' in await agent.call("am_i_being_genuine")

        clock.set(START + timedelta(days=10, hours=9))  # a quiet morning: the conviction calls up a desire
        attuned = await agent.call("attune")
        assert PULL in currents(attuned)  # the new emergent desire has its place among the currents
        assert 'Convictions: "Stars excite me".' in attuned
        assert "stars" in attuned.split("Current interests: ", 1)[1].split("\n", 1)[0]
        high = float(GRASP.findall(await agent.call("feel_desires"))[0])
        assert high >= 0.95

        await agent.call("satisfy_desire", {"name": "information_hunger", "quality": 1.0})  # the cascade
        eased = float(GRASP.findall(await agent.call("feel_desires"))[0])
        assert eased == pytest.approx(high * 0.5, abs=0.02)
        satisfied = currents(await agent.call("attune"))
        assert PULL not in satisfied
        assert "Whatever was pulling — it's letting go." in satisfied  # its words follow the satisfaction

        clock.set(START + timedelta(days=12, hours=22))  # a cloudy night, and the idea is shaken
        await agent.call(
            "remember",
            {
                "content": "Clouds all night; the stars felt far away.",
                "emotion": "frustrated",
                "valence": -0.6,
                "tags": ["stars"],
                "force": True,
            },
        )
        assert 'Convictions: "Stars excite me" (feels less certain lately).' in await agent.call("attune")
        for hours, content in ((1, "The telescope fogged up again."), (2, "Light pollution hid every star.")):
            clock.set(START + timedelta(days=12, hours=22 + hours))
            await agent.call(
                "remember",
                {"content": content, "emotion": "frustrated", "valence": -0.6, "tags": ["stars"], "force": True},
            )
        assert "Your convictions" not in await agent.call("am_i_being_genuine")  # below 0.7: no longer one
        weakened = await agent.call("attune")
        assert '"Stars excite me" feels less certain lately.' in weakened
        assert "Convictions:" not in weakened
        assert '"Stars excite me" conf=0.5' in await agent.call("curate_notions", {"action": "list"})

        clock.set(START + timedelta(days=29, hours=9))  # weeks later the doubt has passed; the notion is held
        settled = await agent.call("attune")
        assert "less certain" not in settled
        assert "Stars excite me" in await agent.call("curate_notions", {"action": "list"})
