"""The LoCoMo retrieval benchmark, exactly as ``bench/data/locomo/README.md`` defines it.

    ego bench locomo --data bench/data/locomo [--ablate] [--loo] [--link-modes links,no_links] [--output FILE]

Per conversation: every turn becomes one memory (``"<speaker>: <text>"`` plus ``" [shares a photo: …]"``),
stored in dialog order with the duplicate guard bypassed, each at its session's time on a simulated clock.
Questions of categories 1-4 go through the recall path the ``recall`` tool uses, with default options, on
the clock set to the conversation's last session (and, as a second variant, on the real wall clock).
Each run starts from a fresh copy of the freshly built store, so access counts never leak between runs.

Evidence ids are normalised before scoring (:func:`normalise_evidence`); questions left without evidence are
excluded and listed. Two link modes: ``links`` stores through ``remember``'s automatic linking (sequence and
similarity links, what a user gets), ``no_links`` with both switched off. With ``loo``, the recall parameters
are tuned on four conversations and scored on the fifth, for each of the five (leave-one-conversation-out).
"""

from __future__ import annotations

import itertools
import json
import re
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from ego_bench.common import RANKING_ONLY, copy_store, memory_host, percentiles, report_header
from ego_core import Clock, RecallQuery, RememberDraft, Settings, Vectors
from ego_memory.progress import progress
from ego_memory.recall.candidates import Candidates
from ego_memory.service import Memories
from ego_memory.store.filters import Filters
from ego_memory.text.terms import words_query

TIME_FORMAT = "%I:%M %p on %d %B, %Y"
CATEGORIES = (1, 2, 3, 4)
KS = (5, 10)
STAGES = ("fusion", "hopfield", "decay", "boosts", "spreading")
NEW_STAGES: tuple[str, ...] = ("two_hop", "speaker", "temporal", "dated", "hedges")
"""Recall stages added after the leave-one-out figure was first measured: ``--loo`` also reports the
leave-one-out figure with them switched off (``loo_before``), tuned the same way in the same run."""
LINK_MODES: dict[str, dict[str, Any]] = {
    "links": {},
    "no_links": {"max_links": 0, "sequence_links": 0},
}
"""Memory-table overrides per link mode: ``links`` is remember's automatic linking as configured."""

GRID: dict[str, tuple[float, ...]] = {
    "lexical_weight": (0.7, 0.85, 0.9),
    "english_weight": (0.25, 0.4, 0.6),
    "hopfield_weight": (0.3,),  # the Hopfield stage is off by default (with the multilingual model it lowers hit@5)
    "sequence_gain": (0.4, 0.6, 0.9),  # the default × (2/3, 1, 3/2), as before the contrast rule doubled it
    "similar_gain": (0.05, 0.15),
    "temporal_weight": (0.3, 0.5),
}
"""The leave-one-out tuning grid over the main recall knobs (the defaults are among its points)."""
KNOB_STAGES = {"temporal_weight": "temporal", "speaker_weight": "speaker"}
"""Knobs of a stage that can be switched off: a variant with the stage off leaves them out of its grid."""
LINK_KNOBS = ("sequence_gain", "similar_gain")
GATHER_KNOBS = frozenset(
    {"dense_candidates", "lexical_candidates", "english_candidates", "dated", "dated_candidates", "hedges", "fusion"}
)
"""Recall settings the first stages read: variants that differ in them gather their candidates separately."""

_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")
_EVIDENCE_ID = re.compile(r"D:?(\d+):(\d+)")


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
    dropped: tuple[dict[str, Any], ...] = ()
    """Questions of categories 1-4 left with no evidence after normalisation (excluded from scoring)."""


def parse_time(value: str) -> datetime:
    return datetime.strptime(value.strip(), TIME_FORMAT).replace(tzinfo=UTC)


