"""Fixtures: a real host seeded with public and private memories, links and an open question; the dashboard's app
over it (a test client on a loopback address, logged in as the owner); a seeded shared memory gateway; a headless
Chromium (ego_dashboard.browser)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_support import Seeded, build_seeded, owner_client
from playwright.sync_api import Browser, sync_playwright
from shared_gateway import SeededGateway, start_gateway
from starlette.testclient import TestClient

from ego_core.testing import HostFactory
from ego_dashboard.browser import ChromiumMissingError, launch_chromium


@pytest.fixture
def seeded(make_host: HostFactory) -> Seeded:
    return build_seeded(make_host)


@pytest.fixture
def client(seeded: Seeded) -> Iterator[TestClient]:
    with owner_client(seeded.host) as test_client:
        yield test_client


@pytest.fixture
def gateway(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SeededGateway]:
    """A real gateway over SQLite, seeded through its HTTP API (no shared-memory variable from the shell)."""
    for name in ("EGO_SHARED_URL", "EGO_SHARED_TOKEN", "EGO_SHARED_DB", "EGO_SHARED_AGENT", "EGO_SHARED_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    running = start_gateway(tmp_path)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        try:
            launched = launch_chromium(playwright)
        except ChromiumMissingError as exc:
            pytest.fail(str(exc), pytrace=False)
        yield launched
        launched.close()
