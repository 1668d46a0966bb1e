"""End to end over streamable HTTP with per-agent bearer tokens."""

from __future__ import annotations

import importlib.metadata
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import httpx
import httpx2
import pytest
from e2e_support import free_port, serving_http
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ego_core.mcp.http_transport import hash_token
from ego_core.testing import tool_text

if TYPE_CHECKING:
    from conftest import EgoWorld

CLAUDE_TOKEN = "ego_claude-test-token-0123456789abcdef"
OPENCLAW_TOKEN = "ego_openclaw-test-token-fedcba9876543210"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@attrs.frozen
class HttpServer:
    url: str
    proc: subprocess.Popen[bytes]
    world: EgoWorld
    stderr: Path


@pytest.fixture(scope="module")
def http_server(make_world: Callable[[str], EgoWorld]) -> Iterator[HttpServer]:
    world = make_world("http")
    with serving_http(world, {"claude": CLAUDE_TOKEN, "openclaw": OPENCLAW_TOKEN}) as (url, proc, stderr):
        yield HttpServer(url=url, proc=proc, world=world, stderr=stderr)


@pytest.mark.anyio
async def test_http_with_a_valid_token_initializes_lists_and_wakes_up(http_server: HttpServer) -> None:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {CLAUDE_TOKEN}"}) as http,
        Client(streamable_http_client(http_server.url, http_client=http)) as client,
    ):
        assert client.server_info.name == "ego"
        assert client.server_info.version == importlib.metadata.version("ego-core")
        assert {t.name for t in (await client.list_tools()).tools} == {"wake_up", "introspect", "attune"}
        wake = await client.call_tool("wake_up", {})
        assert not wake.is_error
        assert tool_text(wake).startswith("Awake: ")
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {OPENCLAW_TOKEN}"}) as http,
        Client(streamable_http_client(http_server.url, http_client=http)) as client,
    ):
        assert not (await client.call_tool("introspect", {})).is_error

    calls = [r for r in http_server.world.log_records() if r.get("event") == "tool_call"]
    assert [(c["tool"], c["agent"]) for c in calls][-2:] == [("wake_up", "claude"), ("introspect", "openclaw")]
    log = http_server.world.log_text()
    assert CLAUDE_TOKEN not in log
    assert OPENCLAW_TOKEN not in log


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong-token-123456"},
        {"Authorization": f"Bearer {CLAUDE_TOKEN}x"},
        {"Authorization": f"Basic {CLAUDE_TOKEN}"},
        {"Authorization": hash_token(CLAUDE_TOKEN)},
    ],
    ids=["no-token", "wrong-token", "token-plus-one", "basic-scheme", "the-hash-itself"],
)
def test_http_without_a_valid_token_gets_401(http_server: HttpServer, headers: dict[str, str]) -> None:
    response = httpx.post(http_server.url, json=INITIALIZE, headers={**HEADERS, **headers}, timeout=30)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert "serverInfo" not in response.text


def test_http_valid_token_on_a_raw_request(http_server: HttpServer) -> None:
    response = httpx.post(
        http_server.url, json=INITIALIZE, headers={**HEADERS, "Authorization": f"Bearer {CLAUDE_TOKEN}"}, timeout=30
    )
    assert response.status_code == 200
    assert '"serverInfo"' in response.text


def test_http_errors_have_json_bodies(http_server: HttpServer) -> None:
    base = http_server.url.rsplit("/", 1)[0]
    missing = httpx.get(base + "/no-such-path", timeout=30)
    assert (missing.status_code, missing.json()) == (404, {"error": "Not Found"})
    # a stateless server offers no event stream: GET is refused at once instead of hanging
    stream = httpx.get(http_server.url, headers={"Authorization": f"Bearer {CLAUDE_TOKEN}"}, timeout=30)
    assert stream.status_code == 405
    assert stream.headers["allow"] == "POST"
    assert "POST" in stream.json()["error"]
    wrong_host = httpx.post(
        http_server.url,
        json=INITIALIZE,
        headers={**HEADERS, "Authorization": f"Bearer {CLAUDE_TOKEN}", "Host": "attacker.example"},
        timeout=30,
    )
    assert (wrong_host.status_code, wrong_host.json()) == (421, {"error": "Invalid Host header"})
    unauthorized = httpx.post(http_server.url, json=INITIALIZE, headers=HEADERS, timeout=30)
    assert unauthorized.status_code == 401
    assert unauthorized.json()["error"] == "invalid_token"


