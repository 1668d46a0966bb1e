"""The notions benchmark: consolidate's notion pass, the explore walk and the network view on large stores.

Corpus per size: synthetic diary sentences (see :mod:`ego_bench.scale`) bulk-loaded with random unit vectors
(the notion pass reads links, tags and emotions, never vectors), 500 a day (consolidate's replay window holds
one day). Memories come in groups of five on one topic tag, linked to each other (``similar``), each with one
link to a random earlier memory and chained in time order as remember chains them. Every fourth group before
the timed days already holds a notion (confidences, ages and reinforcements drawn at random), so the pass's
maintenance (decay, pruning, merge, links) works on a store of realistic size. Then ``runs`` daily passes are
timed (one ``on_consolidate`` notion pass over each of the last days' windows, in order), and the walk (depth
2, from memories of the last day and from notions) and the network view are timed on the result.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from ego_bench.common import percentiles, report_header
from ego_bench.scale import synthetic_sentences
from ego_core import Clock, ConsolidationRun, EmotionalTrace, Memory, MemoryLink, Settings, build_host
from ego_memory.plugin import MemoryPlugin
from ego_memory.progress import progress
from ego_memory.record.emotions import EMOTION_PROFILES
from ego_memory.service import Memories, new_memory_id
from ego_notions import Notion, NotionBook, NotionsPlugin
from ego_notions.graph import network, walk
from ego_notions.store import new_id

PER_DAY = 500
GROUP = 5
TOPICS = 400
NOTION_EVERY = 4
WALKS = 60
NETWORKS = 10
PASS_BUDGET_MS = 5000.0
DAY = timedelta(days=1)


def _load(memories: Memories, size: int, origin: datetime, rng: random.Random, show: bool) -> list[list[str]]:
    """Bulk-load ``size`` memories; returns the groups of ids (each group shares a tag and is a clique)."""
    dimension = int(memories.embed(["dimension"]).shape[-1])
    emotions = list(EMOTION_PROFILES)
    spacing = DAY / PER_DAY
    groups: list[list[str]] = []
    ids: list[str] = []
    batch = 2000
    for offset in progress(range(0, size, batch), total=(size + batch - 1) // batch, desc="load", enabled=show):
        count = min(batch, size - offset)
        texts = list(synthetic_sentences(count, start=offset))
        vectors = np.asarray(np.random.default_rng(offset).normal(size=(count, dimension)), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        items: list[Memory] = []
        for i, text in enumerate(texts):
            number = offset + i
            if number % GROUP == 0:
                groups.append([])
                topic = f"topic{rng.randrange(TOPICS)}"
                emotion = rng.choice(emotions)
            memory_id = new_memory_id()
            links = [MemoryLink(member, "similar", 0.8, "") for member in groups[-1]]
            if ids:
                links.append(MemoryLink(ids[-1], "leads_to", 1.0, "sequence"))
                links.append(MemoryLink(rng.choice(ids), "related", 0.5, ""))
            profile = EMOTION_PROFILES[emotion]
            items.append(
                Memory(
                    id=memory_id,
                    content=text,
                    timestamp=origin + spacing * number,
                    emotional_trace=EmotionalTrace(
                        primary=emotion, intensity=profile.intensity, valence=profile.valence, arousal=profile.arousal
                    ),
                    importance=rng.randint(2, 5),
                    tags=(topic,),
                    links=tuple({(link.target_id, link.link_type): link for link in links}.values()),
                )
            )
            groups[-1].append(memory_id)
            ids.append(memory_id)
        memories.store.add_many(items, vectors)
    return groups


def _seed_notions(
    book: NotionBook, groups: Sequence[Sequence[str]], until: int, now: datetime, rng: random.Random
) -> int:
    """A notion for every fourth group of the first ``until`` groups (the store before the timed days)."""
    made: list[Notion] = []
    for number, group in enumerate(groups[:until]):
        if number % NOTION_EVERY or len(group) < GROUP:
            continue
        created = now - timedelta(days=rng.uniform(1, 60))
        tag = f"topic{number % TOPICS}"
        made.append(
            Notion(
                id=new_id(),
                label=f"{tag} (curious)",
                tone="curious",
                valence=round(rng.uniform(-0.5, 0.8), 3),
                confidence=round(rng.uniform(0.4, 1.0), 3),
                anchored=created,
                created=created,
                reinforced=created,
                sources=tuple(group),
                tags=(tag,),
                reinforcement_count=rng.randint(0, 8),
            )
        )
    for start in range(0, len(made), 1000):
        book.db.apply(save=made[start : start + 1000])
    return len(made)


def _one_size(
    size: int, runs: int, settings: Settings, table: dict[str, Any], work: Path, *, show: bool
) -> dict[str, Any]:
    rng = random.Random(size)
    origin = datetime(2025, 1, 1, tzinfo=UTC)
    end = origin + DAY * (size / PER_DAY)
    clock = Clock(end)
    memory, notions = MemoryPlugin(), NotionsPlugin()
    host_settings = attrs.evolve(settings, data_dir=work, plugin_tables={"memory": dict(table)})
    host = build_host(host_settings, autoload=False, plugins={"memory": memory, "notions": notions}, clock=clock)
    host.start()
    try:
        if memory.memories is None or notions.book is None:
            raise RuntimeError("; ".join(f.describe() for f in host.failures) or "a plugin did not start")
        book = notions.book
        started = time.perf_counter()
        groups = _load(memory.memories, size, origin, rng, show)
        built = time.perf_counter() - started
        ids = [memory_id for group in groups for memory_id in group]
        timed_groups = runs * PER_DAY // GROUP
        seeded = _seed_notions(book, groups, len(groups) - timed_groups, end - runs * DAY, rng)
        passes: list[dict[str, Any]] = []
        for day in range(runs, 0, -1):
            until = end - DAY * (day - 1)
            clock.set(until)
            since = until - DAY
            recent = ids[size - day * PER_DAY : size - (day - 1) * PER_DAY]  # that day's memories
            run = ConsolidationRun(since=since, until=until, recent_ids=tuple(recent))
            started = time.perf_counter()
            report = book.consolidate(run)
            elapsed = (time.perf_counter() - started) * 1000
            passes.append(
                {
                    "duration_ms": round(elapsed, 1),
                    "window": len(recent),
                    "looked_at": report.looked_at,
                    "formed": report.created,
                    "let_go": report.pruned,
                    "merged": report.merged,
                    "linked": report.linked,
                    "capped": report.capped,
                }
            )
        total = book.db.count()
        seeds = [rng.choice(groups[-rng.randint(1, PER_DAY // GROUP)]) for _ in range(WALKS // 2)]
        seeds += [n.id for n in rng.sample(book.db.all(), min(WALKS // 2, total))]
        walks: list[float] = []
        for seed in seeds:
            started = time.perf_counter()
            walk(book, seed, 2)
            walks.append((time.perf_counter() - started) * 1000)
        views: list[float] = []
        for _ in range(NETWORKS):
            started = time.perf_counter()
            network(book)
            views.append((time.perf_counter() - started) * 1000)
    finally:
        host.stop()
    pass_ms = percentiles([p["duration_ms"] for p in passes])
    return {
        "size": size,
        "build_s": round(built, 1),
        "notions_before": seeded,
        "notions_after": total,
        "notion_pass_ms": {**pass_ms, "max": max(p["duration_ms"] for p in passes)},
        "notion_pass_under_5s": max(p["duration_ms"] for p in passes) < PASS_BUDGET_MS,
        "explore_ms": percentiles(walks),
        "network_ms": percentiles(views),
        "passes": passes,
    }


def run_notions(
    sizes: Sequence[int],
    settings: Settings,
    table: dict[str, Any],
    *,
    command: str,
    runs: int = 7,
    work_dir: Path | None = None,
    show: bool = True,
) -> dict[str, Any]:
    if not sizes or any(size < (runs + 2) * PER_DAY for size in sizes):
        raise ValueError(
            f"--size: each size must be at least {(runs + 2) * PER_DAY} (--runs days of {PER_DAY} and more)"
        )
    if runs < 1:
        raise ValueError("--runs must be at least 1")
    results = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="ego-notions-", dir=work_dir) as tmp:
            results.append(_one_size(size, runs, settings, table, Path(tmp), show=show))
    model = str(table.get("embedder", "onnx"))
    return {
        **report_header(command, model),
        "corpus": f"synthetic: {PER_DAY} memories a day, groups of {GROUP} linked on one tag, one random link each",
        "runs": runs,
        "sizes": results,
    }
