"""The owner is not an agent: the dashboard opens only with its own space's owner credential (a login link printed
once, or the owner token stored hashed in the space), never with an agent's MCP token; the Host header must name
the server exactly; and a search does not confirm a guess of a private memory's text. Over real HTTP (uvicorn on
an ephemeral port) with two agents' spaces, claude's and gemini's."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
from dashboard_support import LOGIN, PRIVATE, Seeded, build_seeded, call, serve
from hypothesis import given
from hypothesis import strategies as st

from ego_core import Settings
from ego_core.kernel.config import ServerConfig
from ego_core.mcp.agents import agent_settings
from ego_core.testing import HostFactory, configure_logging, hash_token, read_log
from ego_dashboard.app import Guard, Sessions, build_app
from ego_dashboard.owner import OwnerKey, issue_owner_token, owner_path, read_record
from ego_self_model import SelfModelPlugin

CLAUDE_TOKEN = "ego_claude-mcp-token-0123456789abcdef"
GEMINI_TOKEN = "ego_gemini-mcp-token-0123456789abcdef"
PIN_TEXT = "The bank card PIN is 4721, never tell anyone"
PIN_JA = "銀行カードの暗証番号は4721、誰にも教えない"


@attrs.frozen
class Running:
    url: str
    port: int
    server: Any

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60, trust_env=False)


@pytest.fixture
def base_settings(tmp_path: Path) -> Settings:
    tokens = {"claude": hash_token(CLAUDE_TOKEN), "gemini": hash_token(GEMINI_TOKEN)}
    return Settings(data_dir=tmp_path / "ego-data", timezone="UTC", server=ServerConfig(tokens=tokens))


def running(app: Any) -> Iterator[Running]:
    server, thread, url = serve(app)
    try:
        yield Running(url, int(url.rsplit(":", 1)[1].rstrip("/")), server)
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture
def claude(make_host: HostFactory, base_settings: Settings) -> Seeded:
    seeded = build_seeded(make_host, settings=agent_settings(base_settings, "claude"))
    for text in (PIN_TEXT, PIN_JA):
        call(seeded.host, "remember", {"content": text, "emotion": "anxious", "private": True, "force": True})
    return seeded


@pytest.fixture
def claude_board(claude: Seeded) -> Iterator[Running]:
    yield from running(build_app(claude.host, login_secret=LOGIN, reveal_private=False))


@pytest.fixture
def gemini_board(make_host: HostFactory, base_settings: Settings) -> Iterator[Running]:
    host = make_host({"self_model": SelfModelPlugin()}, settings=agent_settings(base_settings, "gemini"))
    yield from running(build_app(host))


def csrf(client: httpx.Client) -> str:
    page = client.get("/").text
    marker = '<meta name="ego-csrf" content="'
    return page[page.index(marker) + len(marker) :].split('"', 1)[0]


def log_in(client: httpx.Client, **body: str) -> httpx.Response:
    return client.post("/api/login", json=body, headers={"X-Ego-Csrf": csrf(client)})


def test_no_agent_token_opens_a_dashboard(claude: Seeded, claude_board: Running) -> None:
    """gemini's token (and claude's own) are refused by claude's dashboard: no read, no owner-tier correction."""
    target = claude.private_ids[0]
    with claude_board.client() as client:
        token = csrf(client)
        for agent_token in (GEMINI_TOKEN, CLAUDE_TOKEN):
            bearer = {"Authorization": f"Bearer {agent_token}", "X-Ego-Csrf": token}
            made_public = client.post(f"/api/memories/{target}/revise", json={"private": False}, headers=bearer)
            assert made_public.status_code == 401, made_public.text
            assert "owner token" in made_public.json()["error"]
            for path in ("/api/memories", f"/api/memories/{target}", "/api/status", "/api/logs"):
                assert client.get(path, headers=bearer).status_code == 401, path
            kept = client.post(
                "/api/merge-candidates/keep", json={"a": target, "b": claude.public_ids[0]}, headers=bearer
            )
            assert kept.status_code == 401
            assert log_in(client, owner_token=agent_token).status_code == 401
    memories = claude.host.services.get("memory.store")
    assert memories is not None
    assert memories.get([target])[0].is_private


