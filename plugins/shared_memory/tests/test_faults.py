"""Faults under load lose nothing acknowledged: a SQLite gateway killed (SIGKILL) twice while four agents append,
and one of two gateway replicas on one PostgreSQL database killed while four agents append through both. The
agents resend what was not acknowledged (the same body: appends are idempotent); at the end every
acknowledged event is stored, with its content, and no event is stored twice.

A PostgreSQL restart under four appending agents needs a server of its own, so it is a soak run outside the
suite: ``pytest plugins/shared_memory/soak`` (see docs/gateway.md)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from fault_support import AGENTS, GatewayProcess, Writers, check_nothing_lost
from shared_support import free_socket

from ego_shared_memory.store import open_store
from ego_shared_memory.tokens import create_token

PER_AGENT = 80


def tokens_in(url: str) -> dict[str, str]:
    store = open_store(url)
    try:
        return {a: create_token(store, a, role="agent", agents=AGENTS, now=datetime.now(UTC)) for a in AGENTS}
    finally:
        store.close()


def free_port() -> int:
    sock = free_socket()
    try:
        return int(sock.getsockname()[1])
    finally:
        sock.close()


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_sigkill_of_the_sqlite_gateway_under_load_loses_nothing_acknowledged(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    tokens = tokens_in(url)
    gateway = GatewayProcess(url, tmp_path / "data", free_port()).start()
    writers = Writers(lambda: [gateway.url], tokens, PER_AGENT, deadline=time.monotonic() + 240).start()
    try:
        for mark in (PER_AGENT, 2 * PER_AGENT):
            wait_for(lambda mark=mark: writers.progress() >= mark, f"{mark} acknowledged appends")
            gateway.kill()
            time.sleep(0.3)  # the agents meet a closed port meanwhile
            gateway.start()
        writers.join()
    finally:
        gateway.stop()
    assert writers.retries > 0, "the kills were not felt: no append was retried"
    store = open_store(url)
    try:
        check_nothing_lost(store, writers)
    finally:
        store.close()


def test_a_postgresql_replica_killed_under_load_loses_nothing_acknowledged(pg_url: str, tmp_path: Path) -> None:
    tokens = tokens_in(pg_url)
    replicas = [GatewayProcess(pg_url, tmp_path / f"replica{n}", free_port()).start() for n in range(2)]
    urls = [replica.url for replica in replicas]
    writers = Writers(lambda: urls, tokens, PER_AGENT, deadline=time.monotonic() + 240).start()
    try:
        wait_for(lambda: writers.progress() >= PER_AGENT, f"{PER_AGENT} acknowledged appends")
        replicas[0].kill()
        writers.join()
    finally:
        for replica in replicas:
            replica.stop()
    assert writers.retries > 0, "the kill was not felt: no append was retried"
    store = open_store(pg_url)
    try:
        check_nothing_lost(store, writers)
    finally:
        store.close()
