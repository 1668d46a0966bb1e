"""The gateway benchmark measures a real gateway process: every event it sends is stored, and its snapshots
read the store it filled."""

from __future__ import annotations

import json
from pathlib import Path

from ego_bench.gateway import STORES, run_gateway_bench, targets_met


def test_a_small_run_appends_every_event_and_times_snapshots(tmp_path: Path) -> None:
    report = run_gateway_bench(
        command="test",
        agents=2,
        events=40,
        snapshot_events=120,
        snapshots=5,
        backends=["sqlite"],
        pg_url="postgresql://postgres@127.0.0.1:5432/test",
        max_seconds=120,
        work_dir=tmp_path,
        show=False,
    )
    result = report["backends"]["sqlite"]
    append, snapshot = result["append"], result["snapshot"]
    assert (append["agents"], append["events_sent"], append["errors"]) == (2, 40, 0)
    assert append["per_second"] > 0
    assert append["latency_ms"]["p95"] >= append["latency_ms"]["p50"] > 0
    assert snapshot["events_in_store"] == 120
    assert snapshot["requests"] == 5
    assert snapshot["recent_events"] == 50
    assert sum(snapshot["entries"].values()) > 0
    assert report["targets"] == {"append_per_second": 1000, "snapshot_p95_ms": 20}
    assert result["targets_met"] == targets_met(append, snapshot)
    assert result["store"] == STORES["sqlite"]
    assert str(tmp_path) not in json.dumps(report)


def test_targets_are_checked_against_the_figures() -> None:
    append = {"per_second": 1000.0, "stopped_by_time_limit": False}
    snapshot = {"requests": 300, "latency_ms": {"p50": 5.0, "p95": 20.0}}
    assert targets_met(append, snapshot) == {"append_per_second": True, "snapshot_p95_ms": True}
    slow = {"requests": 300, "latency_ms": {"p50": 5.0, "p95": 20.1}}
    assert targets_met({**append, "per_second": 999.9}, slow) == {
        "append_per_second": False,
        "snapshot_p95_ms": False,
    }
    assert targets_met({**append, "stopped_by_time_limit": True}, snapshot)["append_per_second"] is False
    assert targets_met(append, {"requests": 0, "latency_ms": {}})["snapshot_p95_ms"] is False
