"""Counts agree with their nouns ("1 memory", "2 memories"), and a memory linked to nothing is not asked
about its connections."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from memory_support import saved_id

from ego_core.testing import call_ok, mcp_client
from ego_memory.tools.memory import REMEMBER_SCAFFOLD, UNLINKED_SCAFFOLD

if TYPE_CHECKING:
    from conftest import MemoryHosts

SEPARATOR = "\n\n---\n"


@pytest.mark.anyio
async def test_counts_agree_with_their_nouns_and_scaffolds_fit(memory_hosts: MemoryHosts) -> None:
    host, plugin = memory_hosts()
    ctx = host.context("memory")
    async with mcp_client(host) as client:
        first = await call_ok(
            client, "remember", {"content": "The cat slept on the warm windowsill.", "emotion": "happy"}
        )
        data, _, scaffold = first.partition(SEPARATOR)
        assert data.splitlines()[1:] == ["No similar memories found yet."]
        assert scaffold.splitlines() == [UNLINKED_SCAFFOLD]
        assert "connections" not in scaffold

        second = await call_ok(client, "remember", {"content": "The cat slept on the warm windowsill again today."})
        assert second.splitlines()[0].endswith("Linked to 1 existing memory.")
        assert second.partition(SEPARATOR)[2].splitlines() == [REMEMBER_SCAFFOLD]

        both = await call_ok(client, "recall", {"context": "the cat on the windowsill", "n_results": 2})
        assert both.splitlines()[0] == "2 of 2 matches:"
        one = await call_ok(client, "recall", {"context": "the cat", "n_results": 1, "emotion_filter": "happy"})
        assert one.splitlines()[0] == "1 of 1 match:"

        episode = await call_ok(client, "create_episode", {"memory_ids": [saved_id(first)], "summary": "A nap."})
        assert " created: 1 memory, " in episode

    checks = {check.name: check.detail for check in plugin.doctor_checks(host.context("memory"))}
    assert checks["store"].startswith("2 memories, indexes consistent")
    plugin._lifecycle().forget({"memory_id": saved_id(first)}, ctx)
    checks = {check.name: check.detail for check in plugin.doctor_checks(host.context("memory"))}
    assert checks["store"].startswith("1 memory, indexes consistent")