def normalise_id(value: str) -> str | None:
    """``D3:12`` as is, ``D:11:26`` -> ``D11:26``, ``D30:05`` -> ``D30:5``; anything else -> None."""
    found = _EVIDENCE_ID.fullmatch(value.strip())
    if found is None:
        return None
    return f"D{int(found.group(1))}:{int(found.group(2))}"


def normalise_evidence(raw: Iterable[object], turns: Iterable[str]) -> tuple[str, ...]:
    """Evidence ids as the benchmark scores them: each entry split on ``;``, ``,`` or whitespace, each part
    normalised by :func:`normalise_id`, parts that are not ids of ``turns`` dropped, duplicates dropped."""
    known = set(turns)
    found: dict[str, None] = {}
    for entry in raw:
        if not isinstance(entry, str):
            continue
        for part in _EVIDENCE_SPLIT.split(entry):
            normal = normalise_id(part) if part else None
            if normal is not None and normal in known:
                found[normal] = None
    return tuple(found)


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
            dia_id = normalise_id(turn["dia_id"]) or turn["dia_id"]
            turns.append(Turn(dia_id=dia_id, content=content, timestamp=moment))
    if last is None:
        raise ValueError(f"{path}: no sessions")
    known = [t.dia_id for t in turns]
    questions: list[Question] = []
    dropped: list[dict[str, Any]] = []
    for q in data["qa"]:
        category = int(q.get("category", 0))
        if category not in CATEGORIES:
            continue
        raw = list(q.get("evidence") or ())
        evidence = normalise_evidence(raw, known)
        if not evidence:
            dropped.append(
                {"conversation": path.stem, "question": q["question"], "category": category, "evidence": raw}
            )
            continue
        questions.append(Question(text=q["question"], evidence=evidence, category=category))
    return Conversation(
        name=path.stem, turns=tuple(turns), questions=tuple(questions), last_time=last, dropped=tuple(dropped)
    )


def question_metrics(ranked: Sequence[str], evidence: Sequence[str], k: int) -> tuple[float, float, float]:
    """(hit@k, evidence recall@k, reciprocal rank of the first evidence id within the top k) of one ranking."""
    top = list(ranked[:k])
    wanted = set(evidence)
    found = {d for d in top if d in wanted}
    hit = 1.0 if found else 0.0
    recall = len(found) / len(wanted) if wanted else 0.0
    rank = next((i for i, d in enumerate(top, start=1) if d in wanted), None)
    return hit, recall, 1.0 / rank if rank else 0.0


