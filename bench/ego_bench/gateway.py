"""Load on the shared memory gateway over loopback HTTP, for each backend.

    ego bench gateway --agents 4 --events 20000 --output FILE

For each backend (SQLite in a temporary folder; PostgreSQL in a temporary schema of ``--pg-url``, dropped
afterwards) a real ``ego gateway serve`` process is started on a free port. Then:

1. **append**: ``--agents`` client processes, each with its own token and one keep-alive HTTP connection
   (``http.client``),
   send ``--events`` events in all (split evenly) as fast as the gateway answers; throughput is the events
   over the wall clock from the first request to the last answer, with per-request latency percentiles.
2. **snapshot**: the store is filled up to ``--snapshot-events`` events (bulk-loaded through the store with
   the same append rules), then ``--snapshots`` snapshots (``global,project:bench,agent:<id>``,
   ``limit_recent=50``) are timed one after another over HTTP.

Bounded in count and time: every phase stops at ``--max-seconds`` and the report says how far it got.
"""

from __future__ import annotations

import http.client
import json
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import httpx
import psycopg

from ego_bench.common import load_average, percentiles, report_header
from ego_shared_memory.events import EventDraft, Source
from ego_shared_memory.store import SqlStore, StoreError, open_store
from ego_shared_memory.store.postgres import temporary_schema
from ego_shared_memory.tokens import create_token

BASE_AGENTS = ("chatgpt", "claude", "gemini", "openclaw")
KINDS = ("decision", "config", "constraint", "workflow", "fact", "bug", "todo", "log")
KEYS_PER_SCOPE = 4000
LOAD_BATCH = 500
EGO = (sys.executable, "-m", "ego_core.mcp.cli")
TARGETS = {"append_per_second": 1000, "snapshot_p95_ms": 20}


def agent_ids(count: int) -> tuple[str, ...]:
    return tuple(BASE_AGENTS[i] if i < len(BASE_AGENTS) else f"agent{i + 1}" for i in range(count))


def body(agent: str, index: int) -> dict[str, Any]:
    scope = ("global", "project:bench", f"agent:{agent}")[index % 5 % 3]
    kind = KINDS[index % len(KINDS)]
    return {
        "agent_id": agent,
        "run_id": f"bench_{agent}",
        "scope": scope,
        "kind": kind,
        "dedupe_key": f"{kind}:{agent}_{index % KEYS_PER_SCOPE}",
        "confidence": ("high", "med", "low")[index % 3],
        "content_md": f"{agent} settled item {index}: the setting lives in docs/bench/{index % 997}.md (since today).",
        "source": {"system": "cli"},
        "ttl_days": 0 if index % 10 else 30,
    }


def _agent_worker(args: tuple[str, str, str, int, int, float]) -> dict[str, Any]:
    """One agent: ``count`` appends over one keep-alive connection; stops at ``deadline`` (epoch seconds).

    The client is the standard library's ``http.client``: the lightest there is, so that on a small machine
    the client processes leave the CPU to the gateway being measured."""
    url, token, agent, offset, count, deadline = args
    host, port = url.removeprefix("http://").split(":")
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    latencies: list[float] = []
    errors = 0
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        started = time.time()
        for index in range(offset, offset + count):
            if time.time() > deadline:
                break
            payload = json.dumps(body(agent, index))
            begin = time.perf_counter()
            connection.request("POST", "/v1/memory/append", body=payload, headers=headers)
            response = connection.getresponse()
            response.read()
            latencies.append((time.perf_counter() - begin) * 1000)
            if response.status not in (200, 201):
                errors += 1
        finished = time.time()
    finally:
        connection.close()
    return {"sent": len(latencies), "errors": errors, "start": started, "end": finished, "latencies": latencies}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (Linux ``/proc``), or ``None`` where it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


@attrs.frozen
class Gateway:
    url: str
    pid: int

    def cpu(self) -> float | None:
        return process_cpu_seconds(self.pid)


def _cpu_per_request(before: float | None, after: float | None, requests: int) -> float | None:
    if before is None or after is None or requests == 0:
        return None
    return round((after - before) / requests * 1000, 3)


