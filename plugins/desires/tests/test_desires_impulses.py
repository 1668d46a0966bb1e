"""Impulses: a memory that came back unbidden pushes the desire its emotion calls for, once, at the next levels the
agent sees; pending pushes add up to a cap, a memory gives one per 72 hours, and a restart keeps what is pending.

The memory plugin fires ``on_memory_surfaced``; here a small stand-in plugin fires it from a tool call (in the
tool's worker thread, as the memory plugin does), so these tests need the core and the desires plugin alone.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from desires_support import AFTERNOON, NINE, DesireHost, DesireHostFactory, level_map, memory

from ego_core import HookKind, Memory, PluginContext, SurfacedHow, Tool, hookimpl, spec
from ego_core.testing import call_ok, mcp_client
from ego_desires.impulses import IMPULSES
from ego_desires.store import LEGACY_VERSION

pytestmark = pytest.mark.anyio

SURFACE_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "emotion": {"type": "string"},
        "how": {"enum": ["involuntary", "echo"], "default": "involuntary"},
        "private": {"type": "boolean", "default": False},
        "forget": {"type": "boolean", "default": False},
    },
    "required": ["n", "emotion"],
    "additionalProperties": False,
}
SECRET = "the letter I never sent to my sister"


class SurfacingSpecs:
    """The two memory hooks the stand-in fires, published as the memory plugin publishes them (its stack is not
    installed where these tests run alone)."""

    @spec(HookKind.NOTIFICATION)
    def on_forget(self, memory: Memory, ctx: PluginContext) -> Sequence[str] | None:
        """A memory was deleted."""

    @spec(HookKind.NOTIFICATION)
    def on_memory_surfaced(self, memory: Memory, how: SurfacedHow, ctx: PluginContext) -> None:
        """A memory came back unbidden."""


class Surfacer:
    """Stands in for the memory plugin: ``surface`` brings memory ``n`` back unbidden (or forgets it)."""

    hookspecs = (SurfacingSpecs,)

    def _memory(self, args: Mapping[str, Any]) -> Memory:
        found = memory(int(args["n"]), AFTERNOON - timedelta(days=90), emotion=str(args["emotion"]))
        if args["private"]:
            return Memory(
                id=found.id,
                content=SECRET,
                timestamp=found.timestamp,
                emotional_trace=found.emotional_trace,
                is_private=True,
            )
        return found

    def surface(self, args: Mapping[str, Any], ctx: PluginContext) -> str:
        if args["forget"]:
            ctx.hooks.call("on_forget", memory=self._memory(args))
            return "forgotten"
        ctx.hooks.call("on_memory_surfaced", memory=self._memory(args), how=args["how"])
        return "surfaced"

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(name="surface", description="Bring a memory back.", input_schema=SURFACE_SCHEMA, handler=self.surface)
        )


def surfacing(desire_host: DesireHostFactory, **options: Any) -> DesireHost:
    return desire_host(others={"memories": Surfacer()}, **options)


def impulse_rows(data_dir: Path) -> list[tuple[Any, ...]]:
    path = data_dir / "desires" / "desires.sqlite3"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute("SELECT memory_id, emotion, desire, amount, felt_at FROM impulse ORDER BY id").fetchall()


async def test_an_involuntary_memory_is_felt_once_by_the_next_levels_the_agent_sees(
    desire_host: DesireHostFactory,
) -> None:
    dh = surfacing(desire_host)
    async with mcp_client(dh.host) as client:
        await call_ok(client, "surface", {"n": 1, "emotion": "sad"})
        # pending: every reading counts it, none takes it
        assert dh.levels()["social_thirst"] == pytest.approx(0.65)
        assert dh.levels()["social_thirst"] == pytest.approx(0.65)
        assert dict(dh.plugin.snapshot().modulation.factors["impulses"]) == {"social_thirst": pytest.approx(0.15)}
        wake = await call_ok(client, "wake_up")
        assert "You feel a little lonely" in wake  # felt here, the strongest desire
        assert dh.levels() == dict.fromkeys(NINE, 0.5)  # and gone
        assert level_map(await call_ok(client, "feel_desires")) == dict.fromkeys(NINE, 0.5)


@pytest.mark.parametrize("tool", ["attune", "introspect", "feel_desires"])
async def test_attune_introspect_and_feel_desires_each_feel_pending_impulses(
    desire_host: DesireHostFactory, tool: str
) -> None:
    dh = surfacing(desire_host)
    async with mcp_client(dh.host) as client:
        await call_ok(client, "surface", {"n": 1, "emotion": "anxious"})
        text = await call_ok(client, tool)
        assert dh.levels()["cognitive_coherence"] <= 0.5  # gone (introspect then eases it, too)
    shown = {
        "attune": "Desire currents: The usual itch to make things fit.",  # named first (steady: within 0.15)
        "introspect": "Desires: cognitive_coherence[0.65/mid]",
        "feel_desires": "cognitive_coherence[0.65/mid]",
    }
    assert shown[tool] in text


async def test_the_table_maps_each_emotion_to_its_desire(desire_host: DesireHostFactory) -> None:
    dh = surfacing(desire_host)
    async with mcp_client(dh.host) as client:
        for n, (emotion, (desire, amount)) in enumerate(IMPULSES.items()):
            await call_ok(client, "surface", {"n": n, "emotion": emotion})
            assert dh.levels()[desire] == pytest.approx(0.5 + amount), emotion
            await call_ok(client, "feel_desires")
        await call_ok(client, "surface", {"n": 99, "emotion": "neutral"})
    assert dh.levels() == dict.fromkeys(NINE, 0.5)
    assert [row[0] for row in impulse_rows(dh.data_dir)] == [f"mem_{n:012x}" for n in range(len(IMPULSES))]


async def test_pending_impulses_toward_one_desire_stop_at_the_cap(desire_host: DesireHostFactory) -> None:
    dh = surfacing(desire_host)
    async with mcp_client(dh.host) as client:
        for n in range(3):
            await call_ok(client, "surface", {"n": n, "emotion": "nostalgic"})
        await call_ok(client, "surface", {"n": 3, "emotion": "moved"})
        assert dh.levels()["resonance"] == pytest.approx(0.7)  # 0.15 + 0.05, then nothing
        assert dh.levels()["expression"] == pytest.approx(0.65)  # another desire has its own cap
        assert [round(row[3], 2) for row in impulse_rows(dh.data_dir)] == [0.15, 0.05, 0.0, 0.15]
        felt = level_map(await call_ok(client, "feel_desires"))
        assert (felt["resonance"], felt["expression"]) == (0.7, 0.65)
        await call_ok(client, "surface", {"n": 4, "emotion": "nostalgic"})  # felt: room again
    assert dh.levels()["resonance"] == pytest.approx(0.65)


async def test_the_cap_is_configurable(desire_host: DesireHostFactory) -> None:
    dh = surfacing(desire_host, desires={"impulses": {"cap": 0.1}})
    async with mcp_client(dh.host) as client:
        await call_ok(client, "surface", {"n": 1, "emotion": "surprised"})
    assert dh.levels()["curiosity"] == pytest.approx(0.6)


async def test_a_memory_gives_one_impulse_in_seventy_two_hours(desire_host: DesireHostFactory) -> None:
    dh = surfacing(desire_host)
    async with mcp_client(dh.host) as client:
        await call_ok(client, "surface", {"n": 1, "emotion": "curious"})
        await call_ok(client, "surface", {"n": 1, "emotion": "curious"})  # pending: not added again
        assert dh.levels()["information_hunger"] == pytest.approx(0.65)
        await call_ok(client, "feel_desires")
        dh.clock.set(AFTERNOON + timedelta(hours=71))
        await call_ok(client, "surface", {"n": 1, "emotion": "curious"})  # felt, still within 72 h
        assert dh.plugin.snapshot().modulation.factors["impulses"] == {}
        await call_ok(client, "surface", {"n": 2, "emotion": "curious"})  # another memory may
        assert dict(dh.plugin.snapshot().modulation.factors["impulses"]) == {"information_hunger": 0.15}
        await call_ok(client, "feel_desires")
        dh.clock.set(AFTERNOON + timedelta(hours=72, minutes=1))
        await call_ok(client, "surface", {"n": 1, "emotion": "curious"})
        assert dict(dh.plugin.snapshot().modulation.factors["impulses"]) == {"information_hunger": 0.15}
    # the felt impulse of the first time was deleted once its cooldown had passed
    assert [(row[0], row[4] is None) for row in impulse_rows(dh.data_dir)] == [
        ("mem_000000000002", False),
        ("mem_000000000001", True),
    ]


async def test_an_echo_gives_no_impulse(desire_host: DesireHostFactory) -> None:
    dh = surfacing(desire_host)
    async with mcp_client(dh.host) as client:
        await call_ok(client, "surface", {"n": 1, "emotion": "surprised", "how": "echo"})
        await call_ok(client, "surface", {"n": 1, "emotion": "surprised"})  # the echo set no cooldown either
    assert dh.levels()["curiosity"] == pytest.approx(0.7)
    assert len(impulse_rows(dh.data_dir)) == 1


async def test_a_restart_keeps_pending_impulses_until_they_are_felt(desire_host: DesireHostFactory) -> None:
    dh = surfacing(desire_host)
    async with mcp_client(dh.host) as client:
        await call_ok(client, "surface", {"n": 1, "emotion": "excited"})
    dh.host.stop()
    again = surfacing(desire_host, clock=dh.clock)  # a new process on the same data dir
    assert again.levels()["curiosity"] == pytest.approx(0.65)
    async with mcp_client(again.host) as client:
        attune = await call_ok(client, "attune")
    assert "Desire currents: A quiet wondering about something." in attune  # curiosity first: felt
    again.host.stop()
    third = surfacing(desire_host, clock=dh.clock)
    assert third.levels() == dict.fromkeys(NINE, 0.5)
    async with mcp_client(third.host) as client:  # and the cooldown survived the restarts too
        await call_ok(client, "surface", {"n": 1, "emotion": "excited"})
    assert third.levels() == dict.fromkeys(NINE, 0.5)


async def test_a_private_memory_leaves_only_its_id_and_emotion(
    desire_host: DesireHostFactory, caplog: pytest.LogCaptureFixture
) -> None:
    dh = surfacing(desire_host)
    with caplog.at_level(logging.DEBUG):
        async with mcp_client(dh.host) as client:
            await call_ok(client, "surface", {"n": 7, "emotion": "melancholy", "private": True})
            wake = await call_ok(client, "wake_up")
    assert impulse_rows(dh.data_dir) == [
        ("mem_000000000007", "melancholy", "social_thirst", 0.15, AFTERNOON.timestamp())
    ]
    assert SECRET not in caplog.text
    assert SECRET not in wake
    assert SECRET.encode() not in b"".join(path.read_bytes() for path in dh.data_dir.rglob("*") if path.is_file())
    assert "desires: an impulse toward social_thirst (+0.15) waits to be felt" in caplog.text


async def test_forgetting_the_memory_deletes_its_impulses(desire_host: DesireHostFactory) -> None:
    dh = surfacing(desire_host)
    async with mcp_client(dh.host) as client:
        await call_ok(client, "surface", {"n": 1, "emotion": "sad"})
        await call_ok(client, "surface", {"n": 2, "emotion": "anxious"})
        await call_ok(client, "surface", {"n": 1, "emotion": "sad", "forget": True})
    assert dh.levels() == {**dict.fromkeys(NINE, 0.5), "cognitive_coherence": pytest.approx(0.65)}
    assert [row[0] for row in impulse_rows(dh.data_dir)] == ["mem_000000000002"]


def test_a_second_schema_store_gains_the_impulses_when_opened(desire_host: DesireHostFactory) -> None:
    dh = desire_host(start=False)
    folder = dh.data_dir / "desires"
    folder.mkdir(parents=True)
    with sqlite3.connect(folder / "desires.sqlite3") as db:
        db.executescript(
            """
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE desires (name TEXT PRIMARY KEY, anchored_at REAL NOT NULL, start REAL NOT NULL,
                quality REAL, source TEXT NOT NULL);
            CREATE TABLE emergent (name TEXT PRIMARY KEY, created REAL NOT NULL, anchored_at REAL NOT NULL,
                start REAL NOT NULL, quality REAL, satisfied_at REAL);
            CREATE TABLE baseline (name TEXT PRIMARY KEY, level REAL NOT NULL, sampled_at REAL NOT NULL);
            INSERT INTO meta VALUES ('schema_version', '2');
            """
        )
        db.execute("INSERT INTO desires VALUES ('curiosity', ?, 0.0, 1.0, 'explicit')", (AFTERNOON.timestamp(),))
    dh.host.start()
    assert not dh.host.failures
    assert dh.levels()["curiosity"] < 0.05  # kept
    with sqlite3.connect(folder / "desires.sqlite3") as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(LEGACY_VERSION),)
        assert db.execute("SELECT count(*) FROM impulse").fetchone() == (0,)
