"""The LoCoMo retrieval benchmark, exactly as ``shared/data/locomo/README.md`` defines it.

Per conversation: every turn becomes one memory (``"<speaker>: <text>"`` plus ``" [shares a photo: …]"``),
stored in dialog order with the duplicate guard bypassed, each at its session's time on a simulated clock.
Questions of categories 1-4 go through the recall path the ``recall`` tool uses, with default options, on
the clock set to the conversation's last session (and, as a second variant, on the real wall clock).
Each run starts from a fresh copy of the freshly built store, so access counts never leak between runs.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs

from ego_bench.common import copy_store, memory_host, percentiles, report_header
from ego_core import Clock, RecallQuery, RememberDraft, Settings
from ego_memory.filters import Filters
from ego_memory.memories import Memories
from ego_memory.progress import progress
from ego_memory.text import words_query

TIME_FORMAT = "%I:%M %p on %d %B, %Y"
CATEGORIES = (1, 2, 3, 4)
KS = (5, 10)
STAGES = ("fusion", "hopfield", "decay", "boosts", "spreading")


@attrs.frozen
class Turn:
    dia_id: str
    content: str
    timestamp: datetime


@attrs.frozen
class Question:
    text: str
    evidence: tuple[str, ...]
    category: int


@attrs.frozen
class Conversation:
    name: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    last_time: datetime


def parse_time(value: str) -> datetime:
    return datetime.strptime(value.strip(), TIME_FORMAT).replace(tzinfo=UTC)


def load_conversation(path: Path) -> Conversation:
    data = json.loads(path.read_text(encoding="utf-8"))
    sessions = sorted(
        (int(key.split("_")[1]), key)
        for key, value in data.items()
        if key.startswith("session_") and key.count("_") == 1 and isinstance(value, list)
    )
    turns: list[Turn] = []
    last = None
    for number, key in sessions:
        moment = parse_time(data[f"session_{number}_date_time"])
        last = moment if last is None or moment > last else last
        for turn in data[key]:
            content = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                content += f" [shares a photo: {turn['blip_caption']}]"
            turns.append(Turn(dia_id=turn["dia_id"], content=content, timestamp=moment))
    questions = tuple(
        Question(text=q["question"], evidence=tuple(q.get("evidence") or ()), category=int(q["category"]))
        for q in data["qa"]
        if int(q.get("category", 0)) in CATEGORIES
    )
    if last is None:
        raise ValueError(f"{path}: no sessions")
    return Conversation(name=path.stem, turns=tuple(turns), questions=questions, last_time=last)


class Tally:
    """hit@k, evidence recall@k and MRR, overall and per category."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, int, float, float, float]] = []

    def add(self, category: int, k: int, ranked: Sequence[str], evidence: Sequence[str]) -> None:
        top = list(ranked[:k])
        wanted = set(evidence)
        found = [d for d in top if d in wanted]
        hit = 1.0 if found else 0.0
        recall = len(set(found)) / len(wanted) if wanted else 0.0
        rank = next((i for i, d in enumerate(top, start=1) if d in wanted), None)
        self.rows.append((category, k, hit, recall, 1.0 / rank if rank else 0.0))

    def metrics(self, k: int, category: int | None = None) -> dict[str, float]:
        rows = [r for r in self.rows if r[1] == k and (category is None or r[0] == category)]
        if not rows:
            return {"hit": 0.0, "recall": 0.0, "mrr": 0.0, "n": 0}
        n = len(rows)
        return {
            "hit": round(sum(r[2] for r in rows) / n, 4),
            "recall": round(sum(r[3] for r in rows) / n, 4),
            "mrr": round(sum(r[4] for r in rows) / n, 4),
            "n": n,
        }

    def report(self) -> dict[str, Any]:
        categories = sorted({r[0] for r in self.rows})
        return {
            "k": {str(k): self.metrics(k) for k in KS},
            "per_category": {str(c): {str(k): self.metrics(k, c) for k in KS} for c in categories},
        }


def build_store(
    conversation: Conversation, directory: Path, settings: Settings, table: Mapping[str, Any], show: bool
) -> tuple[dict[str, str], list[float], str]:
    """Store every turn; returns memory id -> dia_id, store latencies (ms) and the embedding model id."""
    clock = Clock(conversation.turns[0].timestamp)
    id_to_dia: dict[str, str] = {}
    latencies: list[float] = []
    with memory_host(directory, settings, table, clock) as (_host, memories):
        for turn in progress(conversation.turns, desc=f"store {conversation.name}", enabled=show):
            clock.set(turn.timestamp)
            started = time.perf_counter()
            memory, _links = memories.store_draft(
                RememberDraft(content=turn.content, force=True), timestamp=turn.timestamp
            )
            latencies.append((time.perf_counter() - started) * 1000)
            id_to_dia[memory.id] = turn.dia_id
        model = memories.embedding_model
    return id_to_dia, latencies, model


