"""``ego bench calibrate``: the rules that turn figures into a profile, the report's keys on a tiny run with the real
embedder, and a bad data dir refused with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from ja_data import JSTS, SAME, TANAKA

from ego_bench.calibrate import (
    ENGLISH_DIFFERENT,
    ENGLISH_SAME,
    FLOOR_HIDES,
    GRID,
    NONSENSE,
    Scored,
    choose_duplicate,
    choose_merge,
    choose_shared,
    floor_value,
    merge_target_value,
    related_value,
    round_up,
    run_calibrate,
)
from ego_core import Settings

PASSAGES = [
    {"id": "p0", "text": "梅雨\n梅雨は、北海道と小笠原諸島を除く日本で、5月から7月にかけて雨が多く降る季節である。"},
    {"id": "p1", "text": "梅雨\n梅雨の時期には湿度が高くなり、カビが生えやすくなる。"},
    {"id": "p2", "text": "富士山\n富士山は静岡県と山梨県にまたがる活火山で、標高は3776メートルである。"},
    {"id": "p3", "text": "将棋\n将棋は二人で行うボードゲームの一種で、取った駒を自分の駒として使える。"},
]
QUERIES = [{"id": "q0", "text": "富士山の標高は何メートルか。", "gold": ["p2"]}]
PAIRS = {
    "jsts": [
        *JSTS,
    ],
    "jnli": [{"a": SAME, "b": "今日はマスターと一緒に映画を見なかった。", "label": "contradiction"}],
}


def write_data(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    files = {"jsquad.json": {"passages": PASSAGES, "queries": QUERIES}, "tanaka.json": TANAKA, "pairs.json": PAIRS}
    for name, content in files.items():
        (directory / name).write_text(json.dumps(content, ensure_ascii=False), encoding="utf-8")
    return directory


def same(cosine: float) -> Scored:
    return Scored(cosine=cosine, contrast=None)


def test_the_duplicate_value_is_the_lowest_grid_value_meeting_both_targets() -> None:
    # 400 low pairs: one refused from 0.85 is 0.25 % (allowed), three below are 0.75 % (too many)
    low = [same(0.5)] * 396 + [same(0.845), same(0.845), same(0.865), Scored(0.97, "wording")]
    contradictions = [same(0.3)] * 200
    groups = {"jsts_low": low, "jnli_contradiction": contradictions, "jsts_high": [same(0.99)]}
    assert choose_duplicate(groups) == (0.85, True)
    # one contradiction refused at 0.90 is 0.5 % of 200 (allowed), two at 0.88 are not
    groups["jnli_contradiction"] = [same(0.3)] * 198 + [same(0.885), same(0.905)]
    assert choose_duplicate(groups) == (0.89, True)
    # a contrast keeps a pair whatever its cosine; the same text is always refused
    assert not Scored(0.99, "negation").refused(0.80)
    assert Scored(0.5, None, exact=True).refused(0.98)
    # nothing meets the targets: the highest grid value, marked
    groups["jsts_low"] = [same(0.99)] * 10
    assert choose_duplicate(groups) == (GRID[-1], False)
    assert GRID[0] == 0.80
    assert GRID[-1] == 0.98
    assert len(GRID) == 19


def test_the_duplicate_choice_is_monotone() -> None:
    """Pairs more similar never lower the chosen value."""
    rng = np.random.default_rng(0)
    base = rng.uniform(0.4, 0.97, size=300)
    previous = 0.0
    for shift in (0.0, 0.01, 0.02, 0.05):
        low = [same(min(1.0, c + shift)) for c in base]
        chosen, _met = choose_duplicate({"jsts_low": low, "jnli_contradiction": [], "jsts_high": []})
        assert chosen >= previous
        previous = chosen


def test_the_merge_value_starts_five_below_duplicate_and_is_capped_at_it() -> None:
    quiet = [same(0.5)] * 100
    assert choose_merge(quiet, 0.90) == (0.85, False)
    assert choose_merge(quiet, 0.82) == (0.80, False)  # the grid starts at 0.80
    # 3 % listed at 0.86 and above (wording counts for merge), 2 % from 0.87
    low = [same(0.5)] * 97 + [Scored(0.865, "wording"), same(0.88), same(0.88)]
    assert choose_merge(low, 0.90) == (0.87, False)
    assert choose_merge(low, 0.86) == (0.86, True)  # 0.87 would do, capped at duplicate
    assert merge_target_value(low, 0.86) == 0.87
    assert merge_target_value([same(0.99)] * 5, 0.90) is None
    assert choose_merge([same(0.99)] * 5, 0.90) == (0.90, True)
    # a negation or number contrast is never a merge candidate
    assert choose_merge([Scored(0.99, "number")] * 5, 0.90) == (0.85, False)


def test_rounding() -> None:
    assert round_up(0.613) == 0.65
    assert round_up(0.65) == 0.65
    assert round_up(0.6500001) == 0.65  # float noise is not a step
    assert round_up(0.651) == 0.70
    assert round_up(0.401) == 0.45
    assert floor_value(np.array([0.9] * 995 + [0.26] * 5)) == 0.9  # hiding 0.5 % is allowed
    assert floor_value(np.array([0.9] * 990 + [0.26] * 10)) == 0.25  # 1 % at 0.26: 0.30 would hide them
    assert floor_value(np.array([0.2] * 10)) == 0.2  # nothing below 0.20
    assert floor_value(np.array([0.01] * 10)) == 0.0  # every step would hide them all
    assert related_value(np.array([0.1] * 975 + [0.5] * 25)) == 0.15  # 2.5 % reach 0.5
    assert related_value(np.array([0.1] * 970 + [0.5] * 30)) == 0.55


def test_duplicate_and_merge_are_one_value_meeting_every_target() -> None:
    # the guard alone would take the grid's first value; consolidate's listing needs 0.87
    low = [Scored(0.865, "wording")] * 3 + [Scored(0.5, None)] * 97
    groups = {"jsts_low": low, "jnli_contradiction": [], "jsts_high": []}
    assert choose_duplicate(groups) == (0.80, True)
    assert choose_shared(groups) == (0.87, True)


def test_the_english_pairs_and_nonsense_queries() -> None:
    assert len(ENGLISH_SAME) + len(ENGLISH_DIFFERENT) >= 40
    assert len(NONSENSE) >= 20
    assert all(a != b for a, b in (*ENGLISH_SAME, *ENGLISH_DIFFERENT))


def test_a_tiny_run_reports_every_figure(ego_settings: Settings, tmp_path: Path) -> None:
    data = write_data(tmp_path / "ja")
    report = run_calibrate(data, ego_settings, {}, command="test", show=False)
    assert {"system", "version", "embedder", "command", "date", "machine", "profile", "shipped", "figures"} <= set(
        report
    )
    keys = {"duplicate", "merge", "link", "related", "floor"}
    assert set(report["profile"]) == keys
    assert set(report["shipped"]) == keys | {"calibrated"}
    profile = report["profile"]
    assert profile["duplicate"] in GRID
    assert profile["duplicate"] - 0.05 <= profile["merge"] + 1e-9
    assert profile["merge"] <= profile["duplicate"]
    assert all(round(profile[k] / 0.05, 6).is_integer() for k in ("link", "related"))
    figures = report["figures"]
    assert figures["counts"]["jsts_low"] == 2
    assert figures["counts"]["jnli_contradiction"] == 1
    assert figures["counts"]["jsts_high"] == 1
    assert figures["counts"]["english_same"] == len(ENGLISH_SAME)
    # the JSQuAD paragraphs of one article are not unrelated: 4 paragraphs, 6 pairs, 1 of the same article
    assert figures["unrelated"]["sources"]["jsquad"]["n"] == 5
    assert figures["unrelated"]["sources"]["tanaka_en_ja"]["n"] == 6
    assert figures["unrelated"]["sources"]["tanaka_ja_ja"]["n"] == 3
    for side in ("at_derived", "at_shipped"):
        values = figures[side]
        assert set(values["refused"]) == {"jsts_low", "jnli_contradiction", "jsts_high"}
        assert values["refused"]["jsts_high"] == 1.0  # the identical pair
        assert values["refused"]["jnli_contradiction"] == 0.0  # a negation is never a duplicate
        assert set(values["english_refused"]) == {"same", "different"}
        assert values["jsts_high_refused_or_listed"] == 1.0
    assert len(figures["duplicate"]["grid"]) == len(GRID)
    assert set(figures["duplicate"]["grid"][0]) == {"value", "refused", "listed", "refused_cosine_only"}
    # only the identical JSTS pair says the same: the guard refuses it at any value
    assert figures["duplicate"]["says_the_same"]["jsts_high"]["pairs"] == 1
    assert figures["duplicate"]["says_the_same"]["jnli_contradiction"] == {
        "pairs": 0,
        "min_cosine": None,
        "max_cosine": None,
    }
    assert figures["duplicate"]["at_grid_floor"] is (profile["duplicate"] == GRID[0])
    assert set(figures["floor"]["nonsense_max_by_query"]) == set(NONSENSE)
    floor = figures["floor"]
    assert floor["translations_below"]["derived"] <= FLOOR_HIDES  # the floor hides at most 0.5 % of them
    assert floor["nonsense_max"]["query"] in NONSENSE
    json.dumps(report)


@pytest.mark.parametrize(
    ("how", "message"),
    [("missing dir", "is not a directory"), ("missing file", "has no pairs.json"), ("one sentence", "at least two")],
)
@pytest.mark.usefixtures("ego_cli_env")
def test_a_bad_data_dir_is_a_usage_error(
    how: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ego_core.mcp.cli import main

    data = tmp_path / "ja"
    if how == "missing dir":
        data = data / "nowhere"
    else:
        write_data(data)
    if how == "missing file":
        (data / "pairs.json").unlink()
    elif how == "one sentence":
        (data / "tanaka.json").write_text(json.dumps(TANAKA[:1], ensure_ascii=False), encoding="utf-8")
    code = main(["bench", "calibrate", "--data", str(data), "--quiet", "--work-dir", str(tmp_path)])
    assert code == 2
    assert message in capsys.readouterr().err
