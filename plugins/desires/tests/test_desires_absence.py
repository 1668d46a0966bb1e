"""The companion's absence: a long one raises social_thirst by 0.08 in every level the agent sees (wake_up,
introspect, attune, feel_desires and the service agree); quiet, usual, unknown or no self-model add nothing."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

import pytest
from desires_support import AFTERNOON, NINE, DesireHostFactory, PeopleStandIn, level_map

from ego_core import PluginContext, hookimpl
from ego_core.testing import call_ok, mcp_client
from ego_self_model.api import PEOPLE, Absence, AbsenceBand

pytestmark = pytest.mark.anyio


class AwayPeople(PeopleStandIn):
    """Provides ``self_model.people``: the companion is away in ``band`` (None: never shared with)."""

    def __init__(self, band: AbsenceBand | None) -> None:
        self.band = band
        self.asked: list[tuple[str | None, datetime]] = []

    def absence(self, person: str | None, at: datetime) -> Absence | None:
        self.asked.append((person, at))
        if self.band is None:
            return None
        return Absence(person="Aiko", band=self.band, words="about a month", last_shared=at - timedelta(days=30))


class OlderPeople:
    """A self-model from before absence was known: ``sharing`` only."""

    def sharing(self, memory_ids: Sequence[str]) -> Mapping[str, Sequence[str]]:
        return {}

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        ctx.provide(PEOPLE, self)


class BrokenPeople(AwayPeople):
    def absence(self, person: str | None, at: datetime) -> Absence | None:
        raise OSError("the self-model's store is gone")


async def test_a_long_absence_raises_social_thirst_in_every_level_the_agent_sees(
    desire_host: DesireHostFactory,
) -> None:
    people = AwayPeople("long")
    dh = desire_host(others={"people": people})
    assert dh.levels()["social_thirst"] == pytest.approx(0.58)
    assert dh.plugin.snapshot().modulation.factors["absence"] == {"social_thirst": pytest.approx(0.08)}
    async with mcp_client(dh.host) as client:
        wake = await call_ok(client, "wake_up")
        felt = level_map(await call_ok(client, "feel_desires"))
        introspect = await call_ok(client, "introspect")  # then eases cognitive_coherence (implicit)
        attune = await call_ok(client, "attune")
    assert "You feel a little lonely" in wake  # the strongest desire now
    assert "Desires: social_thirst[0.58/mid]" in introspect
    assert "Desire currents: That quiet wish for company." in attune  # named first, in words
    assert felt == {**dict.fromkeys(NINE, 0.5), "social_thirst": 0.58}
    assert all(person is None for person, _at in people.asked)  # always the companion
    assert {at for _person, at in people.asked} == {AFTERNOON}  # at the host clock


@pytest.mark.parametrize("band", ["quiet", "usual", None])
def test_a_quiet_or_usual_absence_or_an_unknown_companion_adds_nothing(
    desire_host: DesireHostFactory, band: AbsenceBand | None
) -> None:
    dh = desire_host(others={"people": AwayPeople(band)})
    assert dh.levels() == dict.fromkeys(NINE, 0.5)
    assert dict(dh.plugin.snapshot().modulation.factors["absence"]) == {}


def test_the_pushes_are_configurable_and_quiet_can_push_a_little(desire_host: DesireHostFactory) -> None:
    table = {"absence": {"quiet_social_thirst": 0.03, "long_social_thirst": 0.1}}
    quiet = desire_host(name="quiet", others={"people": AwayPeople("quiet")}, desires=table)
    long = desire_host(name="long", others={"people": AwayPeople("long")}, desires=table)
    assert quiet.levels()["social_thirst"] == pytest.approx(0.53)
    assert long.levels()["social_thirst"] == pytest.approx(0.6)


def test_the_push_only_approaches_one(desire_host: DesireHostFactory) -> None:
    dh = desire_host(others={"people": AwayPeople("long")}, desires={"initial_position": 1.5})
    reading = dh.plugin.snapshot().reading("social_thirst")
    assert reading.base + reading.modulation > 0.8  # above soft_from what it adds is compressed
    assert reading.base < reading.level < reading.base + reading.modulation < 1.0


def test_without_a_self_model_or_with_an_older_one_nothing_changes(
    desire_host: DesireHostFactory, caplog: pytest.LogCaptureFixture
) -> None:
    alone = desire_host(name="alone")
    older = desire_host(name="older", others={"people": OlderPeople()})
    with caplog.at_level(logging.WARNING):
        assert alone.levels() == older.levels() == dict.fromkeys(NINE, 0.5)
    assert "people unavailable (TypeError)" in caplog.text  # the older service is not a People


def test_a_failing_absence_is_left_out_and_reported(
    desire_host: DesireHostFactory, caplog: pytest.LogCaptureFixture
) -> None:
    dh = desire_host(others={"people": BrokenPeople("long")})
    with caplog.at_level(logging.WARNING):
        assert dh.levels() == dict.fromkeys(NINE, 0.5)
    assert "desires: absence unavailable (OSError); that modulation is left out" in caplog.text


async def test_satisfy_desire_names_the_absence_it_does_not_quiet(desire_host: DesireHostFactory) -> None:
    dh = desire_host(others={"people": AwayPeople("long")})
    async with mcp_client(dh.host) as client:
        text = await call_ok(client, "satisfy_desire", {"name": "social_thirst", "quality": 1.0})
    assert "social_thirst: 0.58 → 0.10 (quality 1)." in text
    assert "What remains comes from a longer time apart than usual, which satisfying it does not quiet." in text
