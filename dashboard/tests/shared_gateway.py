"""A real shared memory gateway for the dashboard's tests: the gateway app over a SQLite store, served by uvicorn
in a thread on a loopback socket; agents' and an operator's tokens; events appended through its HTTP API (some
of them 40 days ago, by the gateway's own clock), a conflict, a janitor run (pins, audit records)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import httpx
import uvicorn

from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.gateway import build_app
from ego_shared_memory.plugin import SharedMemoryPlugin
from ego_shared_memory.store import SqlStore, open_store
from ego_shared_memory.tokens import create_token

GEMINI_PRIVATE = "Gemini keeps its draft of the anniversary poem for Haruko in the blue folder"
"""Written by gemini to agent:gemini: the dashboard, reading as claude, must never show a run of it."""
OLD_NOTE = "The weekly build moved from Friday to Thursday afternoon"
OWN_NOTE = "Claude prefers to summarise long threads before answering"


@attrs.define
class SeededGateway:
    url: str
    store_url: str
    store: SqlStore
    claude: str
    gemini: str
    operator: str
    events: dict[str, str]
    server: uvicorn.Server
    thread: threading.Thread
    sock: socket.socket
    offset: list[timedelta]

    def plugin_config(self) -> dict[str, Any]:
        """``[plugins.shared_memory]`` of the agent claude."""
        return {"gateway_url": self.url, "token": self.claude, "project": "ego"}

    def http(self, token: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {token}"}, trust_env=False)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)
        self.sock.close()
        self.store.close()


OLD_EVENTS = [  # 40 days ago, by the gateway's clock: (name, agent, scope, kind, dedupe_key, content_md)
    ("old", "claude", "global", "decision", "build_day", OLD_NOTE),
    ("gemini_private_old", "gemini", "agent:gemini", "fact", "poem_draft", GEMINI_PRIVATE),
]
NEW_EVENTS = [
    ("pref", "claude", "global", "workflow", "answer_style", "Answers start with the conclusion, then the reasons"),
    ("conflict_a", "claude", "project:ego", "config", "release_branch", "Releases are cut from the main branch"),
    ("conflict_b", "gemini", "project:ego", "config", "release_branch", "Releases are cut from the stable branch"),
    ("own", "claude", "agent:claude", "workflow", "summaries", OWN_NOTE),
    ("gemini_private", "gemini", "agent:gemini", "fact", "poem_folder", GEMINI_PRIVATE + " now"),
]


def _append(client: httpx.Client, agent: str, scope: str, kind: str, key: str, text: str) -> str:
    document = {
        "agent_id": agent,
        "run_id": "run_2026_11_26_001",
        "scope": scope,
        "kind": kind,
        "dedupe_key": key,
        "content_md": text,
        "confidence": "high",
        "source": {"system": "other"},
        "supersedes": None,
        "ttl_days": 0,
    }
    answer = client.post("/v1/memory/append", json=document)
    assert answer.status_code in (200, 201), answer.text
    return str(answer.json()["event_id"])


def start_gateway(tmp_path: Path) -> SeededGateway:
    store_url = f"sqlite:///{tmp_path / 'shared.db'}"
    store = open_store(store_url)
    settings = GatewaySettings()
    offset = [timedelta(days=-40)]

    def clock() -> datetime:
        return datetime.now(UTC) + offset[0]

    now = datetime.now(UTC)
    tokens = {
        agent: create_token(store, agent, role="agent", agents=settings.agents, now=now)
        for agent in ("claude", "gemini")
    }
    operator = create_token(store, "ops", role="admin", agents=(*settings.agents, "ops"), now=now)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(
        build_app(store, settings, clock=clock), log_config=None, access_log=False, lifespan="on", log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the gateway did not start"
        assert thread.is_alive(), "the gateway stopped"
        time.sleep(0.02)
    gateway = SeededGateway(
        url, store_url, store, tokens["claude"], tokens["gemini"], operator, {}, server, thread, sock, offset
    )
    with gateway.http(gateway.claude) as claude, gateway.http(gateway.gemini) as gemini:
        writers = {"claude": claude, "gemini": gemini}
        for name, agent, scope, kind, key, text in OLD_EVENTS:
            gateway.events[name] = _append(writers[agent], agent, scope, kind, key, text)
        offset[0] = timedelta(0)
        for name, agent, scope, kind, key, text in NEW_EVENTS:
            gateway.events[name] = _append(writers[agent], agent, scope, kind, key, text)
    with gateway.http(gateway.operator) as ops:
        ran = ops.post("/v1/janitor/run", json={})
        assert ran.status_code == 200, ran.text
    return gateway


def shared_host_plugins() -> dict[str, object]:
    return {"shared_memory": SharedMemoryPlugin()}
