"""A memory the owner makes private after it was shared (revise_memory, hook ``on_memory_revised``) is no shared
moment any more: consider_them neither counts nor quotes it — not even when it was made private by a host without
the self-model (another process on the data directory); made public again, it counts again. Japanese and
English."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from self_model_support import NOON, export_lines, saved_id

from ego_core import Clock, PluginHost
from ego_core.testing import HostFactory, ToolRunner, call_ok, mcp_client, tool_text
from ego_memory.plugin import MemoryPlugin

pytestmark = pytest.mark.anyio

CASES = {
    "en": ("Aiko", "Tea with Aiko on the porch.", "Aiko has cancer. She told me tonight.", "cancer"),
    "ja": ("アイコ", "縁側でアイコとお茶を飲んだ。", "アイコが癌になった。今夜打ち明けてくれた。", "癌"),
}


async def revise(host: PluginHost, memory_id: str, private: bool) -> None:
    result = await ToolRunner(host, owner=True).call("revise_memory", {"memory_id": memory_id, "private": private})
    assert not result.is_error, tool_text(result)


@pytest.mark.parametrize("language", sorted(CASES))
async def test_a_moment_made_private_is_neither_counted_nor_quoted(
    memory_host: Callable[..., PluginHost], clock: Clock, tmp_path: Path, language: str
) -> None:
    person, calm, secret, word = CASES[language]
    host = memory_host()
    async with mcp_client(host) as client:
        await call_ok(client, "update_relationship", {"person": person, "field": "trust_level", "value": 0.8})
        clock.set(NOON)
        await call_ok(client, "remember", {"content": calm})
        clock.set(NOON + timedelta(hours=2))
        hidden = saved_id(await call_ok(client, "remember", {"content": secret}))
        clock.set(NOON + timedelta(hours=3))
        before = await call_ok(client, "consider_them", {"person": person})
        assert word in before  # the last moment shared, quoted

        await revise(host, hidden, private=True)
        after = await call_ok(client, "consider_them", {"person": person})
        public = export_lines(host, tmp_path / "public.jsonl")
        assert word not in after
        assert calm in after  # the last moment shared now is the one still public
        assert "one moment" in after
        assert hidden not in {r["memory_id"] for r in public if r["type"] == "shared"}

        await revise(host, hidden, private=False)
        again = await call_ok(client, "consider_them", {"person": person})
        assert word in again
        assert "one moment" not in again


async def test_a_moment_made_private_by_a_host_without_the_self_model_is_never_quoted(
    memory_host: Callable[..., PluginHost], make_host: HostFactory, clock: Clock
) -> None:
    person, calm, secret, word = CASES["ja"]
    host = memory_host()
    async with mcp_client(host) as client:
        await call_ok(client, "update_relationship", {"person": person, "field": "trust_level", "value": 0.8})
        clock.set(NOON)
        await call_ok(client, "remember", {"content": calm})
        clock.set(NOON + timedelta(hours=2))
        hidden = saved_id(await call_ok(client, "remember", {"content": secret}))
        beside = make_host({"memory": MemoryPlugin()}, clock=clock)  # the same data directory, not told
        beside.start()
        try:
            await revise(beside, hidden, private=True)
        finally:
            beside.stop()
        picture = await call_ok(client, "consider_them", {"person": person})
    assert word not in picture
    assert "今夜" not in picture
