"""The plugin as a user gets it: discovered through the installed ``ego`` entry point of ``ego-hello``.

Needs ``pip install -e docs/examples/ego-hello`` (the tox environment does it). Every ``ego`` child runs with
a temporary ``EGO_DATA_DIR``, no inherited ``EGO_*`` variable, and ``--plugins hello``.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from ego_core.testing import tool_text

EGO = [sys.executable, "-m", "ego_core.mcp.cli"]


def child_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
    env["EGO_DATA_DIR"] = str(data_dir)
    env.update(extra)
    return env


def ego(data_dir: Path, *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EGO, *args], env=child_env(data_dir, **extra_env), capture_output=True, text=True, timeout=120, check=False
    )


def test_entry_point_is_installed() -> None:
    found = [ep for ep in importlib.metadata.entry_points(group="ego") if ep.name == "hello"]
    assert found, "ego-hello is not installed: pip install -e docs/examples/ego-hello"
    (entry_point,) = found
    assert entry_point.value == "ego_hello:HelloPlugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "ego-hello"


def test_ego_plugins_shows_hello_from_its_distribution(tmp_path: Path) -> None:
    done = ego(tmp_path, "plugins", "--json", "--plugins", "hello")
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    hello = {p["id"]: p for p in report["plugins"]}["hello"]
    assert hello["distribution"] == "ego-hello"
    assert hello["state"] == "enabled", hello["reason"]
    assert {"register_tools", "register_redactors", "on_wake_up", "scaffold_for"} <= set(hello["hooks"])
    assert report["tools"]["leave_note"] == "hello"


def test_bad_environment_value_is_a_usage_error(tmp_path: Path) -> None:
    done = ego(tmp_path, "plugins", "--plugins", "hello", EGO_HELLO_MAX_NOTES="lots")
    assert done.returncode == 2
    assert "plugins.hello.max_notes" in done.stderr
    assert done.stdout == ""


@pytest.mark.anyio
async def test_ego_serve_over_stdio(tmp_path: Path) -> None:
    secret = "private: the password to my heart is chocolate"
    # EGO_LOG_ARGUMENTS: argument values are logged (the debugging aid); the plugin's log view masks the note
    env = {
        k: v
        for k, v in child_env(tmp_path, EGO_LOG_LEVEL="DEBUG", EGO_LOG_ARGUMENTS="1").items()
        if k.startswith("EGO_")
    }
    params = StdioServerParameters(command=EGO[0], args=[*EGO[1:], "serve", "--plugins", "hello"], env=env)
    async with Client(params) as client:
        assert client.server_info is not None
        assert client.server_info.name == "ego"
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"wake_up", "introspect", "attune", "leave_note"}
        assert tools["leave_note"].input_schema["required"] == ["text"]
        saved = await client.call_tool("leave_note", {"text": secret})
        assert not saved.is_error, tool_text(saved)
        wake = tool_text(await client.call_tool("wake_up", {}))
    assert "A private note you left yourself (just now): the password to my heart is chocolate" in wake

    notes = json.loads((tmp_path / "hello" / "notes.json").read_text(encoding="utf-8"))
    assert [n["text"] for n in notes["notes"]] == [secret]
    log = "".join(p.read_text(encoding="utf-8") for p in sorted((tmp_path / "logs").glob("ego-*.jsonl")))
    records = [json.loads(line) for line in log.splitlines()]
    calls = [r for r in records if r.get("event") == "tool_call" and r.get("tool") == "leave_note"]
    assert len(calls) == 1
    assert calls[0]["args"] == {"text_chars": len(secret), "private": True}
    assert calls[0]["outcome"] == "ok"
    assert "chocolate" not in log
