"""The shared memory in one agent's space (``ego serve --http`` serves one per token, ``ego --agent`` one): the
plugin's table is the same for every agent, so it acts for that space's agent only. A gateway token or an
``agent_id`` of another agent is refused (403) at every read and write; a local store without ``agent_id`` is
written by each agent as itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from shared_support import ThreadGateway

from ego_core import ConfigError, PluginHost, Settings
from ego_core.testing import HostFactory, agent_settings, call_error, call_ok, mcp_client
from ego_shared_memory import SharedMemoryPlugin
from ego_shared_memory.client import RefusedError
from ego_shared_memory.config import SharedMemoryConfig
from ego_shared_memory.readers import Readers
from ego_shared_memory.store import EventFilter, SqlStore, open_store

pytestmark = pytest.mark.anyio

APPEND = {"scope": "global", "kind": "fact", "dedupe_key": "fact:kettle", "content": "The kettle is in the shed."}
APPEND_JA = {"scope": "global", "kind": "fact", "dedupe_key": "fact:yakan", "content": "やかんは物置にある。"}


@pytest.fixture
def space_host(make_host: HostFactory, ego_settings: Settings) -> Callable[..., PluginHost]:
    """A host on ``agent``'s space (None: the data dir itself) with this ``[plugins.shared_memory]`` table."""

    def build(agent: str | None, **table: Any) -> PluginHost:
        settings = agent_settings(ego_settings, agent) if agent is not None else ego_settings
        return make_host({"shared_memory": SharedMemoryPlugin()}, settings=settings, config={"shared_memory": table})

    return build


def stored(url: str) -> list[tuple[str, str]]:
    store = open_store(url)
    try:
        return sorted((event.agent_id, event.content_md) for event in store.list_events(EventFilter()))
    finally:
        store.close()


async def test_a_local_store_without_agent_id_is_written_by_each_agent_as_itself(
    space_host: Callable[..., PluginHost], tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'shared.db'}"
    for agent, entry in (("claude", APPEND), ("gemini", APPEND_JA)):
        async with mcp_client(space_host(agent, db=db, project="garden")) as client:
            await call_ok(client, "shared_append", entry)
            await call_ok(
                client,
                "shared_append",
                {"scope": f"agent:{agent}", "kind": "todo", "dedupe_key": "todo:own", "content": f"{agent}'s own."},
            )
            snapshot = await call_ok(client, "shared_snapshot")
            assert f"global, project:garden, agent:{agent}" in snapshot
            assert f"{agent}'s own." in snapshot
            other = "gemini" if agent == "claude" else "claude"
            assert f"{other}'s own." not in snapshot
    assert stored(db) == sorted(
        [
            ("claude", APPEND["content"]),
            ("claude", "claude's own."),
            ("gemini", APPEND_JA["content"]),
            ("gemini", "gemini's own."),
        ]
    )


async def test_another_agents_agent_id_is_refused_in_this_space(
    space_host: Callable[..., PluginHost], tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'shared.db'}"
    async with mcp_client(space_host("claude", db=db, agent_id="claude")) as claude:
        await call_ok(claude, "shared_append", {**APPEND, "scope": "agent:claude"})
    async with mcp_client(space_host("gemini", db=db, agent_id="claude")) as gemini:
        read = await call_error(gemini, "shared_snapshot")
        written = await call_error(gemini, "shared_append", APPEND_JA)
        listed = [r.uri for r in (await gemini.list_resources()).resources]
        assert "ego://shared/snapshot" in listed
    assert read.startswith("Not read: this shared memory is written as claude")
    assert "gemini may not act as another agent" in read
    assert APPEND["content"] not in read
    assert written.startswith("Not shared: this shared memory is written as claude")
    assert stored(db) == [("claude", APPEND["content"])]


async def test_another_agents_gateway_token_is_refused_in_this_space(
    space_host: Callable[..., PluginHost], gateway: ThreadGateway, token_for: Callable[..., str], store: SqlStore
) -> None:
    claude_token = token_for("claude")
    async with mcp_client(space_host("claude", gateway_url=gateway.url, token=claude_token)) as claude:
        await call_ok(claude, "shared_append", {**APPEND, "scope": "agent:claude"})
        assert APPEND["content"] in await call_ok(claude, "shared_snapshot")
    async with mcp_client(space_host("gemini", gateway_url=gateway.url, token=claude_token)) as gemini:
        read = await call_error(gemini, "shared_snapshot", {"scopes": "agent:claude"})
        written = await call_error(gemini, "shared_append", APPEND_JA)
    assert read.startswith("Not read: agent_id gemini does not match the token, which belongs to claude")
    assert APPEND["content"] not in read
    assert written.startswith("Not shared: agent_id gemini does not match the token, which belongs to claude")
    assert [(e.agent_id, e.content_md) for e in store.list_events(EventFilter())] == [("claude", APPEND["content"])]
    async with mcp_client(space_host(None, gateway_url=gateway.url, token=claude_token)) as unnamed:
        assert APPEND["content"] in await call_ok(unnamed, "shared_snapshot")  # no space: the token decides


def test_the_readers_service_reads_as_the_spaces_agent(
    gateway: ThreadGateway, token_for: Callable[..., str], tmp_path: Path
) -> None:
    claude_token = token_for("claude")
    as_gemini = Readers(SharedMemoryConfig(gateway_url=gateway.url, token=claude_token), "gemini").agent()
    as_claude = Readers(SharedMemoryConfig(gateway_url=gateway.url, token=claude_token), "claude").agent()
    local = Readers(SharedMemoryConfig(db=f"sqlite:///{tmp_path / 'local.db'}", agent_id="claude"), "gemini").agent()
    try:
        assert as_claude.snapshot(None, 5)["agent_id"] == "claude"
        for client in (as_gemini, local):
            with pytest.raises(RefusedError) as refused:
                client.snapshot(None, 5)
            assert refused.value.status == 403
    finally:
        for client in (as_gemini, as_claude, local):
            client.close()


def test_outside_a_space_a_local_store_still_needs_agent_id(
    space_host: Callable[..., PluginHost], tmp_path: Path
) -> None:
    host = space_host(None, db=f"sqlite:///{tmp_path / 'shared.db'}")
    with pytest.raises(ConfigError, match="agent_id"):
        host.start()
