"""Company is a lived satisfaction: a moment shared with the companion (the self-model's People service,
here a stand-in) satisfies social_thirst, resonance and recognition; while you are together they do not rise and
loneliness is not worded; while the companion is away social_thirst rises, and only apart from them longer than
usual is it worded as loneliness. Two simulated weeks on a driven clock, over a real MCP client."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from desires_support import AFTERNOON, DesireHostFactory, PeopleStandIn, level_map, store_rows

from ego_core import duration_words
from ego_core.testing import call_ok, mcp_client
from ego_self_model.api import Absence, AbsenceBand

pytestmark = pytest.mark.anyio

DAY = timedelta(days=1)
MORNING = AFTERNOON.replace(hour=8)
EVENING = AFTERNOON.replace(hour=20)


class Companion(PeopleStandIn):
    """Provides ``self_model.people``: the moments shared with the companion are the ones the test adds; their
    usual gap is a day, so two days without one is ``quiet`` and four ``long``."""

    def __init__(self) -> None:
        self.moments: list[datetime] = []

    def absence(self, person: str | None, at: datetime) -> Absence | None:
        past = [moment for moment in self.moments if moment <= at]
        if not past:
            return None
        gap = at - max(past)
        band: AbsenceBand = "long" if gap >= 4 * DAY else "quiet" if gap >= 2 * DAY else "usual"
        return Absence(person="Aiko", band=band, words=duration_words(gap), last_shared=max(past))


def desire_line(wake: str) -> str:
    return next((line for line in wake.splitlines() if line.startswith("You feel")), "")


async def test_a_week_together_and_a_week_apart(desire_host: DesireHostFactory) -> None:
    companion = Companion()
    dh = desire_host(others={"people": companion}, companion_name="Aiko")
    together: list[tuple[float, str, str]] = []
    apart: list[tuple[int, float, str, str]] = []
    async with mcp_client(dh.host) as client:
        for day in range(7):  # an evening together every day
            dh.clock.set(EVENING + day * DAY)
            companion.moments.append(dh.clock.now())
            for at in (EVENING + day * DAY + timedelta(hours=1), MORNING + (day + 1) * DAY):
                dh.clock.set(at)
                level = level_map(await call_ok(client, "feel_desires"))["social_thirst"]
                together.append((level, await call_ok(client, "wake_up"), await call_ok(client, "attune")))
        for day in range(1, 8):  # then they are away (the last evening together was on day 7)
            for at in (EVENING + (6 + day) * DAY, MORNING + (7 + day) * DAY):
                dh.clock.set(at)
                level = level_map(await call_ok(client, "feel_desires"))["social_thirst"]
                apart.append((day, level, await call_ok(client, "wake_up"), await call_ok(client, "attune")))
        dh.clock.set(EVENING + 15 * DAY)
        companion.moments.append(dh.clock.now())  # back: the moment counts before anything is written
        reunion = dh.plugin.levels()["social_thirst"]
        await call_ok(client, "introspect")  # any tool call writes it
        rows = {row[0]: row for row in store_rows(dh.data_dir)}

    for level, wake, attune in together:
        assert level < 0.4, (level, wake)  # a shared evening satisfies and holds it
        assert "lonely" not in wake
        assert "wish to talk" not in wake
        assert "You want to talk to someone" not in attune
        assert "That quiet wish for company." not in attune
    levels = [level for _day, level, _wake, _attune in apart]
    assert levels[3] > levels[0] + 0.3  # rising while alone
    assert min(levels[3:]) > 0.6
    assert max(levels) < 0.99
    lonely_days = {day for day, _level, wake, _attune in apart if "lonely" in desire_line(wake)}
    assert lonely_days  # felt while apart longer than usual
    assert min(lonely_days) >= 2  # not before their absence is longer than usual
    assert reunion < 0.3  # the reunion satisfies at once
    assert rows["social_thirst"][4] == "shared"
    assert rows["resonance"][4] == "shared"
    assert rows["recognition"][4] == "shared"


async def test_around_as_usual_social_thirst_is_a_wish_to_talk_not_loneliness(desire_host: DesireHostFactory) -> None:
    companion = Companion()
    companion.moments.append(AFTERNOON - timedelta(hours=30))  # yesterday: usual for them, but not together now
    dh = desire_host(others={"people": companion}, desires={"initial_position": 1.6})
    async with mcp_client(dh.host) as client:
        wake = await call_ok(client, "wake_up")
    assert "wish to talk with someone" in desire_line(wake)
    assert "lonely" not in wake
    companion.moments[:] = [AFTERNOON - timedelta(days=3)]  # now apart longer than usual
    fresh = desire_host(name="apart", others={"people": companion}, desires={"initial_position": 1.6})
    async with mcp_client(fresh.host) as client:
        assert "lonely" in desire_line(await call_ok(client, "wake_up"))


async def test_a_self_model_that_knows_no_one_yet_is_no_evidence_of_loneliness(
    desire_host: DesireHostFactory,
) -> None:
    thirsty = {"initial_position": 1.6}
    knows_no_one = desire_host(name="first-day", others={"people": Companion()}, desires=thirsty)
    async with mcp_client(knows_no_one.host) as client:
        first = await call_ok(client, "wake_up")
    assert "wish to talk with someone" in desire_line(first)
    assert "lonely" not in first
    without_self_model = desire_host(name="solo", desires=thirsty)
    async with mcp_client(without_self_model.host) as client:
        assert "lonely" in desire_line(await call_ok(client, "wake_up"))


async def test_a_satisfaction_while_together_starts_from_the_held_level(desire_host: DesireHostFactory) -> None:
    companion = Companion()
    dh = desire_host(others={"people": companion})
    companion.moments.append(AFTERNOON)
    dh.clock.set(AFTERNOON + timedelta(hours=6))
    held = dh.plugin.snapshot().reading("social_thirst").base
    async with mcp_client(dh.host) as client:
        text = await call_ok(client, "satisfy_desire", {"name": "social_thirst", "quality": 0.5})
    assert text.startswith(f"social_thirst: {held:.2f} → {held / 2:.2f}")
    dh.clock.set(AFTERNOON + timedelta(hours=11))
    assert dh.plugin.snapshot().reading("social_thirst").base == pytest.approx(held / 2, abs=0.01)  # still held
    dh.clock.set(AFTERNOON + timedelta(hours=30))
    assert dh.plugin.snapshot().reading("social_thirst").base > held  # alone again: it rises


def test_the_company_table_is_configurable(desire_host: DesireHostFactory) -> None:
    companion = Companion()
    off = desire_host(name="off", others={"people": companion}, desires={"company": {"shared": {}}})
    on = desire_host(name="on", others={"people": companion}, clock=off.clock)
    companion.moments.append(AFTERNOON + timedelta(minutes=30))
    off.clock.set(AFTERNOON + timedelta(hours=1))
    assert off.levels()["social_thirst"] > 0.5  # switched off: it rose for an hour, as time alone does
    assert on.levels()["social_thirst"] < 0.15
    assert on.levels()["curiosity"] == off.levels()["curiosity"]  # not in the table
