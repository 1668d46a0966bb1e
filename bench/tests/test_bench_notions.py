"""The notions benchmark measures what it says: each timed day's pass forms that day's notions, and the walk
and the network view are timed on the result."""

from __future__ import annotations

from pathlib import Path

import pytest

from ego_bench.notions import GROUP, PER_DAY, run_notions
from ego_core import Settings


def test_each_daily_pass_forms_the_notions_of_its_day(ego_settings: Settings, tmp_path: Path) -> None:
    report = run_notions([2500], ego_settings, {}, command="test", runs=2, work_dir=tmp_path, show=False)
    (size,) = report["sizes"]
    assert size["size"] == 2500
    assert size["notions_before"] > 0
    for one in size["passes"]:
        assert one["window"] == PER_DAY
        assert one["formed"] >= PER_DAY // GROUP * 0.9  # about one per linked group of the day
        assert one["looked_at"] >= PER_DAY
        assert not one["capped"]
    assert size["notion_pass_under_5s"]
    assert size["explore_ms"]["p50"] > 0
    assert size["network_ms"]["p50"] > 0


def test_sizes_too_small_for_the_days_are_refused(ego_settings: Settings) -> None:
    with pytest.raises(ValueError, match="at least"):
        run_notions([1000], ego_settings, {}, command="test", runs=7, show=False)
