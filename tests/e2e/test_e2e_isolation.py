"""Plugin isolation end to end, with fake distributions.

A plugin whose import raises, one that implements an unknown hook and one whose ``on_wake_up`` raises are all
reported by ``ego plugins`` and in the JSON log, while the server keeps serving the good plugin's tools.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from mcp import Client

from ego_core.testing import tool_text

if TYPE_CHECKING:
    from conftest import EgoWorld

SELECTION = "t_good,t_broken_import,t_raising_wake,t_unknown_hook"

GOOD = """
from ego_core import Section, Tool, hookimpl

@hookimpl
def register_tools(register):
    register(Tool(name="good_ping", description="Ping.", input_schema={"type": "object"}, handler=lambda a, c: "pong"))

@hookimpl
def on_wake_up():
    return Section(key="good", text="Good is here.")
"""

BROKEN_IMPORT = """
import ego_core
raise ImportError("the optional dependency 'chromadb_nonexistent' is missing")
"""

RAISING_WAKE = """
from ego_core import Tool, hookimpl

@hookimpl
def register_tools(register):
    register(Tool(name="raiser_ping", description="Ping.", input_schema={"type": "object"}, handler=lambda a, c: "ok"))

@hookimpl
def on_wake_up():
    raise RuntimeError("wake exploded while reading state")
"""

UNKNOWN_HOOK = """
from ego_core import Tool, hookimpl

@hookimpl
def on_wakeup():  # a typo: not a hook ego knows
    return "never"

@hookimpl
def register_tools(register):
    register(Tool(name="typo_ping", description="Ping.", input_schema={"type": "object"}, handler=lambda a, ctx: "ok"))
"""


@pytest.fixture(scope="module")
def broken_world(make_world: Callable[[str], EgoWorld]) -> EgoWorld:
    world = make_world("isolation")
    world.dist("egotest-good", "egotest_good", GOOD, ep_name="t_good")
    world.dist("egotest-broken-import", "egotest_broken_import", BROKEN_IMPORT, ep_name="t_broken_import")
    world.dist("egotest-raising-wake", "egotest_raising_wake", RAISING_WAKE, ep_name="t_raising_wake")
    world.dist("egotest-unknown-hook", "egotest_unknown_hook", UNKNOWN_HOOK, ep_name="t_unknown_hook")
    return world


def plugin_states(payload: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {p["id"]: (p["state"], p["reason"]) for p in payload["plugins"]}


def failures(world: EgoWorld) -> list[tuple[str, str, str | None, str]]:
    return [
        (r["plugin"], r["stage"], r.get("hook"), r["reason"])
        for r in world.log_records()
        if r.get("event") == "plugin_failure"
    ]


def test_ego_plugins_reports_import_and_unknown_hook_failures(broken_world: EgoWorld) -> None:
    payload = broken_world.plugins_json("--plugins", SELECTION)
    states = plugin_states(payload)
    assert states["t_good"] == ("enabled", "")
    assert states["t_raising_wake"] == ("enabled", "")  # nothing has called on_wake_up in this process
    state, reason = states["t_broken_import"]
    assert state == "failed"
    assert "[load] import failed: ImportError: the optional dependency 'chromadb_nonexistent' is missing" in reason
    state, reason = states["t_unknown_hook"]
    assert state == "failed"
    assert "[validate] implements unknown hook 'on_wakeup'" in reason
    assert payload["tools"] == {
        "attune": "core",
        "introspect": "core",
        "wake_up": "core",
        "good_ping": "t_good",
        "raiser_ping": "t_raising_wake",
    }

    text = broken_world.run("plugins", "--plugins", SELECTION)
    assert text.returncode == 0
    assert re.search(r"^\s+t_broken_import\s+failed\s+egotest-broken-import 0\.1\.0$", text.stdout, re.MULTILINE)
    assert "why: [load] import failed: ImportError" in text.stdout
    assert "why: [validate] implements unknown hook 'on_wakeup'" in text.stdout

    logged = failures(broken_world)
    assert any(p == "t_broken_import" and stage == "load" and "ImportError" in why for p, stage, _, why in logged)
    assert any(p == "t_unknown_hook" and stage == "validate" and "on_wakeup" in why for p, stage, _, why in logged)


@pytest.mark.anyio
async def test_the_server_keeps_serving_and_logs_the_raising_hook(broken_world: EgoWorld) -> None:
    async with Client(broken_world.stdio("--plugins", SELECTION)) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert tools == {"wake_up", "introspect", "attune", "good_ping", "raiser_ping"}
        for _ in range(2):  # the failure does not stop later calls
            wake = await client.call_tool("wake_up", {})
            assert not wake.is_error
            assert "Good is here." in tool_text(wake)
            assert "exploded" not in tool_text(wake)
            ping = await client.call_tool("good_ping", {})
            assert (ping.is_error, tool_text(ping)) == (False, "pong")
        assert tool_text(await client.call_tool("raiser_ping", {})) == "ok"  # its other parts still work

    wake_failures = [f for f in failures(broken_world) if f[0] == "t_raising_wake"]
    assert wake_failures
    assert all(stage == "call" and hook == "on_wake_up" for _, stage, hook, _ in wake_failures)
    assert "RuntimeError: wake exploded while reading state" in wake_failures[0][3]
    # the traceback is in the log too, for whoever debugs the plugin
    errors = [r for r in broken_world.log_records() if r.get("msg") == "plugin t_raising_wake raised in on_wake_up"]
    assert errors
    assert "RuntimeError: wake exploded" in errors[0]["exc"]

    # a later `ego plugins` (another process) shows the failure it found in the log
    text = broken_world.run("plugins", "--plugins", SELECTION)
    assert text.returncode == 0
    _, _, recent = text.stdout.partition("recent failures in the log (other processes):\n")
    assert re.search(r"t_raising_wake \[call:on_wake_up\] raised RuntimeError: wake exploded", recent)

    payload = json.loads(broken_world.run("plugins", "--json", "--plugins", SELECTION).stdout)
    recent_json = [(f["plugin"], f["stage"], f["hook"]) for f in payload["recent_failures"]]
    assert ("t_raising_wake", "call", "on_wake_up") in recent_json