class Tally:
    """hit@k, evidence recall@k and MRR, overall and per category."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, int, float, float, float]] = []

    def add(self, category: int, k: int, ranked: Sequence[str], evidence: Sequence[str]) -> None:
        self.rows.append((category, k, *question_metrics(ranked, evidence, k)))

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
    conversation: Conversation,
    directory: Path,
    settings: Settings,
    table: Mapping[str, Any],
    show: bool,
    *,
    embed_cache: dict[str, Vectors] | None = None,
) -> tuple[dict[str, str], list[float], str]:
    """Store every turn; returns memory id -> dia_id, store latencies (ms) and the embedding model id."""
    clock = Clock(conversation.turns[0].timestamp)
    id_to_dia: dict[str, str] = {}
    latencies: list[float] = []
    with memory_host(directory, settings, table, clock, embed_cache) as (_host, memories):
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


def with_recall(table: Mapping[str, Any], **recall: Any) -> dict[str, Any]:
    """``table`` with ``recall`` merged into its ``[recall]`` section."""
    return {**table, "recall": {**dict(table.get("recall", {})), **recall}}


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
    embed_cache: dict[str, Vectors] | None = None,
) -> None:
    """The recall path on fresh copies of the built store, one copy per k."""
    for k in KS:
        copy_store(base, work)
        clock = Clock(None if wall_clock else conversation.last_time)
        with memory_host(work, settings, table, clock, embed_cache) as (_host, memories):
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
    embed_cache: dict[str, Vectors] | None = None,
) -> None:
    """Plain dense top-k (Chroma alone) and plain BM25 (FTS5 alone) over the same store and embeddings."""
    k = max(KS)
    with memory_host(base, settings, table, Clock(conversation.last_time), embed_cache) as (_host, memories):
        for question in conversation.questions:
            vector = memories.embed([question.text], "query")[0]
            dense_ids = [memory_id for memory_id, _sim, _vec in memories.store.dense(vector, k)]
            bm25_ids = [memory_id for memory_id, _score in memories.store.lexical(words_query(question.text), k)]
            for kk in KS:
                dense.add(question.category, kk, [id_to_dia[i] for i in dense_ids], question.evidence)
                bm25.add(question.category, kk, [id_to_dia[i] for i in bm25_ids], question.evidence)


# ----------------------------------------------------------------------------------------------------
# leave-one-conversation-out


def grid_points(
    link_mode: str, grid: Mapping[str, Sequence[float]] = GRID, switched_off: Sequence[str] = ()
) -> list[dict[str, float]]:
    """Every combination of the grid's values. Without automatic links the spreading gains have no effect
    (there are no links to spread along), and the knobs of a switched-off stage none: they stay at their
    defaults."""
    knobs = [
        name
        for name in grid
        if not (link_mode == "no_links" and name in LINK_KNOBS) and KNOB_STAGES.get(name) not in switched_off
    ]
    return [dict(zip(knobs, values, strict=True)) for values in itertools.product(*(grid[n] for n in knobs))]


def tune_scores(
    conversation: Conversation,
    *,
    base: Path,
    work: Path,
    settings: Settings,
    table: Mapping[str, Any],
    id_to_dia: Mapping[str, str],
    variants: Sequence[Mapping[str, Any]],
    embed_cache: dict[str, Vectors],
) -> Any:
    """hit@5 and recall@5 of every question under every variant of the recall settings (overrides of the
    store's own): an array (variants, 2, questions).

    The first stages (dense and lexical candidates, what ranking reads from the store) run once per question
    and per distinct set of the settings they read (:data:`GATHER_KNOBS`) on a fresh copy of the store; each
    variant only ranks them again.
    """
    copy_store(base, work)
    scores = np.zeros((len(variants), 2, len(conversation.questions)), dtype=np.float64)
    groups: dict[tuple[tuple[str, Any], ...], list[int]] = {}
    for v, overrides in enumerate(variants):
        key = tuple(sorted((name, value) for name, value in overrides.items() if name in GATHER_KNOBS))
        groups.setdefault(key, []).append(v)
    with memory_host(work, settings, table, Clock(conversation.last_time), embed_cache) as (_host, memories):
        engine = memories.engine
        default = engine.config
        vectors = [memories.query_vectors(question.text) for question in conversation.questions]
        for key, members in groups.items():
            gathering = attrs.evolve(default, **dict(key))
            found: list[Candidates] = [
                engine.gather(question.text, vector, conversation.last_time, config=gathering, english=english)
                for question, (vector, english) in zip(conversation.questions, vectors, strict=True)
            ]
            for v in members:
                config = attrs.evolve(default, **variants[v])
                for q, (question, candidates) in enumerate(zip(conversation.questions, found, strict=True)):
                    hits = engine.rank(candidates, max(KS), config=config).hits
                    ranked = [id_to_dia[h.id] for h in hits if h.id in id_to_dia]
                    hit, recall, _rr = question_metrics(ranked, question.evidence, 5)
                    scores[v, 0, q] = hit
                    scores[v, 1, q] = recall
    return scores


def choose(points: Sequence[Mapping[str, float]], training: Sequence[Any]) -> int:
    """The grid point with the best pooled hit@5 over the training conversations (then recall@5, then the
    earliest point)."""
    pooled = np.concatenate(list(training), axis=2)  # (points, 2, questions)
    means = pooled.mean(axis=2)
    return max(range(len(points)), key=lambda p: (round(float(means[p, 0]), 9), round(float(means[p, 1]), 9), -p))


# ----------------------------------------------------------------------------------------------------


def _every_category_beats(ours: Mapping[str, Any], theirs: Mapping[str, Any], metric: str, k: int) -> bool:
    """True when ``ours`` is strictly above ``theirs`` on ``metric``@k overall and in every category."""
    if ours["k"][str(k)][metric] <= theirs["k"][str(k)][metric]:
        return False
    return all(
        ours["per_category"][c][str(k)][metric] > theirs["per_category"][c][str(k)][metric]
        for c in ours["per_category"]
    )


def claims(
    modes: Mapping[str, Mapping[str, Any]], dense: Mapping[str, Any], bm25: Mapping[str, Any]
) -> dict[str, bool]:
    """Every comparison the documentation states, checked on this run's figures."""
    checked: dict[str, bool] = {}
    for mode, rows in modes.items():
        variants = {"default": rows["default"], **({"loo": rows["loo"]["held_out"]} if "loo" in rows else {})}
        for variant, figures in variants.items():
            for name, baseline in (("dense", dense), ("bm25", bm25)):
                for metric in ("hit", "recall", "mrr"):
                    for k in KS:
                        key = f"{mode}_{variant}_beats_{name}_every_category_{metric}{k}"
                        checked[key] = _every_category_beats(figures, baseline, metric, k)
        if "loo" in rows and "loo_before" in rows:
            for metric in ("hit", "recall"):
                key = f"{mode}_loo_beats_loo_before_every_category_{metric}5"
                checked[key] = _every_category_beats(rows["loo"]["held_out"], rows["loo_before"]["held_out"], metric, 5)
    return checked


def run_locomo(
    data_dir: Path,
    settings: Settings,
    table: Mapping[str, Any],
    *,
    command: str,
    ablate: bool = False,
    loo: bool = False,
    link_modes: Sequence[str] = tuple(LINK_MODES),
    new_stages: Sequence[str] = (),
    work_dir: Path | None = None,
    show: bool = True,
) -> dict[str, Any]:
    """The benchmark; ``new_stages`` are recall switches whose leave-one-out figure is also measured with them
    off (``loo_before``: the pipeline as it was before them, tuned the same way, in the same run)."""
    files = sorted(data_dir.glob("*.json"))
    if not files:
        raise FileNotFoundError(f"no *.json conversations in {data_dir}")
    unknown = [m for m in link_modes if m not in LINK_MODES]
    if unknown or not link_modes:
        raise ValueError(f"link modes must be among {', '.join(LINK_MODES)}")
    conversations = [load_conversation(path) for path in files]
    embed_cache: dict[str, Vectors] = {}
    dense, bm25 = Tally(), Tally()
    store_ms: list[float] = []
    recall_ms: list[float] = []
    model = ""
    modes: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="ego-locomo-", dir=work_dir) as tmp:
        root = Path(tmp)
        for index, mode in enumerate(link_modes):
            mode_table = {**table, **LINK_MODES[mode], **RANKING_ONLY}
            default, wall = Tally(), Tally()
            ablations = {stage: Tally() for stage in dict.fromkeys((*STAGES, *new_stages))} if ablate else {}
            variants: dict[str, Sequence[str]] = {"loo": ()}
            if new_stages:
                variants["loo_before"] = tuple(new_stages)
            id_maps: dict[str, dict[str, str]] = {}
            bases: dict[str, Path] = {}
            for conversation in conversations:
                base = root / mode / conversation.name / "base"
                work = root / mode / conversation.name / "run"
                first = index == 0  # the first mode's first runs embed every text for real, and are timed
                id_to_dia, latencies, model = build_store(
                    conversation, base, settings, mode_table, show, embed_cache=embed_cache
                )
                if first:
                    store_ms.extend(latencies)
                id_maps[conversation.name] = id_to_dia
                bases[conversation.name] = base
                paths: dict[str, Any] = {
                    "base": base,
                    "work": work,
                    "settings": settings,
                    "id_to_dia": id_to_dia,
                    "show": show,
                    "embed_cache": embed_cache,
                }
                run_path(
                    conversation,
                    **paths,
                    table=mode_table,
                    wall_clock=False,
                    tally=default,
                    latencies=recall_ms if first else None,
                )
                run_path(conversation, **paths, table=mode_table, wall_clock=True, tally=wall, latencies=None)
                if first:
                    run_baselines(
                        conversation,
                        base=base,
                        settings=settings,
                        table=mode_table,
                        id_to_dia=id_to_dia,
                        dense=dense,
                        bm25=bm25,
                        embed_cache=embed_cache,
                    )
                for stage, tally in ablations.items():
                    ablated = with_recall(mode_table, **{stage: False})
                    run_path(conversation, **paths, table=ablated, wall_clock=False, tally=tally, latencies=None)
            rows: dict[str, Any] = {"default": default.report(), "wall_clock": wall.report()}
            if ablate:
                rows["ablation"] = {f"without_{stage}": tally.report() for stage, tally in ablations.items()}
            if loo:
                points_of = {variant: grid_points(mode, switched_off=off) for variant, off in variants.items()}
                settings_of = [
                    {**dict.fromkeys(switched_off, False), **point}
                    for variant, switched_off in variants.items()
                    for point in points_of[variant]
                ]
                scores = {
                    c.name: tune_scores(
                        c,
                        base=bases[c.name],
                        work=root / mode / c.name / "run",
                        settings=settings,
                        table=mode_table,
                        id_to_dia=id_maps[c.name],
                        variants=settings_of,
                        embed_cache=embed_cache,
                    )
                    for c in progress(conversations, desc=f"tune {mode}", enabled=show)
                }
                offset = 0
                for variant, switched_off in variants.items():
                    points = points_of[variant]
                    part = slice(offset, offset + len(points))
                    offset += len(points)
                    held_out = Tally()
                    folds = []
                    for conversation in conversations:
                        training = [scores[c.name][part] for c in conversations if c.name != conversation.name]
                        chosen = points[choose(points, training)]
                        fold_table = with_recall(mode_table, **dict.fromkeys(switched_off, False), **chosen)
                        fold = Tally()
                        run_path(
                            conversation,
                            base=bases[conversation.name],
                            work=root / mode / conversation.name / "run",
                            settings=settings,
                            table=fold_table,
                            id_to_dia=id_maps[conversation.name],
                            wall_clock=False,
                            tally=fold,
                            latencies=None,
                            show=False,
                            embed_cache=embed_cache,
                        )
                        held_out.rows.extend(fold.rows)
                        folds.append({"held_out": conversation.name, "chosen": chosen, **fold.report()["k"]})
                    rows[variant] = {
                        "switched_off": list(switched_off),
                        "grid": {name: list(values) for name, values in GRID.items() if name in points[0]},
                        "grid_points": len(points),
                        "folds": folds,
                        "held_out": held_out.report(),
                    }
            modes[mode] = rows
    dense_report, bm25_report = dense.report(), bm25.report()
    first_mode = modes[link_modes[0]]
    report: dict[str, Any] = {
        **report_header(command, model),
        "conversations": [c.name for c in conversations],
        "questions": sum(len(c.questions) for c in conversations),
        "memories": sum(len(c.turns) for c in conversations),
        "dropped_questions": [d for c in conversations for d in c.dropped],
        "link_modes": {m: LINK_MODES[m] for m in link_modes},
        **first_mode["default"],
        "latency_ms": {"store": percentiles(store_ms), "recall": percentiles(recall_ms)},
        "baseline_dense": dense_report,
        "baseline_bm25": bm25_report,
        "modes": modes,
        "claims": claims(modes, dense_report, bm25_report),
    }
    return report
