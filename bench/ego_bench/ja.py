"""The Japanese and cross-language benchmark, exactly as ``bench/data/ja/README.md`` defines it.

    ego bench ja --data bench/data/ja [--tasks jsquad,tanaka,pairs] [--limit N] [--output FILE]

Everything goes through ego's real paths with the default plugins for memory (``memory`` and ``dedup``, the
configured ``[plugins.memory]`` / ``[plugins.dedup]`` tables, whatever embedder and text processing the
install uses): memories are stored by the ``remember`` tool's handler (the duplicate guard on, no ``force``),
questions are asked the way the ``recall`` tool searches (``recall_query`` + ``Memories.search``, with
``n_results=10``), merge candidates come from the ``consolidate`` tool and pairs are removed with ``forget``.
Each task runs on a fresh store (a fresh host in its own folder) on a simulated clock, one minute per remember.

1. **jsquad**: every paragraph remembered as one memory; every question recalled. hit@1, hit@5 and MRR@10 of
   the gold paragraph (matched by content: a refused paragraph can never be found); ``refused`` is the number
   of paragraphs the duplicate guard declined.
2. **tanaka**: ``en2ja`` stores the Japanese sentences and asks with each English one; ``ja2en`` the reverse,
   each direction on its own store. hit@1, hit@5, MRR@10.
3. **pairs**: one store for all pairs, holding only the pair at hand: remember ``a``, remember ``b`` (refused:
   remember answered with a declined response), ``consolidate`` (a merge candidate: its near-duplicate list has
   the pair's two ids on one line), then ``forget`` whatever the pair left. Groups: ``jsts_low`` (JSTS score ≤
   3.0), ``jnli_contradiction`` (JNLI label contradiction), ``jsts_high`` (JSTS score ≥ 4.8); the shares of
   each group's pairs refused and listed as merge candidates. Pairs outside the three groups are not run.
4. **latency_ms**: p50/p95 on the wall clock of every remember call (embedding, guard and links included) and
   every recall (query and search, embedding included) of the run, after one warm-up embedding per store;
   the machine's load averages at the start and the end beside them.

``--limit N`` keeps the first N items of each task: the first N paragraphs and the first N questions answered
by one of them; the first N Tanaka pairs; the first N pairs of each group.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs

from ego_bench.common import RANKING_ONLY, load_average, percentiles, report_header
from ego_core import Clock, PluginHost, Response, Settings, build_host
from ego_dedup import DedupPlugin
from ego_memory.arguments import recall_query
from ego_memory.plugin import MemoryPlugin
from ego_memory.progress import progress
from ego_memory.service import Memories

TASKS = ("jsquad", "tanaka", "pairs")
FILES = {"jsquad": "jsquad.json", "tanaka": "tanaka.json", "pairs": "pairs.json"}
K = 10
DIRECTIONS = {"en2ja": "ja", "ja2en": "en"}
"""Direction -> the language stored (the other one asks)."""
GROUPS = ("jsts_low", "jnli_contradiction", "jsts_high")
JSTS_LOW = 3.0
JSTS_HIGH = 4.8
ORIGIN = datetime(2025, 1, 1, tzinfo=UTC)
STEP = timedelta(minutes=1)
_MERGE_LINE = re.compile(r"^\s*-\s*(mem_[0-9a-f]+)\s*<->\s*(mem_[0-9a-f]+)\b", re.MULTILINE)


@attrs.frozen
class JsquadData:
    passages: tuple[tuple[str, str], ...]
    """(id, text)"""
    queries: tuple[tuple[str, tuple[str, ...]], ...]
    """(question, gold passage ids)"""


@attrs.frozen
class Pair:
    group: str
    a: str
    b: str


# ----------------------------------------------------------------------------------------------------
# input


def _read(data_dir: Path, task: str) -> Any:
    path = data_dir / FILES[task]
    if not path.is_file():
        raise ValueError(f"--data {data_dir} has no {FILES[task]} (needed by the {task} task)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not readable JSON: {exc}") from None


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: expected a non-empty string")
    return value


def _items(value: object, where: str) -> list[Mapping[str, Any]]:
    if not isinstance(value, list) or not value or not all(isinstance(item, Mapping) for item in value):
        raise ValueError(f"{where}: expected a non-empty list of objects")
    return value


def load_jsquad(data_dir: Path, limit: int | None) -> JsquadData:
    raw = _read(data_dir, "jsquad")
    name = FILES["jsquad"]
    if not isinstance(raw, Mapping):
        raise ValueError(f"{name}: expected an object with 'passages' and 'queries'")
    passages: dict[str, str] = {}
    for i, item in enumerate(_items(raw.get("passages"), f"{name} passages")):
        passages[_text(item.get("id"), f"{name} passages[{i}].id")] = _text(
            item.get("text"), f"{name} passages[{i}].text"
        )
    queries: list[tuple[str, tuple[str, ...]]] = []
    for i, item in enumerate(_items(raw.get("queries"), f"{name} queries")):
        gold = item.get("gold")
        if not isinstance(gold, list) or not gold or not all(isinstance(g, str) for g in gold):
            raise ValueError(f"{name} queries[{i}].gold: expected a non-empty list of passage ids")
        unknown = [g for g in gold if g not in passages]
        if unknown:
            raise ValueError(f"{name} queries[{i}].gold: unknown passage id {unknown[0]!r}")
        queries.append((_text(item.get("text"), f"{name} queries[{i}].text"), tuple(gold)))
    kept = list(passages.items())[:limit] if limit is not None else list(passages.items())
    kept_ids = {pid for pid, _ in kept}
    answered = [q for q in queries if any(g in kept_ids for g in q[1])]
    if limit is not None:
        answered = answered[:limit]
    return JsquadData(passages=tuple(kept), queries=tuple(answered))


def load_tanaka(data_dir: Path, limit: int | None) -> list[tuple[str, str]]:
    """(en, ja) pairs."""
    name = FILES["tanaka"]
    pairs = [
        (_text(item.get("en"), f"{name}[{i}].en"), _text(item.get("ja"), f"{name}[{i}].ja"))
        for i, item in enumerate(_items(_read(data_dir, "tanaka"), name))
    ]
    return pairs[:limit] if limit is not None else pairs


def load_pairs(data_dir: Path, limit: int | None) -> list[Pair]:
    raw = _read(data_dir, "pairs")
    name = FILES["pairs"]
    if not isinstance(raw, Mapping):
        raise ValueError(f"{name}: expected an object with 'jsts' and 'jnli'")
    grouped: dict[str, list[Pair]] = {group: [] for group in GROUPS}
    for i, item in enumerate(_items(raw.get("jsts"), f"{name} jsts")):
        score = item.get("score")
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise ValueError(f"{name} jsts[{i}].score: expected a number")
        a, b = _text(item.get("a"), f"{name} jsts[{i}].a"), _text(item.get("b"), f"{name} jsts[{i}].b")
        if score <= JSTS_LOW:
            grouped["jsts_low"].append(Pair("jsts_low", a, b))
        elif score >= JSTS_HIGH:
            grouped["jsts_high"].append(Pair("jsts_high", a, b))
    for i, item in enumerate(_items(raw.get("jnli"), f"{name} jnli")):
        label = item.get("label")
        if not isinstance(label, str):
            raise ValueError(f"{name} jnli[{i}].label: expected a string")
        a, b = _text(item.get("a"), f"{name} jnli[{i}].a"), _text(item.get("b"), f"{name} jnli[{i}].b")
        if label == "contradiction":
            grouped["jnli_contradiction"].append(Pair("jnli_contradiction", a, b))
    return [pair for group in GROUPS for pair in (grouped[group][:limit] if limit is not None else grouped[group])]


def parse_tasks(value: str) -> list[str]:
    tasks = list(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    unknown = [t for t in tasks if t not in TASKS]
    if unknown or not tasks:
        raise ValueError(f"--tasks expects a comma-separated subset of {','.join(TASKS)}, got {value!r}")
    return tasks


# ----------------------------------------------------------------------------------------------------
# the host and its tools


@attrs.define
class Session:
    """A started host with the memory and dedup plugins on a fresh store, and its tools' handlers."""

    host: PluginHost
    memories: Memories
    clock: Clock
    remember_ms: list[float]
    recall_ms: list[float]
    failures_seen: int = 0
    moment: datetime = ORIGIN

    def tick(self) -> None:
        self.moment += STEP
        self.clock.set(self.moment)

    def call(self, tool: str, args: Mapping[str, Any]) -> Response:
        """The tool's handler, as the host dispatches it (the handler the MCP server calls).

        A plugin hook that failed during the call (the host records it and carries on, e.g. a duplicate guard
        that never ran) stops the benchmark: its figures would describe a host without that plugin.
        """
        found = self.host.tool(tool)
        if found is None:
            raise RuntimeError(f"the {tool} tool is not served")
        result = found[1].handler(args, self.host.context(found[0]))
        self.check()
        return result if isinstance(result, Response) else Response(data=str(result))

    def check(self) -> None:
        failures = self.host.failures
        if len(failures) > self.failures_seen:
            reasons = "; ".join(f.describe() for f in failures[self.failures_seen :])
            raise RuntimeError(f"a plugin failed during the benchmark: {reasons}")

    def remember(self, content: str) -> bool:
        """Remember ``content`` (timed); True when it was stored, False when the duplicate guard declined it."""
        self.tick()
        started = time.perf_counter()
        response = self.call("remember", {"content": content})
        self.remember_ms.append((time.perf_counter() - started) * 1000)
        return not response.declined

    def recall(self, context: str) -> list[str]:
        """The contents of recall's top ``K`` hits, searched as the recall tool searches (timed)."""
        started = time.perf_counter()
        query, filters = recall_query({"context": context, "n_results": K}, self.memories.ctx)
        hits, _pool, _lines = self.memories.search(query, filters)
        self.recall_ms.append((time.perf_counter() - started) * 1000)
        self.check()
        return [hit.memory.content for hit in hits]


