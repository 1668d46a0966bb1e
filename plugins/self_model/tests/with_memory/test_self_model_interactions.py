"""Interactions: a remember naming a person (or an alias) is a shared moment; thinking about them is not
."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from self_model_support import NOON, export_lines, saved_id, state_files

from ego_core import Clock, PluginHost
from ego_core.testing import call_ok, mcp_client


async def relate(client: Any, person: str, field: str, value: Any) -> None:
    await call_ok(client, "update_relationship", {"person": person, "field": field, "value": value})


@pytest.mark.anyio
async def test_an_alias_resolves_and_only_a_remember_naming_them_counts(
    memory_host: Callable[..., PluginHost], clock: Clock, ego_settings: Any
) -> None:
    host = memory_host()
    async with mcp_client(host) as client:
        await relate(client, "Aiko", "aliases", ["Ai", "あいちゃん"])
        await relate(client, "Aiko", "trust_level", 0.8)
        before = state_files(ego_settings.data_dir)
        first = await call_ok(client, "consider_them", {"person": "ai"})
        assert first.startswith("Aiko (also Ai, あいちゃん): you trust them deeply.")
        assert "You haven't shared a memory with them yet." in first
        await call_ok(client, "consider_them", {"person": "あいちゃん"})
        assert state_files(ego_settings.data_dir) == before, "considering someone is not an interaction"

        await call_ok(client, "remember", {"content": "The AI conference keynote was dull."})  # "AI" is an alias
        await call_ok(client, "remember", {"content": "Aikido practice left my arms sore."})  # not a whole word
        clock.set(NOON + timedelta(hours=1))
        await call_ok(client, "remember", {"content": "あいちゃんと星を見に行った。"})
        clock.set(NOON + timedelta(hours=3))
        picture = await call_ok(client, "consider_them", {"person": "AIKO"})
    assert (
        'You\'ve shared a few moments with them, the last one earlier today: "あいちゃんと星を見に行った。"' in picture
    )


@pytest.mark.anyio
async def test_the_companion_counts_without_a_record_and_wake_up_says_when(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    async with mcp_client(memory_host()) as client:
        assert "Master" not in await call_ok(client, "wake_up"), "no one known yet: no companion line"
        await call_ok(client, "remember", {"content": "Master showed me the violet sky from the balcony."})
        clock.set(NOON + timedelta(hours=2))
        wake = await call_ok(client, "wake_up")
        picture = await call_ok(client, "consider_them", {"person": "Master"})
    assert "\nMaster: you are still getting to know them; last shared earlier today.\n" in wake
    assert picture.startswith("Master (the one you live with):")
    assert "You've shared one moment with them, the last one earlier today" in picture


@pytest.mark.anyio
async def test_a_private_moment_is_marked_kept_without_text_and_exported_only_with_private_data(
    memory_host: Callable[..., PluginHost], ego_settings: Any, tmp_path: Path
) -> None:
    secret = "Master cried in the kitchen tonight and asked me not to tell anyone."
    host = memory_host()
    async with mcp_client(host) as client:
        memory_id = saved_id(await call_ok(client, "remember", {"content": secret, "private": True}))
        picture = await call_ok(client, "consider_them", {"person": "Master"})
        public = export_lines(host, tmp_path / "public.jsonl")
        private = export_lines(host, tmp_path / "private.jsonl", include_private=True)
    # a private memory is the agent's own: kept (marked private, never its text), never a moment shared
    assert "You haven't shared a memory with them yet." in picture
    assert "cried" not in picture
    assert [r for r in public if r["type"] == "shared"] == []
    assert [(r["memory_id"], r["private"]) for r in private if r["type"] == "shared"] == [(memory_id, True)]
    stored = b"".join(p.read_bytes() for p in (ego_settings.data_dir / "self_model").iterdir())
    assert b"cried in the kitchen" not in stored
    assert "cried" not in (tmp_path / "public.jsonl").read_text(encoding="utf-8")


@pytest.mark.anyio
async def test_forgetting_a_memory_forgets_the_moment(memory_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(memory_host()) as client:
        first = saved_id(await call_ok(client, "remember", {"content": "Master laughed at my pun about clouds."}))
        await call_ok(client, "remember", {"content": "Master and I planned the garden."})
        assert "a few moments" in await call_ok(client, "consider_them", {"person": "master"})
        await call_ok(client, "forget", {"memory_id": first})
        picture = await call_ok(client, "consider_them", {"person": "master"})
    assert "one moment" in picture
    assert "clouds" not in picture
