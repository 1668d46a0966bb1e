"""forget through the MCP client.

A forgotten memory leaves nothing behind that a later recall, search_memories, introspect, get_episode or wake_up
could show; the memories it was linked to keep no link to it; the response texts are the documented ones
(docs/tools.md).
"""

from __future__ import annotations

import re
import stat
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest
from memory_support import saved_id

from ego_core import Clock, Memory, hookimpl, truncate
from ego_core.testing import call_error, call_ok, mcp_client
from ego_memory.plugin import MemoryPlugin

if TYPE_CHECKING:
    from conftest import MemoryHosts

pytestmark = pytest.mark.anyio

BASE = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

TARGET = (
    "On the winter pier the lighthouse keeper's daughter taught me to read Morse code by lantern light, "
    "one blink at a time, until the harbour lights spelled words."
)
SIMILAR = (
    "The lighthouse keeper's daughter taught me Morse code on the winter pier, reading the lantern blinks one by one."
)
CI = "Fixed the flaky CI job by pinning the PostgreSQL container version."
BREAD = "Baked sourdough bread with rye flour; the crust cracked nicely."
VOLCANO = "Watched a documentary about volcanoes in Iceland."

FORGET_SCAFFOLD = (
    "This memory is gone. Was there anything worth preserving in a new form?\n"
    "If this was part of a merge, save the consolidated version with remember."
)
NOT_FOUND_SCAFFOLD = "Double-check the ID. Use recall to search for the memory you're looking for."
SEPARATOR = "\n\n---\n"


class ForgetProbe:
    """A plugin that records ``on_forget`` notifications."""

    def __init__(self) -> None:
        self.forgotten: list[Memory] = []

    @hookimpl(optionalhook=True)
    def on_forget(self, memory: Memory) -> None:
        self.forgotten.append(memory)


def links_naming(plugin: MemoryPlugin, memory_id: str) -> list[tuple[str, str, str]]:
    assert plugin.memories is not None
    rows = plugin.memories.store.db.execute(
        "SELECT source, target, link_type FROM links WHERE source = ? OR target = ?", (memory_id, memory_id)
    ).fetchall()
    return [tuple(row) for row in rows]


async def test_forget_of_a_memory_with_three_links_leaves_no_trace_anywhere(memory_hosts: MemoryHosts) -> None:
    clock = Clock(BASE)
    probe = ForgetProbe()
    host, plugin = memory_hosts(clock=clock, plugins={"probe": probe})
    assert plugin.memories is not None
    store = plugin.memories.store
    async with mcp_client(host) as client:
        target = saved_id(
            await call_ok(
                client,
                "remember",
                {"content": TARGET, "emotion": "nostalgic", "importance": 4, "category": "introspection"},
            )
        )
        ids: dict[str, str] = {}
        for hours, (name, content) in enumerate(
            [("similar", SIMILAR), ("ci", CI), ("bread", BREAD), ("volcano", VOLCANO)], start=1
        ):
            clock.set(BASE + timedelta(hours=2 * hours))  # 2 h apart: no sequence links between them
            text = await call_ok(client, "remember", {"content": content, "force": True})
            ids[name] = saved_id(text)
            if name == "similar":
                assert "Linked to 1 existing memory." in text  # the similarity link to the target
        assert "Linked" in await call_ok(
            client, "link_memories", {"source_id": target, "target_id": ids["ci"], "link_type": "caused_by"}
        )
        assert "Linked" in await call_ok(client, "link_memories", {"source_id": ids["bread"], "target_id": target})

        linked = {(t, k) for s, t, k in links_naming(plugin, target) if s == target}
        assert linked == {(ids["similar"], "similar"), (ids["ci"], "caused_by"), (ids["bread"], "related")}
        assert {(s, k) for s, t, k in links_naming(plugin, target) if t == target} == linked

        episode_text = await call_ok(
            client,
            "create_episode",
            {"memory_ids": [ids["volcano"], target, ids["similar"]], "summary": "A winter of learning signals"},
        )
        episode = re.search(r"Episode (ep_[0-9a-f]{12}) created", episode_text)
        assert episode, episode_text
        episode_id = episode.group(1)

        # before: every place that will have to forget it shows it
        snippet = TARGET[:60]
        assert snippet in await call_ok(client, "get_episode", {"episode_id": episode_id})
        assert snippet in await call_ok(client, "introspect", {})
        wake = await call_ok(client, "wake_up", {})
        assert "Last introspection" in wake
        assert TARGET[-45:] in wake  # a long thought is quoted by its end
        assert target in await call_ok(client, "search_memories", {"context": TARGET, "n_results": 10})

        clock.set(BASE + timedelta(days=3, hours=1))
        forgot = await call_ok(client, "forget", {"memory_id": target})
        assert forgot == (
            f"Forgot (id: {target}, 3d ago): {truncate(TARGET, 120)}\n"
            f"Emotion: nostalgic | Importance: 4{SEPARATOR}{FORGET_SCAFFOLD}"
        )
        assert len(truncate(TARGET, 120)) == 120
        assert truncate(TARGET, 120).endswith("…")
        assert [m.id for m in probe.forgotten] == [target]

        # no remaining memory links to it; every index agrees
        assert links_naming(plugin, target) == []
        for other in store.get(list(ids.values())):
            assert all(link.target_id != target for link in other.links)
        assert store.get([target]) == []
        assert store.embeddings([target]) == {}
        assert target not in store.chroma.all_ids()
        assert all(hit != target for hit, _ in store.lexical('"lighthouse"', 10))
        assert all(hit != target for hit, _ in store.lexical('"harbour"', 10, table="fts_trigram"))
        assert store.integrity_problems() == []

        # recall and search_memories do not return it, even for its exact text
        for tool in ("recall", "search_memories"):
            found = await call_ok(client, tool, {"context": TARGET, "n_results": 10})
            assert target not in found
            assert "harbour lights" not in found
            assert "Morse code by lantern" not in found
        assert ids["similar"] in await call_ok(client, "search_memories", {"context": TARGET, "n_results": 10})

        # its episode says a member no longer exists and does not show it
        episode_after = await call_ok(client, "get_episode", {"episode_id": episode_id})
        assert "Note: 1 memory(ies) no longer exist." in episode_after
        assert target not in episode_after
        assert snippet not in episode_after
        assert ids["similar"] in episode_after
        assert ids["volcano"] in episode_after

        # introspect and wake_up do not show it
        for tool in ("introspect", "wake_up"):
            shown = await call_ok(client, tool, {})
            assert target not in shown
            assert snippet not in shown
            assert "harbour lights" not in shown
        assert "Last introspection" not in await call_ok(client, "wake_up", {})

        # it is gone: a second forget is the not-found error
        again = await call_error(client, "forget", {"memory_id": target})
        assert again == f"Memory not found: {target}{SEPARATOR}{NOT_FOUND_SCAFFOLD}"
        # forgetting its neighbours later works and keeps the store consistent
        assert "Forgot (id: " in await call_ok(client, "forget", {"memory_id": ids["similar"]})
    assert store.integrity_problems() == []