@contextmanager
def _gateway(db: str, work: Path) -> Iterator[Gateway]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
    env["EGO_DATA_DIR"] = str(work / "gateway-data")
    env["EGO_LOG_LEVEL"] = "WARNING"
    process = subprocess.Popen(
        [*EGO, "--plugins", "shared_memory", "gateway", "serve", "--db", db, "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the gateway exited with code {process.returncode}")
            try:
                if httpx.get(url + "/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the gateway did not answer within 60 s")
            time.sleep(0.1)
        yield Gateway(url, process.pid)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def targets_met(append: dict[str, Any], snapshot: dict[str, Any]) -> dict[str, bool]:
    """Each target, checked against the run's own figures (a run stopped by its time limit meets none)."""
    complete = not append.get("stopped_by_time_limit", False)
    return {
        "append_per_second": complete and append["per_second"] >= TARGETS["append_per_second"],
        "snapshot_p95_ms": bool(snapshot["requests"]) and snapshot["latency_ms"]["p95"] <= TARGETS["snapshot_p95_ms"],
    }


STORES: dict[str, str] = {
    "sqlite": "sqlite, a temporary file (deleted afterwards)",
    "postgresql": "postgresql, a temporary schema of --pg-url (dropped afterwards)",
}
"""What a report records as each backend's store: nothing about the machine (no temporary path, no host)."""


@contextmanager
def _backend_store(backend: str, work: Path, pg_url: str) -> Iterator[tuple[str, SqlStore]]:
    if backend == "sqlite":
        url = f"sqlite:///{work / 'shared.db'}"
        store = open_store(url)
        try:
            yield url, store
        finally:
            store.close()
        return
    with temporary_schema(pg_url, "egobench") as url:
        store = open_store(url)
        try:
            yield url, store
        finally:
            store.close()


def _append_phase(gateway: Gateway, tokens: dict[str, str], events: int, max_seconds: float) -> dict[str, Any]:
    url = gateway.url
    agents = list(tokens)
    share = events // len(agents)
    deadline = time.time() + max_seconds
    jobs = [
        (url, tokens[a], a, 0, share + (1 if i < events % len(agents) else 0), deadline) for i, a in enumerate(agents)
    ]
    with multiprocessing.get_context("spawn").Pool(len(agents)) as pool:
        cpu_before = gateway.cpu()
        results = pool.map(_agent_worker, jobs)
        cpu_after = gateway.cpu()
    sent = sum(r["sent"] for r in results)
    seconds = max(r["end"] for r in results) - min(r["start"] for r in results)
    latencies = [ms for r in results for ms in r["latencies"]]
    return {
        "agents": len(agents),
        "events_requested": events,
        "events_sent": sent,
        "errors": sum(r["errors"] for r in results),
        "seconds": round(seconds, 3),
        "per_second": round(sent / seconds, 1) if seconds > 0 else 0.0,
        "latency_ms": percentiles(latencies),
        "gateway_cpu_ms_per_append": _cpu_per_request(cpu_before, cpu_after, sent),
        "stopped_by_time_limit": sent < events,
    }


def _fill(store: SqlStore, agents: Sequence[str], target: int, max_seconds: float, show: bool) -> dict[str, Any]:
    started = time.monotonic()
    have = store.event_count()
    index = 10_000_000  # never the indexes the append phase used
    now = datetime.now(UTC)
    while have < target and time.monotonic() - started < max_seconds:
        batch: list[EventDraft] = []
        for _ in range(min(LOAD_BATCH, target - have)):
            agent = agents[index % len(agents)]
            b = body(agent, index)
            batch.append(
                EventDraft(
                    agent_id=agent,
                    run_id=b["run_id"],
                    scope=b["scope"],
                    kind=b["kind"],
                    dedupe_key=b["dedupe_key"],
                    confidence=b["confidence"],
                    content_md=b["content_md"],
                    source=Source("cli"),
                    ttl_days=b["ttl_days"],
                )
            )
            index += 1
        store.append_many(batch, now)
        have += len(batch)
        if show:
            print(f"\r  filling: {have}/{target} events", end="", file=sys.stderr, flush=True)
    if show:
        print(file=sys.stderr)
    return {"events_in_store": store.event_count(), "fill_seconds": round(time.monotonic() - started, 1)}


def _snapshot_phase(gateway: Gateway, token: str, agent: str, count: int, max_seconds: float) -> dict[str, Any]:
    url = gateway.url
    params: dict[str, str | int] = {"scopes": f"global,project:bench,agent:{agent}", "limit_recent": 50}
    latencies: list[float] = []
    last: dict[str, Any] = {}
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        for _warm in range(5):
            client.get("/v1/memory/snapshot", params=params)
        deadline = time.monotonic() + max_seconds
        cpu_before = gateway.cpu()
        for _ in range(count):
            if time.monotonic() > deadline:
                break
            begin = time.perf_counter()
            response = client.get("/v1/memory/snapshot", params=params)
            latencies.append((time.perf_counter() - begin) * 1000)
            last = response.json()
        cpu_after = gateway.cpu()
    return {
        "requests": len(latencies),
        "latency_ms": percentiles(latencies),
        "gateway_cpu_ms_per_snapshot": _cpu_per_request(cpu_before, cpu_after, len(latencies)),
        "recent_events": len(last.get("recent_events", [])),
        "pinned_tokens": last.get("pinned_tokens"),
        "entries": last.get("entries"),
    }


def run_gateway_bench(
    *,
    command: str,
    agents: int,
    events: int,
    snapshot_events: int,
    snapshots: int,
    backends: Sequence[str],
    pg_url: str,
    max_seconds: float,
    work_dir: Path | None,
    show: bool,
) -> dict[str, Any]:
    report = report_header(command, embedder="none")
    report.update({"agents": agents, "events": events, "snapshot_events": snapshot_events, "targets": TARGETS})
    # the machine may be shared: the load (runnable processes, 1/5/15 min) says how much CPU others took
    report["load_average_before"] = load_average()
    ids = agent_ids(agents)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(dir=work_dir, prefix="ego-bench-gateway-") as tmp:
        for backend in backends:
            work = Path(tmp) / backend
            work.mkdir()
            if show:
                print(f"{backend}: append phase ({agents} agents, {events} events)", file=sys.stderr)
            try:
                with _backend_store(backend, work, pg_url) as (url, store):
                    now = datetime.now(UTC)
                    tokens = {a: create_token(store, a, role="agent", agents=ids, now=now) for a in ids}
                    with _gateway(url, work) as gateway:
                        append = _append_phase(gateway, tokens, events, max_seconds)
                        if show:
                            print(f"  {append['per_second']} appends/s; filling for snapshots", file=sys.stderr)
                        fill = _fill(store, ids, snapshot_events, max_seconds, show)
                        snapshot = _snapshot_phase(gateway, tokens[ids[0]], ids[0], snapshots, max_seconds)
                        snapshot.update(fill)
                    results[backend] = {
                        "store": STORES[backend],
                        "append": append,
                        "snapshot": snapshot,
                        "targets_met": targets_met(append, snapshot),
                        "load_average_after": load_average(),
                    }
            except (StoreError, psycopg.Error, RuntimeError) as exc:
                results[backend] = {"error": f"{type(exc).__name__}: {exc}"}
    report["backends"] = results
    return report


def gateway_options(parser: Any) -> None:
    parser.add_argument("--agents", type=int, default=4, help="concurrent agents (client processes), 1-16")
    parser.add_argument("--events", type=int, default=20000, help="events appended over HTTP in all")
    parser.add_argument("--snapshot-events", type=int, default=100_000, help="events in the store for the snapshots")
    parser.add_argument("--snapshots", type=int, default=300, help="timed snapshots")
    parser.add_argument("--backends", default="sqlite,postgresql", help="comma-separated: sqlite, postgresql")
    parser.add_argument(
        "--pg-url",
        default="postgresql://postgres@127.0.0.1:5432/test",
        help="a PostgreSQL database for a temporary schema (dropped afterwards)",
    )
    parser.add_argument("--max-seconds", type=float, default=600, help="time limit of each phase")


def gateway_run(args: Any, _host: Any, _table: dict[str, Any], command: str) -> dict[str, Any]:
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not backends or any(b not in ("sqlite", "postgresql") for b in backends):
        raise ValueError("--backends expects sqlite and/or postgresql, comma-separated")
    if not 1 <= args.agents <= 16:
        raise ValueError("--agents must be from 1 to 16")
    if args.events < args.agents or args.snapshots < 1 or args.snapshot_events < 1 or args.max_seconds <= 0:
        raise ValueError("--events (at least --agents), --snapshots, --snapshot-events and --max-seconds must be > 0")
    return run_gateway_bench(
        command=command,
        agents=args.agents,
        events=args.events,
        snapshot_events=args.snapshot_events,
        snapshots=args.snapshots,
        backends=backends,
        pg_url=args.pg_url,
        max_seconds=args.max_seconds,
        work_dir=args.work_dir,
        show=not args.quiet,
    )
