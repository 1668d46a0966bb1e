"""The emotion_trend benchmark: the month window, and the whole tool, on a large store.

    ego bench emotion-trend [--size 100000] [--days 365] [--runs 200]

Corpus: ``size`` synthetic diary sentences (see :mod:`ego_bench.scale`) spread evenly over the last ``days``
days, bulk-loaded in batches of 1,000 with consecutive memories chained by sequence links, as remember would
chain them. Each memory has a random primary emotion (0-2 secondary ones), intensity, valence and arousal
near the emotion's profile; 5 % are private, 10 % were recalled 1-5 times. The trend never reads vectors, so
the vectors are random unit vectors (no embedding pass: loading 100,000 memories takes minutes, not an hour).
Two emotions (nostalgic, melancholy) are absent from the last ``FADING_FREE_DAYS`` days and their memories were
never recalled, so they have faded: the fading check has real work, reading every older memory that carries
them to be sure none is still strong.

Timed on the wall clock, after a few untimed warm-up calls, with the clock fixed just after the newest memory:
``month`` is the month window alone (the emotion tally of the last 30 local days and the two memories it
names, peak and end); ``tool`` is the whole ``emotion_trend`` answer (Recent, This week with its halves, This
month, the fading check, and the words).
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from ego_bench.common import percentiles, report_header
from ego_bench.scale import directory_size, synthetic_sentences
from ego_core import Clock, EmotionalTrace, Memory, MemoryLink, PluginHost, Settings, build_host
from ego_memory.plugin import MemoryPlugin
from ego_memory.progress import progress
from ego_memory.record.emotions import EMOTION_PROFILES
from ego_memory.service import Memories, new_memory_id

FADING_FREE_DAYS = 200
FADED = ("nostalgic", "melancholy")
BATCH = 1000
WARM_UP = 3


@contextmanager
def trend_host(
    data_dir: Path, base: Settings, memory_table: Mapping[str, Any], clock: Clock
) -> Iterator[tuple[PluginHost, Memories, Any]]:
    """A started host with the memory and emotion_trend plugins on ``data_dir``; stopped on exit."""
    try:
        from ego_emotion_trend import EmotionTrendPlugin
    except ImportError:
        raise ValueError(
            "ego bench emotion-trend needs the emotion_trend plugin: pip install -e plugins/emotion_trend"
        ) from None
    settings = attrs.evolve(base, data_dir=data_dir, timezone="UTC", plugin_tables={"memory": dict(memory_table)})
    memory, trend = MemoryPlugin(), EmotionTrendPlugin()
    host = build_host(settings, autoload=False, plugins={"memory": memory, "emotion_trend": trend}, clock=clock)
    host.start()
    try:
        if memory.memories is None or not host.is_active("emotion_trend"):
            raise RuntimeError("; ".join(f.describe() for f in host.failures))
        yield host, memory.memories, trend
    finally:
        host.stop()


def load_corpus(memories: Memories, size: int, days: int, end: datetime, *, seed: int, show: bool) -> None:
    """``size`` memories evenly over the ``days`` days before ``end`` (see the module docstring)."""
    rng = random.Random(seed)
    emotions = list(EMOTION_PROFILES)
    recent_emotions = [e for e in emotions if e not in FADED]
    start = end - timedelta(days=days)
    step = (end - start) / size
    faded_until = end - timedelta(days=FADING_FREE_DAYS)
    dimensions = len(memories.embed(["dimensions"])[0])
    last_id: str | None = None
    for offset in progress(range(0, size, BATCH), total=(size + BATCH - 1) // BATCH, desc="load", enabled=show):
        count = min(BATCH, size - offset)
        vectors = np.asarray(np.random.default_rng(seed + offset).normal(size=(count, dimensions)), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        items: list[Memory] = []
        for i, text in enumerate(synthetic_sentences(count, seed=seed, start=offset)):
            moment = start + step * (offset + i)
            pool = emotions if moment < faded_until else recent_emotions
            primary = rng.choice(pool)
            profile = EMOTION_PROFILES[primary]
            secondary = tuple(rng.sample([e for e in pool if e != primary], rng.choice((0, 0, 1, 2))))
            recalled = rng.random() < 0.1 and not {primary, *secondary} & set(FADED)
            memory_id = new_memory_id()
            items.append(
                Memory(
                    id=memory_id,
                    content=text,
                    timestamp=moment,
                    emotional_trace=EmotionalTrace(
                        primary=primary,
                        secondary=secondary,
                        intensity=round(rng.uniform(0.2, 1.0), 2),
                        valence=max(-1.0, min(1.0, profile.valence + rng.uniform(-0.2, 0.2))),
                        arousal=max(0.0, min(1.0, profile.arousal + rng.uniform(-0.2, 0.2))),
                    ),
                    importance=rng.randint(1, 5),
                    links=(MemoryLink(last_id, "leads_to", 1.0, "sequence"),) if last_id else (),
                    is_private=rng.random() < 0.05,
                    access_count=rng.randint(1, 5) if recalled else 0,
                )
            )
            last_id = memory_id
        memories.store.add_many(items, vectors)


def timed(call: Callable[[], Any], runs: int, desc: str, show: bool) -> list[float]:
    for _ in range(WARM_UP):
        call()
    samples = []
    for _ in progress(range(runs), desc=desc, enabled=show):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def run_emotion_trend(
    size: int,
    days: int,
    settings: Settings,
    table: Mapping[str, Any],
    *,
    command: str,
    runs: int = 200,
    work_dir: Path | None = None,
    show: bool = True,
) -> dict[str, Any]:
    if size < 1000 or days < 31 or runs < 1:
        raise ValueError("--size must be at least 1000, --days at least 31 and --runs at least 1")
    from ego_core import MEMORY_STORE, MemoryService
    from ego_emotion_trend import EmotionTrendConfig, TrendReader, windows

    end = datetime(2026, 1, 1, tzinfo=UTC)
    now = end + timedelta(minutes=1)
    with tempfile.TemporaryDirectory(prefix="ego-emotion-trend-", dir=work_dir) as tmp:
        data_dir = Path(tmp)
        clock = Clock(now)
        with trend_host(data_dir, settings, table, clock) as (host, memories, plugin):
            started = time.perf_counter()
            load_corpus(memories, size, days, end, seed=7, show=show)
            load_seconds = time.perf_counter() - started
            service = host.services.get(MEMORY_STORE, MemoryService)
            assert service is not None
            config = EmotionTrendConfig()
            spans = windows(now, host.settings.tz, config)
            reader = TrendReader(service, config, spans)
            trend = reader.read()
            month_ms = timed(reader.month, runs, "month", show)
            ctx = host.context("emotion_trend")
            tool_ms = timed(lambda: plugin.emotion_trend({}, ctx), runs, "tool", show)
            answer = plugin.emotion_trend({}, ctx).data
            in_window = {
                name: service.tally(span.start, span.end).count
                for name, span in (("recent", spans.recent), ("week", spans.week), ("month", spans.month))
            }
            store_bytes = directory_size(data_dir)
            model = memories.embedding_model
    return {
        **report_header(command, model),
        "corpus": (
            f"{size} synthetic diary sentences over {days} days, random emotions ({', '.join(FADED)} absent from "
            f"the last {FADING_FREE_DAYS} days), random unit vectors, bulk-loaded"
        ),
        "memories": size,
        "memories_in_window": in_window,
        "fading_found": [name for name, _ in trend.fading],
        "store_bytes": store_bytes,
        "load_seconds": round(load_seconds, 1),
        "runs": runs,
        "month_ms": percentiles(month_ms),
        "tool_ms": percentiles(tool_ms),
        "answer_chars": len(answer),
    }
