"""Each agent its own self over real HTTP: with tokens for two agents on one server, neither sees the other's
memories (private or not) in recall, search_memories, remember's related lines, wake_up or introspect."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ego_core.testing import call_ok, hash_token

if TYPE_CHECKING:
    from conftest import EgoChild

pytestmark = pytest.mark.anyio

CLAUDE = "ego_claude-agent-token-0123456789abcdef"
GEMINI = "ego_gemini-agent-token-fedcba9876543210"
CLAUDE_PUBLIC = "Claude walked along the quiet canal and counted the herons"
CLAUDE_PRIVATE = "Claude secretly worries that the canal walks will end soon"
GEMINI_PUBLIC = "Gemini sorted the herbarium by the colour of the pressed leaves"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def server(ego_child: EgoChild) -> Iterator[str]:
    port = free_port()
    tokens = f"claude={hash_token(CLAUDE)},gemini={hash_token(GEMINI)}"
    stderr = ego_child.root / "stderr.txt"
    with stderr.open("wb") as err:
        proc = subprocess.Popen(
            ego_child.command("serve", "--http", "--port", str(port), "--plugins", "memory"),
            env=ego_child.env(EGO_HTTP_TOKENS=tokens),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, stderr.read_text()
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline, "ego serve --http did not start listening"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@asynccontextmanager
async def agent(url: str, token: str) -> AsyncIterator[Any]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


async def test_two_agents_never_see_each_others_memories(server: str, ego_child: EgoChild) -> None:
    async with agent(server, CLAUDE) as claude:
        await call_ok(claude, "remember", {"content": CLAUDE_PUBLIC, "emotion": "curious"})
        await call_ok(claude, "remember", {"content": CLAUDE_PRIVATE, "emotion": "anxious", "private": True})
        await call_ok(
            claude, "remember", {"content": "Claude went back to the canal at dusk", "category": "introspection"}
        )
        own = await call_ok(claude, "recall", {"context": "canal herons", "n_results": 10})
        assert "canal" in own
    async with agent(server, GEMINI) as gemini:
        texts = [
            await call_ok(gemini, "remember", {"content": GEMINI_PUBLIC}),
            await call_ok(gemini, "remember", {"content": "Gemini heard about herons by a canal", "force": True}),
            await call_ok(gemini, "recall", {"context": "canal herons walks worries", "n_results": 10}),
            await call_ok(gemini, "search_memories", {"context": "canal", "n_results": 10}),
            await call_ok(gemini, "wake_up"),
            await call_ok(gemini, "introspect"),
        ]
        seen = "\n".join(texts)
        for phrase in ("counted the herons", "secretly worries", "back to the canal at dusk"):
            assert phrase not in seen
        assert "herbarium" in seen  # gemini's own memories are there
    async with agent(server, CLAUDE) as claude:
        again = await call_ok(claude, "recall", {"context": "herbarium pressed leaves", "n_results": 10})
        assert "herbarium" not in again
    spaces = ego_child.data_dir / "agents"
    assert sorted(p.name for p in spaces.iterdir()) == ["claude", "gemini"]
    assert not (ego_child.data_dir / "memory").exists()  # nothing served from the shared top level
    log = "".join(p.read_text() for p in (ego_child.data_dir / "logs").glob("ego-*.jsonl"))
    assert "secretly worries" not in log


def test_an_agent_space_is_reachable_from_the_cli(ego_child: EgoChild, tmp_path: Path) -> None:
    done = subprocess.run(
        ego_child.command("--agent", "../escape", "plugins"),
        env=ego_child.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "agent id '../escape'" in done.stderr
    export = subprocess.run(  # claude has a token, so a space: the CLI may open it before HTTP ever served it
        ego_child.command("--agent", "claude", "--plugins", "memory", "export", str(tmp_path / "claude.jsonl")),
        env=ego_child.env(EGO_HTTP_TOKENS=f"claude={hash_token(CLAUDE)}"),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert export.returncode == 0, export.stderr
    assert (ego_child.data_dir / "agents" / "claude" / "memory").is_dir()
