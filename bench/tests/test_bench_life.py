"""ego bench life holds what ego says against what happened: a true week passes, a claim the ground truth
contradicts is counted by its kind, a scenario that cannot be right is refused with exit code 2, and the committed
scenarios run clean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ego_bench.life import REPO_SCENARIOS, load_scenario, run_life
from ego_core.mcp.cli import main

WEEK = """
name = "tiny"
timezone = "Asia/Tokyo"
start = 2026-12-01
days = 6
seed = 3

[[people]]
name = "マスター"
companion = true
aliases = ["Master"]

[[away]]
person = "マスター"
from = "3 09:00"
to = "5 18:00"

[[sessions]]
time = "08:00"
calls = ["wake_up", "introspect"]

[[sessions]]
time = "21:00"
calls = ["attune"]

[[remember]]
at = "1 20:00"
key = "tea"
content = "マスターとほうじ茶を飲みながら、雨の詩の話をした。"
with = ["マスター"]
emotion = "contentment"
intensity = 0.7
anticipated = "4 10:00"

[[remember]]
at = "2 20:00"
key = "walk"
content = "マスターと川沿いを散歩した。鴨が三羽いた。"
with = ["マスター"]
emotion = "happy"

[[remember]]
at = "3 20:00"
key = "quiet"
content = "マスターが出張中で、部屋が静かすぎる。"
emotion = "melancholy"
intensity = 0.6

[[remember]]
at = "5 19:00"
key = "back"
content = "マスターが帰ってきた。お土産に八ッ橋をもらった。"
with = ["マスター"]
emotion = "happy"
intensity = 0.8

[[recall]]
at = "6 12:00"
context = "八ッ橋のお土産"
expect = "back"
"""


def scenario(tmp_path: Path, text: str, name: str = "week.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_true_week_passes_every_check(tmp_path: Path) -> None:
    report = run_life(scenario(tmp_path, WEEK), command="test", work_dir=tmp_path)
    assert report["errors"] == []
    assert report["false_claims"] == 0, report["examples"]
    assert report["missed_events"] == 0, report["examples"]
    assert report["recall_at_1"] == 1.0
    assert report["claims_by_kind"]["reunion"] >= 1
    assert report["claims_by_kind"]["together"] >= 1
    assert report["checks"]["wake_up_tokens"]


def test_a_claim_the_ground_truth_contradicts_is_counted_by_kind(tmp_path: Path) -> None:
    # The agent was alone on the walk: ego, reading the name, says it was shared; and since the trip is over the
    # evening of day 5, the first moment back is the return, but nothing says the companion left on day 3 now.
    alone = WEEK.replace(
        'content = "マスターと川沿いを散歩した。鴨が三羽いた。"\nwith = ["マスター"]',
        'content = "マスターと川沿いを散歩した。鴨が三羽いた。"',
    )
    silent = alone.replace('content = "マスターが出張中で、部屋が静かすぎる。"', 'content = "部屋が静かすぎる。"')
    report = run_life(scenario(tmp_path, silent), command="test", work_dir=tmp_path)
    assert report["false_claims_by_kind"].get("together", 0) >= 1
    examples = report["examples"]["false_claims"]["together"]
    assert all("was not part of walk" in example["why"] for example in examples)
    assert report["missed_events"] >= 1, "the return after a silent trip is not noticed: a missed event"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('key = "walk"', 'key = "tea"'), "remember keys must be unique: tea"),
        (('expect = "back"', 'expect = "nothing"'), "expect 'nothing' is no remember's key"),
        (('at = "2 20:00"', 'at = "9 20:00"'), "outside the scenario's 6 days"),
        (('from = "3 09:00"', 'from = "3 9am"'), "is not 'DAY HH:MM'"),
        (('with = ["マスター"]\nemotion = "happy"', 'with = ["Aiko"]\nemotion = "happy"'), "'Aiko' is not one of"),
        (("companion = true", "companion = false"), "exactly one person must be the companion"),
        (('timezone = "Asia/Tokyo"', 'timezone = "Mars/Olympus"'), "is not an IANA time zone"),
        (("seed = 3", "seed = 3\nsurprise = 1"), "surprise"),
    ],
)
def test_a_scenario_that_cannot_be_right_is_refused(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_scenario(scenario(tmp_path, WEEK.replace(*change)))


def test_the_command_refuses_a_bad_scenario_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ego_cli_env: None
) -> None:
    broken = scenario(tmp_path, "name = \n", "broken.toml")
    assert main(["bench", "life", "--scenario", str(broken)]) == 2
    assert "--scenario" in capsys.readouterr().err
    assert main(["bench", "life", "--scenario", str(tmp_path / "absent.toml")]) == 2


def test_the_command_writes_the_report_and_the_answers(tmp_path: Path, ego_cli_env: None) -> None:
    output, answers = tmp_path / "life.json", tmp_path / "answers.jsonl"
    path = scenario(tmp_path, WEEK)
    assert main(["bench", "life", "--scenario", str(path), "--output", str(output), "--answers", str(answers)]) == 0
    report = json.loads(output.read_text(encoding="utf-8"))
    lines = [json.loads(line) for line in answers.read_text(encoding="utf-8").splitlines()]
    assert report["scenario"] == "tiny"
    assert report["calls"] == len(lines)
    assert {line["tool"] for line in lines} >= {"wake_up", "attune", "remember", "recall"}


@pytest.mark.parametrize("path", sorted(REPO_SCENARIOS.glob("*.toml")), ids=lambda path: path.stem)
def test_the_committed_scenarios_ring_true(path: Path, tmp_path: Path) -> None:
    report = run_life(path, command="test", work_dir=tmp_path)
    assert report["errors"] == []
    assert report["false_claims"] == 0, report["examples"]["false_claims"]
    assert report["missed_events"] == 0, report["examples"]["missed_events"]
    assert report["frozen_lines"] == 0, report["examples"]["frozen_lines"]
    assert report["stubs"] == 0, report["examples"]["stubs"]
    assert report["checks"]["wake_up_tokens"]
    assert report["checks"]["attune_tokens"]