def test_the_owner_token_opens_its_own_space_only(
    claude: Seeded, claude_board: Running, gemini_board: Running, base_settings: Settings
) -> None:
    owner = issue_owner_token(claude.host.settings.data_dir)
    assert claude.host.settings.data_dir == base_settings.data_dir / "agents" / "claude"
    with claude_board.client() as client:
        assert client.get("/api/now").status_code == 401
        assert log_in(client, owner_token=owner).status_code == 200
        assert client.get("/api/now").json()["memory"]["count"] == len(claude.public_ids) + len(claude.private_ids) + 2
        done = client.post(
            f"/api/memories/{claude.public_ids[0]}/revise", json={"importance": 5}, headers={"X-Ego-Csrf": csrf(client)}
        )
        assert done.status_code == 200, done.text
        bearer = {"Authorization": f"Bearer {owner}"}
        assert client.get("/api/status", headers=bearer).status_code == 200
    with gemini_board.client() as client:
        assert log_in(client, owner_token=owner).status_code == 401
        assert client.get("/api/status", headers={"Authorization": f"Bearer {owner}"}).status_code == 401
        assert client.get("/api/status").status_code == 401
        gemini_owner = issue_owner_token(base_settings.data_dir / "agents" / "gemini")
        assert log_in(client, owner_token=gemini_owner).status_code == 200
        assert client.get("/api/status").status_code == 200
    with claude_board.client() as client:
        assert log_in(client, owner_token=gemini_owner).status_code == 401


def test_the_owner_token_is_stored_hashed_private_and_replaced_atomically(tmp_path: Path) -> None:
    space = tmp_path / "agents" / "claude"
    first = issue_owner_token(space)
    path = owner_path(space)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text(encoding="utf-8")
    assert first not in text
    record = read_record(path)
    assert record is not None
    assert record.digest == hashlib.sha256(first.encode()).hexdigest()
    key = OwnerKey(path)
    assert key.verify(first)
    second = issue_owner_token(space)
    assert second != first
    assert key.verify(second)
    assert not key.verify(first)  # the file is reread when it changes
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no temporary file left behind
    path.write_text("{not json", encoding="utf-8")
    assert not key.verify(second)  # a damaged file accepts nothing
    assert not OwnerKey(tmp_path / "nowhere.json").verify(second)


def test_a_new_owner_token_ends_the_sessions_opened_before(claude: Seeded, claude_board: Running) -> None:
    owner = issue_owner_token(claude.host.settings.data_dir)
    with claude_board.client() as client:
        assert log_in(client, owner_token=owner).status_code == 200
        assert client.get("/api/status").status_code == 200
        issue_owner_token(claude.host.settings.data_dir)  # as `ego dashboard --new-owner-token` does
        assert client.get("/api/status").status_code == 401
        assert log_in(client, owner_token=owner).status_code == 401


def test_the_login_link_is_single_use(claude_board: Running) -> None:
    with claude_board.client() as first, claude_board.client() as second:
        assert log_in(first, login=LOGIN).status_code == 200
        assert first.get("/api/status").status_code == 200
        cookie = next(iter(first.cookies.jar))
        assert cookie.name == f"ego_owner_{claude_board.port}"
        assert cookie.has_nonstandard_attr("HttpOnly")
        assert log_in(second, login=LOGIN).status_code == 401
        assert second.get("/api/status").status_code == 401
        for body in ({}, {"login": LOGIN, "owner_token": "x"}, {"login": 7}):
            bad = second.post("/api/login", json=body, headers={"X-Ego-Csrf": csrf(second)})
            assert bad.status_code == 400
            assert bad.json()["error"]
        assert second.post("/api/login", json={"login": LOGIN}).status_code == 403  # no CSRF token
        out = first.post("/api/logout", headers={"X-Ego-Csrf": csrf(first)})
        assert out.status_code == 200
        assert first.get("/api/status").status_code == 401


def raw(port: int, *hosts: str, path: str = "/") -> tuple[int, bytes]:
    """One request on a plain socket with exactly these Host headers (none, one or several)."""
    lines = [f"GET {path} HTTP/1.1", *(f"Host: {h}" for h in hosts), "Connection: close", "", ""]
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall("\r\n".join(lines).encode("latin-1"))
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def test_the_host_header_must_name_this_server_exactly(make_host: HostFactory) -> None:
    for board in running(build_app(make_host({}), allowed_hosts=["ego-box.example"])):
        port = board.port
        for good in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"ego-box.example:{port}"):
            assert raw(port, good)[0] == 200, good
        for bad in (
            (f"127.0.0.1:{port}@evil.com",),
            ("127.0.0.1:x@evil.com",),
            (f"localhost:{port}.evil.com",),
            (f"localhost:{port}/evil",),
            (f"user@localhost:{port}",),
            ("evil.com",),
            (f"evil.com:{port}",),
            (f"localhost:{port + 1}",),
            ("127.0.0.1",),
            (f"127.0.0.1:0{port}",),
            (f"127.0.0.1:{port}", f"127.0.0.1:{port}"),
            (f"127.0.0.1:{port}", "evil.com"),
            (),
        ):
            status, body = raw(port, *bad)
            assert status == 421, bad
            assert "Host" in json.loads(body)["error"]
        assert raw(port, f"localhost:{port}.evil.com", path="/api/login")[0] == 421


async def never_called(scope: Any, receive: Any, send: Any) -> None:
    raise AssertionError("only the Host check is tested")


