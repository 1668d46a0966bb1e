"""Helpers of the workspace sync tests (a uniquely named module: test directories of several plugins share one
session, so tests import these from here rather than from ``conftest``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from ego_core import Clock, EmotionalTrace, Memory, PluginHost

SAVED = re.compile(r"Saved \(id: (mem_[0-9a-f]{12})\)")

# 14:05 in Tokyo on 2025-03-14 is 05:05 UTC the same day; 23:30 UTC on the 13th is already the 14th in Tokyo.
MOMENT = datetime(2025, 3, 14, 5, 5, tzinfo=UTC)


class SyncHostFactory(Protocol):
    def __call__(
        self,
        workspace: Path | None,
        *,
        clock: Clock | None = None,
        timezone: str = "Asia/Tokyo",
    ) -> PluginHost: ...


def call(host: PluginHost, tool: str, **args: Any) -> str:
    """Call a tool's handler directly (the host must be started; owner tools too); the response data."""
    served = host.tool(tool, owner=True)
    assert served is not None, f"{tool} is not served"
    result = served[1].handler(args, host.context(served[0]))
    assert not isinstance(result, str)
    return str(getattr(result, "data", result))


def remember(host: PluginHost, content: str, **args: Any) -> str:
    """remember through the host's tool; the new memory's id."""
    data = call(host, "remember", content=content, **args)
    found = SAVED.search(data)
    assert found is not None, data
    return found.group(1)


def forget(host: PluginHost, memory_id: str) -> str:
    return call(host, "forget", memory_id=memory_id)


def all_files_text(root: Path) -> str:
    """Every file under the workspace (hidden ones too), as text."""
    if not root.exists():
        return ""
    return "\n".join(p.read_bytes().decode("utf-8", errors="replace") for p in sorted(root.rglob("*")) if p.is_file())


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def sample_memory(
    memory_id: str = "mem_0123456789ab",
    content: str = "A quiet walk by the river",
    *,
    category: str = "daily",
    importance: int = 3,
    private: bool = False,
    timestamp: datetime = MOMENT,
) -> Memory:
    return Memory(
        id=memory_id,
        content=content,
        timestamp=timestamp,
        emotional_trace=EmotionalTrace(primary="curious", intensity=0.6),
        importance=importance,
        category=category,
        is_private=private,
    )
