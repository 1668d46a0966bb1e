"""Helpers for the notions tests: a fixed clock, remembering and linking over MCP."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from ego_core.testing import SEPARATOR, call_ok

NOW = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
DAY = timedelta(days=1)
SAVED = re.compile(r"Saved \(id: (mem_[0-9a-f]+)\)")
NOTION_LINE = re.compile(r'^- (notion_[0-9a-f]{12}): "(.*)" conf=([0-9.]+) reinf=(\d+)', re.MULTILINE)


def data_of(text: str) -> str:
    return text.split(SEPARATOR, maxsplit=1)[0]


async def remember(client: Any, content: str, **extra: Any) -> str:
    text = await call_ok(client, "remember", {"content": content, **extra})
    found = SAVED.search(text)
    assert found, text
    return found.group(1)


async def link_all(client: Any, ids: Sequence[str]) -> None:
    """Link every pair of ``ids`` (a clique)."""
    for source, target in itertools.combinations(ids, 2):
        await call_ok(client, "link_memories", {"source_id": source, "target_id": target, "link_type": "related"})


async def clique(client: Any, contents: Iterable[str], **extra: Any) -> list[str]:
    ids = [await remember(client, content, **extra) for content in contents]
    await link_all(client, ids)
    return ids


def listed(text: str) -> list[tuple[str, str, float, int]]:
    """(id, label, confidence, reinforcements) of each notion curate_notions(list) shows."""
    return [(m[0], m[1], float(m[2]), int(m[3])) for m in NOTION_LINE.findall(data_of(text))]
