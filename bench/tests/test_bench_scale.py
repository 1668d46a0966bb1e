"""The scale benchmark grows a real store to each size and times remember and recall there, saying the load."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ego_bench.scale import run_scale
from ego_core import Settings

LOCOMO = Path(__file__).resolve().parents[1] / "data" / "locomo"
"""The LoCoMo conversations committed with the benchmarks (bench/data/locomo)."""


def _one_conversation(tmp_path: Path) -> Path:
    source = sorted(LOCOMO.glob("*.json"))
    if not source:
        pytest.fail(f"the LoCoMo data is missing at {LOCOMO} (bench/data/locomo in a checkout)")
    data = tmp_path / "locomo"
    data.mkdir()
    shutil.copy(source[0], data)
    return data


def _check_size_entries(report: dict[str, object], sizes: list[int], operations: int) -> list[dict[str, object]]:
    assert report["operations_per_size"] == operations
    entries = report["sizes"]
    assert isinstance(entries, list)
    assert [entry["size"] for entry in entries] == sizes
    for entry in entries:
        for operation in ("remember_ms", "recall_ms"):
            assert entry[operation]["p50"] > 0
            assert entry[operation]["p95"] >= entry[operation]["p50"]
        assert entry["store_bytes"] > 0
        assert set(entry["load_average"]) == {"start", "end"}
    return entries


def test_the_realistic_corpus_grows_with_remembers_links(ego_settings: Settings, tmp_path: Path) -> None:
    data = _one_conversation(tmp_path)
    report = run_scale(
        [40, 90],
        ego_settings,
        {},
        command="test",
        operations=5,
        work_dir=tmp_path,
        show=False,
        data_dir=data,
    )
    assert report["embedder"]
    assert "LoCoMo turns" in report["corpus"]
    # the second size counts the five timed remembers of the first
    entries = _check_size_entries(report, [40, 90], 5)
    assert entries[1]["similar_links_loaded"] >= entries[0]["similar_links_loaded"]


def test_the_synthetic_corpus_needs_no_data(ego_settings: Settings, tmp_path: Path) -> None:
    report = run_scale([30], ego_settings, {}, command="test", operations=4, work_dir=tmp_path, show=False)
    assert report["corpus"].startswith("synthetic")
    _check_size_entries(report, [30], 4)


@pytest.mark.parametrize("sizes", [[], [0], [100, 10], [10, 10]])
def test_sizes_must_increase(sizes: list[int], ego_settings: Settings, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="increasing positive"):
        run_scale(sizes, ego_settings, {}, command="test", work_dir=tmp_path, show=False)
