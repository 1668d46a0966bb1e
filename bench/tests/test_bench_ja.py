"""``ego bench ja``: the report's shape, the duplicate guard and consolidate seen through the real tools, and
bad input refused with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ja_data import JSTS, SAME, TANAKA

from ego_bench.ja import GROUPS, load_jsquad, load_pairs, load_tanaka, merge_listed, parse_tasks, run_ja
from ego_core import Settings

PASSAGES = [
    {"id": "p0", "text": "梅雨\n梅雨は、北海道と小笠原諸島を除く日本で、5月から7月にかけて雨が多く降る季節である。"},
    {
        "id": "p1",
        "text": "富士山\n富士山は静岡県と山梨県にまたがる活火山で、標高は3776メートル、日本で最も高い山である。",
    },
    {"id": "p2", "text": "将棋\n将棋は二人で行うボードゲームの一種で、取った駒を自分の駒として使えるのが特徴である。"},
    # the same paragraph under another id: the duplicate guard refuses it
    {"id": "p3", "text": "梅雨\n梅雨は、北海道と小笠原諸島を除く日本で、5月から7月にかけて雨が多く降る季節である。"},
]
QUERIES = [
    {"id": "q0", "text": "日本で梅雨がないのは北海道とどこか。", "gold": ["p0"]},
    {"id": "q1", "text": "富士山の標高は何メートルか。", "gold": ["p1"]},
    {"id": "q2", "text": "取った駒を使えるボードゲームは何か。", "gold": ["p2"]},
]
PAIRS = {
    "jsts": [
        *JSTS,
        {"a": "男性がギターを弾いています。", "b": "男性が楽器を演奏しています。", "score": 4.0},  # in no group
    ],
    "jnli": [
        {
            "a": "今日はマスターと一緒に映画を見た。",
            "b": "今日はマスターと一緒に映画を見なかった。",
            "label": "contradiction",
        },
        {"a": "子供が走っています。", "b": "子供が動いています。", "label": "entailment"},  # in no group
    ],
}


def write_data(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    files = {
        "jsquad.json": {"passages": PASSAGES, "queries": QUERIES},
        "tanaka.json": TANAKA,
        "pairs.json": PAIRS,
    }
    for name, content in files.items():
        (directory / name).write_text(json.dumps(content, ensure_ascii=False), encoding="utf-8")
    return directory


def shares(report: dict[str, Any]) -> list[float]:
    found = [report["jsquad"][k] for k in ("hit@1", "hit@5", "mrr@10")]
    found += [report["tanaka"][d][k] for d in ("en2ja", "ja2en") for k in ("hit@1", "hit@5", "mrr@10")]
    found += [report["pairs"][g][k] for g in GROUPS for k in ("refused", "merge_candidates")]
    return found


def test_a_small_run_has_the_definitions_shape_and_counts_the_refused_duplicates(
    ego_settings: Settings, tmp_path: Path
) -> None:
    data = write_data(tmp_path / "ja")
    report = run_ja(data, ego_settings, {}, {}, command="test", work_dir=tmp_path, show=False)
    assert {"system", "version", "embedder", "command", "date", "machine"} <= set(report)
    assert report["embedder"]
    assert set(report["jsquad"]) == {"hit@1", "hit@5", "mrr@10", "refused"}
    assert set(report["tanaka"]) == {"en2ja", "ja2en"}
    assert all(set(report["tanaka"][d]) == {"hit@1", "hit@5", "mrr@10"} for d in ("en2ja", "ja2en"))
    assert set(report["pairs"]) == set(GROUPS)
    assert all(set(report["pairs"][g]) == {"refused", "merge_candidates"} for g in GROUPS)
    assert set(report["latency_ms"]) == {"remember", "recall"}
    assert all(set(report["latency_ms"][op]) == {"p50", "p95"} for op in ("remember", "recall"))
    assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in shares(report)), shares(report)
    assert all(report["latency_ms"][op]["p50"] > 0 for op in ("remember", "recall"))
    assert set(report["load_average"]) == {"start", "end"}
    # the repeated paragraph is a count; the identical JSTS pair is refused (a share of its group)
    assert report["jsquad"]["refused"] == 1
    assert report["pairs"]["jsts_high"] == {"refused": 1.0, "merge_candidates": 0.0}
    assert report["counts"]["jsquad"] == {"passages": 4, "queries": 3}
    assert report["counts"]["tanaka"] == {"pairs": 3, "refused": {"en2ja": 0, "ja2en": 0}}
    assert report["counts"]["pairs"] == {"jsts_low": 2, "jnli_contradiction": 1, "jsts_high": 1}
    # every pair: remember a and b (one refused); jsquad 4 + tanaka 2 x 3
    assert report["counts"]["remember_calls"] == 4 + 6 + 2 * 4
    assert report["counts"]["recall_calls"] == 3 + 6


def test_consolidate_lists_a_pair_the_guard_let_through(ego_settings: Settings, tmp_path: Path) -> None:
    """With the guard at exact repeats only and a wide merge net, a near-repeat is stored and proposed."""
    data = tmp_path / "ja"
    data.mkdir()
    pairs = {"jsts": [{"a": SAME, "b": SAME.replace("。", "！"), "score": 5.0}], "jnli": PAIRS["jnli"]}
    (data / "pairs.json").write_text(json.dumps(pairs, ensure_ascii=False), encoding="utf-8")
    report = run_ja(
        data,
        ego_settings,
        {},
        {"dedup_threshold": 1.0, "merge_threshold": 0.3},
        command="test",
        tasks=["pairs"],
        work_dir=tmp_path,
        show=False,
    )
    assert set(report) >= {"pairs", "latency_ms"}
    assert not {"jsquad", "tanaka"} & set(report)
    assert report["pairs"]["jsts_high"] == {"refused": 0.0, "merge_candidates": 1.0}
    assert report["pairs"]["jsts_low"] == {"refused": None, "merge_candidates": None}  # no pair in the group


def test_the_loaders_group_and_limit_as_documented(tmp_path: Path) -> None:
    data = write_data(tmp_path / "ja")
    groups = [p.group for p in load_pairs(data, None)]
    assert groups == ["jsts_low", "jsts_low", "jnli_contradiction", "jsts_high"]  # 3.0 is low, 4.0 nowhere
    assert [p.group for p in load_pairs(data, 1)] == ["jsts_low", "jnli_contradiction", "jsts_high"]
    limited = load_jsquad(data, 2)
    assert [pid for pid, _ in limited.passages] == ["p0", "p1"]
    assert [gold for _q, gold in limited.queries] == [("p0",), ("p1",)]  # only questions a kept paragraph answers
    assert load_tanaka(data, 2) == [(t["en"], t["ja"]) for t in TANAKA[:2]]
    assert parse_tasks("pairs, jsquad") == ["pairs", "jsquad"]


def test_merge_candidates_are_read_by_the_pairs_ids() -> None:
    text = (
        "Consolidation complete. Replayed 2 events.\n\nFound 1 near-duplicate pair(s):\n"
        "- mem_aaaaaaaaaaaa <-> mem_bbbbbbbbbbbb (similarity: 0.93)\n  A: x\n  B: y"
    )
    assert merge_listed(text, {"mem_bbbbbbbbbbbb", "mem_aaaaaaaaaaaa"})
    assert not merge_listed(text, {"mem_aaaaaaaaaaaa", "mem_cccccccccccc"})
    assert not merge_listed("Consolidation complete. Replayed 2 events.", {"mem_aaaaaaaaaaaa", "mem_bbbbbbbbbbbb"})


def _break(directory: Path, how: str) -> Path:
    if how == "missing dir":
        return directory / "nowhere"
    write_data(directory)
    if how == "missing file":
        (directory / "tanaka.json").unlink()
    elif how == "not json":
        (directory / "pairs.json").write_text("{not json", encoding="utf-8")
    elif how == "wrong shape":
        (directory / "jsquad.json").write_text(json.dumps({"passages": PASSAGES}), encoding="utf-8")
    elif how == "unknown gold":
        queries = [{"id": "q", "text": "何か。", "gold": ["p9"]}]
        (directory / "jsquad.json").write_text(json.dumps({"passages": PASSAGES, "queries": queries}), encoding="utf-8")
    return directory


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("missing dir", "is not a directory"),
        ("missing file", "has no tanaka.json"),
        ("not json", "is not readable JSON"),
        ("wrong shape", "jsquad.json queries"),
        ("unknown gold", "unknown passage id"),
    ],
)
@pytest.mark.usefixtures("ego_cli_env")
def test_a_bad_data_dir_is_a_usage_error(
    how: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ego_core.mcp.cli import main

    data = _break(tmp_path / "ja", how)
    try:
        code = main(["bench", "ja", "--data", str(data), "--quiet", "--work-dir", str(tmp_path)])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    err = capsys.readouterr().err
    assert code == 2
    assert message in err


@pytest.mark.parametrize("argv", [["--tasks", "jsquad,nope"], ["--limit", "0"]])
def test_bad_options_are_usage_errors(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ego_core.mcp.cli import main

    monkeypatch.setenv("EGO_DATA_DIR", str(tmp_path / "ego-data"))
    data = write_data(tmp_path / "ja")
    code = main(["bench", "ja", "--data", str(data), "--quiet", *argv])
    assert code == 2
    assert "ego: error:" in capsys.readouterr().err
