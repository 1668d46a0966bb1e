"""revise_memory: the owner's corrections of importance, tags and privacy (an owner tool by default, offered to
the agent with ``revise_tool = true``), through the real tool path, with its hook and the private redaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from memory_support import recall_block, saved_id

from ego_core import Memory, hookimpl
from ego_core.testing import ToolRunner, call_error, call_ok, mcp_client, tool_text

if TYPE_CHECKING:
    from conftest import MemoryHosts

pytestmark = pytest.mark.anyio

KYOTO = "京都の桜を一緒に見た。マスターが写真を撮ってくれた。"
RAIN = "雨の日にマスターと映画を見た。"


class RevisionProbe:
    def __init__(self) -> None:
        self.seen: list[tuple[Memory, Memory]] = []

    @hookimpl(optionalhook=True)
    def on_memory_revised(self, before: Memory, after: Memory) -> list[str]:
        self.seen.append((before, after))
        return ["The probe saw it."]


async def test_an_owner_tool_by_default_never_offered_to_the_agent(memory_hosts: MemoryHosts) -> None:
    host, plugin = memory_hosts()
    async with mcp_client(host) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        memory_id = saved_id(await call_ok(client, "remember", {"content": KYOTO}))
        refused = await call_error(client, "revise_memory", {"memory_id": memory_id, "importance": 5})
    assert "revise_memory" not in listed
    assert refused.startswith("Unknown tool: revise_memory.")
    assert "revise_memory" not in refused.split("Available tools:", 1)[1]

    owner = ToolRunner(host, owner=True)
    asked = {"memory_id": memory_id, "importance": 5, "tags": ["桜", " 京都 ", "桜"]}
    result = await owner.call("revise_memory", asked)
    assert not result.is_error, tool_text(result)
    assert tool_text(result) == f"Revised (id: {memory_id}): importance 3 -> 5; tags: 桜, 京都."
    assert plugin.memories is not None
    [stored] = plugin.memories.store.get([memory_id])
    assert (stored.importance, stored.tags, stored.content) == (5, ("桜", "京都"), KYOTO)


async def test_offered_to_the_agent_when_configured(memory_hosts: MemoryHosts) -> None:
    probe = RevisionProbe()
    host, _plugin = memory_hosts(memory={"revise_tool": True}, plugins={"probe": probe})
    async with mcp_client(host) as client:
        assert "revise_memory" in {tool.name for tool in (await client.list_tools()).tools}
        memory_id = saved_id(await call_ok(client, "remember", {"content": KYOTO}))
        saved_id(await call_ok(client, "remember", {"content": RAIN}))

        made_private = await call_ok(client, "revise_memory", {"memory_id": memory_id, "private": True})
        again = await call_ok(client, "revise_memory", {"memory_id": memory_id, "private": True})
        recalled = await call_ok(client, "recall", {"context": "桜", "n_results": 2})

    assert made_private == f"Revised (id: {memory_id}): now private.\nThe probe saw it."
    assert again == f"Nothing changed (id: {memory_id}): it already is so."
    assert "private: true" in recall_block(recalled, KYOTO)
    [(before, after)] = probe.seen
    assert (before.is_private, after.is_private, after.id) == (False, True, memory_id)
    # from now on the private text is masked wherever the redaction pipeline runs (logs, other plugins' files)
    assert KYOTO not in host.redact(f"she said: {KYOTO}")

    owner = ToolRunner(host, owner=True)
    await owner.call("revise_memory", {"memory_id": memory_id, "private": False})
    assert host.redact(f"she said: {KYOTO}") == f"she said: {KYOTO}"


async def test_the_revision_survives_a_restart(memory_hosts: MemoryHosts) -> None:
    host, _plugin = memory_hosts()
    owner = ToolRunner(host, owner=True)
    async with mcp_client(host) as client:
        memory_id = saved_id(await call_ok(client, "remember", {"content": RAIN, "tags": ["映画"]}))
    await owner.call("revise_memory", {"memory_id": memory_id, "private": True, "tags": []})
    data_dir = host.settings.data_dir
    host.stop()

    again, plugin = memory_hosts(data_dir)
    assert plugin.memories is not None
    [stored] = plugin.memories.store.get([memory_id])
    assert (stored.is_private, stored.tags) == (True, ())
    assert RAIN not in again.redact(RAIN)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"memory_id": "mem_000000000000", "importance": 4}, "Memory not found: mem_000000000000"),
        ({"memory_id": "<script>", "private": True}, "Memory not found: that id (memory ids look like mem_"),
        ({"memory_id": "ID"}, "give at least one of importance, tags, private to change"),
        ({"memory_id": "ID", "importance": 9}, "Invalid arguments for revise_memory"),
        ({"memory_id": "ID", "importance": "high"}, "Invalid arguments for revise_memory"),
        ({"memory_id": "ID", "tags": ["x" * 65]}, "Invalid arguments for revise_memory"),
        ({"memory_id": "ID", "private": "yes"}, "Invalid arguments for revise_memory"),
        ({"memory_id": "ID", "content": "new words"}, "Invalid arguments for revise_memory"),
    ],
)
async def test_bad_revisions_are_refused_and_change_nothing(
    memory_hosts: MemoryHosts, arguments: dict[str, object], expected: str
) -> None:
    host, plugin = memory_hosts()
    owner = ToolRunner(host, owner=True)
    async with mcp_client(host) as client:
        memory_id = saved_id(await call_ok(client, "remember", {"content": KYOTO, "importance": 2, "tags": ["桜"]}))
    sent = {key: memory_id if value == "ID" else value for key, value in arguments.items()}

    result = await owner.call("revise_memory", sent)

    assert result.is_error
    assert expected in tool_text(result)
    assert plugin.memories is not None
    [stored] = plugin.memories.store.get([memory_id])
    assert (stored.importance, stored.tags, stored.is_private, stored.content) == (2, ("桜",), False, KYOTO)
