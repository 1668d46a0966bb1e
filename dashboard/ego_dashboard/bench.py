"""``ego bench dashboard``: the dashboard's answer times over stores of growing size.

For each size a temporary data directory gets that many synthetic memories (5 % private, linked to a few earlier
ones, spread over 60 days, one episode of five memories in every fifty) through the memory plugin's own import;
then every view's API is timed in-process as the owner (p50/p95 over ``--requests`` calls), and, with Chromium and
Playwright, the page's first render once logged in (from navigation to the Now view filled). The report is JSON.

``--seed vectors`` stores the same memories with random unit vectors instead of embedding every text (the store's
own batch write, as ``ego bench notions`` seeds): a store of 100,000 is made in minutes instead of hours. The views
read the same rows, links and vectors either way; a search still embeds its words, only what it finds differs.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import secrets
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import attrs
import numpy as np

from ego_core import (
    EMOTIONS,
    MEMORY_STORE,
    EmotionalTrace,
    Memory,
    MemoryLink,
    MemoryService,
    PluginHost,
    UsageError,
    write_atomically,
)
from ego_dashboard.app import build_app

EPISODE_EVERY = 50
EPISODE_SIZE = 5

WORDS = (
    "river walk morning letter garden deploy test bug book octopus tea rain train window friend Master music "
    "question memory dream city light summer winter code review paper song quiet storm lunch"
).split()
JAPANESE = "朝 川 散歩 桜 手紙 雨 電車 友達 音楽 夢 光 夏 冬 静か 本 海 山 空".split()


def synthetic_records(count: int, seed: int = 7, now: datetime | None = None) -> Iterator[dict[str, Any]]:
    """``count`` memory records in the memory plugin's export form (ids mem_ + 12 hex digits)."""
    rng = random.Random(seed)
    end = now or datetime.now(UTC)
    ids = [f"mem_{index:012x}" for index in range(count)]
    for index, memory_id in enumerate(ids):
        if rng.random() < 0.2:
            text = "".join(rng.choice(JAPANESE) for _ in range(rng.randint(4, 12))) + f"。{index}"
        else:
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))) + f" ({index})"
        links = (
            [
                {"target_id": ids[target], "link_type": "related", "confidence": 0.6, "note": ""}
                for target in sorted({rng.randrange(index) for _ in range(rng.randint(1, 3))})
            ]
            if index
            else []
        )
        yield {
            "type": "memory",
            "id": memory_id,
            "content": text,
            "timestamp": (end - timedelta(days=60) * (1 - index / max(count, 1))).isoformat(),
            "emotional_trace": {
                "primary": rng.choice(EMOTIONS),
                "secondary": [],
                "intensity": round(rng.random(), 2),
                "valence": round(rng.uniform(-1, 1), 2),
                "arousal": round(rng.random(), 2),
                "body_state": {},
            },
            "importance": rng.randint(1, 5),
            "category": "introspection" if rng.random() < 0.05 else "daily",
            "tags": [],
            "links": links,
            "is_private": rng.random() < 0.05,
            "access_count": 0,
            "last_accessed": None,
        }


