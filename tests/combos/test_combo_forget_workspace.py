"""Acceptance 1 with workspace sync enabled: after forget, the memory's workspace lines are gone.

Needs the ``ego-workspace-sync`` distribution (run in the tox environments that install it).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ego_core import Clock
from ego_core.testing import HostFactory, call_ok, mcp_client
from ego_memory.plugin import MemoryPlugin
from ego_workspace_sync import WorkspaceSyncPlugin

pytestmark = pytest.mark.anyio

BASE = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TARGET = "Tonight I understood that I keep apologising for asking questions; I want to stop doing that."
OTHERS = (
    "I keep apologising whenever I ask a question, and tonight I noticed why.",
    "Fixed the flaky CI job by pinning the PostgreSQL container version.",
    "Baked sourdough bread with rye flour; the crust cracked nicely.",
)
EARLIER_THOUGHT = "An earlier thought: quiet mornings make me think more clearly."


def workspace_text(root: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md")))


async def test_forget_removes_the_memorys_workspace_lines(make_host: HostFactory, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    clock = Clock(BASE - timedelta(hours=3))
    plugin = MemoryPlugin()
    host = make_host(
        {"memory": plugin, "workspace_sync": WorkspaceSyncPlugin()},
        config={"memory": {}, "workspace_sync": {"workspace_dir": str(workspace)}},
        clock=clock,
    )
    host.start()  # kept started after the client disconnects, to inspect the store
    async with mcp_client(host) as client:
        earlier = await call_ok(client, "remember", {"content": EARLIER_THOUGHT, "category": "introspection"})
        clock.set(BASE)
        saved = await call_ok(
            client, "remember", {"content": TARGET, "category": "introspection", "importance": 5, "emotion": "moved"}
        )
        target = re.search(r"Saved \(id: (mem_[0-9a-f]{12})\)", saved)
        assert target
        target_id = target.group(1)
        ids = []
        for hours, content in enumerate(OTHERS, start=1):
            clock.set(BASE + timedelta(hours=2 * hours))
            ids.append(re.findall(r"mem_[0-9a-f]{12}", await call_ok(client, "remember", {"content": content}))[0])
        await call_ok(client, "link_memories", {"source_id": target_id, "target_id": ids[1], "link_type": "caused_by"})
        await call_ok(client, "link_memories", {"source_id": ids[2], "target_id": target_id})
        assert plugin.memories is not None
        links = plugin.memories.store.get([target_id])[0].links
        assert len({link.target_id for link in links}) == 3

        before = workspace_text(workspace)
        assert f"[id:{target_id}]" in before
        assert "apologising for asking questions" in before
        assert (workspace / "MEMORY.md").read_text(encoding="utf-8").count(f"[id:{target_id}]") == 1
        monologue = workspace / "memory" / "inner-monologue-latest.md"
        assert "apologising for asking questions" in monologue.read_text(encoding="utf-8")

        clock.set(BASE + timedelta(days=1))
        assert (await call_ok(client, "forget", {"memory_id": target_id})).startswith(
            f"Forgot (id: {target_id}, 1d ago)"
        )

    after = workspace_text(workspace)
    assert target_id not in after
    assert "apologising for asking questions" not in after
    for other in ids:
        assert f"[id:{other}]" in after  # the other memories' lines are kept
    assert "quiet mornings" in monologue.read_text(encoding="utf-8")  # the earlier monologue is back
    assert earlier.startswith("Saved (id: ")
    assert plugin.memories.store.integrity_problems() == []
