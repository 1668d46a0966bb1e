"""Shared helpers for the benchmarks: an isolated in-process host, percentiles, progress bars."""

from __future__ import annotations

import os
import platform
import shutil
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import attrs
import numpy as np

from ego_core import Clock, Embedder, EmbedRole, PluginHost, Settings, Vectors, __version__, build_host
from ego_memory.plugin import MemoryPlugin
from ego_memory.service import Memories

T = TypeVar("T")


def report_header(command: str, embedder: str) -> dict[str, Any]:
    """What every benchmark report starts with: the system, the embedding model, the command, the machine."""
    return {
        "system": "ego",
        "version": __version__,
        "embedder": embedder,
        "command": command,
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count() or 1,
        },
    }


def load_average() -> list[float] | None:
    """The machine's 1, 5 and 15-minute load averages (latency figures depend on them), where the OS reports them."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except OSError:
        return None


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    if not samples_ms:
        return {"p50": 0.0, "p95": 0.0}
    values = np.asarray(samples_ms, dtype=np.float64)
    return {"p50": round(float(np.percentile(values, 50)), 3), "p95": round(float(np.percentile(values, 95)), 3)}


class SharedCacheEmbedder:
    """An embedder whose vectors are kept in a dict shared across hosts, so a benchmark embeds each text once.

    Only for benchmark runs whose timings do not include the embedding (or that time the first, real call).
    """

    def __init__(self, inner: Embedder, cache: dict[str, Vectors]) -> None:
        self.inner = inner
        self.cache = cache

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str], role: EmbedRole = "document") -> Vectors:
        keys = [f"{role}\x00{t}" for t in texts]
        missing = list(dict.fromkeys(t for t, key in zip(texts, keys, strict=True) if key not in self.cache))
        if missing:
            for text, vector in zip(missing, self.inner.embed(missing, role), strict=True):
                self.cache[f"{role}\x00{text}"] = np.array(vector, dtype=np.float32)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self.cache[key] for key in keys]).astype(np.float32)


RANKING_ONLY: Mapping[str, Any] = {"involuntary_probability": 0.0}
"""Memory-table overrides for the benchmarks that measure ranking: no memory surfaces by chance in recall (an
involuntary recollection would make the figures irreproducible and measure chance, not ranking)."""


@contextmanager
def memory_host(
    data_dir: Path,
    base: Settings,
    memory_table: Mapping[str, Any],
    clock: Clock,
    embed_cache: dict[str, Vectors] | None = None,
) -> Iterator[tuple[PluginHost, Memories]]:
    """A started host with only the memory plugin, on ``data_dir``; stopped on exit.

    With ``embed_cache``, every text's vector is kept in (and read from) that dict.
    """
    settings = attrs.evolve(base, data_dir=data_dir, plugin_tables={"memory": dict(memory_table)})
    plugin = MemoryPlugin()
    host = build_host(settings, autoload=False, plugins={"memory": plugin}, clock=clock)
    host.start()
    try:
        if plugin.memories is None:
            reasons = "; ".join(f.describe() for f in host.failures)
            raise RuntimeError(f"the memory plugin did not start: {reasons}")
        if embed_cache is not None:
            plugin.memories.embedder = SharedCacheEmbedder(plugin.memories.embedder, embed_cache)
        yield host, plugin.memories
    finally:
        host.stop()


def copy_store(source: Path, target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target)
