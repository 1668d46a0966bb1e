"""A mind in time: anticipated moments, precious memories kept within reach, recall that fades to a gist and an
impression, and the dormant memories near a text (the ``memory.store`` service's ``dormant_near``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from memory_support import saved_id

from ego_core import MEMORY_STORE, Clock, MemoryService, PluginHost, Settings
from ego_core.testing import HostFactory, call_ok, mcp_client
from ego_memory.plugin import MemoryPlugin

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def memory_host(
    make_host: HostFactory,
    model_dir: Path,
    data_dir: Path,
    clock: Clock,
    *,
    timezone: str = "UTC",
    plugins: Mapping[str, object] | None = None,
    log: bool = False,
    seed: int = 7,
) -> PluginHost:
    settings = Settings(data_dir=data_dir, timezone=timezone, random_seed=seed)
    host = make_host(
        {"memory": MemoryPlugin(), **(plugins or {})},
        config={"memory": {"model_dir": str(model_dir)}},
        settings=settings,
        clock=clock,
        log=log,
    )
    host.start()
    return host


def service(host: PluginHost) -> MemoryService:
    found = host.services.get(MEMORY_STORE, MemoryService)
    assert found is not None
    return found


async def remember(client: Any, content: str, **args: Any) -> str:
    return saved_id(await call_ok(client, "remember", {"content": content, **args}))


# ---------------------------------------------------------------------------------------------------
# dormant_near


@pytest.mark.anyio
async def test_dormant_near_finds_only_faded_memories_near_the_text(
    make_host: HostFactory, model_dir: Path, tmp_path: Path
) -> None:
    clock = Clock(NOW)
    host = memory_host(make_host, model_dir, tmp_path / "data", clock)
    async with mcp_client(host) as client:
        old_sea = await remember(client, "We walked along the sea at dusk and collected shells.")
        old_cake = await remember(client, "Baked a lemon cake for the first time; it sank in the middle.")
        clock.set(NOW + timedelta(days=400))
        fresh_sea = await remember(client, "Swam in the cold sea this morning, the waves were high.")
        memories = service(host)
        found = memories.dormant_near("the sea and the shore", k=5, at=clock.now())
        ids = [memory.id for memory, _ in found]
        assert old_sea in ids
        assert fresh_sea not in ids  # a fresh memory is not dormant
        assert ids[0] == old_sea  # the most similar first
        similarities = [similarity for _, similarity in found]
        assert similarities == sorted(similarities, reverse=True)
        assert [m.id for m, _ in memories.dormant_near("the sea and the shore", k=1, at=clock.now())] == [old_sea]
        # a year before, nothing was dormant yet; and looking never counts as a recall
        assert memories.dormant_near("the sea and the shore", at=NOW + timedelta(days=1)) == []
        assert all(m.access_count == 0 for m in memories.get([old_sea, old_cake, fresh_sea]))
