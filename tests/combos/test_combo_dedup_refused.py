"""Issue 5, acceptance 4 with every built-in plugin: a refused save leaves every file byte for byte as it was.

The workspace mirror (workspace_sync), the stores and the plugins' state files are compared by content hash;
only the day's log (one ``tool_call`` record per refused call) and SQLite's shared-memory index (rewritten by
any reader) may change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ego_core import MEMORY_STORE, MemoryService, PluginHost
from ego_core.kernel.config import Settings
from ego_core.testing import call_ok, mcp_client

pytestmark = pytest.mark.anyio

HERONS = "I walked along the river this morning and watched the herons fishing."
# The same content words in the same order (only "," "I" "!" differ), cosine 0.888 with the default embedder (use),
# above its duplicate threshold 0.85: refused. (A rewording in other words is saved, as a merge candidate.)
NEAR_HERONS = "I walked along the river this morning, and I watched the herons fishing!"
SECRET = "I still think about the argument with Master last winter, and it hurts."
NOT_SAVED = "Not saved — very similar memory already exists."


def contents(*roots: Path) -> dict[str, str]:
    """sha256 of every file under the roots, except logs and SQLite's ``-shm`` index."""
    found: dict[str, str] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and "logs" not in path.relative_to(root).parts and not path.name.endswith("-shm"):
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


async def test_a_refused_save_changes_no_file(
    combo_host: Callable[..., PluginHost], workspace: Path, ego_settings: Settings
) -> None:
    data_dir = ego_settings.data_dir
    host = combo_host()
    async with mcp_client(host) as client:
        memories = host.services.get(MEMORY_STORE, MemoryService)
        assert memories is not None
        vectors = memories.embed([HERONS, NEAR_HERONS])
        # a near duplicate, not the same text: refused by the similarity, not by an exact match
        assert memories.similarity_profile.duplicate <= float(np.dot(vectors[0], vectors[1])) < 0.99
        await call_ok(client, "remember", {"content": HERONS, "importance": 4})
        await call_ok(client, "remember", {"content": SECRET, "private": True, "emotion": "sad"})
        await call_ok(client, "recall", {"context": "herons by the river"})
        assert "herons" in "".join(p.read_text(encoding="utf-8") for p in workspace.rglob("*.md"))
        before = contents(workspace, data_dir)

        refused = [
            await call_ok(client, "remember", {"content": HERONS}),
            await call_ok(client, "remember", {"content": NEAR_HERONS, "emotion": "happy", "importance": 5}),
            await call_ok(client, "remember", {"content": SECRET}),
        ]

        assert all(text.startswith(NOT_SAVED) for text in refused), refused
        assert contents(workspace, data_dir) == before
