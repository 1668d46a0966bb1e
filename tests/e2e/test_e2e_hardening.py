"""What a user gets when something is wrong: plugins that misbehave at import, a configuration a plugin
rejects at startup, secrets in failure reasons, and HTTP addresses ego cannot serve at."""

from __future__ import annotations

import json
import socket
import subprocess
from typing import TYPE_CHECKING

import pytest
from mcp import Client

from ego_core.mcp.http_transport import hash_token

if TYPE_CHECKING:
    from conftest import EgoWorld

pytestmark = pytest.mark.anyio

GOOD = """
from ego_core import Tool, hookimpl

@hookimpl
def register_tools(register):
    register(Tool(name="good_ping", description="Ping.", input_schema={"type": "object"}, handler=lambda a, c: "pong"))
"""

RAW_WRITER = """
import os
os.write(1, b"raw bytes straight to file descriptor 1\\n")
print("and a print, too")
from ego_core import Tool, hookimpl

@hookimpl
def register_tools(register):
    register(Tool(name="raw_ping", description="Ping.", input_schema={"type": "object"}, handler=lambda a, ctx: "ok"))
"""

EXITING = """
import sys
sys.exit(3)
"""

LEAKY = """
raise ImportError("could not reach https://example.test/v1?key=AIzaSyA-1234567890abcdefghijklmnopqrstu")
"""

STRICT = """
from ego_core import hookimpl
from ego_core.kernel.config import ConfigError

@hookimpl
def on_startup(ctx):
    raise ConfigError("plugins.t_strict.mode: expected one of fast, careful, got 'nope'")
"""

SECRET = "AIzaSyA-1234567890abcdefghijklmnopqrstu"


def test_bytes_written_to_fd_1_at_import_never_reach_the_protocol(world: EgoWorld) -> None:
    world.dist("egotest-good", "egotest_good", GOOD, ep_name="t_good")
    world.dist("egotest-raw", "egotest_raw", RAW_WRITER, ep_name="t_raw")
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
    done = subprocess.run(
        world.command("serve", "--plugins", "t_good,t_raw"),
        env=world.env(),
        input=json.dumps(initialize) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = done.stdout.splitlines()
    assert [json.loads(line)["id"] for line in lines] == [1], done.stdout
    assert "raw bytes straight to file descriptor 1" in done.stderr
    assert "and a print, too" in done.stderr


async def test_a_plugin_writing_to_fd_1_at_import_is_served(world: EgoWorld) -> None:
    world.dist("egotest-good", "egotest_good", GOOD, ep_name="t_good")
    world.dist("egotest-raw", "egotest_raw", RAW_WRITER, ep_name="t_raw")
    async with Client(world.stdio("--plugins", "t_good,t_raw")) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert {"good_ping", "raw_ping"} <= tools


def test_a_plugin_calling_sys_exit_at_import_is_isolated(world: EgoWorld) -> None:
    world.dist("egotest-good", "egotest_good", GOOD, ep_name="t_good")
    world.dist("egotest-exiting", "egotest_exiting", EXITING, ep_name="t_exiting")
    payload = world.plugins_json("--plugins", "t_good,t_exiting")
    states = {p["id"]: (p["state"], p["reason"]) for p in payload["plugins"]}
    assert states["t_good"] == ("enabled", "")
    assert states["t_exiting"][0] == "failed"
    assert "[load] import called sys.exit(3)" in states["t_exiting"][1]
    assert payload["tools"]["good_ping"] == "t_good"


def test_a_secret_in_a_failure_reason_is_masked_on_stdout(world: EgoWorld) -> None:
    world.dist("egotest-leaky", "egotest_leaky", LEAKY, ep_name="t_leaky")
    for args in (("plugins",), ("plugins", "--json"), ("doctor",)):
        done = world.run(*args, "--plugins", "t_leaky")
        assert "t_leaky" in done.stdout, args
        assert "ImportError" in done.stdout, args
        assert SECRET not in done.stdout + done.stderr, args
    assert SECRET not in world.log_text()


def test_a_configuration_a_plugin_rejects_at_startup_stops_serve(world: EgoWorld) -> None:
    world.dist("egotest-good", "egotest_good", GOOD, ep_name="t_good")
    world.dist("egotest-strict", "egotest_strict", STRICT, ep_name="t_strict")
    done = subprocess.run(
        world.command("serve", "--plugins", "t_good,t_strict"),
        env=world.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().endswith(
        "ego: error: invalid configuration: plugins.t_strict.mode: expected one of fast, careful, got 'nope'"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--path", "mcp"), "ego: error: --path: expected a URL path starting with /, got 'mcp'"),
        (("--host", "999.1.1.1"), "ego: error: --host: '999.1.1.1' is not an IP address or a resolvable host name"),
    ],
)
def test_an_http_address_ego_cannot_serve_at_is_a_usage_error(
    world: EgoWorld, options: tuple[str, ...], message: str
) -> None:
    tokens = f"a={hash_token('ego_test-token')}"
    done = world.run("serve", "--http", *options, *world.without_real_plugins(), EGO_HTTP_TOKENS=tokens)
    assert (done.returncode, done.stderr.strip().splitlines()[-1]) == (2, message)


def test_a_port_in_use_is_a_usage_error(world: EgoWorld) -> None:
    tokens = f"a={hash_token('ego_test-token')}"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = world.run("serve", "--http", "--port", str(port), *world.without_real_plugins(), EGO_HTTP_TOKENS=tokens)
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ego: error: cannot listen on 127.0.0.1:{port} (")
    assert "Traceback" not in done.stderr
