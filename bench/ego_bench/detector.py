"""``ego bench detector``: how long the shared memory's secret/PII detector takes on adversarial and ordinary
texts of growing size (a security audit: ``"pwd." * 1000`` took 128 s before the rules were made linear), and,
with ``--prose``, how much real prose it flags (each flag there is a note the gateway would refuse).

Each input is a unit repeated to the size; each figure is the median CPU time of several ``find_sensitive`` calls
(what the gateway and the agent tool run on every append), the wall clock beside it. The time must grow linearly:
the largest size over the smallest, for every input, at most :data:`RATIO_MAX` (64 KB over 1 KB is 64 times the
text).

``--prose`` takes a folder in the shape of ``bench/data/ja`` (``jsquad.json``: Wikipedia paragraphs; ``pairs.json``:
JSTS/JNLI sentences; ``tanaka.json``: everyday sentences; each read when present) or one such file, or a text file
(one passage per line). Each passage, and each of its sentences, is checked once; the report gives the share
flagged (the target: at most :data:`PROSE_FLAGGED_MAX`) and the kinds found.
"""

from __future__ import annotations

import gc
import json
import re
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ego_bench.common import load_average, report_header
from ego_shared_memory.detector import KINDS, find_sensitive

SIZES: tuple[int, ...] = (1024, 16 * 1024, 64 * 1024)
RUNS = 5
RATIO_MAX = 100.0
"""The target: time at the largest size over time at the smallest, for every input (64 for a linear rule)."""
PROSE_FLAGGED_MAX = 0.01
"""The target: the share of real passages (and of sentences) the detector flags."""

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
    # Japanese numbers and signs: kanji numerals, separators between numbers, spelt-out e-mail signs, block
    # numbers and buildings, password words, and one long blank after one (a word then blanks only)
    "kanji numerals": "〇九〇一二三四 ",
    "Japanese separators": "1・2、3の",
    "kanji and units": "二十五番",
    "My Number": "1234 5678 9018 ",
    "spelt-out e-mail": "a at a dot ",
    "e-mail signs": "aアットマークa。",
    "block numbers": "西新宿二丁目八番一号 ",
    "buildings": "西新宿2-8-1 ビル ",
    "password words": "パスは ",
    "blanks after パスワードは": "パスワードは" + " " * 1024,
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
    """``unit`` repeated to ``size``; a word followed by more than 64 blanks is the word then blanks only."""
    word = unit.rstrip(" ")
    if len(unit) - len(word) > 64:
        return (word + " " * size)[:size]
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


_SENTENCE_END = re.compile(r"(?<=[。！？!?])|\n")


def _sentences(passage: str) -> list[str]:
    return [sentence for sentence in _SENTENCE_END.split(passage) if sentence.strip()]


def load_prose(path: Path) -> dict[str, list[str]]:
    """The passages under ``path`` by source (see the module's docstring); ``ValueError`` naming what is wrong."""
    if path.is_dir():
        files = [path / name for name in ("jsquad.json", "pairs.json", "tanaka.json") if (path / name).is_file()]
        if not files:
            raise ValueError(f"--prose {path}: no jsquad.json, pairs.json or tanaka.json in this folder")
    elif path.is_file():
        files = [path]
    else:
        raise ValueError(f"--prose {path}: no such file or folder")
    sources: dict[str, list[str]] = {}
    for file in files:
        try:
            raw = file.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"--prose {file}: cannot be read as UTF-8 text ({exc})") from exc
        if file.suffix != ".json":
            sources[file.name] = [line for line in raw.splitlines() if line.strip()]
            continue
        try:
            data = json.loads(raw)
            if isinstance(data, dict) and "passages" in data:
                texts = [str(p["text"]) for p in data["passages"]]
            elif isinstance(data, dict):
                texts = sorted({str(pair[side]) for group in data.values() for pair in group for side in ("a", "b")})
            else:
                texts = [str(item["ja"]) for item in data]
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(
                f"--prose {file}: not in the shape of bench/data/ja (jsquad.json, pairs.json or tanaka.json): {exc!r}"
            ) from exc
        sources[file.name] = texts
    if not any(sources.values()):
        raise ValueError(f"--prose {path}: no passages in it")
    return sources


def measure_prose(sources: dict[str, list[str]]) -> dict[str, Any]:
    """Per source and in all: passages and sentences checked, how many the detector flags, and the kinds found."""
    report: dict[str, Any] = {}
    totals: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    for name, passages in sources.items():
        flagged = sentences = flagged_sentences = 0
        for passage in passages:
            found = find_sensitive(passage)
            flagged += bool(found)
            kinds.update({finding.kind for finding in found})
            for sentence in _sentences(passage):
                sentences += 1
                flagged_sentences += bool(find_sensitive(sentence))
        report[name] = {
            "passages": len(passages),
            "flagged": flagged,
            "flagged_share": round(flagged / len(passages), 4) if passages else None,
            "sentences": sentences,
            "flagged_sentences": flagged_sentences,
            "flagged_sentence_share": round(flagged_sentences / sentences, 4) if sentences else None,
        }
        totals.update(passages=len(passages), flagged=flagged, sentences=sentences, flagged_sentences=flagged_sentences)
    passage_share = totals["flagged"] / totals["passages"] if totals["passages"] else 0.0
    sentence_share = totals["flagged_sentences"] / totals["sentences"] if totals["sentences"] else 0.0
    return {
        "sources": report,
        "passages": totals["passages"],
        "flagged": totals["flagged"],
        "flagged_share": round(passage_share, 4),
        "sentences": totals["sentences"],
        "flagged_sentences": totals["flagged_sentences"],
        "flagged_sentence_share": round(sentence_share, 4),
        "kinds": {kind: kinds[kind] for kind in KINDS if kinds[kind]},
        "flagged_max": PROSE_FLAGGED_MAX,
        "flagged_ok": passage_share <= PROSE_FLAGGED_MAX and sentence_share <= PROSE_FLAGGED_MAX,
    }


def run_detector_bench(
    *, command: str, sizes: Sequence[int] = SIZES, runs: int = RUNS, prose: Path | None = None
) -> dict[str, Any]:
    """The report: per input, the median milliseconds (CPU; wall clock beside) at each size and the ratio
    largest/smallest; with ``prose``, the share of its passages and sentences flagged."""
    sizes = sorted(sizes)
    if len(sizes) < 2 or sizes[0] < 1:
        raise ValueError("--sizes needs at least two positive sizes")
    if runs < 1:
        raise ValueError("--runs must be at least 1")
    sources = load_prose(prose) if prose is not None else None
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
    if sources is not None:
        report["prose"] = {"path": str(prose), **measure_prose(sources)}
    return report
