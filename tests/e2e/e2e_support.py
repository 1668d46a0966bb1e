"""Starting ``ego serve --http`` (and ``ego gateway serve``) for end-to-end tests: a free port, the server process,
and waiting for it; a POST with exactly the header lines a test chooses."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import h11
import pytest

from ego_core.mcp.http_transport import hash_token

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


@contextlib.contextmanager
def serving_http_with_plugins(
    world: EgoWorld, tokens: dict[str, str], plugins: str, **env: str
) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    """:func:`serving_http` with the installed plugins ``plugins`` (``--plugins``) and more environment."""
    port = free_port()
    hashed = ",".join(f"{agent}={hash_token(token)}" for agent, token in tokens.items())
    stderr = world.root / "stderr-plugins.txt"
    with stderr.open("wb") as err:
        proc = subprocess.Popen(
            world.command("serve", "--http", "--host", "127.0.0.1", "--port", str(port), "--plugins", plugins),
            env=world.env(EGO_HTTP_TOKENS=hashed, **env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        wait_until_listening(proc, port, stderr)
        yield f"http://127.0.0.1:{port}/mcp", proc, stderr
    finally:
        stop(proc)


@contextlib.contextmanager
def serving_gateway(world: EgoWorld, db: str) -> Iterator[str]:
    """A real ``ego gateway serve`` on the store ``db`` at a free local port: yields its base URL."""
    port = free_port()
    stderr = world.root / "stderr-gateway.txt"
    with stderr.open("wb") as err:
        proc = subprocess.Popen(
            world.command("--plugins", "shared_memory", "gateway", "serve", "--db", db, "--port", str(port)),
            env=world.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        wait_until_listening(proc, port, stderr)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def raw_post(url: str, header_lines: list[bytes], body: bytes) -> tuple[int, dict[str, str], bytes]:
    """POST ``body`` to ``url`` with exactly these extra header lines (repeated names, stray blanks and all, which
    HTTP clients refuse to send): the status, the headers (lower-case names) and the body of the answer."""
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    head = [
        f"POST {target} HTTP/1.1".encode(),
        f"Host: {host}:{port}".encode(),
        b"Accept: application/json, text/event-stream",
        b"Content-Type: application/json",
        f"Content-Length: {len(body)}".encode(),
        b"Connection: close",
        *header_lines,
    ]
    answer = bytearray()
    with socket.create_connection((host, port), timeout=60) as sock:
        sock.sendall(b"\r\n".join(head) + b"\r\n\r\n" + body)
        while chunk := sock.recv(65536):
            answer.extend(chunk)
    response = h11.Connection(h11.CLIENT)
    response.send(h11.Request(method="POST", target="/", headers=[("Host", host)]))
    response.receive_data(bytes(answer))
    response.receive_data(b"")
    status, headers, content = 0, {}, bytearray()
    while True:
        event = response.next_event()
        if isinstance(event, h11.Response):
            status = event.status_code
            headers = {name.decode().lower(): value.decode() for name, value in event.headers}
        elif isinstance(event, h11.Data):
            content.extend(event.data)
        elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed) or event is h11.NEED_DATA:
            break
    return status, headers, bytes(content)
