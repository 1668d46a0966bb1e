"""Soak: PostgreSQL restarted (``pg_ctl stop -m immediate``, a crash for the clients) several times while four
agents append through a gateway; nothing acknowledged is lost and nothing is stored twice.

Not part of the suite (it needs a PostgreSQL server of its own, made here with ``initdb`` in a temporary
directory on a free port, never the shared one on 5432). Run it with::

    pytest plugins/shared_memory/soak            # EGO_SOAK_EVENTS=300 per agent, EGO_SOAK_RESTARTS=3

It needs the server binaries (``/usr/lib/postgresql/*/bin`` or on PATH); as root it runs them as the
``postgres`` user.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fault_support import AGENTS, GatewayProcess, Writers, check_nothing_lost
from shared_support import free_socket

from ego_shared_memory.store import open_store
from ego_shared_memory.tokens import create_token

EVENTS = int(os.environ.get("EGO_SOAK_EVENTS", "300"))
RESTARTS = int(os.environ.get("EGO_SOAK_RESTARTS", "3"))
DOWN_SECONDS = float(os.environ.get("EGO_SOAK_DOWN_SECONDS", "1.0"))


def server_binary(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}")) or [shutil.which(name) or ""]
    if not found[-1]:
        pytest.fail(f"{name} not found (install the PostgreSQL server: apt-get install postgresql)", pytrace=False)
    return found[-1]


class OwnPostgres:
    """A throwaway PostgreSQL cluster (trust auth, loopback only) that the soak may stop and start at will."""

    def __init__(self, root: Path, port: int) -> None:
        self.root = root
        self.data = root / "data"
        self.port = port
        self.url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        self._as_postgres = os.geteuid() == 0

    def _run(self, *args: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self._as_postgres else []
        subprocess.run([*prefix, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)

    def init(self) -> OwnPostgres:
        if self._as_postgres:
            account = pwd.getpwnam("postgres")
            os.chown(self.root, account.pw_uid, account.pw_gid)
        self._run(server_binary("initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        return self

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1"
        self._run(
            server_binary("pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"), "-w", "-o", options, "start"
        )

    def stop(self, mode: str = "fast") -> None:
        self._run(server_binary("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")


@pytest.fixture
def postgres() -> Iterator[OwnPostgres]:
    root = Path(tempfile.mkdtemp(prefix="ego-soak-pg-"))
    sock = free_socket()
    port = int(sock.getsockname()[1])
    sock.close()
    server = OwnPostgres(root, port).init()
    server.start()
    try:
        yield server
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):  # already down
            server.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


def test_postgresql_restarts_under_four_appending_agents_lose_nothing(postgres: OwnPostgres, tmp_path: Path) -> None:
    setup = open_store(postgres.url)
    try:
        tokens = {a: create_token(setup, a, role="agent", agents=AGENTS, now=datetime.now(UTC)) for a in AGENTS}
    finally:
        setup.close()
    sock = free_socket()
    port = int(sock.getsockname()[1])
    sock.close()
    gateway = GatewayProcess(postgres.url, tmp_path / "data", port).start()
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
    store = open_store(postgres.url)
    try:
        check_nothing_lost(store, writers)
    finally:
        store.close()
    print(f"soak: {total} events by {len(AGENTS)} agents, {RESTARTS} PostgreSQL restarts, {writers.retries} retries")
