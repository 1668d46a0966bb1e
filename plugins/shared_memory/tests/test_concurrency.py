"""Four agents appending at once lose no event and create no duplicate: in one store (threads), through one
gateway over HTTP, and through two gateway processes sharing one PostgreSQL database."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from shared_support import ProcessGateway, ThreadGateway, event

from ego_shared_memory.events import parse_event
from ego_shared_memory.store import EventFilter, SqlStore, open_store
from ego_shared_memory.tokens import create_token

AGENTS = ("chatgpt", "claude", "gemini", "openclaw")
PER_AGENT = 60


def bodies(agent: str) -> list[dict[str, Any]]:
    """Each agent writes its own entries and also rewrites a few shared keys (last write wins)."""
    return [
        event(
            run_id=f"run_{agent}",
            dedupe_key=f"config:shared_{index % 5}" if index % 4 == 0 else f"fact:{agent}_{index}",
            kind="config" if index % 4 == 0 else "fact",
            content_md=f"{agent} entry {index}: see docs/{agent}/{index}.md.",
        )
        for index in range(PER_AGENT)
    ]


def check_log(store: SqlStore, seen: dict[str, set[str]]) -> None:
    """Every distinct event is stored once, and each repeat got the original's id."""
    events = store.list_events(EventFilter(include_deprecated=True, limit=100_000))
    assert len(events) == len(AGENTS) * PER_AGENT
    assert len({e.event_id for e in events}) == len(events)
    assert all(len(ids) == 1 for ids in seen.values()), "a repeated event got a second id"
    assert {e.event_id for e in events} == {next(iter(ids)) for ids in seen.values()}
    assert [e.seq for e in events] == sorted((e.seq for e in events), reverse=True)
    for index in range(5):
        key = f"config:shared_{index}"
        head = store.heads("global", by="recent", limit=1000, now=datetime.now(UTC))
        newest = max((e for e in events if e.dedupe_key == key), key=lambda e: e.seq)
        assert newest.event_id in {e.event_id for e in head if e.dedupe_key == key}


def test_four_agents_in_threads_on_one_store(store: SqlStore) -> None:
    seen: dict[str, set[str]] = {}
    lock = threading.Lock()
    start = threading.Barrier(len(AGENTS))

    def write(agent: str) -> None:
        start.wait()
        for body in bodies(agent):
            draft, _warnings = parse_event(body, agent_id=agent, max_chars=4000)
            for _repeat in range(2):  # an agent retrying after a timeout
                result = store.append(draft, datetime.now(UTC))
                with lock:
                    seen.setdefault(f"{agent}|{body['content_md']}", set()).add(result.event.event_id)

    with ThreadPoolExecutor(len(AGENTS)) as pool:
        list(pool.map(write, AGENTS))
    check_log(store, seen)


def _http_writers(urls: list[str], tokens: dict[str, str]) -> dict[str, set[str]]:
    """Each agent sends every event to each gateway in turn (a retry through another replica)."""
    seen: dict[str, set[str]] = {}
    lock = threading.Lock()
    start = threading.Barrier(len(AGENTS))

    def write(agent: str) -> None:
        clients = [httpx.Client(base_url=url, headers={"Authorization": f"Bearer {tokens[agent]}"}) for url in urls]
        try:
            start.wait()
            for index, body in enumerate(bodies(agent)):
                order = clients[index % len(clients) :] + clients[: index % len(clients)]
                for client in [*order, order[0]]:
                    response = client.post("/v1/memory/append", json=body, timeout=30)
                    assert response.status_code in (200, 201), response.text
                    with lock:
                        seen.setdefault(f"{agent}|{body['content_md']}", set()).add(response.json()["event_id"])
        finally:
            for client in clients:
                client.close()

    with ThreadPoolExecutor(len(AGENTS)) as pool:
        list(pool.map(write, AGENTS))
    return seen


def _tokens(store: SqlStore) -> dict[str, str]:
    return {agent: create_token(store, agent, role="agent", agents=AGENTS, now=datetime.now(UTC)) for agent in AGENTS}


def test_four_agents_through_one_gateway(gateway: ThreadGateway, store: SqlStore) -> None:
    seen = _http_writers([gateway.url], _tokens(store))
    check_log(store, seen)


def test_two_gateway_processes_on_one_postgresql_database(pg_url: str, tmp_path: Path) -> None:
    setup = open_store(pg_url)
    tokens = _tokens(setup)
    replicas = [ProcessGateway(pg_url, tmp_path / f"replica{n}") for n in range(2)]
    try:
        for replica in replicas:
            replica.wait_ready()
        seen = _http_writers([r.url for r in replicas], tokens)
        check_log(setup, seen)
        first = httpx.get(
            replicas[0].url + "/v1/memory/snapshot",
            params={"scopes": "global"},
            headers={"Authorization": f"Bearer {tokens['claude']}"},
        ).json()
        second = httpx.get(
            replicas[1].url + "/v1/memory/snapshot",
            params={"scopes": "global"},
            headers={"Authorization": f"Bearer {tokens['gemini']}"},
        ).json()
        assert first["recent_events"] == second["recent_events"]
        assert first["entries"] == second["entries"] == {"global": len(AGENTS) * (PER_AGENT * 3 // 4) + 5}
    finally:
        for replica in replicas:
            replica.stop()
        setup.close()


def test_a_token_made_on_one_replica_works_on_the_other(pg_url: str, tmp_path: Path) -> None:
    replicas = [ProcessGateway(pg_url, tmp_path / f"r{n}") for n in range(2)]
    setup = open_store(pg_url)
    try:
        for replica in replicas:
            replica.wait_ready()
        token = create_token(setup, "openclaw", role="agent", agents=AGENTS, now=datetime.now(UTC))
        answers: list[Callable[[], httpx.Response]] = [
            lambda url=replica.url: httpx.post(
                url + "/v1/memory/append", json=event(), headers={"Authorization": f"Bearer {token}"}
            )
            for replica in replicas
        ]
        statuses = [answer().status_code for answer in answers]
        assert statuses == [201, 200]
    finally:
        for replica in replicas:
            replica.stop()
        setup.close()
