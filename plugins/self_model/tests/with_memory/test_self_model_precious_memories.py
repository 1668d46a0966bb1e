"""A peak shared with someone is precious (the memory plugin asks the self-model's people who shared it): recall
keeps it vivid when it has faded, and MemoryService.protected names it, so consolidate never merges it away."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from ego_core import MEMORY_STORE, Clock, MemoryService, PluginHost
from ego_core.testing import call_ok, mcp_client

pytestmark = pytest.mark.anyio


async def test_a_peak_shared_with_the_companion_stays_vivid_and_protected(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    now = clock.now()
    host = memory_host()
    host.start()
    async with mcp_client(host) as client:
        clock.set(now - timedelta(days=300))
        shared = "Watched the fireworks over the river with Master."
        alone = "Watched the fireworks over the harbour, alone."
        await call_ok(client, "remember", {"content": shared, "emotion": "moved", "intensity": 0.9})
        clock.set(now - timedelta(days=299))
        await call_ok(client, "remember", {"content": alone, "emotion": "moved", "intensity": 0.9})
        clock.set(now)
        await call_ok(client, "remember", {"content": "Sorted the bookshelf by colour."})
        recalled = await call_ok(client, "recall", {"context": "watching fireworks", "n_results": 2})
    service = host.services.get(MEMORY_STORE, MemoryService)
    assert service is not None
    assert shared in recalled  # precious: vivid although a year has nearly passed
    assert alone not in recalled
    assert "] moved, about a year ago" in recalled  # the one seen alone has faded to an impression
    ids = {m.content: m.id for m, _ in service.nearest("fireworks", 3)}
    assert service.protected([ids[shared], ids[alone]], now) == {ids[shared]}
