"""The consolidate benchmark: its duration on a large store, against the number of recent memories.

Corpus: ``size`` synthetic diary sentences (see :mod:`ego_bench.scale`), bulk-loaded; the last 1,440
are one minute apart, so moving the clock selects how many fall in consolidate's 24-hour window. Each run
starts from a fresh copy of the loaded store and times one ``consolidate`` call (the tool's handler), in two
variants: ``quiet`` (the store as loaded: every window memory already chained, none recalled, so there is
nothing to change) and ``busy``, the worst case (prepared untimed: every window memory recalled in the window,
every other sequence link removed so replay re-creates it, and four random similarity links per window memory
among the window, a third of them weak enough to prune, the rest to strengthen).
"""

from __future__ import annotations

import itertools
import random
import tempfile
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ego_bench.common import copy_store, memory_host, report_header
from ego_bench.scale import bulk_load
from ego_core import Clock, Settings
from ego_memory.service import Memories
from ego_memory.tools.lifecycle import CONSOLIDATION_WINDOW, MAX_REPLAY, PRUNE_BELOW, Lifecycle

DENSE_TAIL = 1440
VARIANTS = ("quiet", "busy")
BUSY_LINKS = 4


def make_busy(memories: Memories, now: datetime, *, seed: int) -> None:
    """The worst case for consolidate's window: everything recalled, links to create, strengthen and prune."""
    store = memories.store
    window = [m.id for m in store.recent((now - CONSOLIDATION_WINDOW).timestamp(), MAX_REPLAY)]
    store.touch(window, (now - timedelta(minutes=1)).timestamp())
    unchain = [(min(a, b), max(a, b), "leads_to") for a, b in itertools.pairwise(window)][::2]
    store.apply_consolidation([], [], unchain)
    rng = random.Random(seed)
    confidences = (PRUNE_BELOW / 2, 0.5, 0.7)
    for memory_id in window:
        for other in rng.sample(window, min(BUSY_LINKS, len(window))):
            if other != memory_id:
                store.link(memory_id, other, "similar", rng.choice(confidences), "bench")


def run_consolidate(
    size: int,
    recents: Sequence[int],
    settings: Settings,
    table: Mapping[str, Any],
    *,
    command: str,
    work_dir: Path | None = None,
    show: bool = True,
) -> dict[str, Any]:
    if size < DENSE_TAIL or any(not 0 < r <= DENSE_TAIL for r in recents):
        raise ValueError(f"size must be at least {DENSE_TAIL} and each recent count from 1 to {DENSE_TAIL}")
    # Older memories one hour apart, the last DENSE_TAIL one minute apart.
    sparse = size - DENSE_TAIL
    origin = datetime(2025, 1, 1, tzinfo=UTC)
    tail_start = origin + timedelta(hours=sparse)
    runs = []
    model = ""
    with tempfile.TemporaryDirectory(prefix="ego-consolidate-", dir=work_dir) as tmp:
        base = Path(tmp) / "base"
        clock = Clock(origin)
        with memory_host(base, settings, table, clock) as (_host, memories):
            model = memories.embedding_model
            bulk_load(memories, sparse, 0, origin, show=show, spacing=timedelta(hours=1))
            bulk_load(memories, DENSE_TAIL, sparse, tail_start, show=show, spacing=timedelta(minutes=1))
        for recent, variant in itertools.product(recents, VARIANTS):
            work = Path(tmp) / "run"
            copy_store(base, work)
            last = tail_start + timedelta(minutes=DENSE_TAIL - 1)
            now = last + timedelta(minutes=DENSE_TAIL - recent) + timedelta(seconds=30)
            with memory_host(work, settings, table, Clock(now)) as (host, memories):
                if variant == "busy":
                    make_busy(memories, now, seed=recent)
                lifecycle = Lifecycle(memories)
                started = time.perf_counter()
                response = lifecycle.consolidate({}, host.context("memory"))
                elapsed = (time.perf_counter() - started) * 1000
            runs.append(
                {
                    "recent": recent,
                    "variant": variant,
                    "duration_ms": round(elapsed, 1),
                    "summary": response.data.splitlines()[0],
                }
            )
    return {
        **report_header(command, model),
        "store_size": size,
        "runs": runs,
    }