def test_http_without_configured_tokens_exits_2_pointing_at_token_new(world: EgoWorld) -> None:
    done = world.run(
        "serve", "--http", "--host", "127.0.0.1", "--port", str(free_port()), *world.without_real_plugins()
    )
    assert done.returncode == 2
    assert "ego token new" in done.stderr
    assert done.stdout == ""


def test_http_advertises_no_authorization_server_and_documents_the_bearer_scheme(http_server: HttpServer) -> None:
    """A new user found: the protected-resource metadata named `http://127.0.0.1:8765/` as an authorization server
    while `/.well-known/oauth-authorization-server` was 404. Only what exists is advertised: the resource, its
    scope and the bearer header (tokens come from `ego token new`, not from OAuth)."""
    base = http_server.url.rsplit("/", 1)[0]
    metadata = httpx.get(base + "/.well-known/oauth-protected-resource/mcp", timeout=30)
    assert metadata.status_code == 200
    assert metadata.json() == {
        "resource": http_server.url,
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["ego"],
        "resource_name": "ego",
    }
    for advertised in metadata.json().get("authorization_servers", []):  # none: nothing to fetch
        pytest.fail(f"advertises an authorization server: {advertised}")
    assert httpx.get(base + "/.well-known/oauth-authorization-server", timeout=30).status_code == 404
    refused = httpx.post(http_server.url, json=INITIALIZE, headers=HEADERS, timeout=30)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer ")
    assert "resource_metadata" not in refused.headers["www-authenticate"]


@pytest.mark.parametrize(
    ("body", "code", "request_id", "named"),
    [
        (b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"x"}', -32600, 3, "`params` must be an object"),
        (b'{"jsonrpc":"1.0","id":4,"method":"ping"}', -32600, 4, '`jsonrpc` must be "2.0"'),
        (b'{"jsonrpc":"2.0","id":5}', -32600, 5, "a request needs a `method` (a string)"),
        (b'[{"jsonrpc":"2.0","id":6,"method":"ping"}]', -32600, None, "the body must be one JSON-RPC message"),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600, None, "`id` must be a string or an integer"),
        (b'{"jsonrpc":"2.0","id":7,"method":"ping"', -32700, 7, "the body is not valid JSON"),
        (b'{"jsonrpc":"2.0","id":8,"method":"caf\xe9"}', -32700, 8, "the body is not valid UTF-8"),
    ],
    ids=["params-string", "jsonrpc-1.0", "no-method", "batch", "object-id", "truncated", "latin-1"],
)
def test_a_bad_http_body_gets_one_short_message_naming_the_problem(
    http_server: HttpServer, body: bytes, code: int, request_id: int | None, named: str
) -> None:
    """A new user found: a bad body got pydantic's report (11 union-branch errors with links to its site); now one
    JSON-RPC error naming the problem (never the value), under the request's id when it is known."""
    response = httpx.post(
        http_server.url, content=body, headers={**HEADERS, "Authorization": f"Bearer {CLAUDE_TOKEN}"}, timeout=30
    )
    assert response.status_code == 400
    answer = response.json()
    assert answer["id"] == request_id
    assert answer["error"]["code"] == code
    assert named in answer["error"]["message"]
    assert len(answer["error"]["message"]) < 160
    assert "pydantic" not in response.text
    assert "http" not in answer["error"]["message"]
    assert "caf" not in response.text
