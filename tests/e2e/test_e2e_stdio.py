"""End to end over stdio: ``ego serve`` as a subprocess, driven by the MCP SDK client."""

from __future__ import annotations

import importlib.metadata
import json
import os
import select
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
from mcp import Client

from ego_core.testing import tool_text

if TYPE_CHECKING:
    from conftest import EgoWorld

EGO = [sys.executable, "-m", "ego_core.mcp.cli"]


@pytest.mark.anyio
async def test_stdio_initialize_list_tools_and_wake_up_with_zero_feature_plugins(world: EgoWorld) -> None:
    async with Client(world.stdio(*world.without_real_plugins())) as client:
        assert client.server_info.name == "ego"
        assert client.server_info.version == importlib.metadata.version("ego-core")
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"wake_up", "introspect", "attune"}
        assert tools["wake_up"].input_schema["type"] == "object"

        wake = await client.call_tool("wake_up", {})
        assert not wake.is_error
        data, _, scaffold = tool_text(wake).partition("\n\n---\n")
        assert data.startswith("Awake: ")
        assert "Nothing carried over yet" in data
        assert scaffold == "Start with introspect to organize your thoughts."

        intro = await client.call_tool("introspect", {})
        assert not intro.is_error
        assert tool_text(intro).startswith("Nothing to reflect on yet")

        wrong = await client.call_tool("wake_up", {"since": "yesterday"})
        assert wrong.is_error
        assert "unknown parameter `since`" in tool_text(wrong)
        assert "yesterday" not in tool_text(wrong)

    # the calls were logged as JSON lines under the data directory, nothing under ~/.ego
    calls = [r for r in world.log_records() if r.get("event") == "tool_call"]
    assert [(c["tool"], c["outcome"]) for c in calls] == [
        ("wake_up", "ok"),
        ("introspect", "ok"),
        ("wake_up", "invalid"),
    ]


@pytest.mark.anyio
async def test_stdio_serves_installed_plugins_through_entry_points(world: EgoWorld) -> None:
    world.dist(
        "egotest-echo",
        "egotest_echo",
        """
        from ego_core import Section, Tool, hookimpl


        @hookimpl
        def register_tools(register):
            register(Tool(name="echo", description="Echo.", input_schema={
                "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
                handler=lambda args, _ctx: "echo: " + args["text"]))

        @hookimpl
        def on_wake_up():
            return Section(key="echo", text="Echo is listening.")
        """,
        ep_name="t_echo",
    )
    async with Client(world.stdio("--plugins", "t_echo")) as client:
        assert {t.name for t in (await client.list_tools()).tools} == {"wake_up", "introspect", "attune", "echo"}
        echoed = await client.call_tool("echo", {"text": "hello there"})
        assert (echoed.is_error, tool_text(echoed)) == (False, "echo: hello there")
        wake = await client.call_tool("wake_up", {})
        assert "Echo is listening." in tool_text(wake)


NOISY = """
from ego_core import Tool, hookimpl

print("NOISE: import time")


@hookimpl
def on_startup():
    print("NOISE: startup")


@hookimpl
def register_tools(register):
    def handler(args, ctx):
        print("NOISE: in a tool")
        return "quiet result"

    register(Tool(name="noisy", description="Noisy.", input_schema={"type": "object"}, handler=handler))
"""


class RawStdio:
    """A JSON-RPC conversation with ``ego serve`` on raw pipes, to see every byte it writes to stdout."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.stdout = b""

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.stdout:
            ready, _, _ = select.select([fd], [], [], 60)
            assert ready, "ego serve did not answer"
            chunk = os.read(fd, 65536)
            assert chunk, "ego serve closed stdout"
            self.stdout += chunk
        line, _, self.stdout = self.stdout.partition(b"\n")
        reply: dict[str, Any] = json.loads(line)  # anything but JSON-RPC on stdout fails here
        return reply


def test_stdout_carries_only_the_protocol_even_when_a_plugin_prints(world: EgoWorld) -> None:
    world.dist("egotest-noisy", "egotest_noisy", NOISY, ep_name="t_noisy")
    stderr_path = world.root / "stderr.txt"
    with stderr_path.open("wb") as stderr:
        proc = subprocess.Popen(
            [*EGO, "serve", "--plugins", "t_noisy"],
            env=world.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
    try:
        rpc = RawStdio(proc)
        client_info = {"name": "raw", "version": "1"}
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client_info}
        rpc.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        assert rpc.reply()["result"]["serverInfo"]["name"] == "ego"
        rpc.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        rpc.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "noisy", "arguments": {}}})
        answer = rpc.reply()
        assert answer["id"] == 2
        assert answer["result"]["content"][0]["text"] == "quiet result"
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.close()  # end of the session: the server exits
        assert proc.wait(timeout=60) == 0
        rest = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (rpc.stdout + rest).strip() == b""
    assert b"NOISE: import time" in stderr_path.read_bytes()
