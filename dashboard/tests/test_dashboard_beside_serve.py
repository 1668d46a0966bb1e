"""`ego dashboard` (the real command, its own process) beside `ego serve --http` on the same data directory: the
dashboard sees what the agent remembers through the server, a forget from the dashboard is seen by the server,
nothing is lost and both stop cleanly. Also the command's usage errors (exit code 2)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import attrs
import httpx
import httpx2
import pytest
from dashboard_support import PRIVATE, PUBLIC
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ego_core.testing import hash_token, tool_text

TOKEN = "ego_claude-dashboard-test-token-0123456789"
EGO = [sys.executable, "-m", "ego_core.mcp.cli"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def environment(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
    env.update(
        EGO_DATA_DIR=str(data_dir),
        EGO_PLUGINS="memory,self_model,dashboard",
        EGO_HTTP_TOKENS=f"claude={hash_token(TOKEN)}",
    )
    return env


def start(args: list[str], env: dict[str, str], port: int, stderr: Path) -> subprocess.Popen[bytes]:
    with stderr.open("wb") as err:
        proc = subprocess.Popen([*EGO, *args], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"ego {args[0]} exited with {proc.returncode}: {stderr.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    pytest.fail(f"ego {args[0]} did not start listening: {stderr.read_text()}")


def stop(proc: subprocess.Popen[bytes]) -> int:
    proc.terminate()
    try:
        return proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise


@attrs.frozen
class Both:
    mcp_url: str
    dashboard: str
    serve: subprocess.Popen[bytes]
    board: subprocess.Popen[bytes]
    data_dir: Path
    owner: str
    login: str


def printed(stderr: Path) -> tuple[str, str]:
    """The owner token and the login link's secret ``ego dashboard`` printed on its first start."""
    text = stderr.read_text()
    owner = re.search(r"(egoowner_[A-Za-z0-9_-]+)", text)
    link = re.search(r"#login=([A-Za-z0-9_-]+)", text)
    assert owner is not None, text
    assert link is not None, text
    return owner[1], link[1]


@pytest.fixture
def both(tmp_path: Path) -> Iterator[Both]:
    env = environment(tmp_path / "data")
    serve_port, board_port = free_port(), free_port()
    serve = start(["serve", "--http", "--port", str(serve_port)], env, serve_port, tmp_path / "serve.err")
    try:
        board = start(
            ["--agent", "claude", "dashboard", "--port", str(board_port)], env, board_port, tmp_path / "board.err"
        )
    except BaseException:
        stop(serve)
        raise
    try:
        owner, login = printed(tmp_path / "board.err")
        yield Both(
            f"http://127.0.0.1:{serve_port}/mcp",
            f"http://127.0.0.1:{board_port}",
            serve,
            board,
            tmp_path / "data",
            owner,
            login,
        )
    finally:
        for proc in (board, serve):
            if proc.poll() is None:
                stop(proc)


async def call(url: str, tool: str, args: dict[str, object]) -> str:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        result = await client.call_tool(tool, args)
        assert not result.is_error, tool_text(result)
        return tool_text(result)


