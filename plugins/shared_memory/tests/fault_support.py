"""Fault-test helpers: agents that keep appending through a gateway that may die or lose its database, and the
check that nothing acknowledged was lost or stored twice. Used by ``test_faults.py`` (in the suite) and by the
PostgreSQL restart soak (``plugins/shared_memory/soak``)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
from shared_support import clean_env, ego_command, event

from ego_shared_memory.store import EventFilter, SqlStore

AGENTS = ("chatgpt", "claude", "gemini", "openclaw")
RETRY_STATUSES = frozenset({502, 503, 504})


class GatewayProcess:
    """``ego gateway serve`` on a fixed loopback port: it can be killed (SIGKILL) and started again on the same
    port, so that the agents keep their URL."""

    def __init__(self, db: str, data_dir: Path, port: int) -> None:
        self.db = db
        self.data_dir = data_dir
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60) -> GatewayProcess:
        args = [*ego_command(), "--plugins", "shared_memory", "gateway", "serve", "--db", self.db]
        self.process = subprocess.Popen(
            [*args, "--port", str(self.port)],
            env=clean_env(EGO_DATA_DIR=str(self.data_dir)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the gateway on port {self.port} exited with {self.process.returncode}")
            try:
                if httpx.get(self.url + "/v1/health", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"the gateway on port {self.port} did not answer within {timeout:g} s")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush, no goodbye."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=20)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def body_for(agent: str, index: int) -> dict[str, Any]:
    """Each event is distinct; every fourth one rewrites a shared key (last write wins across agents)."""
    shared = index % 4 == 0
    return event(
        run_id=f"run_{agent}",
        dedupe_key=f"config:shared_{index % 5}" if shared else f"fact:{agent}_{index}",
        kind="config" if shared else "fact",
        content_md=f"{agent} entry {index}: see docs/{agent}/{index}.md.",
    )


class Writers:
    """Agents appending their events in threads. Each event is sent until the gateway acknowledges it (200 or
    201), through the agent's gateways in turn: a dropped connection, a timeout or a 502/503/504 is retried
    with the same body, as the agent tool does (appends are idempotent). Anything else fails the run."""

    def __init__(
        self, urls: Callable[[], Sequence[str]], tokens: dict[str, str], per_agent: int, *, deadline: float
    ) -> None:
        self.urls = urls
        self.tokens = tokens
        self.per_agent = per_agent
        self.deadline = deadline
        self.acknowledged: dict[str, set[str]] = {}
        """content → every event id the gateway answered for it (exactly one, when all is well)."""
        self.retries = 0
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._write, args=(agent,), daemon=True) for agent in tokens]

    def start(self) -> Writers:
        for thread in self._threads:
            thread.start()
        return self

    def progress(self) -> int:
        with self._lock:
            return len(self.acknowledged)

    def join(self) -> None:
        for thread in self._threads:
            thread.join(timeout=max(1.0, self.deadline - time.monotonic() + 30))
        assert not self.errors, "\n".join(self.errors[:5])
        assert not any(thread.is_alive() for thread in self._threads), "a writer did not finish in time"

    def _write(self, agent: str) -> None:
        headers = {"Authorization": f"Bearer {self.tokens[agent]}"}
        with httpx.Client(headers=headers, timeout=15) as client:
            for index in range(self.per_agent):
                body = body_for(agent, index)
                attempt = 0
                while True:
                    if time.monotonic() > self.deadline:
                        with self._lock:
                            self.errors.append(f"{agent} #{index}: not acknowledged before the deadline")
                        return
                    urls = self.urls()
                    url = urls[(index + attempt) % len(urls)]
                    try:
                        response = client.post(url + "/v1/memory/append", json=body)
                    except httpx.HTTPError:
                        response = None
                    if response is not None and response.status_code in (200, 201):
                        with self._lock:
                            self.acknowledged.setdefault(body["content_md"], set()).add(response.json()["event_id"])
                        break
                    if response is not None and response.status_code not in RETRY_STATUSES:
                        with self._lock:
                            self.errors.append(f"{agent} #{index}: {response.status_code} {response.text[:300]}")
                        return
                    attempt += 1
                    with self._lock:
                        self.retries += 1
                    time.sleep(min(0.5, 0.02 * attempt))


def check_nothing_lost(store: SqlStore, writers: Writers) -> None:
    """Every event was acknowledged with one id, that event is stored with its content, and the log holds each
    event exactly once (a write whose answer was lost, resent, was not stored twice)."""
    expected = len(writers.tokens) * writers.per_agent
    assert len(writers.acknowledged) == expected
    twice = {content: ids for content, ids in writers.acknowledged.items() if len(ids) != 1}
    assert not twice, f"resends got different ids: {list(twice.items())[:3]}"
    events = store.list_events(EventFilter(include_deprecated=True, limit=expected + 1000))
    by_id = {e.event_id: e for e in events}
    for content, ids in writers.acknowledged.items():
        (event_id,) = ids
        assert event_id in by_id, f"acknowledged {event_id} is not in the store"
        assert by_id[event_id].content_md == content
    assert len(events) == expected, f"{len(events)} events stored for {expected} distinct ones"
