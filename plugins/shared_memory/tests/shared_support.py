"""Helpers for the shared memory tests: a gateway on a free loopback port (a thread or a real `ego gateway serve`
process), the OpenAPI checker, and the protocol note's example events. (The tests' PostgreSQL comes from
``ego_shared_memory.testing``, through the ``postgres`` fixture in conftest.py.)"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from jsonschema import Draft202012Validator

from ego_core import PluginHost
from ego_core.testing import HostFactory
from ego_memory.plugin import MemoryPlugin
from ego_shared_memory import SharedMemoryPlugin
from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.gateway import build_app
from ego_shared_memory.openapi import openapi_document
from ego_shared_memory.store import SqlStore


def free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


class ThreadGateway:
    """The gateway app served by uvicorn in a thread, on a loopback socket bound beforehand (no port race)."""

    def __init__(self, store: SqlStore, settings: GatewaySettings, **app_options: Any) -> None:
        self.store = store
        self._sock = free_socket()
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            build_app(store, settings, **app_options),
            log_config=None,
            access_log=False,
            lifespan="on",
            log_level="warning",
        )
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self.server.serve(sockets=[self._sock])), daemon=True
        )

    def start(self) -> ThreadGateway:
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the gateway thread did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=20)
        self._sock.close()


def clean_env(**extra: str) -> dict[str, str]:
    """The environment for a child process: no inherited EGO_* variables, only what the test sets."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
    env.update(extra)
    return env


def ego_command() -> list[str]:
    return [sys.executable, "-m", "ego_core.mcp.cli"]


class ProcessGateway:
    """A real `ego gateway serve` process (the way an operator runs a replica)."""

    def __init__(self, db: str, data_dir: Path) -> None:
        sock = free_socket()
        self.port = sock.getsockname()[1]
        sock.close()
        self.url = f"http://127.0.0.1:{self.port}"
        args = [*ego_command(), "--plugins", "shared_memory", "gateway", "serve", "--db", db, "--port", str(self.port)]
        self.process = subprocess.Popen(
            args,
            env=clean_env(EGO_DATA_DIR=str(data_dir)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def wait_ready(self) -> ProcessGateway:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"the gateway process exited: {err[-2000:]}")
            try:
                if httpx.get(self.url + "/v1/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError("the gateway process did not answer within 60 s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()


class OpenApi:
    """Validates a response against /openapi.json: the status is documented and the body fits its schema."""

    def __init__(self, document: Mapping[str, Any] | None = None) -> None:
        self.document = dict(document or openapi_document())

    def check(self, response: httpx.Response, path: str, method: str) -> Any:
        operation = self.document["paths"][path][method.lower()]
        status = str(response.status_code)
        assert status in operation["responses"], f"{method} {path}: status {status} is not in the OpenAPI document"
        body = response.json()
        content = operation["responses"][status].get("content", {}).get("application/json", {})
        schema = content.get("schema")
        if schema is not None:
            Draft202012Validator({**self.document, **schema}).validate(body)
        return body


EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "agent_id": "claude",
        "run_id": "run_2026_02_02_001",
        "scope": "global",
        "kind": "config",
        "dedupe_key": "telegram_bot_token_location",
        "confidence": "high",
        "content_md": "TELEGRAM_BOT_TOKEN は ~/claude-telegram-bot/.env に保存（2026-02-02から有効）",
        "source": {"system": "telegram", "thread_id": "thr_abc123"},
        "supersedes": None,
        "ttl_days": 0,
    },
    {
        "agent_id": "chatgpt",
        "run_id": "run_2026_02_02_002",
        "scope": "project:memory-gateway",
        "kind": "bug",
        "dedupe_key": "gateway_auth_401_issue",
        "confidence": "high",
        "content_md": (
            "Gateway API Key が無効（401エラー）。原因: API Keyの有効期限切れ。対処: 新しいKeyを発行して更新。"
        ),
        "source": {"system": "cli"},
        "supersedes": None,
        "ttl_days": 90,
    },
    {
        "agent_id": "gemini",
        "run_id": "run_2026_02_02_003",
        "scope": "global",
        "kind": "decision",
        "dedupe_key": "memory_protocol_v1",
        "confidence": "high",
        "content_md": "4者共有メモリは Gateway(D1) をSSOTとし、append-onlyで運用（2026-02-02決定）",
        "source": {"system": "web"},
        "supersedes": None,
        "ttl_days": 0,
    },
)


def event(**fields: Any) -> dict[str, Any]:
    """A valid event body (claude, global, config), with ``fields`` changed."""
    body: dict[str, Any] = {
        "run_id": "run_test",
        "scope": "global",
        "kind": "config",
        "dedupe_key": "config:example",
        "confidence": "high",
        "content_md": "The example setting lives in ~/.config/example.toml (since 2026-11-01).",
        "source": {"system": "cli"},
    }
    body.update(fields)
    return body


def agent_host(make_host: HostFactory, table: dict[str, Any], *, memory: bool = False) -> PluginHost:
    plugins: dict[str, object] = {"shared_memory": SharedMemoryPlugin()}
    config: dict[str, dict[str, Any]] = {"shared_memory": table}
    if memory:
        plugins["memory"] = MemoryPlugin()
        config["memory"] = {}
    return make_host(plugins, config=config)
