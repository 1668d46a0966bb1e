"""Starting ``ego serve --http`` for end-to-end tests: a free port, the server process, and waiting for it."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ego_core.http_transport import hash_token

if TYPE_CHECKING:
    from conftest import EgoWorld


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until_listening(proc: subprocess.Popen[bytes], port: int, stderr: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"ego serve --http exited with {proc.returncode}: {stderr.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    pytest.fail("ego serve --http did not start listening")


@contextlib.contextmanager
def serving_http(world: EgoWorld, tokens: dict[str, str]) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    """``ego serve --http`` on a free local port for ``world`` (its real plugins left out), accepting ``tokens``
    (agent -> token): yields the MCP URL, the process and its stderr file; stops it on exit."""
    port = free_port()
    hashed = ",".join(f"{agent}={hash_token(token)}" for agent, token in tokens.items())
    stderr = world.root / "stderr.txt"
    with stderr.open("wb") as err:
        proc = subprocess.Popen(
            world.command("serve", "--http", "--host", "127.0.0.1", "--port", str(port), *world.without_real_plugins()),
            env=world.env(EGO_HTTP_TOKENS=hashed),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        wait_until_listening(proc, port, stderr)
        yield f"http://127.0.0.1:{port}/mcp", proc, stderr
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
