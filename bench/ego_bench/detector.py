"""``ego bench detector``: how long the shared memory's secret/PII detector takes on adversarial and ordinary
texts of growing size (a security audit: ``"pwd." * 1000`` took 128 s before the rules were made linear).

Each input is a unit repeated to the size; each figure is the median CPU time of several ``find_sensitive`` calls
(what the gateway and the agent tool run on every append), the wall clock beside it. The time must grow linearly:
the largest size over the smallest, for every input, at most :data:`RATIO_MAX` (64 KB over 1 KB is 64 times the
text).
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Sequence
from typing import Any

from ego_bench.common import load_average, report_header
from ego_shared_memory.detector import find_sensitive

SIZES: tuple[int, ...] = (1024, 16 * 1024, 64 * 1024)
RUNS = 5
RATIO_MAX = 100.0
"""The target: time at the largest size over time at the smallest, for every input (64 for a linear rule)."""

ADVERSARIAL: dict[str, str] = {
    "pwd.": "pwd.",  # the reported case: cubic before
    "password=": "password=",
    "token_": "token_",
    "a:": "a:",
    "x://a:": "x://a:",
    "a.": "a.",
    "1-": "1-",
    "sk-": "sk-",
    "eyJ-": "eyJ-",
    "eyJaaaa.": "eyJaaaa.",
    "digits 1": "1 ",
    "+1111...": "+1111111111111111111111 ",
    "cards": "4111 1111 1111 1111 ",
    "phones and e-mails": "090-1234-5678 a@b.co ",
    "a@a.": "a@a.",
    "-----BEGIN A ": "-----BEGIN A ",
    "random-looking": "aB3dE5gH7jK9mN1pQ3sT5uV7wX9 ",
    '"token": "': '"token": "',
    # what the normalisation and the newer rules read: zero-width characters, line breaks to join,
    # full-width forms, Japanese addresses, internal hosts, encoded runs
    "zero-width": "a\u200b",
    "line breaks": "a\n",
    "full-width": "０１ ",
    "addresses": "港区1-",
    "internal hosts": "localhost:1 ",
    "base64": "cGFzc3dvcmQ9aHVudGVyMjI= ",
}
ORDINARY: dict[str, str] = {
    "notes": (
        "The deploy runs from .github/workflows/deploy.yml on every tag (since 2026-02-02, v1.2.3). The bot token "
        "is in ~/.env, not in the repo; the API key is rotated monthly. Port 8787 answers /health within 14:05 ms "
        "of a restart. See docs/gateway.md and https://github.com/org/repo/blob/main/README.md for the steps. "
    ),
    "japanese": "保存先は ~/.config/ego/config.toml で、トークンは環境変数にあります。2026年2月2日から有効。 ",
}


def _text(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _median_ms(text: str, runs: int) -> tuple[float, float]:
    """The median CPU time of this thread (what the figures and the ratio use: a machine shared with other work
    preempts long calls more often than short ones, which would skew the wall clock against large texts) and the
    median wall-clock time, in milliseconds."""
    cpu, wall = [], []
    for _ in range(runs):
        gc.collect()
        gc.disable()  # as timeit does: a collection of the whole process's heap is not the detector's work
        try:
            started_cpu, started = time.thread_time(), time.perf_counter()
            find_sensitive(text)
            cpu.append((time.thread_time() - started_cpu) * 1000)
            wall.append((time.perf_counter() - started) * 1000)
        finally:
            gc.enable()
    return round(statistics.median(cpu), 3), round(statistics.median(wall), 3)


def _measure(units: dict[str, str], sizes: Sequence[int], runs: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name, unit in units.items():
        find_sensitive(_text(unit, sizes[0]))  # warm up (compiled patterns, caches)
        # the smallest texts take well under a millisecond: more runs there, for a steady median
        timed = {str(size): _median_ms(_text(unit, size), runs * max(1, sizes[-1] // (size * 4))) for size in sizes}
        cpu = {size: ms for size, (ms, _wall) in timed.items()}
        smallest, largest = cpu[str(sizes[0])], cpu[str(sizes[-1])]
        results[name] = {
            "ms": cpu,
            "wall_ms": {size: wall for size, (_ms, wall) in timed.items()},
            "ratio": round(largest / smallest, 1) if smallest > 0 else None,
        }
    return results


def run_detector_bench(*, command: str, sizes: Sequence[int] = SIZES, runs: int = RUNS) -> dict[str, Any]:
    """The report: per input, the median milliseconds (CPU; wall clock beside) at each size and the ratio
    largest/smallest."""
    sizes = sorted(sizes)
    if len(sizes) < 2 or sizes[0] < 1:
        raise ValueError("--sizes needs at least two positive sizes")
    if runs < 1:
        raise ValueError("--runs must be at least 1")
    report = report_header(command, "none")
    report.update({"sizes_bytes": list(sizes), "runs": runs, "ratio_max": RATIO_MAX})
    report["load_average_before"] = load_average()
    adversarial = _measure(ADVERSARIAL, sizes, runs)
    ordinary = _measure(ORDINARY, sizes, runs)
    ratios = [entry["ratio"] for entry in (*adversarial.values(), *ordinary.values()) if entry["ratio"] is not None]
    slowest = max(adversarial, key=lambda name: adversarial[name]["ms"][str(sizes[-1])])
    report.update(
        {
            "adversarial": adversarial,
            "ordinary": ordinary,
            "slowest_adversarial": {"input": slowest, **adversarial[slowest]},
            "max_ratio": max(ratios) if ratios else None,
            "ratio_ok": bool(ratios) and max(ratios) <= RATIO_MAX,
            "load_average_after": load_average(),
        }
    )
    return report
