"""The agent's tools through a real MCP client: against a gateway over HTTP, against a local store, with the
gateway down, and with the real memory plugin's private memories."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from shared_support import ThreadGateway, agent_host

from ego_core import ConfigError, PluginHost
from ego_core.testing import HostFactory, call_error, call_ok, mcp_client
from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.store import EventFilter, SqlStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def claude_host(
    make_host: HostFactory, gateway: ThreadGateway, token_for: Callable[..., str]
) -> Callable[..., PluginHost]:
    def build(**extra: Any) -> PluginHost:
        return agent_host(make_host, {"gateway_url": gateway.url, "token": token_for("claude"), **extra})

    return build


async def test_tool_definitions_stay_small(claude_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(claude_host()) as client:
        listed = await client.list_tools()
    tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]
    ours = [t for t in tools if t["name"] in ("shared_snapshot", "shared_append")]
    assert len(ours) == 2
    size = sum(len(json.dumps(t, separators=(",", ":"), ensure_ascii=False)) for t in ours)
    assert size <= 1000, f"shared_snapshot + shared_append take {size} characters of tools/list"


async def test_append_then_snapshot(claude_host: Callable[..., PluginHost], store: SqlStore) -> None:
    async with mcp_client(claude_host(project="memory-gateway")) as client:
        empty = await call_ok(client, "shared_snapshot")
        assert "Nothing shared in these scopes yet." in empty
        assert "global, project:memory-gateway" in empty
        saved = await call_ok(
            client,
            "shared_append",
            {
                "scope": "project:memory-gateway",
                "kind": "decision",
                "dedupe_key": "decision:ssot_is_gateway",
                "content": "The gateway is the single source of truth (decided 2026-02-02).",
            },
        )
        assert "Shared (evt_" in saved
        again = await call_ok(
            client,
            "shared_append",
            {
                "scope": "project:memory-gateway",
                "kind": "decision",
                "dedupe_key": "decision:ssot_is_gateway",
                "content": "The gateway is the single source of truth (decided 2026-02-02).",
            },
        )
        assert "Already shared" in again
        text = await call_ok(client, "shared_snapshot", {"limit": 5})
    assert "Pinned:" in text
    assert "decision `decision:ssot_is_gateway`" in text
    assert "claude · project:memory-gateway" in text
    assert "shared_append" in text  # the scaffold names the served tool
    (stored,) = store.list_events(EventFilter())
    assert stored.agent_id == "claude"
    assert stored.source.system == "other"
    assert stored.run_id.startswith("run_")


async def test_refusals_name_what_was_wrong_without_echoing(
    claude_host: Callable[..., PluginHost], store: SqlStore
) -> None:
    async with mcp_client(claude_host()) as client:
        secret = await call_error(
            client,
            "shared_append",
            {"scope": "global", "kind": "config", "dedupe_key": "config:k", "content": "key AKIAQ3EGRT7YHJKL2MNB"},
        )
        assert "API key" in secret
        assert "AKIA" not in secret
        other = await call_error(
            client,
            "shared_append",
            {"scope": "agent:gemini", "kind": "fact", "dedupe_key": "fact:x", "content": "Something."},
        )
        assert "agent:gemini" in other
        scope = await call_error(
            client, "shared_append", {"scope": "team", "kind": "fact", "dedupe_key": "fact:x", "content": "X."}
        )
        assert "`scope`" in scope
        read_other = await call_error(client, "shared_snapshot", {"scopes": "agent:gemini"})
        assert read_other.startswith("Not read:")
        bad_key = await call_error(
            client, "shared_append", {"scope": "global", "kind": "fact", "dedupe_key": "BAD KEY", "content": "X."}
        )
        assert "dedupe_key" in bad_key
    assert store.event_count() == 0


async def test_a_private_memory_never_reaches_the_gateway(
    make_host: HostFactory, gateway: ThreadGateway, token_for: Callable[..., str], store: SqlStore
) -> None:
    host = agent_host(make_host, {"gateway_url": gateway.url, "token": token_for("claude")}, memory=True)
    private = "I told nobody that the night shift scares me; I keep it to myself for now."
    async with mcp_client(host) as client:
        await call_ok(client, "remember", {"content": private, "private": True})
        refused = await call_error(
            client,
            "shared_append",
            {"scope": "global", "kind": "fact", "dedupe_key": "fact:night_shift", "content": f"Note: {private}"},
        )
        assert "private" in refused
        assert "night shift" not in refused
        public = await call_ok(
            client,
            "shared_append",
            {
                "scope": "global",
                "kind": "fact",
                "dedupe_key": "fact:shift_plan",
                "content": "The shift plan is in docs/shifts.md.",
            },
        )
        assert "Shared (evt_" in public
    events = store.list_events(EventFilter(include_deprecated=True))
    assert [e.dedupe_key for e in events] == ["fact:shift_plan"]
    assert all("night shift" not in e.content_md for e in events)


async def test_with_the_gateway_down_the_agent_is_told_to_stop(
    make_host: HostFactory, store: SqlStore, token_for: Callable[..., str]
) -> None:
    running = ThreadGateway(store, GatewaySettings()).start()
    url = running.url
    running.stop()
    host = agent_host(make_host, {"gateway_url": url, "token": token_for("claude"), "timeout_seconds": 2})
    async with mcp_client(host) as client:
        read = await call_error(client, "shared_snapshot")
        write = await call_error(
            client, "shared_append", {"scope": "global", "kind": "fact", "dedupe_key": "fact:x", "content": "X."}
        )
    assert "The shared memory could not be read" in read
    assert "Stop here" in read
    assert "ask them to fix the connection" in read
    assert "could not be written" in write
    assert "nothing was saved" in write


async def test_a_revoked_token_is_a_failed_read(claude_host: Callable[..., PluginHost], store: SqlStore) -> None:
    host = claude_host()
    store.revoke_tokens("claude", datetime.now(UTC))
    async with mcp_client(host) as client:
        read = await call_error(client, "shared_snapshot")
    assert "could not be read" in read
    assert "401" in read


async def test_a_local_store(make_host: HostFactory, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'local.db'}"
    host = agent_host(make_host, {"db": db, "agent_id": "openclaw"})
    async with mcp_client(host) as client:
        await call_ok(
            client,
            "shared_append",
            {
                "scope": "agent:openclaw",
                "kind": "todo",
                "dedupe_key": "todo:backup",
                "content": "Back up the vault.",
                "ttl_days": 7,
            },
        )
        text = await call_ok(client, "shared_snapshot")
        wake = await call_ok(client, "wake_up")
    assert "openclaw · agent:openclaw · todo `todo:backup`" in text
    assert "local store" not in wake  # no line of its own (no path in the agent's context): only the pointer
    assert "shared_snapshot shows what the other agents know." in wake


async def test_without_configuration_there_are_no_tools(make_host: HostFactory) -> None:
    host = agent_host(make_host, {})
    assert not host.tool_served("shared_snapshot")
    assert not host.tool_served("shared_append")
    assert host.commands()  # the operator's commands are there all the same


@pytest.mark.parametrize(
    ("table", "words"),
    [
        ({"gateway_url": "http://127.0.0.1:1"}, "EGO_SHARED_TOKEN"),
        ({"db": "sqlite:///tmp/x.db"}, "agent_id"),
        ({"gateway_url": "http://127.0.0.1:1", "token": "t", "db": "sqlite:///tmp/x.db"}, "not both"),
    ],
)
def test_incomplete_configuration_is_a_startup_error(make_host: HostFactory, table: dict[str, str], words: str) -> None:
    host = agent_host(make_host, table)
    with pytest.raises(ConfigError, match=words):
        host.start()


@pytest.mark.parametrize(
    ("table", "words"),
    [
        ({"gateway_url": "ftp://x"}, "gateway_url"),
        ({"db": "mysql://x"}, "db"),
        ({"agent_id": "Claude"}, "agent_id"),
        ({"limit_recent": 0}, "limit_recent"),
    ],
)
def test_invalid_values_are_config_errors(make_host: HostFactory, table: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        agent_host(make_host, table)
