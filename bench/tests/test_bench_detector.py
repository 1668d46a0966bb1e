"""The detector benchmark's report: every input timed at every size, the ratio largest/smallest checked."""

from __future__ import annotations

import pytest

from ego_bench.detector import ADVERSARIAL, ORDINARY, RATIO_MAX, run_detector_bench


def test_a_tiny_run_reports_every_input_at_every_size() -> None:
    report = run_detector_bench(command="test", sizes=[256, 64], runs=1)
    assert report["sizes_bytes"] == [64, 256]
    assert report["ratio_max"] == RATIO_MAX
    for group, inputs in (("adversarial", ADVERSARIAL), ("ordinary", ORDINARY)):
        assert set(report[group]) == set(inputs)
        for entry in report[group].values():
            assert set(entry["ms"]) == {"64", "256"}
            assert all(ms >= 0 for ms in entry["ms"].values())
            assert entry["ratio"] is None or entry["ratio"] >= 0
    assert report["slowest_adversarial"]["input"] in ADVERSARIAL
    assert isinstance(report["ratio_ok"], bool)
    assert report["ratio_ok"] == (report["max_ratio"] is not None and report["max_ratio"] <= RATIO_MAX)
    assert report["command"] == "test"


@pytest.mark.parametrize(("sizes", "runs"), [([1024], 1), ([0, 1024], 1), ([64, 256], 0)])
def test_bad_options_are_usage_errors(sizes: list[int], runs: int) -> None:
    with pytest.raises(ValueError, match="--"):
        run_detector_bench(command="test", sizes=sizes, runs=runs)
