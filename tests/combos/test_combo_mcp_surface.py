"""The built-in plugins' prompts, resources, completion and progress, every plugin together, over an in-memory
MCP client: what a person at Claude Desktop or the MCP Inspector would pick and attach."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from mcp import MCPError

from ego_core import Clock, PluginHost
from ego_core.testing import call_ok, mcp_client

pytestmark = pytest.mark.anyio

NOW = datetime(2027, 3, 14, 18, 0, tzinfo=UTC)
PRIVATE = "The letter I never sent to my sister about the winter we stopped talking."
SECRET = "sk-ant-api03-Zq8mXw2PpL0vB7nR4tY6uK1sD9fG3hJ5aQ"


def prompt_text(result: Any) -> str:
    [message] = result.messages
    return str(message.content.text)


def memory_id(answer: str) -> str:
    """The id a remember answer names."""
    [found] = re.findall(r"\bmem_[0-9a-f]{12}\b", answer)[:1]
    return found


async def resource_text(client: Any, uri: str) -> str:
    [content] = (await client.read_resource(uri)).contents
    return str(content.text)


async def test_every_plugin_offers_its_prompts_resources_and_values(
    combo_host: Callable[..., PluginHost],
) -> None:
    host = combo_host()
    host.clock.set(NOW)
    async with mcp_client(host) as client:
        await call_ok(client, "update_relationship", {"person": "Aiko", "field": "aliases", "value": "Ai"})
        await call_ok(client, "update_relationship", {"person": "Ken", "field": "trust_level", "value": 0.7})
        await call_ok(client, "update_self", {"field": "values", "value": "honesty"})
        await call_ok(client, "remember", {"content": "Aiko and I planted tulips along the fence.", "force": True})
        await call_ok(client, "remember", {"content": PRIVATE, "private": True, "force": True})
        await call_ok(client, "remember", {"content": f"the key was {SECRET}", "force": True})
        listed = {p.name: p for p in (await client.list_prompts()).prompts}
        wake = prompt_text(await client.get_prompt("wake-up", {"person": "Ai"}))
        heartbeat = prompt_text(await client.get_prompt("heartbeat", {}))
        resources = {r.uri for r in (await client.list_resources()).resources}
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        today = await resource_text(client, "ego://memories/today")
        self_model = await resource_text(client, "ego://self")
        desires = await resource_text(client, "ego://desires")
        curiosity = await resource_text(client, "ego://desires/curiosity")
        aiko = await resource_text(client, "ego://people/Ai")
        shared = await resource_text(client, "ego://shared/snapshot")
        people = await client.complete({"type": "ref/prompt", "name": "wake-up"}, {"name": "person", "value": "a"})
        desire_names = await client.complete(
            {"type": "ref/resource", "uri": "ego://desires/{name}"}, {"name": "name", "value": "cu"}
        )
        with pytest.raises(MCPError):
            await client.read_resource("ego://people/Nobody%20Known")
        tools_list = json.dumps([t.model_dump(mode="json") for t in (await client.list_tools()).tools])
    assert list(listed)[:2] == ["wake-up", "heartbeat"]
    assert "wake-up" not in tools_list  # prompts and resources cost the agent no tool tokens
    assert "ego://" not in tools_list
    assert 'You are with Ai: consider_them(person="Ai")' in wake
    assert "remember it with how it felt" in wake
    assert "remember(private=true)" in wake
    assert "attune" in heartbeat
    assert "Once a day, consolidate." in heartbeat
    assert {"ego://memories/today", "ego://self", "ego://desires", "ego://shared/snapshot"} <= resources
    assert {"ego://episodes/{episode_id}", "ego://desires/{name}", "ego://people/{person}"} <= templates
    assert "planted tulips" in today
    assert "1 private memory of today is not shown." in today
    assert PRIVATE not in today
    assert SECRET not in today  # the redaction pipeline masks secrets in resources too
    assert "honesty" in self_model
    assert "Aiko" in self_model
    assert "curiosity" in desires
    assert curiosity.startswith("curiosity: ")
    assert aiko.startswith("Aiko (also Ai")
    assert "tulips" in aiko  # the last shared memory is public: quoted
    assert shared
    assert {"Aiko", "Ai"} <= set(people.completion.values)
    assert "Ken" not in people.completion.values
    assert desire_names.completion.values == ["curiosity"]


async def test_no_resource_shows_a_private_memory(combo_host: Callable[..., PluginHost]) -> None:
    """A private memory is never in a resource: not in today's list, not in an episode, not quoted as the last
    moment shared with someone, not where a public memory or an episode summary quotes it."""
    host = combo_host()
    host.clock.set(NOW)
    async with mcp_client(host) as client:
        await call_ok(client, "update_relationship", {"person": "Aiko", "field": "trust_level", "value": 0.9})
        public = await call_ok(client, "remember", {"content": "Aiko laughed at the rain.", "force": True})
        private = await call_ok(client, "remember", {"content": f"Aiko {PRIVATE}", "private": True, "force": True})
        public_id, private_id = memory_id(public), memory_id(private)
        quoting = await call_ok(client, "remember", {"content": f"I keep thinking of {PRIVATE.lower()}", "force": True})
        created = await call_ok(
            client, "create_episode", {"memory_ids": [private_id, public_id], "summary": f"A day. {PRIVATE}"}
        )
        episode_ids = [word for word in created.split() if word.startswith("ep_")]
        texts = [
            await resource_text(client, "ego://memories/today"),
            await resource_text(client, "ego://self"),
            await resource_text(client, "ego://people/Aiko"),
        ]
        values = await client.complete(
            {"type": "ref/resource", "uri": "ego://episodes/{episode_id}"}, {"name": "episode_id", "value": "ep_"}
        )
        for episode_id in episode_ids:
            texts.append(await resource_text(client, f"ego://episodes/{episode_id}"))
    assert quoting
    assert episode_ids, "the episode was not created"
    assert values.completion.values == episode_ids
    for text in texts:
        assert "letter I never sent" not in text.lower()
        assert "winter we stopped talking" not in text.lower()
    assert "a private memory, not shown" in texts[-1]
    assert "Aiko laughed at the rain" in texts[-1]
    assert "the last" in texts[2]  # the last moment shared with Aiko is private: named, never quoted


async def test_consolidate_reports_progress_to_a_client_that_asks(combo_host: Callable[..., PluginHost]) -> None:
    host = combo_host("memory", "dedup")
    clock: Clock = host.clock
    clock.set(NOW - timedelta(hours=3))
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with mcp_client(host) as client:
        for number in range(12):
            clock.set(NOW - timedelta(hours=3) + timedelta(minutes=10 * number))
            await call_ok(client, "remember", {"content": f"Walk number {number} by the river.", "force": True})
        clock.set(NOW)
        result = await client.call_tool("consolidate", {}, progress_callback=on_progress)
    assert not result.is_error
    positions = [position for position, _total, _message in seen]
    assert positions == sorted(set(positions))
    assert positions[-1] == 10
    assert {total for _position, total, _message in seen} == {10}
    assert any(message and message.startswith("consolidate") for _position, _total, message in seen)
