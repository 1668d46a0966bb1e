"""``ego bench dashboard``: a small run writes a report with every view's timings and the first render."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from dashboard_support import owner_client

from ego_core import UsageError
from ego_core.testing import HostFactory
from ego_dashboard.bench import run, seed_with_vectors, synthetic_episodes, synthetic_records
from ego_memory.plugin import MemoryPlugin
from ego_self_model import SelfModelPlugin


def arguments(tmp_path: Path, **values: object) -> argparse.Namespace:
    defaults: dict[str, object] = {
        "sizes": "40",
        "requests": 3,
        "browser_runs": 1,
        "output": tmp_path / "report.json",
        "work_dir": tmp_path,
        "seed": "import",
    }
    return argparse.Namespace(**{**defaults, **values})


def test_a_small_run_reports_every_view(make_host: HostFactory, tmp_path: Path) -> None:
    host = make_host(
        {"memory": MemoryPlugin(), "self_model": SelfModelPlugin()},
    )
    assert run(arguments(tmp_path), host) == 0
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    (size,) = report["sizes"]
    assert size["memories"] == 40
    assert size["private"] == sum(1 for r in synthetic_records(40) if r["is_private"])
    views = {"now", "memory_newest", "memory_search", "memory_detail", "memory_merge_candidates", "memory_graph"}
    views |= {"self", "history_7d", "logs"}
    assert set(size["api"]) == views
    for timing in size["api"].values():
        assert 0 < timing["p50_ms"] <= timing["p95_ms"]
        assert timing["requests"] == 3
    assert size["first_render"]["measured"] is True
    assert size["first_render"]["p50_ms"] > 0
    assert list(tmp_path.glob("store-*")) == []  # the temporary stores are gone


def test_seeding_with_vectors_stores_the_same_memories_and_episodes(make_host: HostFactory, tmp_path: Path) -> None:
    """``--seed vectors``: the records stored with random unit vectors (no embedding), the episodes imported; the
    views answer over them."""
    host = make_host({"memory": MemoryPlugin()})
    assert run(arguments(tmp_path, sizes="300", seed="vectors", browser_runs=0), host) == 0
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    (size,) = report["sizes"]
    assert size["seed"] == "vectors"
    assert size["memories"] == 300
    assert size["episodes"] == len(list(synthetic_episodes(list(synthetic_records(300))))) == 6
    assert size["first_render"] == {"measured": False}
    assert all(timing["p50_ms"] > 0 for timing in size["api"].values())


def test_a_seeded_memory_shows_its_episode(make_host: HostFactory, tmp_path: Path) -> None:
    host = make_host({"memory": MemoryPlugin()})
    host.start()
    records = list(synthetic_records(120))
    seed_with_vectors(host, records)
    host.hooks.import_records("memory", records=list(synthetic_episodes(records)))
    with owner_client(host, "http://127.0.0.1") as client:
        detail = client.get(f"/api/memories/{records[52]['id']}").json()
        assert client.get("/api/memories").json()["total"] == 120
    assert detail["episode"]["id"] == "ep_000000000001"
    assert [m["id"] for m in detail["episode"]["members"]] == [r["id"] for r in records[50:55]]


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