def _ranked_default(memories: Memories, question: Question, k: int, id_to_dia: Mapping[str, str]) -> list[str]:
    hits, _pool, _lines = memories.search(RecallQuery(context=question.text, n_results=k), Filters())
    return [id_to_dia[h.memory.id] for h in hits if h.memory.id in id_to_dia]


def run_path(
    conversation: Conversation,
    *,
    base: Path,
    work: Path,
    settings: Settings,
    table: Mapping[str, Any],
    id_to_dia: Mapping[str, str],
    wall_clock: bool,
    tally: Tally,
    latencies: list[float] | None,
    show: bool,
) -> None:
    """The recall path on fresh copies of the built store, one copy per k."""
    for k in KS:
        copy_store(base, work)
        clock = Clock(None if wall_clock else conversation.last_time)
        with memory_host(work, settings, table, clock) as (_host, memories):
            for question in progress(conversation.questions, desc=f"recall@{k} {conversation.name}", enabled=show):
                started = time.perf_counter()
                ranked = _ranked_default(memories, question, k, id_to_dia)
                if latencies is not None and k == KS[0]:
                    latencies.append((time.perf_counter() - started) * 1000)
                tally.add(question.category, k, ranked, question.evidence)


def run_baselines(
    conversation: Conversation,
    *,
    base: Path,
    settings: Settings,
    table: Mapping[str, Any],
    id_to_dia: Mapping[str, str],
    dense: Tally,
    bm25: Tally,
) -> None:
    """Plain dense top-k (Chroma alone) and plain BM25 (FTS5 alone) over the same store and embeddings."""
    k = max(KS)
    with memory_host(base, settings, table, Clock(conversation.last_time)) as (_host, memories):
        for question in conversation.questions:
            vector = memories.embed([question.text])[0]
            dense_ids = [memory_id for memory_id, _sim, _vec in memories.store.dense(vector, k)]
            bm25_ids = [memory_id for memory_id, _score in memories.store.lexical(words_query(question.text), k)]
            for kk in KS:
                dense.add(question.category, kk, [id_to_dia[i] for i in dense_ids], question.evidence)
                bm25.add(question.category, kk, [id_to_dia[i] for i in bm25_ids], question.evidence)


def run_locomo(
    data_dir: Path,
    settings: Settings,
    table: Mapping[str, Any],
    *,
    command: str,
    ablate: bool = False,
    work_dir: Path | None = None,
    show: bool = True,
) -> dict[str, Any]:
    files = sorted(data_dir.glob("*.json"))
    if not files:
        raise FileNotFoundError(f"no *.json conversations in {data_dir}")
    conversations = [load_conversation(path) for path in files]
    default, wall, dense, bm25 = Tally(), Tally(), Tally(), Tally()
    ablations = {stage: Tally() for stage in STAGES} if ablate else {}
    store_ms: list[float] = []
    recall_ms: list[float] = []
    model = ""
    with tempfile.TemporaryDirectory(prefix="ego-locomo-", dir=work_dir) as tmp:
        root = Path(tmp)
        for conversation in conversations:
            base = root / conversation.name / "base"
            work = root / conversation.name / "run"
            id_to_dia, latencies, model = build_store(conversation, base, settings, table, show)
            store_ms.extend(latencies)
            paths: dict[str, Any] = {
                "base": base,
                "work": work,
                "settings": settings,
                "id_to_dia": id_to_dia,
                "show": show,
            }
            run_path(conversation, **paths, table=table, wall_clock=False, tally=default, latencies=recall_ms)
            run_path(conversation, **paths, table=table, wall_clock=True, tally=wall, latencies=None)
            run_baselines(
                conversation, base=base, settings=settings, table=table, id_to_dia=id_to_dia, dense=dense, bm25=bm25
            )
            for stage, tally in ablations.items():
                ablated = {**table, "recall": {**dict(table.get("recall", {})), stage: False}}
                run_path(conversation, **paths, table=ablated, wall_clock=False, tally=tally, latencies=None)
    report: dict[str, Any] = {
        **report_header(command, model),
        "conversations": [c.name for c in conversations],
        "questions": sum(len(c.questions) for c in conversations),
        "memories": sum(len(c.turns) for c in conversations),
        **default.report(),
        "latency_ms": {"store": percentiles(store_ms), "recall": percentiles(recall_ms)},
        "baseline_dense": dense.report(),
        "baseline_bm25": bm25.report(),
        "wall_clock": wall.report(),
    }
    if ablate:
        report["ablation"] = {f"without_{stage}": tally.report() for stage, tally in ablations.items()}
    return report
