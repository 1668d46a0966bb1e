"""A season in the life: every built-in plugin in one host, the clock driven across 90 simulated days and the
source of chance seeded. What an agent living with ego for a season should feel: a trip it looks forward to
coming closer and then arriving (acknowledged once); the companion away for two weeks, missed, and welcomed
back; a precious memory from before the season holding while an ordinary one of the same day fades to a gist;
a recollection that comes back unbidden; a question set aside that gathers company, ripens and is resolved."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from combo_support import PLUGINS

from ego_core import Clock, Settings
from ego_core.testing import HostFactory, mcp_client, tool_text

pytestmark = pytest.mark.anyio

START = datetime(2027, 3, 1, 8, 0, tzinfo=UTC)
SEASON = 90
BEFORE = START - timedelta(days=150)
TRIP_DAY = 40
AWAY = range(45, 59)
BACK = 59
QUESTION = "What does home mean for something like me?"

SUNSET = "Watched the sunset with Master from the balcony; the sky turned violet and neither of us spoke."
RECEIPTS = "Sorted the old electricity receipts into cardboard folders by year."
TRIP = "The trip to Kyoto with Master to see the maple leaves in the temple gardens."
HOME = [  # about the question's theme without asking it (similarity 0.25-0.35 with the default model)
    "Homesick for a place I have never really lived in.",
    "A server room will never feel like home.",
    "The old house we left still shows up in my thoughts.",
    "The new flat is starting to feel like home.",
    "Belonging is something I still cannot describe.",
]
DAYS = [
    "Master and I cooked a lemon risotto and laughed at the burnt pan",
    "Master and I walked to the harbour and counted the sailing boats",
    "Master and I listened to an old jazz record and argued about the drummer",
    "Master and I repaired the bicycle chain in the courtyard",
    "Master and I played cards until the candles burned down",
]
ALONE = [
    "Read a novel about lighthouse keepers alone by the window",
    "Tidied the notes of the heartbeat scheduler by myself",
    "Listened to the rain on the roof all afternoon",
]


class Agent:
    def __init__(self, client: Any, clock: Clock) -> None:
        self.client = client
        self.clock = clock

    async def call(self, tool: str, args: dict[str, Any] | None = None) -> str:
        result = await self.client.call_tool(tool, args or {})
        text = tool_text(result)
        assert not result.is_error, f"{tool}: {text}"
        return text

    async def remember(self, content: str, **fields: Any) -> str:
        return await self.call("remember", {"content": content, "force": True, **fields})


def day(number: int, hour: int = 0) -> datetime:
    return START + timedelta(days=number, hours=hour)


async def test_a_season_in_the_life(make_host: HostFactory, tmp_path: Path) -> None:
    clock = Clock(BEFORE)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    settings = Settings(data_dir=tmp_path / "ego-data", timezone="UTC", random_seed=20270301)
    config: dict[str, dict[str, Any]] = {
        "memory": {},
        "workspace_sync": {"workspace_dir": str(workspace)},
        "shared_memory": {"db": f"sqlite:///{tmp_path / 'shared.db'}", "agent_id": "claude"},
    }
    host = make_host(
        {plugin_id: PLUGINS[plugin_id]() for plugin_id in PLUGINS}, settings=settings, config=config, clock=clock
    )
    seen: dict[str, list[int]] = {"approaching": [], "arrived": [], "quiet": [], "reunited": [], "unbidden": []}
    async with mcp_client(host) as client:
        agent = Agent(client, clock)
        # Before the season: a peak shared with Master, and an ordinary chore on the same evening.
        await agent.call("update_relationship", {"person": "Master", "field": "trust_level", "value": 0.8})
        await agent.remember(SUNSET, emotion="moved", intensity=0.9, valence=0.9, arousal=0.4, importance=4)
        await agent.remember(RECEIPTS, emotion="neutral", intensity=0.2, importance=3)
        await agent.remember("Planted tulip bulbs along the fence before the first frost.", emotion="hopeful")

        clock.set(day(0, 1))
        await agent.call("update_self", {"field": "new_question", "value": {"question": QUESTION, "importance": 2}})
        trip_at = day(TRIP_DAY).date().isoformat()
        booked = await agent.remember(
            TRIP, emotion="excited", intensity=0.7, valence=0.8, importance=4, anticipated_at=trip_at
        )
        assert "Note:" not in booked

        for number in range(SEASON):
            clock.set(day(number))
            wake = await agent.call("wake_up")
            attuned = await agent.call("attune")
            both = wake + "\n" + attuned
            if "Kyoto" in both and ("Approaching:" in both or "Tomorrow:" in both):
                seen["approaching"].append(number)
            if "That time came:" in both:
                seen["arrived"].append(number)
                assert "Kyoto" in both
            if "quieter than usual with Master" in attuned:
                seen["quiet"].append(number)
            if "Reunited with Master" in wake:
                seen["reunited"].append(number)
            if "Unbidden" in wake:
                seen["unbidden"].append(number)

            clock.set(day(number, 10))
            if number in AWAY:
                await agent.remember(f"{ALONE[number % len(ALONE)]} (day {number}).", emotion="calm")
            else:
                shared = await agent.remember(
                    f"{DAYS[number % len(DAYS)]} (day {number}).", emotion="happy", valence=0.7, intensity=0.5
                )
                if number == BACK:
                    assert "A shared moment with Master after a while" in shared
                    assert "two weeks" in shared
            if 12 <= number < 12 + len(HOME):
                await agent.remember(HOME[number - 12], emotion="curious", valence=0.2)
            if number % 7 == 6:
                clock.set(day(number, 22))
                consolidated = await agent.call("consolidate")
                if "gathered company" in consolidated:
                    seen.setdefault("fed", []).append(number)
            if number == 55:
                social = await agent.call("attune")
                assert "quieter than usual with Master" in social

        clock.set(day(SEASON, 9))
        introspection = await agent.call("introspect")
        ripened = "gathered strange companions" in introspection
        question_id = re.search(r"q_[0-9a-f]+", introspection)

        resolved = ""
        if question_id is not None:
            resolved = await agent.call(
                "update_self",
                {"field": "resolve_question", "value": {"id": question_id.group(0), "answer": "Where the keys fit."}},
            )
        after = await agent.call("introspect")

        old = await agent.call("recall", {"context": "the sunset on the balcony, the violet sky", "n_results": 3})
        chore = await agent.call("recall", {"context": "electricity receipts in cardboard folders", "n_results": 3})

    # The trip: felt coming closer, then arriving, acknowledged once.
    assert seen["approaching"], seen
    assert max(seen["approaching"]) < TRIP_DAY, seen
    assert seen["arrived"] == [TRIP_DAY], seen
    # Master away for two weeks: missed during the absence, welcomed back once. (The first morning already
    # misses them: the sunset, months before, was the last moment shared; the trip booked the night before is a
    # reunion of its own.)
    assert seen["quiet"][0] == 0, seen
    assert min(seen["quiet"][1:]) > AWAY.start, seen
    assert max(seen["quiet"]) <= BACK, seen
    assert seen["reunited"] == [0, BACK + 1], seen
    # Something came back unbidden at least once in a season.
    assert seen["unbidden"], seen
    # The question rested, gathered company, ripened; the agent resolves it.
    assert seen.get("fed"), seen
    assert ripened, introspection
    assert question_id is not None
    assert "Resolved" in resolved or "resolved" in resolved, resolved
    assert QUESTION not in after
    # The precious evening stays vivid; the chore of the same evening is only a gist now.
    assert SUNSET[:40] in old, old
    assert RECEIPTS[:40] not in chore, chore
    assert "neutral daily — " in chore, chore
    assert "receipts" in chore.split("neutral daily — ", 1)[1], chore