@contextmanager
def session(
    directory: Path,
    settings: Settings,
    *,
    memory_table: Mapping[str, Any],
    dedup_table: Mapping[str, Any],
    remember_ms: list[float],
    recall_ms: list[float],
) -> Iterator[Session]:
    clock = Clock(ORIGIN)
    fresh = attrs.evolve(
        settings,
        data_dir=directory,
        plugin_tables={"memory": {**memory_table, **RANKING_ONLY}, "dedup": dict(dedup_table)},
    )
    memory = MemoryPlugin()
    host = build_host(fresh, autoload=False, plugins={"memory": memory, "dedup": DedupPlugin()}, clock=clock)
    host.start()
    try:
        if memory.memories is None or not host.is_active("dedup"):
            reasons = "; ".join(f.describe() for f in host.failures) or "unknown reason"
            raise RuntimeError(f"the memory and dedup plugins did not start: {reasons}")
        memory.memories.embed(["warm-up"])  # the model's first call is not a remember's latency
        yield Session(host, memory.memories, clock, remember_ms, recall_ms, failures_seen=len(host.failures))
    finally:
        host.stop()


# ----------------------------------------------------------------------------------------------------
# scoring


def rank_of(contents: Sequence[str], gold: set[str]) -> int | None:
    """1-based rank of the first hit whose content is a gold text, or None."""
    for rank, content in enumerate(contents, start=1):
        if content in gold:
            return rank
    return None


