"""Concurrency sanity of the lifecycle: users in threads, and forgets that land in the middle of other writes.

The interleavings of the last two tests are forced deterministically: a store read that the operation makes between
deciding on its links and writing them is replaced by one that first forgets a memory (as another thread or another
process may do at that moment).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest
from memory_support import saved_id

from ego_core import Clock, Memory, ToolError
from ego_memory.service import Memories
from ego_memory.store.memory_store import MemoryStore
from ego_memory.tools.lifecycle import Lifecycle

if TYPE_CHECKING:
    from conftest import MemoryHosts

TOPICS = (
    "Walked the dog along the river at dawn",
    "Planted tomato seedlings in pots on the balcony",
    "Fixed the flaky CI job by pinning the PostgreSQL container version",
    "Watched a documentary about volcanoes in Iceland",
    "Baked sourdough bread with rye flour",
    "A quiet chess game in the park ended in a draw",
)
LINK_TYPES = ("similar", "caused_by", "leads_to", "related")


def assert_consistent(store: MemoryStore, alive: set[str]) -> None:
    assert store.integrity_problems() == []
    assert set(store.all_ids()) == alive
    rows = store.db.execute("SELECT source, target, link_type FROM links").fetchall()
    keys = {(s, t, k) for s, t, k in rows}
    assert all((t, s, k) in keys for s, t, k in keys)
    assert all(s in alive and t in alive for s, t, _ in keys)


def test_two_lifecycle_users_in_threads_keep_the_link_invariant(memory_hosts: MemoryHosts) -> None:
    host, plugin = memory_hosts()
    ctx = host.context("memory")
    memories = plugin.memories
    tools = plugin._tools()
    assert memories is not None
    ids = [
        saved_id(tools.remember({"content": f"{topic} (day {day})", "force": True}, ctx).data)
        for day in range(4)
        for topic in TOPICS
    ]
    groups = [ids[0::2], ids[1::2]]  # disjoint; similarity and sequence links cross between them
    barrier = threading.Barrier(3)
    errors: list[BaseException] = []
    forgotten: list[set[str]] = [set(), set()]
    linked: list[set[tuple[str, str, str]]] = [set(), set()]
    stop = threading.Event()

    def user(index: int) -> None:
        lifecycle = Lifecycle(memories)  # each user its own Lifecycle over the shared store
        rng = random.Random(index)
        mine = list(groups[index])
        try:
            barrier.wait()
            for step in range(60):
                alive = [m for m in mine if m not in forgotten[index]]
                if step % 7 == 6 and len(alive) > 4:
                    victim = rng.choice(alive)
                    assert lifecycle.forget({"memory_id": victim}, ctx).data.startswith(f"Forgot (id: {victim}")
                    forgotten[index].add(victim)
                elif forgotten[index] and step % 11 == 10:
                    gone = rng.choice(sorted(forgotten[index]))
                    with pytest.raises(ToolError, match="Memory not found"):
                        lifecycle.link({"source_id": rng.choice(alive), "target_id": gone}, ctx)
                else:
                    a, b = rng.sample(alive, 2)
                    kind = rng.choice(LINK_TYPES)
                    text = lifecycle.link({"source_id": a, "target_id": b, "link_type": kind}, ctx).data
                    assert text.startswith(("Linked ", "Already linked: "))
                    linked[index].add((a, b, kind))
        except BaseException as exc:
            errors.append(exc)

    def reader() -> None:
        lifecycle = Lifecycle(memories)
        try:
            barrier.wait()
            while not stop.is_set():
                tools.recall({"context": "walking the dog by the river", "n_results": 5}, ctx)
                lifecycle.consolidate({}, ctx)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=user, args=(i,)) for i in range(2)]
    threads.append(threading.Thread(target=reader))
    for thread in threads:
        thread.start()
    for thread in threads[:2]:
        thread.join(timeout=600)
    stop.set()
    threads[2].join(timeout=600)
    assert not any(t.is_alive() for t in threads)
    assert errors == []

    store = memories.store
    alive = set(ids) - forgotten[0] - forgotten[1]
    assert_consistent(store, alive)
    rows = {tuple(r) for r in store.db.execute("SELECT source, target, link_type FROM links").fetchall()}
    for a, b, kind in linked[0] | linked[1]:
        if a in alive and b in alive:
            assert (a, b, kind) in rows
            assert (b, a, kind) in rows


def test_a_memory_forgotten_while_consolidate_runs_leaves_no_dangling_link(
    memory_hosts: MemoryHosts, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = datetime(2026, 4, 1, 22, 0, tzinfo=UTC)
    clock = Clock(now)
    host, plugin = memory_hosts(clock=clock)
    ctx = host.context("memory")
    memories = plugin.memories
    tools = plugin._tools()
    assert memories is not None
    ids = []
    for i, topic in enumerate(TOPICS[2:]):  # different topics, two hours apart: no links yet
        clock.set(now - timedelta(hours=8 - 2 * i))
        ids.append(saved_id(tools.remember({"content": topic, "force": True}, ctx).data))
    clock.set(now)
    store = memories.store
    assert store.db.execute("SELECT count(*) FROM links").fetchone()[0] == 0
    victim = ids[1]
    real_links_among = store.links_among

    def forget_first(chosen: Sequence[str]) -> list[tuple[str, str, str, float]]:
        # another user forgets a replayed memory after consolidate read the window
        Lifecycle(memories).forget({"memory_id": victim}, ctx)
        return real_links_among(chosen)

    monkeypatch.setattr(store, "links_among", forget_first)
    assert plugin.lifecycle is not None
    plugin.lifecycle.consolidate({}, ctx)
    monkeypatch.undo()
    assert_consistent(store, set(ids) - {victim})


def test_a_neighbour_forgotten_while_remember_runs_leaves_no_dangling_link(
    memory_hosts: MemoryHosts, monkeypatch: pytest.MonkeyPatch
) -> None:
    host, plugin = memory_hosts()
    ctx = host.context("memory")
    memories: Memories | None = plugin.memories
    assert memories is not None
    tools = plugin._tools()
    first = saved_id(tools.remember({"content": "Planted tomato seedlings in pots on the balcony."}, ctx).data)
    store = memories.store
    real_previous = store.previous

    def forget_first(before: float, window: float, limit: int) -> list[str]:
        # another user forgets the similar memory after remember chose it as a link target
        Lifecycle(memories).forget({"memory_id": first}, ctx)
        return real_previous(before, window, limit)

    monkeypatch.setattr(store, "previous", forget_first)
    try:
        second = saved_id(tools.remember({"content": "Watered the tomato seedlings in the balcony pots."}, ctx).data)
    except ToolError:  # refusing the remember cleanly would be acceptable too
        second = None
    monkeypatch.undo()
    assert_consistent(store, {second} if second else set())
    if second is not None:
        stored: list[Memory] = store.get([second])
        assert [link.target_id for link in stored[0].links] == []
