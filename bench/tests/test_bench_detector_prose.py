"""``ego bench detector --prose``: real prose in the shape of bench/data/ja, or a text file of passages, is read and
the share the detector flags is reported; a path that is not such prose is a usage error naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ja_data import TANAKA

from ego_bench.detector import PROSE_FLAGGED_MAX, load_prose, measure_prose, run_detector_bench

PASSAGES = [
    {"id": "p0", "text": "東京タワー\n東京タワーは1958年に完成した。高さは333メートルで、二〇二六年も営業している。"},
    {"id": "p1", "text": "新宿御苑\n新宿区3番目に大きい公園である。入園料は500円。"},
    {"id": "p2", "text": "連絡先\n担当者の携帯は〇九〇－一二三四－五六七八である。"},
]


def write_folder(folder: Path) -> Path:
    folder.mkdir()
    (folder / "jsquad.json").write_text(json.dumps({"passages": PASSAGES, "queries": []}, ensure_ascii=False), "utf-8")
    (folder / "tanaka.json").write_text(json.dumps(TANAKA, ensure_ascii=False), "utf-8")
    return folder


def test_a_folder_of_prose_is_counted_per_source_and_in_all(tmp_path: Path) -> None:
    report = measure_prose(load_prose(write_folder(tmp_path / "ja")))
    jsquad = report["sources"]["jsquad.json"]
    assert (jsquad["passages"], jsquad["flagged"]) == (3, 1)  # the phone number in kanji numerals
    assert jsquad["sentences"] == 8
    assert jsquad["flagged_sentences"] == 1
    assert report["sources"]["tanaka.json"]["flagged"] == 0
    assert (report["passages"], report["flagged"]) == (3 + len(TANAKA), 1)
    assert report["kinds"] == {"phone number": 1}
    assert report["flagged_max"] == PROSE_FLAGGED_MAX
    assert report["flagged_ok"] is False  # 1 of 6 passages


def test_a_text_file_is_one_passage_per_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    lines = ["第三章を読んだ。", "", "3番線から発車する。", "メールは taro アットマーク gmail ドット com まで"]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    report = measure_prose(load_prose(path))
    assert (report["passages"], report["flagged"]) == (3, 1)
    assert report["kinds"] == {"e-mail address": 1}


def test_the_report_carries_the_prose_figures(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "ja")
    report = run_detector_bench(command="test", sizes=[64, 128], runs=1, prose=folder)
    assert report["prose"]["path"] == str(folder)
    assert report["prose"]["flagged"] == 1
    assert "prose" not in run_detector_bench(command="test", sizes=[64, 128], runs=1)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "no such file or folder"),
        ('{"rows": [1, 2]}', "not in the shape of bench/data/ja"),
        ("[]", "no passages in it"),
    ],
)
def test_a_path_that_is_not_prose_is_a_usage_error(tmp_path: Path, content: str | None, problem: str) -> None:
    path = tmp_path / "prose.json"
    if content is not None:
        path.write_text(content, "utf-8")
    with pytest.raises(ValueError, match="--prose") as refused:
        load_prose(path)
    assert problem in str(refused.value)


def test_a_folder_without_the_files_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"no jsquad\.json, pairs\.json or tanaka\.json"):
        load_prose(tmp_path)