class Ranks:
    def __init__(self) -> None:
        self.ranks: list[int | None] = []

    def add(self, rank: int | None) -> None:
        self.ranks.append(rank)

    def report(self) -> dict[str, float]:
        n = len(self.ranks)
        if n == 0:
            return {"hit@1": 0.0, "hit@5": 0.0, "mrr@10": 0.0}
        return {
            "hit@1": round(sum(1 for r in self.ranks if r is not None and r <= 1) / n, 4),
            "hit@5": round(sum(1 for r in self.ranks if r is not None and r <= 5) / n, 4),
            "mrr@10": round(sum(1.0 / r for r in self.ranks if r is not None and r <= K) / n, 4),
        }


def share(count: int, total: int) -> float | None:
    return round(count / total, 4) if total else None


def merge_listed(text: str, ids: set[str]) -> bool:
    """Whether consolidate's answer lists the two memories ``ids`` as a near-duplicate pair."""
    return any({found.group(1), found.group(2)} == ids for found in _MERGE_LINE.finditer(text))


# ----------------------------------------------------------------------------------------------------
# the tasks


def run_jsquad(
    data: JsquadData, open_session: Callable[[str], AbstractContextManager[Session]], show: bool
) -> tuple[dict[str, Any], int]:
    ranks = Ranks()
    refused = 0
    with open_session("jsquad") as s:
        for _pid, text in progress(data.passages, desc="jsquad remember", enabled=show):
            if not s.remember(text):
                refused += 1
        texts = dict(data.passages)
        s.tick()
        for question, gold in progress(data.queries, desc="jsquad recall", enabled=show):
            ranks.add(rank_of(s.recall(question), {texts[g].strip() for g in gold if g in texts}))
    return {**ranks.report(), "refused": refused}, len(data.queries)


