"""``ego`` as a subprocess: the installed entry point, the dependency on memory, and the guard on/off over stdio."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from dedup_support import EGO, JA_FIRST, PARAPHRASES, saved_id
from mcp import Client, StdioServerParameters

from ego_core.testing import tool_text, tools_named
from ego_dedup import NOT_SAVED

GUARD_WORDS = ("Not saved", "already exists", "repetition", "Similarity:")


def stdio(env: dict[str, str], *args: str) -> StdioServerParameters:
    keep = {k: v for k, v in env.items() if k.startswith("EGO_") or k in ("PATH", "HOME", "PYTHONPATH")}
    return StdioServerParameters(command=EGO[0], args=[*EGO[1:], "serve", *args], env=keep)


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EGO, *args], env=env, capture_output=True, text=True, timeout=120, check=False)


def test_the_entry_point_is_installed() -> None:
    (entry_point,) = [ep for ep in importlib.metadata.entry_points(group="ego") if ep.name == "dedup"]
    assert entry_point.value == "ego_dedup.plugin:DedupPlugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "ego-dedup"
    requirements = importlib.metadata.requires("ego-dedup") or []
    assert [r.split(";")[0].replace(" ", "") for r in requirements] == ["ego-core<0.2,>=0.1"]


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_dedup_without_memory_is_a_clear_startup_error(
    child_env: Callable[..., dict[str, str]], tmp_path: Path, how: str
) -> None:
    if how == "flag":
        done = run(child_env(), "serve", "--plugins", "dedup")
    else:
        done = run(child_env(EGO_PLUGINS="dedup"), "serve")
    assert done.returncode == 2
    assert "'dedup' requires memory" in done.stderr
    assert "--plugins memory,dedup" in done.stderr
    assert done.stdout == ""


def test_disabling_memory_leaves_dedup_out_and_says_why(child_env: Callable[..., dict[str, str]]) -> None:
    done = run(child_env(), "plugins", "--json", "--disable", "memory")
    assert done.returncode == 0, done.stderr
    plugins = {p["id"]: p for p in json.loads(done.stdout)["plugins"]}
    assert plugins["dedup"]["state"] == "failed"
    assert plugins["dedup"]["requires"] == ["memory"]
    assert "requires plugin(s) memory" in plugins["dedup"]["reason"]


@pytest.mark.anyio
async def test_the_guard_over_stdio(child_env: Callable[..., dict[str, str]]) -> None:
    async with Client(stdio(child_env(EGO_PLUGINS="memory,dedup"))) as client:
        served = {tool.name for tool in (await client.list_tools()).tools}
        first = saved_id(tool_text(await client.call_tool("remember", {"content": PARAPHRASES[0]})))
        again = tool_text(await client.call_tool("remember", {"content": PARAPHRASES[0]}))
        assert again.startswith(f"{NOT_SAVED}\nExisting (id: {first}, just now): {PARAPHRASES[0]}\nSimilarity: 1.00\n")
        assert tools_named(again) <= served
        saved_id(tool_text(await client.call_tool("remember", {"content": JA_FIRST})))
        forced = tool_text(await client.call_tool("remember", {"content": PARAPHRASES[0], "force": True}))
        saved_id(forced)


@pytest.mark.anyio
async def test_with_dedup_disabled_duplicates_are_stored_over_stdio(child_env: Callable[..., dict[str, str]]) -> None:
    async with Client(stdio(child_env(EGO_PLUGINS="memory"))) as client:
        texts = [tool_text(await client.call_tool("remember", {"content": PARAPHRASES[0]})) for _ in range(3)]
        ids = {saved_id(text) for text in texts}
        assert len(ids) == 3
        for text in texts:
            assert not any(word in text for word in GUARD_WORDS), text
        consolidated = tool_text(await client.call_tool("consolidate", {}))
        assert "near-duplicate" not in consolidated