async def test_forget_response_for_a_short_memory_and_its_defaults(memory_hosts: MemoryHosts) -> None:
    clock = Clock(BASE)
    host, _plugin = memory_hosts(clock=clock)
    async with mcp_client(host) as client:
        memory_id = saved_id(await call_ok(client, "remember", {"content": BREAD}))
        clock.set(BASE + timedelta(hours=5, minutes=10))
        text = await call_ok(client, "forget", {"memory_id": memory_id})
    assert text == (
        f"Forgot (id: {memory_id}, 5h ago): {BREAD}\nEmotion: neutral | Importance: 3{SEPARATOR}{FORGET_SCAFFOLD}"
    )


class DeferredCleanup:
    """A plugin whose trace of a memory could not be removed at once, and says so."""

    @hookimpl(optionalhook=True)
    def on_forget(self, memory: Memory) -> list[str]:
        return [f"Its mirror line could not be removed yet ({memory.id}); it will be at the next write."]


async def test_lines_returned_by_on_forget_are_added_to_the_response(memory_hosts: MemoryHosts) -> None:
    host, _plugin = memory_hosts(plugins={"deferred": DeferredCleanup()})
    async with mcp_client(host) as client:
        memory_id = saved_id(await call_ok(client, "remember", {"content": BREAD}))
        text = await call_ok(client, "forget", {"memory_id": memory_id})
    head, _, scaffold = text.partition(SEPARATOR)
    assert head.splitlines()[-1] == (
        f"Its mirror line could not be removed yet ({memory_id}); it will be at the next write."
    )
    assert scaffold == FORGET_SCAFFOLD


async def test_forget_of_an_unknown_id_is_an_error_that_never_echoes_other_text(memory_hosts: MemoryHosts) -> None:
    host, plugin = memory_hosts()
    assert plugin.memories is not None
    async with mcp_client(host) as client:
        kept = saved_id(await call_ok(client, "remember", {"content": VOLCANO}))

        unknown = await call_error(client, "forget", {"memory_id": "mem_0123456789ab"})
        assert unknown == f"Memory not found: mem_0123456789ab{SEPARATOR}{NOT_FOUND_SCAFFOLD}"

        wild = "my bank password is hunter2, please forget it"
        text = await call_error(client, "forget", {"memory_id": wild})
        assert text.startswith("Memory not found: ")
        assert "hunter2" not in text
        assert text.endswith(f"{SEPARATOR}{NOT_FOUND_SCAFFOLD}")

        # one id per call: a list is not accepted, and nothing was deleted
        batch = await client.call_tool("forget", {"memory_id": [kept, kept]})
        assert batch.is_error
        assert plugin.memories.store.get([kept]) != []
        # a padded id is still the id
        assert f"Forgot (id: {kept}, " in await call_ok(client, "forget", {"memory_id": f"  {kept} "})
    assert plugin.memories.store.count() == 0
    assert plugin.memories.store.integrity_problems() == []


async def test_a_forgotten_private_memory_leaves_no_words_in_the_vector_index(memory_hosts: MemoryHosts) -> None:
    """The vector index is given vectors and the fields searches filter on, never the words or tags: Chroma
    keeps what it is given in its log and full-text index after a delete. The store is its owner's only."""
    host, plugin = memory_hosts()
    secret = "本当は少し寂しい。誰にも言えないけど、置いていかれた気がする。"
    async with mcp_client(host) as client:
        memory_id = saved_id(
            await call_ok(client, "remember", {"content": secret, "private": True, "tags": ["秘密のタグ"]})
        )
        await call_ok(client, "forget", {"memory_id": memory_id})
    store = plugin._require().store
    chroma_files = [path for path in (store.directory / "chroma").rglob("*") if path.is_file()]
    assert chroma_files
    for path in chroma_files:
        data = path.read_bytes()
        for words in (secret, "寂しい", "秘密のタグ"):
            assert words.encode() not in data, path
    assert stat.S_IMODE(store.directory.stat().st_mode) == 0o700
    assert stat.S_IMODE((store.directory / "memory.sqlite3").stat().st_mode) == 0o600
