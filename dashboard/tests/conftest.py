"""Fixtures: a real host seeded with public and private memories, links and an open question; the dashboard's app
over it (a test client on a loopback address)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from dashboard_support import Seeded, build_seeded
from starlette.testclient import TestClient

from ego_core.testing import HostFactory
from ego_dashboard.app import build_app


@pytest.fixture
def seeded(make_host: HostFactory) -> Seeded:
    return build_seeded(make_host)


@pytest.fixture
def client(seeded: Seeded) -> Iterator[TestClient]:
    app = build_app(seeded.host)
    with TestClient(app, base_url="http://127.0.0.1:8766") as test_client:
        yield test_client
