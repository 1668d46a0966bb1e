"""The scale benchmark: remember and recall latency (embedding included) as the store grows.

Realistic corpus (``--data``, the default in the documentation): the LoCoMo turns of every conversation in the
folder (``"<speaker>: <text>"``, as the LoCoMo benchmark stores them), repeated with a distinguishing suffix per
copy (``" (copy 3)"``), bulk-loaded with the links ``remember`` makes: each memory is linked to its nearest
earlier memories with cosine similarity at or above the link threshold (at most ``max_links``, exact nearest
neighbours) and to the ``sequence_links`` memories stored just before it. Recalls ask the LoCoMo questions.

Synthetic corpus (without ``--data``): first-person diary sentences from a fixed-seed generator (subject,
activity, object, place, time and feeling drawn from word lists, plus a running number so every sentence is
distinct). The corpus up to each size is bulk-loaded (one embedding batch and one Chroma/SQLite batch per 1,000
memories, sequence links between consecutive memories, no similarity links).

Either way, ``operations`` remember calls and ``operations`` recall calls then go through the full tool path
(the same handlers the MCP tools call), each timed on the wall clock. The store keeps growing from one size to
the next.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from ego_bench.common import load_average, memory_host, percentiles, report_header
from ego_core import Clock, EmotionalTrace, Memory, MemoryLink, PluginHost, Settings, Vectors
from ego_memory.progress import progress
from ego_memory.record.emotions import EMOTION_PROFILES
from ego_memory.service import Memories, new_memory_id

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
    emotions = list(EMOTION_PROFILES)
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
            profile = EMOTION_PROFILES[emotion]
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
        memories.fill_english()  # what remember stores beside each memory


def locomo_turns(data_dir: Path) -> list[str]:
    """Every turn of every LoCoMo conversation in ``data_dir``, as the LoCoMo benchmark stores it."""
    from ego_bench.locomo import load_conversation

    return [turn.content for path in sorted(data_dir.glob("*.json")) for turn in load_conversation(path).turns]


def locomo_questions(data_dir: Path) -> list[str]:
    from ego_bench.locomo import load_conversation

    return [q.text for path in sorted(data_dir.glob("*.json")) for q in load_conversation(path).questions]


def realistic_text(turns: Sequence[str], index: int) -> str:
    """The ``index``-th memory of the realistic corpus: the turns in order, then again with a copy suffix."""
    copy, position = divmod(index, len(turns))
    return turns[position] if copy == 0 else f"{turns[position]} (copy {copy})"


class LinkedLoader:
    """Bulk-loads realistic text with the links ``remember`` would make (see the module docstring).

    Keeps every stored vector so the nearest earlier memories are found exactly, in batches.
    """

    def __init__(self, memories: Memories, turns: Sequence[str], origin: datetime, spacing: timedelta) -> None:
        self.memories = memories
        self.turns = turns
        self.origin = origin
        self.spacing = spacing
        self.ids: list[str] = []
        self.times: list[datetime] = []
        self.vectors: list[Vectors] = []
        self.similar_links = 0

    def _matrix(self) -> Vectors:
        if len(self.vectors) > 1:
            self.vectors = [np.concatenate(self.vectors)]
        return self.vectors[0] if self.vectors else np.zeros((0, 1), dtype=np.float32)

    def _nearest(self, batch: Vectors, limit: int) -> list[list[tuple[int, float]]]:
        """For each row of ``batch`` (in order), its ``limit`` most similar earlier memories (store and batch)."""
        stored = self._matrix()
        offset = len(self.ids)
        found: list[list[tuple[int, float]]] = [[] for _ in range(len(batch))]
        for start in range(0, len(stored), 20_000):
            sims = batch @ stored[start : start + 20_000].T
            top = np.argpartition(-sims, min(limit, sims.shape[1] - 1), axis=1)[:, :limit]
            for row in range(len(batch)):
                found[row].extend((start + int(c), float(sims[row, c])) for c in top[row])
        inside = batch @ batch.T
        for row in range(len(batch)):
            earlier = inside[row, :row]
            if len(earlier):
                for c in np.argsort(-earlier)[:limit]:
                    found[row].append((offset + int(c), float(earlier[c])))
            found[row] = sorted(found[row], key=lambda pair: -pair[1])[:limit]
        return found

    def load(self, count: int, *, show: bool) -> None:
        config = self.memories.config
        window = timedelta(minutes=config.sequence_window_minutes)
        batch_size = 500
        start_index = len(self.ids)
        bar = progress(
            range(0, count, batch_size),
            total=(count + batch_size - 1) // batch_size,
            desc=f"load {start_index + count}",
            enabled=show,
        )
        for offset in bar:
            size = min(batch_size, count - offset)
            first = start_index + offset
            texts = [realistic_text(self.turns, first + i) for i in range(size)]
            order = sorted(range(size), key=lambda i: len(texts[i]))  # batches of similar length pad less
            sorted_vectors = self.memories.embed([texts[i] for i in order])
            vectors = np.empty_like(sorted_vectors)
            vectors[order] = sorted_vectors
            nearest = self._nearest(vectors, config.max_links + 1)
            all_ids = self.ids
            items: list[Memory] = []
            for i, text in enumerate(texts):
                memory_id = new_memory_id()
                moment = self.origin + self.spacing * (first + i)
                chosen = [(j, sim) for j, sim in nearest[i] if sim >= self.memories.link_threshold][: config.max_links]
                links = [MemoryLink(all_ids[j], "similar", round(sim, 4)) for j, sim in chosen]
                self.similar_links += len(links)
                previous = [
                    j
                    for j in range(len(all_ids) - 1, max(-1, len(all_ids) - 1 - config.sequence_links), -1)
                    if moment - self.times[j] <= window
                ]
                links.extend(MemoryLink(all_ids[j], "leads_to", 1.0, "sequence") for j in previous)
                items.append(Memory(id=memory_id, content=text, timestamp=moment, links=tuple(links)))
                all_ids.append(memory_id)
                self.times.append(moment)
            self.memories.store.add_many(items, vectors)
            self.memories.fill_english()  # what remember stores beside each memory
            self.vectors.append(np.asarray(vectors, dtype=np.float32))

    def adopt_latest(self, count: int) -> None:
        """Take the ``count`` memories stored last by other means (timed remembers) into the neighbour search."""
        latest = list(reversed(self.memories.store.latest(count)))
        found = self.memories.store.embeddings([m.id for m in latest])
        kept = [m for m in latest if m.id in found]
        if kept:
            self.ids.extend(m.id for m in kept)
            self.times.extend(m.timestamp for m in kept)
            self.vectors.append(np.stack([found[m.id] for m in kept]).astype(np.float32))


def _handler(host: PluginHost, name: str) -> Any:
    """The memory plugin's tool ``name`` as the host serves it, called with the plugin's context (``call(args)``)."""
    found = host.tool(name)
    if found is None:
        raise RuntimeError(f"the memory plugin serves no {name} tool")
    plugin, tool = found
    ctx = host.context(plugin)

    def call(args: Mapping[str, Any]) -> Any:
        return tool.handler(args, ctx)

    return call


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
    data_dir: Path | None = None,
) -> dict[str, Any]:
    if data_dir is not None:
        return run_realistic_scale(
            sizes, data_dir, settings, table, command=command, operations=operations, work_dir=work_dir, show=show
        )
    if not sizes or any(s <= 0 for s in sizes) or list(sizes) != sorted(set(sizes)):
        raise ValueError("sizes must be increasing positive numbers, e.g. 1000,10000,100000")
    origin = datetime(2025, 1, 1, tzinfo=UTC)
    results = []
    model = ""
    with tempfile.TemporaryDirectory(prefix="ego-scale-", dir=work_dir) as tmp:
        data_dir = Path(tmp)
        clock = Clock(origin)
        with memory_host(data_dir, settings, table, clock) as (host, memories):
            model = memories.embedding_model
            loaded = 0
            for size in sizes:
                target = size - loaded
                if target > 0:
                    bulk_load(memories, target, loaded, origin + timedelta(minutes=loaded), show=show)
                    loaded = size
                clock.set(origin + timedelta(minutes=loaded + 1))
                count_before = memories.count()
                load_before = load_average()
                remember_calls = [
                    {"content": text, "emotion": "curious", "force": True}
                    for text in synthetic_sentences(operations, seed=11, start=loaded)
                ]
                remember_ms = _timed(_handler(host, "remember"), remember_calls, f"remember @{size}", show)
                recall_calls = [
                    {"context": text.split(" (entry")[0]} for text in synthetic_sentences(operations, seed=13)
                ]
                recall_ms = _timed(_handler(host, "recall"), recall_calls, f"recall @{size}", show)
                results.append(
                    {
                        "size": count_before,
                        "remember_ms": percentiles(remember_ms),
                        "recall_ms": percentiles(recall_ms),
                        "store_bytes": directory_size(data_dir),
                        "load_average": {"start": load_before, "end": load_average()},
                    }
                )
                loaded = memories.count()
    return {
        **report_header(command, model),
        "corpus": "synthetic diary sentences (ego_bench.scale.synthetic_sentences, seed 7), bulk-loaded",
        "operations_per_size": operations,
        "sizes": results,
    }


def run_realistic_scale(
    sizes: Sequence[int],
    data_dir: Path,
    settings: Settings,
    table: Mapping[str, Any],
    *,
    command: str,
    operations: int = 200,
    work_dir: Path | None = None,
    show: bool = True,
) -> dict[str, Any]:
    """The scale benchmark on the realistic corpus (LoCoMo turns repeated with a suffix per copy)."""
    if not sizes or any(s <= 0 for s in sizes) or list(sizes) != sorted(set(sizes)):
        raise ValueError("sizes must be increasing positive numbers, e.g. 1000,10000,100000")
    turns = locomo_turns(data_dir)
    questions = locomo_questions(data_dir)
    if not turns or not questions:
        raise ValueError(f"no LoCoMo conversations in {data_dir}")
    origin = datetime(2025, 1, 1, tzinfo=UTC)
    spacing = timedelta(minutes=1)
    results = []
    model = ""
    rng = random.Random(13)
    with tempfile.TemporaryDirectory(prefix="ego-scale-", dir=work_dir) as tmp:
        store_dir = Path(tmp)
        clock = Clock(origin)
        with memory_host(store_dir, settings, table, clock) as (host, memories):
            model = memories.embedding_model
            loader = LinkedLoader(memories, turns, origin, spacing)
            for size in sizes:
                missing = size - memories.count()
                load_started = time.perf_counter()
                if missing > 0:
                    loader.load(missing, show=show)
                load_seconds = time.perf_counter() - load_started
                count_before = memories.count()
                load_before = load_average()
                clock.set(origin + spacing * (len(loader.ids) + 1))
                # New text the store has not seen: the turns with a suffix of a copy not loaded yet.
                fresh_copy = len(loader.ids) // len(turns) + 1000
                remember_calls = [
                    {"content": f"{turns[rng.randrange(len(turns))]} (copy {fresh_copy}, {i})", "force": True}
                    for i in range(operations)
                ]
                remember_ms = _timed(_handler(host, "remember"), remember_calls, f"remember @{size}", show)
                loader.adopt_latest(operations)
                recall_calls = [{"context": questions[rng.randrange(len(questions))]} for _ in range(operations)]
                recall_ms = _timed(_handler(host, "recall"), recall_calls, f"recall @{size}", show)
                results.append(
                    {
                        "size": count_before,
                        "remember_ms": percentiles(remember_ms),
                        "recall_ms": percentiles(recall_ms),
                        "store_bytes": directory_size(store_dir),
                        "load_seconds": round(load_seconds, 1),
                        "similar_links_loaded": loader.similar_links,
                        "load_average": {"start": load_before, "end": load_average()},
                    }
                )
    return {
        **report_header(command, model),
        "corpus": (
            f"LoCoMo turns of {data_dir.name} ({len(turns)} turns), repeated with a ' (copy N)' suffix per copy; "
            "bulk-loaded with remember's links (exact nearest earlier memories at or above the link threshold, "
            "sequence links); recalls ask LoCoMo questions"
        ),
        "operations_per_size": operations,
        "sizes": results,
    }
