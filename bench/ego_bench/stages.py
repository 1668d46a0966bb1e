"""Scenarios for the stages LoCoMo cannot judge: time decay and the emotion/importance boosts.

LoCoMo's questions are spread evenly over each conversation's history and its memories carry no emotion, so
decay and boosts can only be neutral there. These two scenarios show what they are for, each measured with
the stage on and off, through the same recall path as the ``recall`` tool:

- **Knowledge updates** (decay): 40 facts, each stated twice — an old value, and 30-180 days later a new one
  ("Mia's favourite tea is jasmine." … "Mia's favourite tea is sencha.") — among 400 filler diary memories
  spread over a year. The question ("What is Mia's favourite tea?") should bring the newer statement first.
- **Salience** (boosts): 40 pairs of equivalent experiences stored at the same moment, one felt vividly and
  important (moved, intensity 0.9, importance 5), one in passing (neutral, importance 2); which phrasing is
  the vivid one alternates, and the question is a third phrasing. Recalling the experience should bring the
  vivid one first.

The generator is seeded; the corpus is identical on every run.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs

from ego_bench.common import copy_store, memory_host, report_header
from ego_bench.scale import synthetic_sentences
from ego_core import Clock, RecallQuery, RememberDraft, Settings
from ego_memory.service import Memories
from ego_memory.store.filters import Filters

PEOPLE = ("Mia", "Ken", "Aiko", "Tom", "Lena", "Ravi", "Sora", "Nina")
FACTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("What is {p}'s favourite tea?", "{p}'s favourite tea is {v}.", ("jasmine", "sencha", "earl grey", "rooibos")),
    (
        "Where does {p} keep the spare key?",
        "{p} keeps the spare key {v}.",
        ("under the blue pot", "in the kitchen drawer", "behind the mirror", "in the garage"),
    ),
    ("Which day is {p}'s piano lesson?", "{p}'s piano lesson is on {v}.", ("Monday", "Wednesday", "Friday", "Sunday")),
    (
        "What is {p} working on these days?",
        "{p} is working on {v} these days.",
        ("a compiler", "a garden shed", "a novel", "a chess engine"),
    ),
    (
        "Which route does {p} run in the morning?",
        "{p} runs {v} in the morning.",
        ("along the river", "around the lake", "up the hill", "through the old park"),
    ),
)
EXPERIENCES: tuple[tuple[str, str, str], ...] = (
    (
        "Watched the ferries leave the harbour with {p} at dusk.",
        "Saw the evening ferries depart the harbour with {p}.",
        "ferries and the harbour in the evening with {p}",
    ),
    (
        "{p} and I fixed the leaking kitchen tap together.",
        "Repaired the dripping kitchen faucet with {p}.",
        "the kitchen tap repair with {p}",
    ),
    (
        "{p} told me about the summer they spent by the sea.",
        "Heard {p}'s story of a summer by the seaside.",
        "{p}'s summer at the sea",
    ),
    (
        "Cooked miso soup with {p} on a cold evening.",
        "Made miso soup together with {p} one chilly night.",
        "miso soup with {p} when it was cold",
    ),
    (
        "{p} showed me the stars through an old telescope.",
        "Looked at the stars with {p} through a vintage telescope.",
        "stargazing with {p} and a telescope",
    ),
)
ORIGIN = datetime(2025, 1, 1, tzinfo=UTC)
FILLER = 400


@attrs.frozen
class Pair:
    question: str
    first_id: str
    second_id: str


def _ranked(memories: Memories, question: str) -> list[str]:
    hits, _pool, _lines = memories.search(RecallQuery(context=question, n_results=10), Filters())
    return [h.memory.id for h in hits]


def _score(memories: Memories, pairs: Sequence[Pair]) -> dict[str, float]:
    """How often the wanted memory (second_id) comes before the other one, and its mean reciprocal rank."""
    first = 0
    reciprocal = 0.0
    for pair in pairs:
        ranked = _ranked(memories, pair.question)
        wanted = ranked.index(pair.second_id) if pair.second_id in ranked else None
        other = ranked.index(pair.first_id) if pair.first_id in ranked else None
        if wanted is not None and (other is None or wanted < other):
            first += 1
        reciprocal += 1.0 / (wanted + 1) if wanted is not None else 0.0
    return {"wanted_first": round(first / len(pairs), 4), "mrr": round(reciprocal / len(pairs), 4), "n": len(pairs)}


def _store(memories: Memories, clock: Clock, draft: RememberDraft, moment: datetime) -> str:
    clock.set(moment)
    memory, _links = memories.store_draft(draft, timestamp=moment)
    return memory.id


def _build(memories: Memories, clock: Clock, rng: random.Random) -> tuple[list[Pair], list[Pair]]:
    for i, text in enumerate(synthetic_sentences(FILLER, seed=17)):
        _store(memories, clock, RememberDraft(content=text, force=True), ORIGIN + timedelta(hours=i * 21.9))
    updates: list[Pair] = []
    for index, (person, (question, statement, values)) in enumerate((p, f) for p in PEOPLE for f in FACTS):
        if index >= 40:
            break
        old, new = rng.sample(values, 2)
        day = rng.uniform(0, 150)
        later = day + rng.uniform(30, 180)
        old_id = _store(
            memories,
            clock,
            RememberDraft(content=statement.format(p=person, v=old), force=True),
            ORIGIN + timedelta(days=day),
        )
        new_id = _store(
            memories,
            clock,
            RememberDraft(content=statement.format(p=person, v=new), force=True),
            ORIGIN + timedelta(days=later),
        )
        updates.append(Pair(question.format(p=person), old_id, new_id))
    salience: list[Pair] = []
    for index, (person, (one, two, question)) in enumerate((p, e) for p in PEOPLE for e in EXPERIENCES):
        if index >= 40:
            break
        vivid_text, plain_text = (one, two) if index % 2 == 0 else (two, one)
        moment = ORIGIN + timedelta(days=rng.uniform(0, 360))
        plain = RememberDraft(
            content=plain_text.format(p=person), emotion="neutral", intensity=0.3, importance=2, force=True
        )
        vivid = RememberDraft(
            content=vivid_text.format(p=person), emotion="moved", intensity=0.9, importance=5, force=True
        )
        plain_id = _store(memories, clock, plain, moment)
        vivid_id = _store(memories, clock, vivid, moment)
        salience.append(Pair(question.format(p=person), plain_id, vivid_id))
    return updates, salience


def run_stages(
    settings: Settings,
    table: Mapping[str, Any],
    *,
    command: str,
    work_dir: Path | None = None,
) -> dict[str, Any]:
    rng = random.Random(29)
    variants: dict[str, dict[str, Any]] = {
        "default": {},
        "without_decay": {"decay": False},
        "without_boosts": {"boosts": False},
    }
    results: dict[str, Any] = {}
    model = ""
    with tempfile.TemporaryDirectory(prefix="ego-stages-", dir=work_dir) as tmp:
        base = Path(tmp) / "base"
        clock = Clock(ORIGIN)
        with memory_host(base, settings, table, clock) as (_host, memories):
            model = memories.embedding_model
            updates, salience = _build(memories, clock, rng)
        now = ORIGIN + timedelta(days=366)
        for name, recall in variants.items():
            work = Path(tmp) / "run"
            copy_store(base, work)
            ablated = {**table, "recall": {**dict(table.get("recall", {})), **recall}}
            with memory_host(work, settings, ablated, Clock(now)) as (_host, memories):
                results[name] = {
                    "knowledge_updates": _score(memories, updates),
                    "salience": _score(memories, salience),
                }
    return {
        **report_header(command, model),
        "scenarios": {
            "knowledge_updates": "40 facts stated twice, 30-180 days apart, among 400 filler memories: is the "
            "newer statement recalled before the older one?",
            "salience": "40 pairs of equivalent experiences at the same moment, one vivid and important: is the "
            "vivid one recalled first?",
        },
        "results": results,
    }
