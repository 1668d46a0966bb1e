"""consolidate: replay of the last 24 h on a fixed clock, link work, reports, bounded reads."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from memory_support import recalled_contents

from ego_core import Clock, ConsolidationRun, EmotionalTrace, Memory, Section, hookimpl
from ego_memory.plugin import MemoryPlugin
from ego_memory.service import Memories, new_memory_id
from ego_memory.store.memory_store import MemoryStore

if TYPE_CHECKING:
    from conftest import MemoryHosts

NOW = datetime(2026, 7, 1, 20, 0, tzinfo=UTC)
SEPARATOR = "\n\n---\n"
CONSOLIDATE_SCAFFOLD = "What feels clearer now? What still feels loose?"

OLD = (
    "Learned the Japanese word for persimmon: kaki.",
    "Tried a new ramen shop downtown; the broth was too salty.",
)
RECENT = (
    "Fixed the flaky CI job by pinning the PostgreSQL container version.",
    "Baked sourdough bread with rye flour; the crust cracked nicely.",
    "Watched a documentary about volcanoes in Iceland.",
    "A quiet chess game in the park ended in a draw.",
)


class ConsolidationProbe:
    """A plugin that reports during consolidate and records the run it was given."""

    def __init__(self) -> None:
        self.runs: list[ConsolidationRun] = []

    @hookimpl(optionalhook=True)
    def on_consolidate(self, run: ConsolidationRun) -> Section:
        self.runs.append(run)
        return Section(
            key="probe",
            text=f"Probe: {len(run.recent_ids)} recent memories looked at.",
            scaffold=("Probe scaffold line.",),
        )


def memories_of(plugin: MemoryPlugin) -> Memories:
    assert plugin.memories is not None
    return plugin.memories


def remember_at(plugin: MemoryPlugin, clock: Clock, moment: datetime, content: str) -> str:
    clock.set(moment)
    text = plugin._tools().remember({"content": content, "force": True}, memories_of(plugin).ctx).data
    return text.split("(id: ", 1)[1].split(")", 1)[0]


def links(store: MemoryStore) -> dict[tuple[str, str, str], tuple[float, str]]:
    rows = store.db.execute("SELECT source, target, link_type, confidence, note FROM links").fetchall()
    return {(s, t, k): (c, n) for s, t, k, c, n in rows}


def pair(rows: dict[tuple[str, str, str], tuple[float, str]], a: str, b: str, kind: str) -> tuple[float, str] | None:
    """The link a<->b of ``kind``, asserting both directions agree."""
    forward, backward = rows.get((a, b, kind)), rows.get((b, a, kind))
    assert forward == backward, (forward, backward)
    return forward


def test_consolidate_replays_the_last_day_links_strengthens_and_prunes(memory_hosts: MemoryHosts) -> None:
    clock = Clock(NOW)
    probe = ConsolidationProbe()
    host, plugin = memory_hosts(clock=clock, plugins={"probe": probe})
    ctx = host.context("memory")
    memories = memories_of(plugin)
    store = memories.store
    lifecycle = plugin.lifecycle
    assert lifecycle is not None

    old = [remember_at(plugin, clock, NOW - timedelta(days=3, hours=2 * i), c) for i, c in enumerate(OLD)]
    r1, r2, r3, r4 = (remember_at(plugin, clock, NOW - timedelta(hours=10 - 2 * i), c) for i, c in enumerate(RECENT))
    assert links(store) == {}  # different topics, hours apart: no automatic links
    assert store.link(r1, r3, "related", 0.9)  # both ends recalled in the window: strengthened
    assert store.link(r2, r4, "related", 0.05)  # weak: pruned
    assert store.link(r2, old[0], "related", 0.5)  # ends not co-activated: unchanged
    assert store.link(old[0], old[1], "similar", 0.8)
    store.touch([r1, r3, old[0]], (NOW - timedelta(hours=1)).timestamp())
    store.touch([r2], (NOW - timedelta(hours=30)).timestamp())  # recalled, but before the window

    clock.set(NOW)
    response = lifecycle.consolidate({}, ctx)
    summary, report = response.data.split("\n\n")
    assert summary == (
        "Consolidation complete. Replayed 4 events, strengthened 1 co-activated link(s), created 3 link(s), "
        "pruned 1 weak link(s)."
    )
    assert report == "Probe: 4 recent memories looked at."
    assert response.scaffold == (CONSOLIDATE_SCAFFOLD, "Probe scaffold line.")

    rows = links(store)
    # temporally adjacent pairs of the window got a leads_to link, both ways
    for earlier, later in ((r1, r2), (r2, r3), (r3, r4)):
        assert pair(rows, earlier, later, "leads_to") == (0.6, "replay")
    # co-activated: +0.05 both ways; weak: gone both ways; the rest as they were
    assert pair(rows, r1, r3, "related") == (0.95, "")
    assert pair(rows, r2, r4, "related") is None
    assert pair(rows, r2, old[0], "related") == (0.5, "")
    assert pair(rows, old[0], old[1], "similar") == (0.8, "")
    # nothing reached out of the window
    assert pair(rows, old[1], r1, "leads_to") is None
    assert len(rows) == 2 * 6
    assert store.integrity_problems() == []

    [run] = probe.runs
    assert run.since == NOW - timedelta(hours=24)
    assert run.until == NOW
    assert run.recent_ids == (r1, r2, r3, r4)

    # a second run creates nothing new; the co-activated link grows again, capped at 1.0
    second = lifecycle.consolidate({}, ctx).data.split("\n\n")[0]
    assert second == (
        "Consolidation complete. Replayed 4 events, strengthened 1 co-activated link(s), created 0 link(s), "
        "pruned 0 weak link(s)."
    )
    assert pair(links(store), r1, r3, "related") == (1.0, "")
    third = lifecycle.consolidate({}, ctx).data.split("\n\n")[0]
    assert "strengthened 0 co-activated link(s), created 0 link(s)" in third

    # a day and a half later nothing is recent any more
    clock.set(NOW + timedelta(hours=36))
    later = lifecycle.consolidate({}, ctx).data.split("\n\n")[0]
    assert later == (
        "Consolidation complete. Replayed 0 events, strengthened 0 co-activated link(s), created 0 link(s), "
        "pruned 0 weak link(s)."
    )
    assert probe.runs[-1].recent_ids == ()


def test_consolidate_on_an_empty_store(memory_hosts: MemoryHosts) -> None:
    host, plugin = memory_hosts(clock=Clock(NOW))
    ctx = host.context("memory")
    assert plugin.lifecycle is not None
    response = plugin.lifecycle.consolidate({}, ctx)
    assert response.data == (
        "Consolidation complete. Replayed 0 events, strengthened 0 co-activated link(s), created 0 link(s), "
        "pruned 0 weak link(s)."
    )
    assert response.scaffold[0] == CONSOLIDATE_SCAFFOLD


def test_recall_co_activation_strengthens_links_through_the_real_recall(memory_hosts: MemoryHosts) -> None:
    clock = Clock(NOW)
    host, plugin = memory_hosts(clock=clock)
    ctx = host.context("memory")
    memories = memories_of(plugin)
    store = memories.store
    assert plugin.lifecycle is not None
    a = remember_at(plugin, clock, NOW - timedelta(hours=5), "Planted tomato seedlings in pots on the balcony.")
    b = remember_at(plugin, clock, NOW - timedelta(hours=3), "Watered the tomato seedlings in the balcony pots.")
    rows = links(store)
    assert pair(rows, a, b, "similar") is not None  # auto-linked by similarity
    before = pair(rows, a, b, "similar")
    assert before is not None
    clock.set(NOW - timedelta(hours=1))
    recalled = recalled_contents(
        plugin._tools().recall({"context": "tomato seedlings on the balcony", "n_results": 5}, ctx).data
    )
    assert "Planted tomato seedlings in pots on the balcony." in recalled
    assert "Watered the tomato seedlings in the balcony pots." in recalled
    clock.set(NOW)
    summary = plugin.lifecycle.consolidate({}, ctx).data
    assert "strengthened 1 co-activated link(s)" in summary
    after = pair(links(store), a, b, "similar")
    assert after is not None
    assert after[0] == pytest.approx(min(1.0, before[0] + 0.05))


def _bulk(memories: Memories, moments: Sequence[datetime], prefix: str) -> list[str]:
    """Store many memories in one batch (real embeddings, no auto-links) at the given moments."""
    texts = [f"{prefix} note {i}: item {i * 37 % 101} of the inventory" for i in range(len(moments))]
    vectors = memories.embed(texts)
    batch = [
        Memory(
            id=new_memory_id(),
            content=text,
            timestamp=moment,
            emotional_trace=EmotionalTrace(primary="neutral"),
        )
        for text, moment in zip(texts, moments, strict=True)
    ]
    memories.store.add_many(batch, np.asarray(vectors))
    return [m.id for m in batch]


def test_consolidate_reads_only_the_recent_window(memory_hosts: MemoryHosts, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock(NOW)
    host, plugin = memory_hosts(clock=clock)
    ctx = host.context("memory")
    memories = memories_of(plugin)
    store = memories.store
    old = _bulk(memories, [NOW - timedelta(days=2, minutes=i) for i in range(200)], "old")
    recent = _bulk(memories, [NOW - timedelta(hours=20, minutes=-5 * i) for i in range(30)], "recent")
    old_links = {k: v for k, v in links(store).items() if k[0] in set(old)}

    calls: dict[str, list[Any]] = {"recent": [], "links_among": []}
    real_recent, real_links_among = store.recent, store.links_among

    def spy_recent(since: float, limit: int = 500, **options: Any) -> list[Memory]:
        calls["recent"].append((since, limit))
        return real_recent(since, limit, **options)

    def spy_links_among(ids: Sequence[str]) -> list[tuple[str, str, str, float]]:
        calls["links_among"].append(list(ids))
        return real_links_among(ids)

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("consolidate must not scan the whole store")

    monkeypatch.setattr(store, "recent", spy_recent)
    monkeypatch.setattr(store, "links_among", spy_links_among)
    for name in ("all_ids", "reconcile", "private_contents"):
        monkeypatch.setattr(store, name, refuse)
    monkeypatch.setattr(store.chroma, "all_ids", refuse)

    assert plugin.lifecycle is not None
    summary = plugin.lifecycle.consolidate({}, ctx).data
    assert summary.startswith("Consolidation complete. Replayed 30 events,")
    [(since, limit)] = calls["recent"]
    assert since == (NOW - timedelta(hours=24)).timestamp()
    assert limit <= 501  # bounded: at most the replay limit (and one more to notice truncation)
    assert calls["links_among"] == [recent]
    # the old memories' links were not touched
    assert {k: v for k, v in links(store).items() if k[0] in set(old)} == old_links


def test_consolidate_replays_at_most_the_latest_500_and_says_so(memory_hosts: MemoryHosts) -> None:
    clock = Clock(NOW)
    host, plugin = memory_hosts(clock=clock)
    ctx = host.context("memory")
    memories = memories_of(plugin)
    ids = _bulk(memories, [NOW - timedelta(hours=23, minutes=-i) for i in range(503)], "busy")
    assert plugin.lifecycle is not None
    summary = plugin.lifecycle.consolidate({}, ctx).data
    assert summary.startswith("Consolidation complete. Replayed 500 events,")
    assert "(Only the latest 500 of the last 24h were replayed.)" in summary
    rows = links(memories.store)
    # the latest 500 were chained (the newest included), the three oldest of the window were left alone
    assert pair(rows, ids[501], ids[502], "leads_to") == (0.6, "replay")
    assert pair(rows, ids[3], ids[4], "leads_to") == (0.6, "replay")
    assert not any(key[0] in ids[:3] or key[1] in ids[:3] for key in rows)
    assert memories.store.integrity_problems() == []
