"""The first run and the shared server with every built-in plugin, as a user meets them.

- ``ego init`` for a Japanese owner (a temporary HOME, real CLI), then the printed Claude Desktop config started
  as a real stdio MCP client: wake_up and consider_them speak of マスター, an alias reaches them.
- One ``ego serve --http`` and two stdio clients through ``ego connect``: a memory remembered through one is
  recalled through the other at once.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from ego_core.mcp.http_transport import hash_token
from ego_core.testing import call_ok

pytestmark = pytest.mark.anyio

TOKEN = "ego_shared-combo-token-0123456789abcdef"


def clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
    env["HOME"] = str(home)
    return env


def init(home: Path, *options: str) -> subprocess.CompletedProcess[str]:
    home.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "ego_core.mcp.cli", "init", *options],
        env=clean_env(home),
        cwd=home,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def desktop_entry(out: str) -> dict[str, Any]:
    body = out[out.index("{", out.index("Claude Desktop")) :]
    config, _end = json.JSONDecoder().raw_decode(body)
    entry: dict[str, Any] = config["mcpServers"]["ego"]
    return entry


async def test_a_japanese_owner_is_called_master_in_japanese(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = init(home, "--language", "ja", "--companion", "マスター", "--timezone", "Asia/Tokyo", "--alias", "はるさん")
    assert done.returncode == 0, done.stderr
    assert "the companion マスター now also answers to: はるさん" in done.stdout
    entry = desktop_entry(done.stdout)
    assert entry["env"] == {"EGO_DATA_DIR": str(home / ".ego")}
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env={**entry["env"], "HOME": str(home)}
    )
    async with Client(params) as client:
        assert "(Asia/Tokyo)" in await call_ok(client, "wake_up")
        await call_ok(
            client, "remember", {"content": "Master and I made gyoza together; it was fun.", "emotion": "happy"}
        )
        wake = await call_ok(client, "wake_up")
        assert "マスター: " in wake
        assert "Master:" not in wake
        considered = await call_ok(client, "consider_them", {"person": "はるさん"})
        assert considered.startswith("マスター (also はるさん; the one you live with)")
    again = init(home, "--language", "ja", "--companion", "マスター", "--timezone", "Asia/Tokyo", "--alias", "はるさん")
    assert again.returncode == 0, again.stderr
    assert "already says this; nothing changed" in again.stdout
    assert "the companion マスター already answers to: はるさん" in again.stdout
    doctor = subprocess.run(
        [sys.executable, "-m", "ego_core.mcp.cli", "doctor"],
        env=clean_env(home),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "[ok] owner: language ja, time zone Asia/Tokyo, companion マスター" in doctor.stdout
    assert "ego takes マスター for the companion, by the names マスター, はるさん" in doctor.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def shared_server(tmp_path: Path) -> Iterator[str]:
    """``ego serve --http`` with every installed plugin, one agent token."""
    port = free_port()
    env = {
        **clean_env(tmp_path),
        "EGO_DATA_DIR": str(tmp_path / "data"),
        "EGO_HTTP_TOKENS": f"claude={hash_token(TOKEN)}",
    }
    with (tmp_path / "server.err").open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ego_core.mcp.cli", "serve", "--http", "--port", str(port)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, (tmp_path / "server.err").read_text()
            assert time.monotonic() < deadline, "ego serve --http did not start listening"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=60)


async def test_a_memory_remembered_through_one_client_is_recalled_through_the_other(shared_server: str) -> None:
    def bridge() -> StdioServerParameters:
        return StdioServerParameters(
            command=sys.executable, args=["-m", "ego_core.mcp.cli", "connect", shared_server], env={"EGO_TOKEN": TOKEN}
        )

    async with Client(bridge()) as desktop, Client(bridge(), mode="legacy") as openclaw:
        await call_ok(desktop, "remember", {"content": "マスターと川沿いで桜を見た。", "emotion": "moved"})
        recalled = await call_ok(openclaw, "recall", {"context": "桜"})
        assert "マスターと川沿いで桜を見た。" in recalled
        await call_ok(openclaw, "remember", {"content": "Aiko taught me a haiku about rain.", "emotion": "curious"})
        assert "Aiko taught me a haiku about rain." in await call_ok(desktop, "recall", {"context": "haiku"})
