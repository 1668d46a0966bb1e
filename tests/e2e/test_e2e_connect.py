"""End to end: ``ego connect`` bridges stdio MCP clients to one running ``ego serve --http``.

Real processes throughout: the server, one ``ego connect`` per client, each driven by the MCP SDK's stdio client.
What one client does through its bridge the other sees at once (one server, one state); prompts, resources,
completion, progress and errors pass through unchanged; a server that is not running, a wrong token and a server
killed mid-session each give a clear answer naming the URL, never a hang.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from e2e_support import free_port, serving_http
from mcp import Client, MCPError, StdioServerParameters, stdio_client
from mcp.shared import inbound
from test_e2e_mcp_surface import exercise, install_almanac

from ego_core.mcp import bridge
from ego_core.testing import tool_text

if TYPE_CHECKING:
    from conftest import EgoWorld

pytestmark = pytest.mark.anyio

TOKEN = "ego_shared-agent-token-0123456789abcdef"
OTHER_TOKEN = "ego_other-agent-token-fedcba9876543210"


def connect_params(world: EgoWorld, url: str, token: str | None, *options: str) -> StdioServerParameters:
    """``ego connect URL`` as a client's config starts it: the token in ``EGO_TOKEN``, nothing else of ego's."""
    env = {"PYTHONPATH": world.env()["PYTHONPATH"]}
    if token is not None:
        env["EGO_TOKEN"] = token
    return StdioServerParameters(
        command=sys.executable, args=["-m", "ego_core.mcp.cli", "connect", url, *options], env=env
    )


@contextlib.asynccontextmanager
async def connected(
    world: EgoWorld, url: str, token: str | None, errlog: Path, mode: str = "auto"
) -> AsyncIterator[Any]:
    with errlog.open("a", encoding="utf-8") as err:
        async with Client(stdio_client(connect_params(world, url, token), errlog=err), mode=mode) as client:
            yield client


def mcp_error(exc: BaseException) -> MCPError:
    """The MCPError inside what the client raised (it may come wrapped in an exception group)."""
    if isinstance(exc, MCPError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            with contextlib.suppress(AssertionError):
                return mcp_error(inner)
    raise AssertionError(f"no MCPError in {exc!r}")


@pytest.fixture(scope="module")
def almanac_server(make_world: Callable[[str], EgoWorld]) -> Iterator[tuple[str, EgoWorld]]:
    world = make_world("connect")
    install_almanac(world)
    with serving_http(world, {"claude": TOKEN, "other": OTHER_TOKEN}) as (url, _proc, _stderr):
        yield url, world


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_prompts_resources_completion_progress_and_errors_pass_through(
    almanac_server: tuple[str, EgoWorld], tmp_path: Path, mode: str
) -> None:
    url, world = almanac_server
    async with connected(world, url, TOKEN, tmp_path / "bridge.err", mode) as client:
        assert client.server_info.name == "ego"
        await exercise(client)
        unknown = await client.call_tool("no_such_tool", {})
        assert unknown.is_error
        assert tool_text(unknown).startswith("Unknown tool: no_such_tool.")
    assert TOKEN not in (tmp_path / "bridge.err").read_text(encoding="utf-8")


async def test_what_one_client_writes_the_other_reads_at_once(
    almanac_server: tuple[str, EgoWorld], tmp_path: Path
) -> None:
    url, world = almanac_server
    async with (
        connected(world, url, TOKEN, tmp_path / "desktop.err") as desktop,
        connected(world, url, TOKEN, tmp_path / "openclaw.err", "legacy") as openclaw,
    ):
        assert tool_text(await desktop.call_tool("note", {"text": "マスターと餃子を作った"})) == "noted"
        read = (await openclaw.read_resource("almanac://note")).contents[0]
        assert read.text == "マスターと餃子を作った"
        assert tool_text(await openclaw.call_tool("note", {"text": "tea with Aiko"})) == "noted"
        assert (await desktop.read_resource("almanac://note")).contents[0].text == "tea with Aiko"
    async with connected(world, url, OTHER_TOKEN, tmp_path / "other.err") as other:  # another agent: its own space
        assert (await other.read_resource("almanac://note")).contents[0].text == "no note"


async def test_a_server_that_is_not_running_is_named_with_what_to_do(world: EgoWorld, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with pytest.raises(BaseException) as raised:  # noqa: PT011 (the client wraps it in an exception group)
        async with connected(world, url, TOKEN, tmp_path / "bridge.err"):
            pass
    message = mcp_error(raised.value).error.message
    assert f"the ego server at {url} is not running or not reachable" in message
    assert "Start it with `ego serve --http`" in message
    assert "is not running or not reachable" in (tmp_path / "bridge.err").read_text(encoding="utf-8")


async def test_a_wrong_token_is_refused_with_what_to_do(almanac_server: tuple[str, EgoWorld], tmp_path: Path) -> None:
    url, world = almanac_server
    with pytest.raises(BaseException) as raised:  # noqa: PT011
        async with connected(world, url, "ego_not-the-token-000000000000", tmp_path / "bridge.err"):
            pass
    message = mcp_error(raised.value).error.message
    assert f"the ego server at {url} refused this agent's token (HTTP 401)" in message
    assert "EGO_TOKEN" in message
    assert "ego_not-the-token" not in (tmp_path / "bridge.err").read_text(encoding="utf-8")


async def test_a_server_killed_mid_session_gives_both_clients_an_error_result(world: EgoWorld, tmp_path: Path) -> None:
    install_almanac(world)
    with serving_http(world, {"claude": TOKEN}) as (url, proc, _stderr):
        async with (
            connected(world, url, TOKEN, tmp_path / "a.err") as first,
            connected(world, url, TOKEN, tmp_path / "b.err", "legacy") as second,
        ):
            assert tool_text(await first.call_tool("note", {"text": "before"})) == "noted"
            proc.kill()
            proc.wait()
            for client in (first, second):
                result = await client.call_tool("note", {"text": "after"})
                assert result.is_error
                text = tool_text(result)
                assert f"the ego server at {url} is not running or not reachable" in text
                assert "Start it with `ego serve --http`" in text
            with pytest.raises(MCPError) as listing:  # any other request: a JSON-RPC error saying the same
                await second.list_prompts()
            assert url in listing.value.error.message


def test_connect_without_a_token_or_with_a_bad_url_exits_2(world: EgoWorld) -> None:
    env = {k: v for k, v in world.env().items() if k != "EGO_TOKEN"}
    done = subprocess.run(
        [*world.command("connect", "http://127.0.0.1:1/mcp")],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "ego connect needs this agent's token: --token TOKEN or EGO_TOKEN" in done.stderr
    bad = subprocess.run(
        [*world.command("connect", "127.0.0.1:8765", "--token", "x")],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2
    assert "the URL must be the server's MCP endpoint, e.g. http://127.0.0.1:8765/mcp" in bad.stderr


def test_the_bridge_loads_no_plugin(world: EgoWorld) -> None:
    """The bridge imports the HTTP client and the core's light modules only: no plugin, no MCP server."""
    probe = (
        "import sys; from ego_core.mcp.cli import main; "
        "sys.argv = ['ego', 'connect', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('ego_memory', 'ego_self_model', 'chromadb', "
        "'mcp.server', 'uvicorn')))\n"
        "print('LOADED', loaded, file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env=world.env(), capture_output=True, text=True, timeout=60, check=False
    )
    assert "LOADED []" in done.stderr, done.stderr


def test_the_bridge_speaks_the_transports_header_names() -> None:
    assert bridge.VERSION_HEADER == inbound.MCP_PROTOCOL_VERSION_HEADER
    assert bridge.METHOD_HEADER == inbound.MCP_METHOD_HEADER
    assert bridge.NAME_HEADER == inbound.MCP_NAME_HEADER
    assert bridge.PARAM_HEADER_PREFIX == inbound.MCP_PARAM_HEADER_PREFIX
    assert dict(bridge.NAME_BEARING) == dict(inbound.NAME_BEARING_METHODS)
    for value in ("plain", "マスター", " padded ", "=?base64?x?=", "tab\there"):
        assert bridge.header_value(value) == inbound.encode_header_value(value)
    schema = {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "deep": {"properties": {}}},
    }
    assert dict(bridge.declared_headers(schema)) == inbound.x_mcp_header_map(schema)
