"""The consolidate benchmark measures what it says: its busy variant really gives consolidate work to do."""

from __future__ import annotations

import re
from pathlib import Path

from ego_bench.consolidate import run_consolidate
from ego_core import Settings

SUMMARY = re.compile(
    r"Replayed (\d+) events, strengthened (\d+) co-activated link\(s\), created (\d+) link\(s\), pruned (\d+) weak"
)


def test_the_quiet_run_changes_nothing_and_the_busy_run_changes_every_kind_of_link(
    ego_settings: Settings, tmp_path: Path
) -> None:
    report = run_consolidate(1500, [60], ego_settings, {}, command="test", work_dir=tmp_path, show=False)
    runs = {run["variant"]: run for run in report["runs"]}
    assert set(runs) == {"quiet", "busy"}
    counts = {variant: SUMMARY.search(run["summary"]) for variant, run in runs.items()}
    assert all(counts.values()), runs
    replayed, strengthened, created, pruned = (int(n) for n in counts["quiet"].groups())  # type: ignore[union-attr]
    assert (replayed, strengthened, created, pruned) == (60, 0, 0, 0)
    replayed, strengthened, created, pruned = (int(n) for n in counts["busy"].groups())  # type: ignore[union-attr]
    assert replayed == 60
    assert created >= 25  # every other one of the 59 sequence links was removed
    assert strengthened > 0
    assert pruned > 0
    assert all(run["duration_ms"] > 0 for run in runs.values())