@pytest.mark.anyio
async def test_the_dashboard_beside_a_running_server(both: Both) -> None:
    for content, emotion in PUBLIC[:3]:
        await call(both.mcp_url, "remember", {"content": content, "emotion": emotion})
    await call(both.mcp_url, "remember", {"content": PRIVATE[0][0], "emotion": "anxious", "private": True})
    async with httpx.AsyncClient(base_url=both.dashboard, timeout=120) as board:
        page = (await board.get("/")).text
        marker = '<meta name="ego-csrf" content="'
        csrf = page[page.index(marker) + len(marker) :].split('"', 1)[0]
        assert (await board.get("/api/memories")).status_code == 401
        bearer = {"Authorization": f"Bearer {TOKEN}"}  # the agent's own MCP token opens nothing here
        assert (await board.get("/api/memories", headers=bearer)).status_code == 401
        logged_in = await board.post("/api/login", json={"login": both.login}, headers={"X-Ego-Csrf": csrf})
        assert logged_in.status_code == 200, logged_in.text
        listed = (await board.get("/api/memories")).json()
        assert listed["total"] == 4
        found = (await board.get("/api/memories", params={"q": "river walk at dawn"})).json()["results"]
        assert found[0]["content"] == PUBLIC[0][0]
        assert PRIVATE[0][0][:12] not in page + str(listed)
        private = next(m for m in listed["results"] if m["private"])
        forgot = await board.post(f"/api/memories/{found[0]['id']}/forget", headers={"X-Ego-Csrf": csrf})
        assert forgot.status_code == 200, forgot.text
        # the agent keeps writing while the dashboard is open
        await call(both.mcp_url, "remember", {"content": PUBLIC[3][0], "emotion": PUBLIC[3][1]})
        listed = (await board.get("/api/memories")).json()
        assert listed["total"] == 4
        assert PUBLIC[3][0] in [m["content"] for m in listed["results"]]
        assert private["id"] in [m["id"] for m in listed["results"]]
    seen = await call(both.mcp_url, "search_memories", {"context": "river walk at dawn", "n_results": 10})
    assert found[0]["id"] not in seen
    both.board.send_signal(signal.SIGINT)  # Ctrl-C: the host stops (stores closed) before the process ends
    # 130 when the interrupt reaches ego, 0 when uvicorn's own handler takes it and shuts down gracefully first
    assert both.board.wait(timeout=60) in (0, 130)
    stop(both.serve)
    doctor = subprocess.run(
        [*EGO, "--agent", "claude", "doctor"],
        env=environment(both.data_dir),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    store = next(line for line in doctor.stdout.splitlines() if "memory: store" in line)
    assert store.startswith("[ok]"), doctor.stdout
    assert "4 memories" in store


def run_ego(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = environment(tmp_path / "data")
    env.pop("EGO_HTTP_TOKENS")
    return subprocess.run([*EGO, *args], env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["dashboard", "--allowed-host", "evil.example:80"], "--allowed-host"),
        (["dashboard", "--port", "0"], "--port must be from 1 to 65535"),
        (["dashboard", "--host", "no such host.invalid"], "--host"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    done = run_ego(tmp_path, *args)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert not (tmp_path / "data" / "memory").exists()  # nothing was opened
    assert not (tmp_path / "data" / "dashboard").exists()  # no owner token was made


def test_a_port_in_use_exits_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = run_ego(tmp_path, "dashboard", "--port", str(taken.getsockname()[1]))
    assert done.returncode == 2, done.stderr
    assert "cannot listen on 127.0.0.1" in done.stderr


GEMINI = "ego_gemini-dashboard-test-token-0123456789"


def two_agents(data_dir: Path) -> dict[str, str]:
    env = environment(data_dir)
    env.update(
        EGO_PLUGINS="self_model,dashboard", EGO_HTTP_TOKENS=f"claude={hash_token(TOKEN)},gemini={hash_token(GEMINI)}"
    )
    return env


@contextmanager
def logged_in(url: str, **body: str) -> Iterator[httpx.Client]:
    """A client of the dashboard at ``url`` that has asked to log in with ``body`` (refused or not)."""
    with httpx.Client(base_url=url, timeout=60, trust_env=False) as client:
        page = client.get("/").text
        marker = '<meta name="ego-csrf" content="'
        client.headers["X-Ego-Csrf"] = page[page.index(marker) + len(marker) :].split('"', 1)[0]
        client.post("/api/login", json=body)
        yield client


def test_each_agents_dashboard_has_its_own_owner_token(tmp_path: Path) -> None:
    """`ego --agent claude dashboard` and `ego --agent gemini dashboard`: each prints its space's owner token once;
    no agent's MCP token opens either; claude's owner token opens claude's only; `--new-owner-token` replaces it
    while the dashboard runs."""
    env = two_agents(tmp_path / "data")
    ports = {"claude": free_port(), "gemini": free_port()}
    boards = {}
    try:
        for agent, port in ports.items():
            err = tmp_path / f"{agent}.err"
            boards[agent] = start(["--agent", agent, "dashboard", "--port", str(port)], env, port, err)
        owners = {agent: printed(tmp_path / f"{agent}.err")[0] for agent in ports}
        urls = {agent: f"http://127.0.0.1:{port}" for agent, port in ports.items()}
        for agent in ports:
            stored = (tmp_path / "data" / "agents" / agent / "dashboard" / "owner-token.json").read_text()
            assert owners[agent] not in stored
        for url in urls.values():
            for token in (TOKEN, GEMINI):
                with logged_in(url, owner_token=token) as client:
                    assert client.get("/api/status").status_code == 401
                    assert client.get("/api/status", headers={"Authorization": f"Bearer {token}"}).status_code == 401
        with logged_in(urls["claude"], owner_token=owners["claude"]) as client:
            assert client.get("/api/status").status_code == 200
            rotated = subprocess.run(
                [*EGO, "--agent", "claude", "dashboard", "--new-owner-token"],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert rotated.returncode == 0, rotated.stderr
            new = rotated.stdout.strip()
            assert new.startswith("egoowner_")
            assert new != owners["claude"]
            assert client.get("/api/status").status_code == 401  # the session of the old token ended
        with logged_in(urls["claude"], owner_token=owners["claude"]) as client:
            assert client.get("/api/status").status_code == 401
        with logged_in(urls["claude"], owner_token=new) as client:
            assert client.get("/api/status").status_code == 200
        with logged_in(urls["gemini"], owner_token=new) as client:
            assert client.get("/api/status").status_code == 401
        with logged_in(urls["gemini"], owner_token=owners["gemini"]) as client:
            assert client.get("/api/status").status_code == 200
    finally:
        for proc in boards.values():
            if proc.poll() is None:
                stop(proc)


def test_a_damaged_owner_token_file_is_a_usage_error(tmp_path: Path) -> None:
    env = two_agents(tmp_path / "data")
    damaged = tmp_path / "data" / "agents" / "claude" / "dashboard" / "owner-token.json"
    damaged.parent.mkdir(parents=True)
    damaged.write_text("{not json", encoding="utf-8")
    done = subprocess.run(
        [*EGO, "--agent", "claude", "dashboard", "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "--new-owner-token" in done.stderr
    assert damaged.read_text(encoding="utf-8") == "{not json"  # never overwritten unasked
