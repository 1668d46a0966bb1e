"""Embers: an alive emergent desire smoulders in wake_up's ``Embers:`` line as ``...{how it feels}`` (warmth 0.5,
at most two), until it expires."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import pytest
from desires_support import AFTERNOON, DesireHostFactory, FixedMemories, memory

from ego_core import Ember, PluginContext, hookimpl
from ego_core.testing import call_ok, mcp_client
from ego_notions.api import NOTIONS_STORE, NotionView

pytestmark = pytest.mark.anyio


def sad_evening() -> FixedMemories:
    """Three sad memories of the last hours: the flow calls up be_with_someone."""
    return FixedMemories([memory(n, AFTERNOON - timedelta(hours=n + 1), emotion="sad", valence=-0.6) for n in range(3)])


class HeldNotions:
    """Provides ``notions.store`` with strong notions of the given tones (each calls up its emergent desire)."""

    def __init__(self, tones: Sequence[tuple[str, float]]) -> None:
        self.views = [
            NotionView(
                id=f"notion_{n:012x}",
                label=f"{tone} things ({tone})",
                tags=(),
                tone=tone,
                valence=valence,
                confidence=0.9,
                is_conviction=False,
                person=None,
                reinforced_at=AFTERNOON - timedelta(days=1),
            )
            for n, (tone, valence) in enumerate(tones)
        ]

    def notions(self, *, min_confidence: float = 0.0, limit: int | None = None) -> Sequence[NotionView]:
        return [v for v in self.views if v.confidence >= min_confidence][:limit]

    def theme(self, word: str) -> str:
        return word.casefold()

    def convictions(self) -> Sequence[NotionView]:
        return []

    def for_person(self, person: str) -> Sequence[NotionView]:
        return []

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        ctx.provide(NOTIONS_STORE, self)


class Hearth:
    """Another plugin's embers, with the given warmths."""

    def __init__(self, *warmths: float) -> None:
        self.warmths = warmths

    @hookimpl
    def ember_candidates(self) -> list[Ember]:
        return [Ember(f"...a warm thing {w}", w) for w in self.warmths]


def embers_line(text: str) -> str | None:
    return next((line for line in text.splitlines() if line.startswith("Embers:")), None)


async def test_an_emergent_desire_smoulders_in_wake_up_until_it_expires(desire_host: DesireHostFactory) -> None:
    dh = desire_host(others={"memory": sad_evening()})
    async with mcp_client(dh.host) as client:
        assert embers_line(await call_ok(client, "wake_up")) is None  # nothing has arisen yet
        await call_ok(client, "attune")  # be_with_someone arises
        assert embers_line(await call_ok(client, "wake_up")) == "Embers: ...be with someone"
        dh.clock.set(AFTERNOON + timedelta(hours=71))
        assert embers_line(await call_ok(client, "wake_up")) == "Embers: ...be with someone"
        dh.clock.set(AFTERNOON + timedelta(hours=72))
        assert embers_line(await call_ok(client, "wake_up")) is None  # expired, never satisfied


def test_at_most_two_are_offered_strongest_first_with_warmth_one_half(desire_host: DesireHostFactory) -> None:
    notions = HeldNotions([("nostalgic", 0.3), ("excited", 0.7)])
    dh = desire_host(others={"memory": sad_evening(), "notions": notions})
    dh.plugin.let_arise(AFTERNOON)  # three arise at once
    dh.clock.set(AFTERNOON + timedelta(hours=2))
    dh.plugin.satisfy(["curiosity"], 1.0, "explicit")  # the cascade eases grasp_something
    levels = {row.name: level for row, level in dh.plugin.emergent_levels(dh.clock.now())}
    assert set(levels) == {"be_with_someone", "go_back_to_something", "grasp_something"}
    assert levels["grasp_something"] < levels["be_with_someone"] == levels["go_back_to_something"]
    offered = dh.plugin.ember_candidates(dh.host.context("desires"))
    assert offered == [Ember("...be with someone", 0.5), Ember("...go back to something", 0.5)]


async def test_warmer_embers_of_other_plugins_come_first(desire_host: DesireHostFactory) -> None:
    dh = desire_host(others={"memory": sad_evening(), "hearth": Hearth(0.9, 0.3)})
    async with mcp_client(dh.host) as client:
        await call_ok(client, "attune")
        assert embers_line(await call_ok(client, "wake_up")) == "Embers: ...a warm thing 0.9 / ...be with someone"
    crowded = desire_host(name="crowded", others={"memory": sad_evening(), "hearth": Hearth(0.9, 0.7)})
    async with mcp_client(crowded.host) as client:
        await call_ok(client, "attune")
        assert embers_line(await call_ok(client, "wake_up")) == "Embers: ...a warm thing 0.9 / ...a warm thing 0.7"


async def test_the_ember_uses_the_catalog_display_name(desire_host: DesireHostFactory) -> None:
    dh = desire_host(others={"memory": sad_evening()})
    async with mcp_client(dh.host) as client:
        await call_ok(client, "attune")
        await call_ok(
            client,
            "configure_desires",
            {"action": "set", "path": "emergent_desires.be_with_someone.display_name", "value": "sit near a friend"},
        )
        assert embers_line(await call_ok(client, "wake_up")) == "Embers: ...sit near a friend"
