"""The plugin as a user gets it: the installed entry point, ``ego plugins``, and ``ego serve`` over stdio without
the memory plugin (every child gets a clean environment and an explicit ``--plugins`` list)."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from self_model_support import EGO, question_id

from ego_core.testing import tool_text

SELF_MODEL_TOOLS = ("consider_them", "am_i_being_genuine", "update_self", "update_relationship")


def child_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
    env.update({"EGO_DATA_DIR": str(data_dir), "EGO_TIMEZONE": "UTC", **extra})
    return env


def test_the_entry_point_is_installed() -> None:
    (entry_point,) = [ep for ep in importlib.metadata.entry_points(group="ego") if ep.name == "self_model"]
    assert entry_point.value == "ego_self_model.plugin:SelfModelPlugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "ego-self-model"


def test_ego_plugins_shows_it_enabled_without_memory(tmp_path: Path) -> None:
    done = subprocess.run(
        [*EGO, "plugins", "--json", "--plugins", "self_model"],
        env=child_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    plugin = {p["id"]: p for p in report["plugins"]}["self_model"]
    assert plugin["state"] == "enabled", plugin["reason"]
    assert plugin["distribution"] == "ego-self-model"
    assert plugin["requires"] == []
    assert {"on_remember", "on_forget", "on_wake_up", "on_introspect", "export_records"} <= set(plugin["hooks"])
    for tool in SELF_MODEL_TOOLS:
        assert report["tools"][tool] == "self_model"


@pytest.mark.anyio
async def test_ego_serve_over_stdio(tmp_path: Path) -> None:
    env = {k: v for k, v in child_env(tmp_path, EGO_COMPANION_NAME="Aiko").items() if k.startswith("EGO_")}
    params = StdioServerParameters(command=EGO[0], args=[*EGO[1:], "serve", "--plugins", "self_model"], env=env)
    async with Client(params) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools == {
            "wake_up",
            "introspect",
            "attune",
            "consider_them",
            "am_i_being_genuine",
            "update_self",
            "update_relationship",
        }
        asked = await client.call_tool(
            "update_self", {"field": "new_question", "value": {"question": "What is home?", "importance": 4}}
        )
        assert not asked.is_error, tool_text(asked)
        qid = question_id(tool_text(asked))
        wrong = await client.call_tool("update_self", {"field": "skill_confidence", "value": "very"})
        assert wrong.is_error
        assert "for field skill_confidence" in tool_text(wrong)
        trusted = await client.call_tool(
            "update_relationship", {"person": "aiko", "field": "trust_level", "value": 0.9}
        )
        assert not trusted.is_error, tool_text(trusted)
        wake = tool_text(await client.call_tool("wake_up", {}))
        introspect = tool_text(await client.call_tool("introspect", {}))
        them = tool_text(await client.call_tool("consider_them", {"person": "Aiko"}))
    assert "\nAiko: you trust them deeply; nothing shared yet." in wake
    assert f'- "What is home?" ({qid}, importance 4)' in introspect
    assert them.startswith("Aiko (the one you live with): you trust them deeply.")
    assert (tmp_path / "self_model" / "self_model.sqlite3").is_file()
