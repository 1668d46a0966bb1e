"""A forgotten question resurfaces when a related memory is saved, reusing the memory's own embedding
."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from self_model_memory_support import SpyPlugin
from self_model_support import NOON, DesiresStandIn, export_lines, question_id, saved_id

from ego_core import Clock, PluginHost
from ego_core.testing import HostFactory, call_ok, mcp_client
from ego_self_model import SelfModelPlugin

HOME = "What does home mean for something like me?"
JAZZ = "Should I learn to like jazz?"
ALIVE = "What makes a conversation feel alive?"
# Similarities with the default model (USE multilingual v3), whose calibrated `related` threshold is 0.35:
# 0.517 with HOME (0.512 with " I still wonder." added), -0.015 with JAZZ, 0.026 with ALIVE
ABOUT_HOME = "Master asked me what home means to me, and whether a server can be a home."
# 0.458 with JAZZ, below 0.06 with HOME and ALIVE
ABOUT_JAZZ = "Master put on a jazz record tonight and asked whether I liked it."
# below 0.01 with all three
UNRELATED = "We fixed the heartbeat interval: it was in seconds, not minutes."


async def ask(client: Any, question: str, importance: int) -> str:
    value = {"question": question, "importance": importance}
    return question_id(await call_ok(client, "update_self", {"field": "new_question", "value": value}))


@pytest.mark.anyio
async def test_a_related_memory_brings_back_a_fading_question(
    memory_host: Callable[..., PluginHost], clock: Clock, tmp_path: Path
) -> None:
    host = memory_host()
    async with mcp_client(host) as client:
        home = await ask(client, HOME, 3)
        alive = await ask(client, ALIVE, 5)
        clock.set(NOON + timedelta(days=50))
        before = await call_ok(client, "introspect")
        assert home not in before
        assert "Resurfacing" not in before

        unrelated = await call_ok(client, "remember", {"content": UNRELATED})
        assert "💭" not in unrelated
        saved = await call_ok(client, "remember", {"content": ABOUT_HOME})
        data = saved.partition("\n\n---\n")[0]
        assert f'💭 This triggered a forgotten question: "{HOME}" (dormant 8 days, importance 3, {home})' in data

        after = await call_ok(client, "introspect")
        section = after.split("Resurfacing (you'd almost forgotten):\n", 1)[1].split("\n\n", 1)[0]
        assert section == f'- "{HOME}" ({home}, importance 3; a memory brought it back just now)'
        assert f"({alive}, importance 5)" in after.split("Resurfacing")[0]

        again = await call_ok(client, "remember", {"content": ABOUT_HOME + " I still wonder."})
        assert "💭" not in again, "a question just brought back is in mind again: it does not resurface twice"

        clock.set(NOON + timedelta(days=51, hours=1))
        next_day = await call_ok(client, "introspect")
        assert "Resurfacing" not in next_day
        assert f'- "{HOME}" ({home}, importance 3)' in next_day, "brought back: its salience ages from then"
        records = [r for r in export_lines(host, tmp_path / "export.jsonl") if r["type"] == "question"]
    (record,) = [r for r in records if r["id"] == home]
    assert record["resurfaced"] == 1
    assert record["created"] == NOON.isoformat()
    assert record["surfaced"] == (NOON + timedelta(days=50)).isoformat()


@pytest.mark.anyio
async def test_a_dormant_question_resurfaces_too_and_is_never_deleted(
    memory_host: Callable[..., PluginHost], clock: Clock, tmp_path: Path
) -> None:
    host = memory_host()
    async with mcp_client(host) as client:
        jazz = await ask(client, JAZZ, 1)
        clock.set(NOON + timedelta(days=400))
        assert jazz not in await call_ok(client, "introspect")
        records = [r["id"] for r in export_lines(host, tmp_path / "before.jsonl") if r["type"] == "question"]
        assert records == [jazz]
        saved = await call_ok(client, "remember", {"content": ABOUT_JAZZ})
    assert f'💭 This triggered a forgotten question: "{JAZZ}" (dormant 400 days, importance 1, {jazz})' in saved


@pytest.mark.anyio
async def test_active_questions_do_not_resurface(memory_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(memory_host()) as client:
        await ask(client, HOME, 5)
        saved = await call_ok(client, "remember", {"content": ABOUT_HOME})
    assert "💭" not in saved


@pytest.mark.anyio
async def test_resurfacing_reuses_the_memory_embedding(
    memory_host: Callable[..., PluginHost], clock: Clock, spy: SpyPlugin
) -> None:
    host = memory_host({"spy": spy}, memory={"embedder": "spy"})
    async with mcp_client(host) as client:
        await ask(client, HOME, 3)
        await ask(client, JAZZ, 2)
        assert spy.texts() == [HOME, JAZZ], "each question is embedded once, when it is created"
        clock.set(NOON + timedelta(days=50))
        spy.calls.clear()
        saved = await call_ok(client, "remember", {"content": ABOUT_HOME})
        assert "💭" in saved
        assert spy.texts() == [ABOUT_HOME], "the memory is embedded once, by the memory plugin; nothing else is"
        spy.calls.clear()
        await call_ok(client, "introspect")
        await call_ok(client, "wake_up")
        assert spy.calls == []


@pytest.mark.anyio
async def test_questions_without_a_vector_are_embedded_once_when_a_memory_comes(
    make_host: HostFactory, memory_host: Callable[..., PluginHost], clock: Clock, spy: SpyPlugin
) -> None:
    alone = make_host({"self_model": SelfModelPlugin()}, clock=clock)
    async with mcp_client(alone) as client:
        home = await ask(client, HOME, 3)
    clock.set(NOON + timedelta(days=50))
    host = memory_host({"spy": spy}, memory={"embedder": "spy"})
    async with mcp_client(host) as client:
        saved = await call_ok(client, "remember", {"content": ABOUT_HOME})
        assert home in saved
        assert spy.texts() == [ABOUT_HOME, HOME]
        spy.calls.clear()
        await call_ok(client, "remember", {"content": UNRELATED})
        assert spy.texts() == [UNRELATED]


@pytest.mark.anyio
async def test_a_private_memory_may_bring_a_question_back_but_its_text_is_not_kept(
    memory_host: Callable[..., PluginHost], clock: Clock, ego_settings: Any
) -> None:
    host = memory_host()
    async with mcp_client(host) as client:
        home = await ask(client, HOME, 3)
        clock.set(NOON + timedelta(days=50))
        saved = await call_ok(client, "remember", {"content": ABOUT_HOME, "private": True})
        assert home in saved
    folder = ego_settings.data_dir / "self_model"
    stored = b"".join(path.read_bytes() for path in folder.iterdir())
    assert b"server can be a home" not in stored


@pytest.mark.anyio
async def test_the_resurfacing_section_needs_coherence_or_a_related_memory(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    desires = DesiresStandIn(cognitive_coherence=0.59)
    host = memory_host({"desires": desires})
    async with mcp_client(host) as client:
        home = await ask(client, HOME, 3)
        jazz = await ask(client, JAZZ, 2)
        clock.set(NOON + timedelta(days=50))
        assert "Resurfacing" not in await call_ok(client, "introspect")
        await call_ok(client, "remember", {"content": ABOUT_JAZZ})
        related = await call_ok(client, "introspect")
        assert jazz in related.split("Resurfacing")[1]
        assert home not in related
        desires.current["cognitive_coherence"] = 0.6
        both = await call_ok(client, "introspect")
    lines = both.split("Resurfacing (you'd almost forgotten):\n")[1].split("\n\n")[0].splitlines()
    assert lines == [
        f'- "{JAZZ}" ({jazz}, importance 2; a memory brought it back just now)',
        f'- "{HOME}" ({home}, importance 3, dormant 8 days)',
    ]


@pytest.mark.anyio
async def test_forgetting_the_memory_keeps_the_question(memory_host: Callable[..., PluginHost], clock: Clock) -> None:
    host = memory_host()
    async with mcp_client(host) as client:
        home = await ask(client, HOME, 3)
        clock.set(NOON + timedelta(days=50))
        memory_id = saved_id(await call_ok(client, "remember", {"content": ABOUT_HOME}))
        await call_ok(client, "forget", {"memory_id": memory_id})
        assert home in await call_ok(client, "introspect")


@pytest.mark.anyio
@pytest.mark.parametrize(("threshold", "resurfaces"), [(0.5, True), (0.55, False)])
async def test_a_configured_similarity_replaces_the_models_related_threshold(
    memory_host: Callable[..., PluginHost], clock: Clock, threshold: float, resurfaces: bool
) -> None:
    """ABOUT_HOME is 0.517 similar to HOME: related for the model (0.35), and on either side of these values."""
    host = memory_host(resurface_similarity=threshold)
    async with mcp_client(host) as client:
        home = await ask(client, HOME, 3)
        clock.set(NOON + timedelta(days=50))
        saved = await call_ok(client, "remember", {"content": ABOUT_HOME})
    assert (home in saved) is resurfaces