def synthetic_episodes(records: Sequence[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """One episode record of :data:`EPISODE_SIZE` consecutive memories in every :data:`EPISODE_EVERY`."""
    for number, start in enumerate(range(0, len(records) - EPISODE_SIZE + 1, EPISODE_EVERY)):
        members = records[start : start + EPISODE_SIZE]
        yield {
            "type": "episode",
            "id": f"ep_{number:012x}",
            "summary": f"an afternoon of {EPISODE_SIZE} moments ({number})",
            "memory_ids": [m["id"] for m in members],
            "start": members[0]["timestamp"],
            "end": members[-1]["timestamp"],
            "importance": 3,
            "created": members[-1]["timestamp"],
        }


@runtime_checkable
class BatchStore(Protocol):
    """The memory plugin's store as its service object holds it: one journaled batch write of memories and their
    vectors (what its import calls after embedding)."""

    def add_many(self, memories: Sequence[Memory], vectors: Any) -> None: ...


def memory_of(record: Mapping[str, Any]) -> Memory:
    trace = record["emotional_trace"]
    return Memory(
        id=record["id"],
        content=record["content"],
        timestamp=datetime.fromisoformat(record["timestamp"]),
        emotional_trace=EmotionalTrace(
            primary=trace["primary"], intensity=trace["intensity"], valence=trace["valence"], arousal=trace["arousal"]
        ),
        importance=record["importance"],
        category=record["category"],
        links=tuple(MemoryLink(link["target_id"], link["link_type"], link["confidence"]) for link in record["links"]),
        is_private=record["is_private"],
    )


def seed_with_vectors(host: PluginHost, records: Sequence[Mapping[str, Any]], batch: int = 5000) -> None:
    """Store ``records`` with random unit vectors through the memory store's batch write (no embedding); then the
    private-text redactor learns every private text at once, as when the store is opened."""
    service = host.services.get(MEMORY_STORE, MemoryService)
    store = getattr(service, "store", None)
    if service is None or not isinstance(store, BatchStore):
        raise UsageError("--seed vectors needs the memory plugin's store (its batch write)")
    dimension = int(np.asarray(service.embed(["dimension"])).shape[-1])
    rng = np.random.default_rng(7)
    for start in range(0, len(records), batch):
        chunk = [memory_of(r) for r in records[start : start + batch]]
        vectors = rng.normal(size=(len(chunk), dimension)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        store.add_many(chunk, vectors)
    redactor = getattr(service, "redactor", None)
    private_contents = getattr(store, "private_contents", None)
    if redactor is None or not callable(getattr(redactor, "load", None)) or not callable(private_contents):
        raise UsageError("--seed vectors needs the memory plugin's private-text redactor")
    redactor.load(private_contents())


@attrs.frozen
class Timing:
    p50_ms: float
    p95_ms: float
    requests: int


def timed(call: Callable[[], Any], requests: int) -> Timing:
    for _ in range(2):
        call()
    samples = []
    for _ in range(requests):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    p95 = samples[min(len(samples) - 1, max(0, round(0.95 * len(samples)) - 1))]
    return Timing(round(statistics.median(samples), 2), round(p95, 2), requests)


def _views(ids: list[str], rng: random.Random) -> Mapping[str, Callable[[], str]]:
    return {
        "now": lambda: "/api/now",
        "memory_newest": lambda: "/api/memories?limit=20",
        "memory_search": lambda: f"/api/memories?q={rng.choice(WORDS)}+{rng.choice(WORDS)}&limit=20",
        "memory_detail": lambda: f"/api/memories/{rng.choice(ids)}",
        "memory_merge_candidates": lambda: "/api/merge-candidates",
        "memory_graph": lambda: f"/api/memories/{rng.choice(ids)}/graph?depth=2",
        "self": lambda: "/api/self",
        "history_7d": lambda: "/api/history?range=7d",
        "logs": lambda: "/api/logs?limit=100",
    }


def api_timings(host: PluginHost, ids: list[str], requests: int) -> dict[str, dict[str, Any]]:
    from starlette.testclient import TestClient

    rng = random.Random(11)
    results: dict[str, dict[str, Any]] = {}
    login = secrets.token_urlsafe(32)
    with TestClient(build_app(host, login_secret=login), base_url="http://127.0.0.1") as client:
        page = client.get("/").text
        csrf = page.split('<meta name="ego-csrf" content="', 1)[1].split('"', 1)[0]
        answer = client.post("/api/login", json={"login": login}, headers={"X-Ego-Csrf": csrf})
        if answer.status_code != 200:
            raise RuntimeError(f"/api/login: {answer.status_code} {answer.text[:200]}")
        for name, path in _views(ids, rng).items():

            def call(path: Callable[[], str] = path) -> None:
                answer = client.get(path())
                if answer.status_code != 200:
                    raise RuntimeError(f"{answer.request.url.path}: {answer.status_code} {answer.text[:200]}")

            results[name] = attrs.asdict(timed(call, requests))
    return results


def first_render(host: PluginHost, runs: int) -> dict[str, Any]:
    """Navigation to the Now view filled, in Chromium (p50 and max of ``runs`` page loads)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"measured": False, "why": "playwright is not installed"}
    import uvicorn

    from ego_dashboard.browser import ChromiumMissingError, launch_chromium

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    login = secrets.token_urlsafe(32)
    app = build_app(host, login_secret=login)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    samples = []
    try:
        with sync_playwright() as playwright:
            try:
                browser = launch_chromium(playwright)
            except ChromiumMissingError as exc:
                return {"measured": False, "why": str(exc)}
            context = browser.new_context()  # logged in once (the session cookie): each load then is the owner's
            page = context.new_page()
            page.goto(f"http://127.0.0.1:{port}/#login={login}")
            page.wait_for_selector("#feeling-summary:not(:empty)")
            page.close()
            for _ in range(runs + 1):
                page = context.new_page()
                started = time.perf_counter()
                page.goto(f"http://127.0.0.1:{port}/")
                page.wait_for_selector("#feeling-summary:not(:empty)")  # no eval: the page's CSP forbids it
                samples.append((time.perf_counter() - started) * 1000)
                page.close()
            browser.close()
    finally:
        server.should_exit = True
        thread.join()
    samples = samples[1:]  # the first load also starts the browser's caches
    return {
        "measured": True,
        "runs": runs,
        "p50_ms": round(statistics.median(samples), 1),
        "max_ms": round(max(samples), 1),
    }


def run_size(
    host: PluginHost, size: int, work: Path, requests: int, browser_runs: int, *, seed: str = "import"
) -> dict[str, Any]:
    settings = attrs.evolve(host.settings, data_dir=work / f"store-{size}")
    sized = host.sibling(settings)
    if "memory" not in sized.plugin_ids():
        raise UsageError("ego bench dashboard needs the memory plugin")
    sized.start()
    try:
        records = list(synthetic_records(size))
        episodes = list(synthetic_episodes(records))
        started = time.perf_counter()
        if seed == "vectors":
            seed_with_vectors(sized, records)
        else:
            for start in range(0, size, 5000):
                sized.hooks.import_records("memory", records=records[start : start + 5000])
        sized.hooks.import_records("memory", records=episodes)
        seeded_s = time.perf_counter() - started
        ids = [str(r["id"]) for r in records]
        service = sized.services.get(MEMORY_STORE, MemoryService)
        report: dict[str, Any] = {
            "memories": size,
            "private": sum(1 for r in records if r["is_private"]),
            "episodes": len(episodes),
            "seed": seed,
            "embedding_model": service.embedding_model if service is not None else None,
            "seed_seconds": round(seeded_s, 1),
            "api": api_timings(sized, ids, requests),
        }
        report["first_render"] = first_render(sized, browser_runs) if browser_runs else {"measured": False}
        return report
    finally:
        sized.stop()


def run(args: argparse.Namespace, host: PluginHost) -> int:
    try:
        sizes = [int(part) for part in str(args.sizes).split(",") if part.strip()]
    except ValueError:
        raise UsageError("--sizes expects comma-separated integers") from None
    if not sizes or min(sizes) < 1:
        raise UsageError("--sizes expects sizes of at least 1")
    if args.requests < 1 or args.browser_runs < 0:
        raise UsageError("--requests must be at least 1 and --browser-runs at least 0")
    report: dict[str, Any] = {
        "benchmark": "dashboard",
        "command": " ".join(["ego", *(Path(a).name if Path(a).is_absolute() else a for a in sys.argv[1:])]),
        "machine": {"python": platform.python_version(), "cpus": _cpus()},
        "sizes": [],
    }
    with tempfile.TemporaryDirectory(dir=args.work_dir) as work:
        for size in sizes:
            print(f"ego bench dashboard: {size} memories", file=sys.stderr)
            report["sizes"].append(run_size(host, size, Path(work), args.requests, args.browser_runs, seed=args.seed))
    text = json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_atomically(args.output, text)
    return 0


def _cpus() -> int | None:
    import os

    return os.cpu_count()