def run_tanaka(
    pairs: Sequence[tuple[str, str]], open_session: Callable[[str], AbstractContextManager[Session]], show: bool
) -> tuple[dict[str, Any], dict[str, int]]:
    report: dict[str, Any] = {}
    refused: dict[str, int] = {}
    for direction, stored in DIRECTIONS.items():
        ranks = Ranks()
        refused[direction] = 0
        with open_session(f"tanaka-{direction}") as s:
            for pair in progress(pairs, desc=f"tanaka {direction} remember", enabled=show):
                if not s.remember(pair[0] if stored == "en" else pair[1]):
                    refused[direction] += 1
            s.tick()
            for en, ja in progress(pairs, desc=f"tanaka {direction} recall", enabled=show):
                target, cue = (en, ja) if stored == "en" else (ja, en)
                ranks.add(rank_of(s.recall(cue), {target.strip()}))
        report[direction] = ranks.report()
    return report, refused


def run_pairs(
    pairs: Sequence[Pair], open_session: Callable[[str], AbstractContextManager[Session]], show: bool
) -> tuple[dict[str, Any], dict[str, int]]:
    counts = dict.fromkeys(GROUPS, 0)
    refused = dict.fromkeys(GROUPS, 0)
    merged = dict.fromkeys(GROUPS, 0)
    with open_session("pairs") as s:
        for pair in progress(pairs, desc="pairs", enabled=show):
            if s.memories.count():
                raise RuntimeError("the pairs store is not empty between pairs: forget left something behind")
            counts[pair.group] += 1
            s.remember(pair.a)
            if not s.remember(pair.b):
                refused[pair.group] += 1
            s.tick()
            stored = {m.id for m in s.memories.store.latest(10)}
            answer = s.call("consolidate", {})
            if len(stored) == 2 and merge_listed(answer.data, stored):
                merged[pair.group] += 1
            for memory_id in stored:
                s.call("forget", {"memory_id": memory_id})
    report = {
        group: {
            "refused": share(refused[group], counts[group]),
            "merge_candidates": share(merged[group], counts[group]),
        }
        for group in GROUPS
    }
    return report, counts


def run_ja(
    data_dir: Path,
    settings: Settings,
    memory_table: Mapping[str, Any],
    dedup_table: Mapping[str, Any],
    *,
    command: str,
    tasks: Sequence[str] = TASKS,
    limit: int | None = None,
    work_dir: Path | None = None,
    show: bool = True,
) -> dict[str, Any]:
    if not data_dir.is_dir():
        raise ValueError(f"--data {data_dir} is not a directory (it should hold {', '.join(FILES.values())})")
    if limit is not None and limit < 1:
        raise ValueError("--limit must be at least 1")
    unknown = [t for t in tasks if t not in TASKS]
    if unknown or not tasks:
        raise ValueError(f"unknown task(s) {', '.join(unknown)}; tasks are {', '.join(TASKS)}")
    # Read and check every input before building a store: a bad file fails fast.
    jsquad = load_jsquad(data_dir, limit) if "jsquad" in tasks else None
    tanaka = load_tanaka(data_dir, limit) if "tanaka" in tasks else None
    pairs = load_pairs(data_dir, limit) if "pairs" in tasks else None

    remember_ms: list[float] = []
    recall_ms: list[float] = []
    embedder = ""
    report: dict[str, Any] = {}
    counts: dict[str, Any] = {}
    started = time.perf_counter()
    load_start = load_average()
    with tempfile.TemporaryDirectory(prefix="ego-bench-ja-", dir=work_dir) as tmp:

        @contextmanager
        def open_session(name: str) -> Iterator[Session]:
            nonlocal embedder
            with session(
                Path(tmp) / name,
                settings,
                memory_table=memory_table,
                dedup_table=dedup_table,
                remember_ms=remember_ms,
                recall_ms=recall_ms,
            ) as s:
                embedder = s.memories.embedding_model
                yield s

        if jsquad is not None:
            report["jsquad"], asked = run_jsquad(jsquad, open_session, show)
            counts["jsquad"] = {"passages": len(jsquad.passages), "queries": asked}
        if tanaka is not None:
            report["tanaka"], refused = run_tanaka(tanaka, open_session, show)
            counts["tanaka"] = {"pairs": len(tanaka), "refused": refused}
        if pairs is not None:
            report["pairs"], counts["pairs"] = run_pairs(pairs, open_session, show)
    return {
        **report_header(command, embedder),
        **report,
        "latency_ms": {"remember": percentiles(remember_ms), "recall": percentiles(recall_ms)},
        "counts": {**counts, "remember_calls": len(remember_ms), "recall_calls": len(recall_ms)},
        "seconds": round(time.perf_counter() - started, 1),
        "load_average": {"start": load_start, "end": load_average()},
    }
