"""``ego`` as a subprocess: the installed entry point, and the tool over stdio through the MCP SDK client, with a
private memory that stays out of the answer and the JSON log."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from trend_support import EGO

from ego_core.testing import tool_text

SECRET = "The copper-heron-5521 letter I never sent."


def stdio(env: dict[str, str], *args: str) -> StdioServerParameters:
    keep = {k: v for k, v in env.items() if k.startswith("EGO_") or k in ("PATH", "HOME", "PYTHONPATH")}
    return StdioServerParameters(command=EGO[0], args=[*EGO[1:], "serve", *args], env=keep)


def test_the_entry_point_is_installed(child_env: Callable[..., dict[str, str]]) -> None:
    (entry_point,) = [ep for ep in importlib.metadata.entry_points(group="ego") if ep.name == "emotion_trend"]
    assert entry_point.value == "ego_emotion_trend.plugin:EmotionTrendPlugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "ego-emotion-trend"
    done = subprocess.run(
        [*EGO, "plugins", "--json", "--plugins", "memory,emotion_trend"],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    plugins = {p["id"]: p for p in json.loads(done.stdout)["plugins"]}
    assert plugins["emotion_trend"]["state"] == "enabled"
    assert plugins["emotion_trend"]["requires"] == ["memory"]


@pytest.mark.anyio
async def test_emotion_trend_over_stdio(child_env: Callable[..., dict[str, str]], tmp_path: Path) -> None:
    env = child_env(EGO_LOG_LEVEL="DEBUG")
    async with Client(stdio(env, "--plugins", "memory,emotion_trend")) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert "emotion_trend" in tools
        empty = tool_text(await client.call_tool("emotion_trend", {}))
        assert empty.startswith("No emotional history yet.")
        feelings: list[dict[str, Any]] = [
            {"content": "Repotted the fern by the window.", "emotion": "contentment"},
            {"content": "Master asked about my day and listened.", "emotion": "happy"},
            {"content": SECRET, "emotion": "sad", "intensity": 0.9, "private": True},  # the peak
            {"content": "A puzzle about prime gaps kept me up.", "emotion": "curious"},
            {"content": "The rain stopped just in time for the walk.", "emotion": "happy"},
        ]
        for arguments in feelings:
            saved = await client.call_tool("remember", arguments)
            assert not saved.is_error, tool_text(saved)
        result = await client.call_tool("emotion_trend", {})
    text = tool_text(result)
    assert not result.is_error
    assert text.startswith("Recent (last 3 days, 5 memories):")
    peak = next(line for line in text.splitlines() if line.endswith(" (peak)"))
    assert peak.startswith("- sad(0.9), ")  # then the moment in words, by the wall clock of the run
    assert peak.endswith(" — (private) (peak)")
    assert "copper-heron" not in text
    log = "\n".join(path.read_text() for path in sorted((Path(env["EGO_DATA_DIR"]) / "logs").glob("*.jsonl")))
    assert '"tool": "emotion_trend"' in log
    assert "copper-heron" not in log
