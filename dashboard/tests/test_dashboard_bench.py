"""``ego bench dashboard``: a small run writes a report with every view's timings and the first render."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from dashboard_support import MODEL_DIR

from ego_core import UsageError
from ego_core.testing import HostFactory
from ego_dashboard.bench import run, synthetic_records
from ego_memory.plugin import MemoryPlugin
from ego_self_model import SelfModelPlugin


def arguments(tmp_path: Path, **values: object) -> argparse.Namespace:
    defaults: dict[str, object] = {
        "sizes": "40",
        "requests": 3,
        "browser_runs": 1,
        "output": tmp_path / "report.json",
        "work_dir": tmp_path,
    }
    return argparse.Namespace(**{**defaults, **values})


def test_a_small_run_reports_every_view(make_host: HostFactory, tmp_path: Path) -> None:
    host = make_host(
        {"memory": MemoryPlugin(), "self_model": SelfModelPlugin()},
        config={"memory": {"model_dir": str(MODEL_DIR)}},
    )
    assert run(arguments(tmp_path), host) == 0
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    (size,) = report["sizes"]
    assert size["memories"] == 40
    assert size["private"] == sum(1 for r in synthetic_records(40) if r["is_private"])
    views = {"now", "memory_newest", "memory_search", "memory_detail", "memory_graph", "self", "history_7d", "logs"}
    assert set(size["api"]) == views
    for timing in size["api"].values():
        assert 0 < timing["p50_ms"] <= timing["p95_ms"]
        assert timing["requests"] == 3
    assert size["first_render"]["measured"] is True
    assert size["first_render"]["p50_ms"] > 0
    assert list(tmp_path.glob("store-*")) == []  # the temporary stores are gone


@pytest.mark.parametrize(
    "values", [{"sizes": "ten"}, {"sizes": "0"}, {"sizes": ""}, {"requests": 0}, {"browser_runs": -1}]
)
def test_bad_options_are_usage_errors(make_host: HostFactory, tmp_path: Path, values: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        run(arguments(tmp_path, **values), make_host({}))


def test_synthetic_records_are_the_memory_plugins_form() -> None:
    records = list(synthetic_records(300))
    assert len({r["id"] for r in records}) == 300
    assert all(r["id"].startswith("mem_") and len(r["id"]) == 16 for r in records)
    assert all(link["target_id"] < r["id"] for r in records for link in r["links"])  # earlier memories only
    assert 0 < sum(r["is_private"] for r in records) < 60
