"""The MCP Inspector's CLI (``inspector --cli``, the version pinned in package.json) lists and gets ego's prompts
and reads its resources, from ``ego serve`` over stdio and over HTTP with a bearer token: what
docs/agent-setup.md tells a person to try."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conformance_support import TOKEN, EgoHttp, NodeTools, ego_command, installed_plugins

INSPECTOR = "@modelcontextprotocol/inspector"


def inspector(tools: NodeTools, home: Path, *args: str) -> Any:
    """Run ``inspector --cli ARGS`` and return the JSON it prints."""
    launcher = tools.package(INSPECTOR) / "clients" / "launcher" / "build" / "index.js"
    done = subprocess.run(
        [str(tools.node), str(launcher), "--cli", *args],
        env=tools.env(home),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, f"inspector --cli {' '.join(args)}: {done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return json.loads(done.stdout)


def over_stdio(data_dir: Path, *args: str) -> list[str]:
    """Inspector arguments for a method on ``ego serve`` over stdio (its own data directory)."""
    return ["-e", f"EGO_DATA_DIR={data_dir}", *args, "--", *ego_command("serve")]


def test_the_inspector_lists_and_gets_ego_prompts_over_stdio(node_tools: NodeTools, tmp_path: Path) -> None:
    data = tmp_path / "data"
    listed = inspector(node_tools, tmp_path, *over_stdio(data, "--method", "prompts/list"))
    names = [prompt["name"] for prompt in listed["prompts"]]
    assert names[:2] == ["wake-up", "heartbeat"]
    assert [a["name"] for a in listed["prompts"][0]["arguments"]] == ["person"]
    got = inspector(
        node_tools,
        tmp_path,
        *over_stdio(data, "--method", "prompts/get", "--prompt-name", "wake-up", "--prompt-args", "person=Aiko"),
    )
    [message] = got["messages"]
    assert message["role"] == "user"
    assert message["content"]["text"].startswith("Session start.")
    assert "Call wake_up, then introspect" in message["content"]["text"]


def test_the_inspector_reads_an_ego_resource_over_stdio(node_tools: NodeTools, tmp_path: Path) -> None:
    if "self_model" not in installed_plugins():
        pytest.fail("the conformance environment installs the self_model plugin")
    data = tmp_path / "data"
    resources = inspector(node_tools, tmp_path, *over_stdio(data, "--method", "resources/list"))
    assert "ego://self" in [resource["uri"] for resource in resources["resources"]]
    templates = inspector(node_tools, tmp_path, *over_stdio(data, "--method", "resources/templates/list"))
    assert "ego://people/{person}" in [t["uriTemplate"] for t in templates["resourceTemplates"]]
    read = inspector(node_tools, tmp_path, *over_stdio(data, "--method", "resources/read", "--uri", "ego://self"))
    [content] = read["contents"]
    assert content["uri"] == "ego://self"
    assert content["mimeType"] == "text/markdown"
    assert content["text"].startswith("# Who I am becoming")


def test_the_inspector_gets_a_prompt_and_reads_a_resource_over_http(
    node_tools: NodeTools, ego_http: EgoHttp, tmp_path: Path
) -> None:
    http = ["--transport", "http", "--server-url", ego_http.url, "--header", f"Authorization: Bearer {TOKEN}"]
    got = inspector(node_tools, tmp_path, *http, "--method", "prompts/get", "--prompt-name", "heartbeat")
    assert got["messages"][0]["content"]["text"].startswith("Heartbeat:")
    read = inspector(node_tools, tmp_path, *http, "--method", "resources/read", "--uri", "ego://desires")
    assert read["contents"][0]["text"].startswith("# How my desires feel")
