"""The hooks the memory plugin publishes (``ego_memory.api.MemorySpecs``), each exercised through a real host by a
test named for it (``test_hook_<name>``), fired through their typed calls (``MemoryHooks``) by a plugin that publishes
them, as the memory plugin does, without the memory plugin's stack."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from datetime import UTC, datetime

import attrs
import pytest

from ego_core import (
    ConsolidationRun,
    HookKind,
    Memory,
    PluginContext,
    RecallHit,
    RecallNote,
    RecallQuery,
    RememberDraft,
    Response,
    Section,
    hookimpl,
)
from ego_core.testing import HostFactory, mcp_client
from ego_memory.api import MemoryHooks, MemorySpecs
from ego_memory.plugin import MemoryPlugin

NOW = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
MEMORY = Memory(id="mem_0123456789ab", content="a walk by the river", timestamp=NOW)
HOOKS = [name for name in vars(MemorySpecs) if not name.startswith("_")]


class Publisher:
    hookspecs = (MemorySpecs,)


class Listener:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl(optionalhook=True)
    def on_remember(self, memory: Memory) -> list[str]:
        self.seen.append(memory.id)
        return [f"heard {memory.id}"]


def test_the_memory_plugin_publishes_its_hooks() -> None:
    assert MemoryPlugin.hookspecs == (MemorySpecs,)


def test_every_memory_hook_declares_its_kind_and_has_a_typed_call() -> None:
    assert HOOKS == [
        "before_remember",
        "on_remember",
        "on_recall_result",
        "on_forget",
        "on_memory_revised",
        "on_consolidate",
        "on_memory_surfaced",
    ]
    kinds = {name: vars(MemorySpecs)[name].ego_hook_kind for name in HOOKS}
    assert kinds["before_remember"] is HookKind.FIRST_RESULT
    assert kinds["on_remember"] is HookKind.NOTIFICATION
    for name in HOOKS:
        method = getattr(MemoryHooks, name)
        parameters = {p.name for p in inspect.signature(method).parameters.values() if p.kind is p.KEYWORD_ONLY}
        assert parameters == set(inspect.signature(getattr(MemorySpecs, name)).parameters) - {"self", "ctx"}, name


def test_without_its_publisher_a_memory_hook_implementation_is_optional(make_host: HostFactory) -> None:
    """An implementation marked optional is accepted with no publisher loaded, and never called."""
    listener = Listener()
    host = make_host({"listener": listener})
    assert host.failures == []
    assert host.is_active("listener")


def test_an_implementation_not_marked_optional_is_refused_without_its_publisher(make_host: HostFactory) -> None:
    class Eager:
        @hookimpl
        def on_remember(self, memory: Memory) -> None:
            return None

    host = make_host({"eager": Eager()})
    assert [(f.plugin, f.stage) for f in host.failures] == [("eager", "validate")]
    assert "implements unknown hook 'on_remember'" in host.failures[0].reason


def test_hook_on_remember(make_host: HostFactory) -> None:
    listener = Listener()
    host = make_host({"publisher": Publisher(), "listener": listener})
    assert MemoryHooks(host.context("publisher")).on_remember(memory=MEMORY) == [
        ("listener", ["heard mem_0123456789ab"])
    ]
    assert listener.seen == [MEMORY.id]


def test_hook_before_remember(make_host: HostFactory) -> None:
    class Guard:
        @hookimpl(optionalhook=True)
        def before_remember(self, draft: RememberDraft) -> Response | None:
            return Response(data="not again", declined=True) if "again" in draft.content else None

    host = make_host({"publisher": Publisher(), "guard": Guard()})
    assert MemoryHooks(host.context("publisher")).before_remember(draft=RememberDraft(content="once")) is None
    assert MemoryHooks(host.context("publisher")).before_remember(draft=RememberDraft(content="again")) == (
        "guard",
        Response(data="not again", declined=True),
    )


def test_hook_on_recall_result(make_host: HostFactory) -> None:
    class Annotator:
        @hookimpl(optionalhook=True)
        def on_recall_result(self, query: RecallQuery, results: Sequence[RecallHit]) -> RecallNote:
            return RecallNote(lines=(f"{len(results)} for {query.context}",), boosts={results[0].memory.id: 0.5})

    host = make_host({"publisher": Publisher(), "annotator": Annotator()})
    [(plugin, note)] = MemoryHooks(host.context("publisher")).on_recall_result(
        query=RecallQuery(context="river"), results=(RecallHit(memory=MEMORY, score=0.4),)
    )
    assert plugin == "annotator"
    assert note.lines == ("1 for river",)
    assert dict(note.boosts) == {MEMORY.id: 0.5}


def test_hook_on_forget(make_host: HostFactory) -> None:
    forgotten: list[str] = []

    class Cleaner:
        @hookimpl(optionalhook=True)
        def on_forget(self, memory: Memory) -> list[str] | None:
            forgotten.append(memory.id)
            return None

    host = make_host({"publisher": Publisher(), "cleaner": Cleaner()})
    assert MemoryHooks(host.context("publisher")).on_forget(memory=MEMORY) == []
    assert forgotten == [MEMORY.id]


def test_hook_on_memory_revised(make_host: HostFactory) -> None:
    seen: list[tuple[bool, bool]] = []

    class Mirror:
        @hookimpl(optionalhook=True)
        def on_memory_revised(self, before: Memory, after: Memory) -> list[str]:
            seen.append((before.is_private, after.is_private))
            return ["mirror updated"]

    host = make_host({"publisher": Publisher(), "mirror": Mirror()})
    after = attrs.evolve(MEMORY, is_private=True)
    assert MemoryHooks(host.context("publisher")).on_memory_revised(before=MEMORY, after=after) == [
        ("mirror", ["mirror updated"])
    ]
    assert seen == [(False, True)]


def test_hook_on_consolidate(make_host: HostFactory) -> None:
    class Merger:
        @hookimpl(optionalhook=True)
        def on_consolidate(self, run: ConsolidationRun) -> Section:
            return Section(key="merge", text=f"{len(run.recent_ids)} replayed")

    host = make_host({"publisher": Publisher(), "merger": Merger()})
    run = ConsolidationRun(since=NOW, until=NOW, recent_ids=("mem_1", "mem_2"))
    assert MemoryHooks(host.context("publisher")).on_consolidate(run=run) == [
        ("merger", Section(key="merge", text="2 replayed"))
    ]


@pytest.mark.anyio
async def test_hook_on_memory_surfaced(make_host: HostFactory) -> None:
    surfaced: list[tuple[str, str]] = []

    class Listener:
        @hookimpl(optionalhook=True)
        def on_memory_surfaced(self, memory: Memory, how: str) -> None:
            surfaced.append((memory.id, how))

    class Dreamer:
        @hookimpl
        def on_startup(self, ctx: PluginContext) -> None:
            self.ctx = ctx

        @hookimpl
        def on_wake_up(self, ctx: PluginContext) -> None:
            old = Memory(id="mem_old", content="the lake in winter", timestamp=datetime(2020, 1, 1, tzinfo=UTC))
            MemoryHooks(ctx).on_memory_surfaced(memory=old, how="involuntary")

    async with mcp_client(
        make_host({"publisher": Publisher(), "listener": Listener(), "dreamer": Dreamer()})
    ) as client:
        await client.call_tool("wake_up", {})
    assert surfaced == [("mem_old", "involuntary")]
