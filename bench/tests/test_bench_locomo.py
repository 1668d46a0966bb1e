"""The LoCoMo benchmark counts what its definition says: the loader, evidence normalisation, the metrics,
the leave-one-out selection, the checked claims, and a small end-to-end run with the real model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ego_bench.locomo import (
    Tally,
    build_store,
    choose,
    claims,
    grid_points,
    load_conversation,
    normalise_evidence,
    normalise_id,
    question_metrics,
    run_locomo,
    tune_scores,
)
from ego_core import Settings
from ego_memory.embedding.use import USE_MODEL_ID

TURNS = ["D1:1", "D1:2", "D1:3", "D8:6", "D9:17", "D11:26", "D30:5"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (["D1:3"], ("D1:3",)),
        (["D8:6; D9:17"], ("D8:6", "D9:17")),
        (["D:11:26"], ("D11:26",)),
        (["D30:05"], ("D30:5",)),
        (["D1:1,D1:2 D1:3"], ("D1:1", "D1:2", "D1:3")),
        (["D1:2", "D1:2;D1:2"], ("D1:2",)),
        (["D2:1"], ()),  # not a turn of the conversation
        (["session 3", "D1", "D1:x", "", "1:3"], ()),  # not of the form D<s>:<t>
        ([None, 7, "D1:1"], ("D1:1",)),
    ],
)
def test_evidence_is_normalised_as_the_definition_says(raw: list[Any], expected: tuple[str, ...]) -> None:
    assert normalise_evidence(raw, TURNS) == expected


def test_a_turn_id_is_normalised_like_evidence() -> None:
    assert normalise_id("D03:007") == "D3:7"
    assert normalise_id(" D:2:10 ") == "D2:10"
    assert normalise_id("d2:10") is None


ids = st.tuples(st.integers(0, 40), st.integers(0, 40))


@given(
    chosen=st.lists(ids, max_size=6),
    zeros=st.lists(st.integers(0, 2), min_size=12, max_size=12),
    colon=st.lists(st.booleans(), min_size=6, max_size=6),
    separators=st.lists(st.sampled_from(["; ", ",", " ", ";", "\t", " , "]), min_size=6, max_size=6),
    junk=st.lists(st.sampled_from(["", "D", "x:1", "D1", "S3:4", "D-1:2"]), max_size=3),
    known=st.sets(ids, max_size=30),
)
def test_normalising_keeps_exactly_the_known_turns_named(
    chosen: list[tuple[int, int]],
    zeros: list[int],
    colon: list[bool],
    separators: list[str],
    junk: list[str],
    known: set[tuple[int, int]],
) -> None:
    written = [
        f"D{':' if colon[i] else ''}{'0' * zeros[2 * i]}{s}:{'0' * zeros[2 * i + 1]}{t}"
        for i, (s, t) in enumerate(chosen)
    ]
    entry = "".join(part + separators[i] for i, part in enumerate(written))
    turns = [f"D{s}:{t}" for s, t in known]
    result = normalise_evidence([entry, *junk], turns)
    wanted = [f"D{s}:{t}" for s, t in chosen if (s, t) in known]
    assert result == tuple(dict.fromkeys(wanted))


def write_conversation(path: Path, turns: list[tuple[str, str, str]], qa: list[dict[str, Any]]) -> None:
    """A LoCoMo-shaped file: turns (session number, speaker, text) and its questions."""
    sessions: dict[str, Any] = {"speaker_a": "Ann", "speaker_b": "Bo"}
    counters: dict[str, int] = {}
    for session, speaker, text in turns:
        counters[session] = counters.get(session, 0) + 1
        sessions.setdefault(f"session_{session}", []).append(
            {"speaker": speaker, "dia_id": f"D{session}:{counters[session]}", "text": text}
        )
        sessions[f"session_{session}_date_time"] = f"1:56 pm on {int(session) + 1} May, 2023"
    sessions["qa"] = qa
    path.write_text(json.dumps(sessions), encoding="utf-8")


def test_the_loader_builds_contents_and_drops_questions_without_evidence(tmp_path: Path) -> None:
    path = tmp_path / "7.json"
    write_conversation(path, [("1", "Ann", "Hello there."), ("1", "Bo", "Hi!"), ("2", "Ann", "Back again.")], [])
    data = json.loads(path.read_text())
    data["session_1"][1]["blip_caption"] = "a dog on a beach"
    data["qa"] = [
        {"question": "q1", "evidence": ["D1:01; D2:1"], "category": 1},
        {"question": "q2", "evidence": ["D5:1"], "category": 2},
        {"question": "q3", "evidence": [], "category": 4},
        {"question": "q5", "evidence": ["D1:1"], "category": 5},
    ]
    path.write_text(json.dumps(data), encoding="utf-8")
    conversation = load_conversation(path)
    assert [t.content for t in conversation.turns] == [
        "Ann: Hello there.",
        "Bo: Hi! [shares a photo: a dog on a beach]",
        "Ann: Back again.",
    ]
    assert [t.dia_id for t in conversation.turns] == ["D1:1", "D1:2", "D2:1"]
    assert [(q.text, q.evidence, q.category) for q in conversation.questions] == [("q1", ("D1:1", "D2:1"), 1)]
    assert [d["question"] for d in conversation.dropped] == ["q2", "q3"]  # category 5 is skipped, not dropped
    assert conversation.last_time.day == 3


def test_hit_recall_and_mrr_on_hand_made_rankings() -> None:
    assert question_metrics(["a", "b", "c"], ["c"], 5) == (1.0, 1.0, pytest.approx(1 / 3))
    assert question_metrics(["a", "b", "c", "d", "e", "f"], ["f"], 5) == (0.0, 0.0, 0.0)
    assert question_metrics(["x", "e1", "y", "e2"], ["e1", "e2", "e3", "e4"], 5) == (1.0, 0.5, 0.5)
    assert question_metrics(["e1", "e1"], ["e1", "e2"], 5) == (1.0, 0.5, 1.0)  # a repeat counts once
    assert question_metrics([], ["e1"], 5) == (0.0, 0.0, 0.0)

    tally = Tally()
    tally.add(1, 5, ["a", "e"], ["e"])  # hit, recall 1, rr 1/2
    tally.add(1, 5, ["a", "b"], ["e"])  # miss
    tally.add(2, 5, ["e", "f"], ["e", "g"])  # hit, recall 1/2, rr 1
    assert tally.metrics(5, 1) == {"hit": 0.5, "recall": 0.5, "mrr": 0.25, "n": 2}
    assert tally.metrics(5) == {"hit": pytest.approx(0.6667), "recall": 0.5, "mrr": 0.5, "n": 3}
    assert tally.metrics(10) == {"hit": 0.0, "recall": 0.0, "mrr": 0.0, "n": 0}


def test_leave_one_out_picks_the_best_point_on_the_training_questions_only() -> None:
    points = [{"w": 0.1}, {"w": 0.2}, {"w": 0.3}]
    # (points, [hit, recall], questions)
    a = np.array([[[1, 0], [1, 0]], [[1, 1], [0.5, 0.5]], [[0, 0], [0, 0]]], dtype=np.float64)
    b = np.array([[[0, 0], [0, 0]], [[0, 1], [0, 1]], [[1, 1], [1, 1]]], dtype=np.float64)
    assert choose(points, [a]) == 1
    assert choose(points, [b]) == 2
    assert choose(points, [a, b]) == 1  # pooled hit: 2/4, 3/4, 2/4
    assert choose(points, [np.zeros((3, 2, 2))]) == 0  # ties go to the earliest point


def test_without_links_the_grid_leaves_the_spreading_gains_alone() -> None:
    grid = {"lexical_weight": (0.6, 0.7), "sequence_gain": (0.2, 0.3), "similar_gain": (0.05,)}
    assert len(grid_points("links", grid)) == 4
    assert grid_points("no_links", grid) == [{"lexical_weight": 0.6}, {"lexical_weight": 0.7}]


def test_a_switched_off_stage_leaves_its_knobs_out_of_the_grid() -> None:
    grid = {"lexical_weight": (0.6, 0.7), "temporal_weight": (0.3, 0.5), "speaker_weight": (0.15, 0.3)}
    assert len(grid_points("links", grid)) == 8
    assert grid_points("links", grid, switched_off=("temporal", "speaker")) == [
        {"lexical_weight": 0.6},
        {"lexical_weight": 0.7},
    ]
    assert {tuple(p) for p in grid_points("no_links", grid, switched_off=("temporal",))} == {
        ("lexical_weight", "speaker_weight")
    }


def _figures(overall: float, per_category: dict[str, float]) -> dict[str, Any]:
    def row(value: float) -> dict[str, Any]:
        return {"5": {"hit": value, "recall": value, "mrr": value}, "10": {"hit": value, "recall": value, "mrr": value}}

    return {"k": row(overall), "per_category": {c: row(v) for c, v in per_category.items()}}


def test_claims_are_checked_on_every_category() -> None:
    ours = _figures(0.7, {"1": 0.6, "3": 0.4})
    tie = _figures(0.5, {"1": 0.5, "3": 0.4})
    below = _figures(0.5, {"1": 0.5, "3": 0.3})
    checked = claims({"links": {"default": ours}}, dense=below, bm25=tie)
    assert checked["links_default_beats_dense_every_category_hit5"] is True
    assert checked["links_default_beats_bm25_every_category_hit5"] is False  # category 3 ties
    assert all(isinstance(v, bool) for v in checked.values())


def test_a_small_run_reports_both_link_modes_leave_one_out_and_dropped_questions(
    ego_settings: Settings, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    garden = [
        ("1", "Ann", "I planted tomatoes in the garden this spring."),
        ("1", "Bo", "Nice, mine never grow that well."),
        ("1", "Ann", "The secret is compost from the kitchen."),
        ("2", "Bo", "I adopted a grey cat called Pixel."),
        ("2", "Ann", "Pixel sounds adorable, does she like the garden?"),
        ("2", "Bo", "She sleeps under the tomatoes all day."),
    ]
    music = [
        ("1", "Ann", "I started violin lessons on Monday."),
        ("1", "Bo", "Which teacher did you pick?"),
        ("1", "Ann", "Mrs Alvarez from the conservatory."),
        ("2", "Bo", "I went hiking in the Alps last week."),
        ("2", "Ann", "How high did you climb?"),
        ("2", "Bo", "Up to the glacier hut at 2,800 metres."),
    ]
    qa_garden = [
        {"question": "What did Ann plant in the garden?", "evidence": ["D1:1"], "category": 4},
        {"question": "What is the name of Bo's cat?", "evidence": ["D2:01"], "category": 1},
        {"question": "Who has no evidence?", "evidence": ["D9:9"], "category": 3},
    ]
    qa_music = [
        {"question": "Who teaches Ann the violin?", "evidence": ["D1:3; D1:1"], "category": 4},
        {"question": "Where did Bo go hiking?", "evidence": ["D:2:1"], "category": 2},
    ]
    write_conversation(data / "1.json", garden, qa_garden)
    write_conversation(data / "2.json", music, qa_music)
    report = run_locomo(
        data,
        ego_settings,
        {},
        command="test",
        loo=True,
        new_stages=("hopfield",),
        work_dir=tmp_path,
        show=False,
    )
    assert report["questions"] == 4
    assert report["embedder"] == USE_MODEL_ID  # the default model
    assert report["command"] == "test"
    assert report["date"]
    assert [d["question"] for d in report["dropped_questions"]] == ["Who has no evidence?"]
    assert set(report["modes"]) == {"links", "no_links"}
    for rows in report["modes"].values():
        assert rows["default"]["k"]["5"]["n"] == 4
        assert set(rows["default"]["per_category"]) == {"1", "2", "4"}
        assert rows["loo"]["held_out"]["k"]["5"]["n"] == 4
        assert [fold["held_out"] for fold in rows["loo"]["folds"]] == ["1", "2"]
        assert rows["loo_before"]["switched_off"] == ["hopfield"]
    no_spreading = {"lexical_weight", "english_weight", "hopfield_weight", "temporal_weight"}
    assert set(report["modes"]["no_links"]["loo"]["folds"][0]["chosen"]) == no_spreading
    assert report["k"]["5"]["hit"] >= 0.75  # four easy questions over six turns each
    assert all(isinstance(v, bool) for v in report["claims"].values())
    assert "links_loo_beats_loo_before_every_category_hit5" in report["claims"]


def test_variants_that_gather_differently_are_scored_on_their_own_candidates(
    ego_settings: Settings, tmp_path: Path
) -> None:
    path = tmp_path / "1.json"
    turns = [("1", "Ann", f"Errand number {n}: the post office.") for n in range(3)]
    turns += [("2", "Bo", "Tried a new curry recipe.")]
    qa = [{"question": "What did we do in June 2023?", "evidence": ["D2:1"], "category": 2}]
    write_conversation(path, turns, qa)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["session_2_date_time"] = "1:56 pm on 3 June, 2023"  # the other session is in May
    path.write_text(json.dumps(data), encoding="utf-8")
    conversation = load_conversation(path)
    table: dict[str, Any] = {}
    id_to_dia, _latencies, _model = build_store(conversation, tmp_path / "base", ego_settings, table, False)
    narrow = {"dense_candidates": 1, "lexical_candidates": 1, "dated": False}

    def scores(*variants: dict[str, Any]) -> Any:
        return tune_scores(
            conversation,
            base=tmp_path / "base",
            work=tmp_path / "run",
            settings=ego_settings,
            table=table,
            id_to_dia=id_to_dia,
            variants=variants,
            embed_cache={},
        )

    together = scores(narrow, {})
    assert np.array_equal(together[0], scores(narrow)[0])
    assert np.array_equal(together[1], scores({})[0])
    assert together[1, 0, 0] == 1.0  # four turns: the default pool holds them all
    assert together[0, 0, 0] == 0.0  # a pool of one: an errand


def _unit(**parts: float) -> Any:
    vector = np.zeros(8, dtype=np.float32)
    for name, value in parts.items():
        vector[int(name[1:])] = value
    return vector / np.linalg.norm(vector)


def test_hopfield_completion_pulls_toward_the_cluster_the_lexical_evidence_points_at(
    ego_settings: Settings, tmp_path: Path
) -> None:
    """Three memories match the query's words and share a theme (axis 1); ``target`` shares the theme but none
    of the words, ``distractor`` is a little closer to the query on its own but off the theme. Without the
    Hopfield stage the distractor ranks above the target; with it (default settings) the completed pattern
    leans toward the theme and the target overtakes the distractor. A no-op Hopfield stage fails this test."""
    from ego_bench.common import memory_host
    from ego_core import Clock
    from ego_memory.recall.candidates import Candidates

    query = _unit(e0=1.0)
    patterns = {
        "a1": _unit(e0=0.5, e1=1.0, e4=0.1),
        "a2": _unit(e0=0.5, e1=1.0, e5=0.1),
        "a3": _unit(e0=0.45, e1=1.0, e6=0.1),
        "target": _unit(e0=0.4, e1=1.0, e7=0.2),
        "distractor": _unit(e0=0.45, e2=1.0),
        "f1": _unit(e0=0.2, e3=1.0),
        "f2": _unit(e0=0.1, e2=0.5, e3=1.0),
        "f3": _unit(e0=0.15, e6=1.0),
    }
    ids = list(patterns)
    assert float(patterns["distractor"] @ query) > float(patterns["target"] @ query)
    found = Candidates(
        context="query",
        query_vector=query,
        ids=ids,
        dense_ids=sorted(ids, key=lambda m: -float(patterns[m] @ query)),
        lexical=[("a1", 9.0), ("a2", 8.5), ("a3", 8.0), ("f1", 1.0)],
        patterns=np.stack([patterns[m] for m in ids]),
        rows=dict.fromkeys(ids, (0.0, "neutral", 0.0, 3, 0, None)),
        link_map={},
        present=0.0,
    )
    with memory_host(tmp_path, ego_settings, {}, Clock(None)) as (_host, memories):
        engine = memories.engine
        only = {"decay": False, "boosts": False, "spreading": False}
        with_stage = engine.rank(found, 8, config=attrs.evolve(engine.config, hopfield=True, **only))
        without = engine.rank(found, 8, config=attrs.evolve(engine.config, hopfield=False, **only))
    assert "hopfield" in with_stage.stages
    assert with_stage.completed_patterns == len(ids)
    order_on = [h.id for h in with_stage.hits]
    order_off = [h.id for h in without.hits]
    assert order_off.index("distractor") < order_off.index("target")
    assert order_on.index("target") < order_on.index("distractor")


def test_the_realistic_scale_corpus_is_linked_as_remember_links_it(ego_settings: Settings, tmp_path: Path) -> None:
    """Bulk-loading the realistic corpus makes the same similarity and sequence links as storing each text
    through remember's path one by one (the copies are near-duplicates, so similarity links abound)."""
    from datetime import UTC, datetime, timedelta

    from ego_bench.common import memory_host
    from ego_bench.scale import LinkedLoader, realistic_text
    from ego_core import Clock, RememberDraft

    turns = [
        "Ann: I planted tomatoes in the garden this spring.",
        "Bo: Nice, mine never grow that well.",
        "Ann: The secret is compost from the kitchen.",
        "Bo: I adopted a grey cat called Pixel.",
        "Ann: Pixel sounds adorable!",
    ]
    count = 15  # three copies
    assert realistic_text(turns, 7) == "Ann: The secret is compost from the kitchen. (copy 1)"
    origin = datetime(2025, 1, 1, tzinfo=UTC)
    spacing = timedelta(minutes=1)
    table: dict[str, Any] = {}

    def links_by_text(memories: Any) -> set[tuple[str, str, str]]:
        stored = memories.store.get(memories.store.all_ids())
        text = {m.id: m.content for m in stored}
        return {(m.content, link.link_type, text[link.target_id]) for m in stored for link in m.links}

    with memory_host(tmp_path / "bulk", ego_settings, table, Clock(origin)) as (_host, memories):
        loader = LinkedLoader(memories, turns, origin, spacing)
        loader.load(8, show=False)
        loader.load(count - 8, show=False)  # a second batch sees the first one as the store
        bulk = links_by_text(memories)
        assert loader.similar_links > 0
    clock = Clock(origin)
    with memory_host(tmp_path / "one-by-one", ego_settings, table, clock) as (_host, memories):
        for i in range(count):
            moment = origin + spacing * i
            clock.set(moment)
            memories.store_draft(RememberDraft(content=realistic_text(turns, i), force=True), timestamp=moment)
        one_by_one = links_by_text(memories)
    assert bulk == one_by_one