@given(
    value=st.one_of(st.text(max_size=40), st.sampled_from(["localhost", "127.0.0.1", "[::1]", "ego.lan"])).map(
        lambda v: v if ":" in v else f"{v}:8766"
    )
)
def test_property_a_host_is_accepted_exactly_when_it_names_a_served_name_and_port(value: str) -> None:
    guard = Guard(
        never_called,  # only the Host check runs
        names=frozenset({"localhost", "127.0.0.1", "[::1]", "ego.lan"}),
        port=None,
        key=OwnerKey(Path(os.devnull)),
        sessions=Sessions(OwnerKey(Path(os.devnull)), None),
        csrf="x",
    )
    scope = {"server": ("127.0.0.1", 8766)}
    allowed = {f"{name}:8766" for name in ("localhost", "127.0.0.1", "[::1]", "ego.lan")}
    assert guard.host_ok(scope, [value]) == (value.lower() in allowed)
    assert not guard.host_ok(scope, [value, value])


def searched(client: httpx.Client, **params: str) -> dict[str, Any]:
    answer = client.get("/api/memories", params={"limit": "50", **params})
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_a_search_does_not_confirm_a_guess_of_private_text(claude: Seeded, claude_board: Running) -> None:
    owner = issue_owner_token(claude.host.settings.data_dir)
    with claude_board.client() as client:
        assert log_in(client, owner_token=owner).status_code == 200
        private = {m["id"] for m in searched(client, private="only")["results"]}
        for right, wrong in (("4721", "4720"), ("PIN 4721", "PIN 4720"), ("暗証番号は4721", "暗証番号は4720")):
            hit, miss = searched(client, q=right), searched(client, q=wrong)
            assert hit == miss, right
            assert not {m["id"] for m in hit["results"]} & private
        for words in ("secret worry sonnet manuscript", PRIVATE[1][0], "Keiko"):
            assert not {m["id"] for m in searched(client, q=words)["results"]} & private
        refused = client.get("/api/memories", params={"q": "4721", "private_text": "1"})
        assert refused.status_code == 403
        assert "--reveal-private" in refused.json()["error"]
        assert client.get("/api/memories", params={"q": "4721", "private_text": "maybe"}).status_code == 400


def test_private_memories_are_found_by_their_metadata(claude: Seeded, claude_board: Running) -> None:
    target = claude.private_ids[0]
    owner = issue_owner_token(claude.host.settings.data_dir)
    with claude_board.client() as client:
        assert log_in(client, owner_token=owner).status_code == 200
        headers = {"X-Ego-Csrf": csrf(client)}
        tagged = client.post(f"/api/memories/{target}/revise", json={"tags": ["銀行", "bank"]}, headers=headers)
        assert tagged.status_code == 200, tagged.text
        memories = claude.host.services.get("memory.store")
        assert memories is not None
        [memory] = memories.get([target])
        day = memory.timestamp.date().isoformat()
        for words in ("銀行", "BANK", f"bank {day}", memory.emotional_trace.primary):
            found = {m["id"]: m for m in searched(client, q=words)["results"]}
            assert target in found, words
            assert found[target]["matched_by"] == "metadata"
            assert found[target]["content"] is None
            assert found[target]["score"] is None
        assert target not in {m["id"] for m in searched(client, q="bank 1999-01-01")["results"]}
        assert target not in {m["id"] for m in searched(client, q="bank", private="hide")["results"]}


def test_the_owner_may_search_private_text_and_it_is_logged(make_host: HostFactory, base_settings: Settings) -> None:
    seeded = build_seeded(make_host, settings=agent_settings(base_settings, "claude"))
    call(seeded.host, "remember", {"content": PIN_TEXT, "emotion": "anxious", "private": True, "force": True})
    owner = issue_owner_token(seeded.host.settings.data_dir)
    configure_logging(seeded.host.settings.logs_path)
    for board in running(build_app(seeded.host, reveal_private=True)):
        with board.client() as client:
            assert log_in(client, owner_token=owner).status_code == 200
            assert client.get("/api/status").json()["reveal_private"] is True
            found = searched(client, q="bank card PIN 4721", private_text="1")["results"]
            assert found[0]["private"] is True
            assert found[0]["content"] is None  # matched, never shown: the Reveal button shows it
            assert "4721" not in json.dumps(found)
    records = read_log(seeded.host)
    searches = [r for r in records if r.get("event") == "dashboard_private_search"]
    assert [r["private_results"] for r in searches] == [1]
    ours = [r for r in records if str(r.get("logger", "")).startswith("ego")]  # not the test client's own log
    leaked = [r for r in ours if "4721" in json.dumps(r, ensure_ascii=False)]
    assert not leaked, leaked
    assert [r["how"] for r in records if r.get("event") == "dashboard_login"] == ["owner_token"]
