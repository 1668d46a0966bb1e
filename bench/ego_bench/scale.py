"""The scale benchmark: remember and recall latency (embedding included) as the store grows.

Corpus: synthetic first-person diary sentences from a fixed-seed generator (subject, activity, object,
place, time and feeling drawn from word lists, plus a running number so every sentence is distinct). The
corpus up to each size is bulk-loaded (one embedding batch and one Chroma/SQLite batch per 1,000 memories,
sequence links between consecutive memories, no similarity links); then ``operations`` remember calls and
``operations`` recall calls go through the full tool path (the same handlers the MCP tools call), each
timed on the wall clock. The store keeps growing from one size to the next.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ego_bench.common import memory_host, percentiles, report_header
from ego_core import Clock, EmotionalTrace, Memory, MemoryLink, Settings
from ego_memory.emotions import EMOTIONS
from ego_memory.memories import Memories, new_memory_id
from ego_memory.progress import progress

SUBJECTS = ("I", "Master and I", "We", "My friend and I", "The team", "Everyone at home", "My sister", "The neighbours")
ACTIVITIES = (
    "talked about",
    "argued over",
    "laughed at",
    "read about",
    "cooked",
    "fixed",
    "planned",
    "remembered",
    "painted",
    "debugged",
    "walked past",
    "wrote about",
    "listened to",
    "studied",
    "photographed",
    "dreamed of",
)
OBJECTS = (
    "the old bicycle",
    "a sunset over the river",
    "the heartbeat config",
    "a strange bird",
    "the garden",
    "a jazz record",
    "the broken kettle",
    "a letter from grandma",
    "the new database schema",
    "a rainy street",
    "the violin",
    "a chess opening",
    "the mountain trail",
    "a cup of green tea",
    "the night sky",
    "a lost key",
    "the children's drawings",
    "an unfinished novel",
    "the server room",
    "a paper on Hopfield networks",
)
PLACES = (
    "in the kitchen",
    "at the park",
    "on the train",
    "by the sea",
    "in the office",
    "at the library",
    "on the balcony",
    "in a small cafe",
    "at the station",
    "in the studio",
)
TIMES = ("this morning", "at noon", "in the afternoon", "this evening", "late at night", "before dawn")
FEELINGS = (
    "and it felt warm",
    "and I was a little anxious",
    "which surprised me",
    "and it made me curious",
    "and I felt nostalgic",
    "and it was frustrating",
    "and everyone was happy",
    "and it moved me",
)


def synthetic_sentences(count: int, seed: int = 7, start: int = 0) -> Iterator[str]:
    rng = random.Random(seed * 1_000_003 + start)
    for number in range(start, start + count):
        yield (
            f"{rng.choice(SUBJECTS)} {rng.choice(ACTIVITIES)} {rng.choice(OBJECTS)} {rng.choice(PLACES)} "
            f"{rng.choice(TIMES)}, {rng.choice(FEELINGS)} (entry {number})."
        )


def bulk_load(
    memories: Memories,
    count: int,
    start: int,
    origin: datetime,
    *,
    show: bool,
    spacing: timedelta = timedelta(minutes=1),
) -> None:
    """Add ``count`` synthetic memories (sentences ``start``...) in batches from ``origin``, ``spacing`` apart.

    Consecutive memories are chained by sequence links, as remember would chain them.
    """
    emotions = list(EMOTIONS)
    rng = random.Random(start)
    batch = 1000
    previous = memories.store.latest(1)
    last_id = previous[0].id if previous else None
    bar = progress(
        range(0, count, batch), total=(count + batch - 1) // batch, desc=f"load {start + count}", enabled=show
    )
    for offset in bar:
        size = min(batch, count - offset)
        texts = list(synthetic_sentences(size, start=start + offset))
        vectors = memories.embed(texts)
        items: list[Memory] = []
        for i, text in enumerate(texts):
            emotion = rng.choice(emotions)
            profile = EMOTIONS[emotion]
            memory_id = new_memory_id()
            links = (MemoryLink(last_id, "leads_to", 1.0, "sequence"),) if last_id else ()
            items.append(
                Memory(
                    id=memory_id,
                    content=text,
                    timestamp=origin + spacing * (offset + i),
                    emotional_trace=EmotionalTrace(
                        primary=emotion, intensity=profile.intensity, valence=profile.valence, arousal=profile.arousal
                    ),
                    importance=rng.randint(1, 5),
                    links=links,
                )
            )
            last_id = memory_id
        memories.store.add_many(items, vectors)


def _timed(operation: Any, calls: Sequence[Mapping[str, Any]], desc: str, show: bool) -> list[float]:
    samples = []
    for args in progress(calls, desc=desc, enabled=show):
        started = time.perf_counter()
        operation(args)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def directory_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def run_scale(
    sizes: Sequence[int],
    settings: Settings,
    table: Mapping[str, Any],
    *,
    command: str,
    operations: int = 200,
    work_dir: Path | None = None,
    show: bool = True,
) -> dict[str, Any]:
    if not sizes or any(s <= 0 for s in sizes) or list(sizes) != sorted(set(sizes)):
        raise ValueError("sizes must be increasing positive numbers, e.g. 1000,10000,100000")
    origin = datetime(2025, 1, 1, tzinfo=UTC)
    results = []
    model = ""
    with tempfile.TemporaryDirectory(prefix="ego-scale-", dir=work_dir) as tmp:
        data_dir = Path(tmp)
        clock = Clock(origin)
        with memory_host(data_dir, settings, table, clock) as (_host, memories):
            model = memories.embedding_model
            loaded = 0
            for size in sizes:
                target = size - loaded
                if target > 0:
                    bulk_load(memories, target, loaded, origin + timedelta(minutes=loaded), show=show)
                    loaded = size
                clock.set(origin + timedelta(minutes=loaded + 1))
                count_before = memories.count()
                remember_calls = [
                    {"content": text, "emotion": "curious", "force": True}
                    for text in synthetic_sentences(operations, seed=11, start=loaded)
                ]
                remember_ms = _timed(memories.remember, remember_calls, f"remember @{size}", show)
                recall_calls = [
                    {"context": text.split(" (entry")[0]} for text in synthetic_sentences(operations, seed=13)
                ]
                recall_ms = _timed(memories.recall, recall_calls, f"recall @{size}", show)
                results.append(
                    {
                        "size": count_before,
                        "remember_ms": percentiles(remember_ms),
                        "recall_ms": percentiles(recall_ms),
                        "store_bytes": directory_size(data_dir),
                    }
                )
                loaded = memories.count()
    return {
        **report_header(command, model),
        "corpus": "synthetic diary sentences (ego_bench.scale.synthetic_sentences, seed 7), bulk-loaded",
        "operations_per_size": operations,
        "sizes": results,
    }
