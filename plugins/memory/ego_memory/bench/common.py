"""Shared helpers for the benchmarks: an isolated in-process host, percentiles, progress bars."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import attrs
import numpy as np

from ego_core.config import Settings
from ego_core.host import Clock, PluginHost, build_host
from ego_memory.memories import Memories
from ego_memory.plugin import MemoryPlugin

T = TypeVar("T")


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    if not samples_ms:
        return {"p50": 0.0, "p95": 0.0}
    values = np.asarray(samples_ms, dtype=np.float64)
    return {"p50": round(float(np.percentile(values, 50)), 3), "p95": round(float(np.percentile(values, 95)), 3)}


def progress(items: Iterable[T], *, total: int | None = None, desc: str = "", enabled: bool = True) -> Iterator[T]:
    """A tqdm progress bar on stderr (stdout stays clean for JSON)."""
    if not enabled:
        yield from items
        return
    from tqdm import tqdm

    yield from tqdm(items, total=total, desc=desc, file=sys.stderr, leave=False, dynamic_ncols=True)


@contextmanager
def progress_bar(*, total: int, desc: str, enabled: bool = True) -> Iterator[Callable[[int], None]]:
    """A tqdm bar on stderr advanced by the callback it yields (a no-op callback when disabled)."""
    if not enabled:
        yield lambda _n: None
        return
    from tqdm import tqdm

    with tqdm(total=total, desc=desc, file=sys.stderr, dynamic_ncols=True) as bar:
        yield bar.update


@contextmanager
def memory_host(
    data_dir: Path, base: Settings, memory_table: Mapping[str, Any], clock: Clock
) -> Iterator[tuple[PluginHost, Memories]]:
    """A started host with only the memory plugin, on ``data_dir``; stopped on exit."""
    settings = attrs.evolve(base, data_dir=data_dir, plugin_tables={"memory": dict(memory_table)})
    plugin = MemoryPlugin()
    host = build_host(settings, autoload=False, plugins={"memory": plugin}, clock=clock)
    host.start()
    try:
        if plugin.memories is None:
            reasons = "; ".join(f.describe() for f in host.failures)
            raise RuntimeError(f"the memory plugin did not start: {reasons}")
        yield host, plugin.memories
    finally:
        host.stop()


def copy_store(source: Path, target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target)
