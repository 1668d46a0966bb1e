"""Plugin selection end to end: exactly the chosen plugins' tools are served.

Precedence, highest first: ``--plugins``/``--disable``, ``EGO_PLUGINS``/``EGO_DISABLE_PLUGINS``, the
``[plugins]`` table of ego.toml, all installed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest
from mcp import Client

from ego_core.testing import tool_text

if TYPE_CHECKING:
    from conftest import EgoWorld

CORE_TOOLS = {"wake_up", "introspect", "attune"}

TOOL_PLUGIN = """
from ego_core import Tool, hookimpl

@hookimpl
def register_tools(register):
    schema = {{"type": "object"}}
    register(Tool(name="{tool}", description="Ping.", input_schema=schema, handler=lambda args, ctx: "{tool}!"))
"""

NEEDS_ALPHA = (
    TOOL_PLUGIN.format(tool="needs_ping")
    + """
requires = ("t_alpha",)
"""
)


@pytest.fixture(scope="module")
def sel_world(make_world: Callable[[str], EgoWorld]) -> EgoWorld:
    world = make_world("selection")
    world.dist("egotest-alpha", "egotest_alpha", TOOL_PLUGIN.format(tool="alpha_ping"), ep_name="t_alpha")
    world.dist("egotest-beta", "egotest_beta", TOOL_PLUGIN.format(tool="beta_ping"), ep_name="t_beta")
    world.dist("egotest-needs", "egotest_needs", NEEDS_ALPHA, ep_name="t_needs")
    return world


@pytest.fixture
def config_file(sel_world: EgoWorld) -> Iterator[Callable[[str], None]]:
    path = sel_world.data_dir / "ego.toml"

    def write(text: str) -> None:
        path.write_text(text, encoding="utf-8")

    yield write
    path.unlink(missing_ok=True)


def served(sel_world: EgoWorld, *args: str, **env: str) -> set[str]:
    tools: dict[str, str] = sel_world.plugins_json(*args, **env)["tools"]
    return set(tools) - CORE_TOOLS


@pytest.mark.anyio
async def test_ego_plugins_env_serves_exactly_that_plugin(sel_world: EgoWorld) -> None:
    async with Client(sel_world.stdio(EGO_PLUGINS="t_alpha")) as client:
        assert {t.name for t in (await client.list_tools()).tools} == {*CORE_TOOLS, "alpha_ping"}
        assert tool_text(await client.call_tool("alpha_ping", {})) == "alpha_ping!"
        missing = await client.call_tool("beta_ping", {})
        assert missing.is_error
        assert "Unknown tool: beta_ping" in tool_text(missing)


@pytest.mark.anyio
async def test_disable_removes_a_plugins_tools(sel_world: EgoWorld) -> None:
    async with Client(sel_world.stdio(*sel_world.without_real_plugins("t_alpha"))) as client:
        assert {t.name for t in (await client.list_tools()).tools} == {*CORE_TOOLS, "beta_ping"}
    # t_needs was not asked for explicitly: without t_alpha it is reported as failed, with the reason
    payload = sel_world.plugins_json(*sel_world.without_real_plugins("t_alpha"))
    needs = next(p for p in payload["plugins"] if p["id"] == "t_needs")
    assert needs["state"] == "failed"
    assert "[dependency] requires plugin(s) t_alpha, which are not enabled or failed" in needs["reason"]


@pytest.mark.parametrize(
    ("args", "env"),
    [(("--plugins", "t_alpha,nosuch"), {}), ((), {"EGO_PLUGINS": "nosuch"}), (("--disable", "nosuch"), {})],
    ids=["cli", "env", "disable"],
)
def test_an_unknown_plugin_is_a_startup_error_listing_the_installed_ones(
    sel_world: EgoWorld, args: tuple[str, ...], env: dict[str, str]
) -> None:
    done = sel_world.run("serve", *args, **env)
    assert done.returncode == 2
    assert done.stdout == ""
    installed = ", ".join(sorted([*sel_world.real_plugins, "t_alpha", "t_beta", "t_needs"]))
    assert f"ego: error: unknown plugin 'nosuch'; installed plugins: {installed}" in done.stderr


def test_an_explicitly_requested_plugin_with_an_unmet_dependency_is_a_startup_error(sel_world: EgoWorld) -> None:
    done = sel_world.run("serve", "--plugins", "t_needs")
    assert done.returncode == 2
    assert "plugin 't_needs' requires t_alpha, which is not enabled" in done.stderr
    assert "--plugins t_alpha,t_needs" in done.stderr
    assert served(sel_world, "--plugins", "t_alpha,t_needs") == {"alpha_ping", "needs_ping"}


def test_config_file_selection_and_precedence(sel_world: EgoWorld, config_file: Callable[[str], None]) -> None:
    config_file('[plugins]\nenabled = ["t_alpha"]\n')
    assert served(sel_world) == {"alpha_ping"}  # the file
    assert served(sel_world, EGO_PLUGINS="t_beta") == {"beta_ping"}  # env beats file
    assert served(sel_world, "--plugins", "t_alpha", EGO_PLUGINS="t_beta") == {"alpha_ping"}  # CLI beats env
    assert served(sel_world, "--disable", "t_beta", EGO_PLUGINS="t_alpha,t_beta") == {"alpha_ping"}
    assert served(sel_world, EGO_DISABLE_PLUGINS="t_alpha") == set()

    disabled = ", ".join(f'"{p}"' for p in [*sel_world.real_plugins, "t_beta"])
    config_file(f"[plugins]\ndisabled = [{disabled}]\n")
    assert served(sel_world) == {"alpha_ping", "needs_ping"}
    assert served(sel_world, "--plugins", "t_beta") == {"beta_ping"}  # CLI beats the file's disabled list
    assert served(sel_world, EGO_PLUGINS="t_beta") == {"beta_ping"}  # and so does the environment
    assert served(sel_world, "--plugins", "") == set()  # only the core


def test_a_bad_plugins_table_is_a_startup_error(sel_world: EgoWorld, config_file: Callable[[str], None]) -> None:
    config_file('[plugins]\nenabled = "t_alpha"\n')
    done = sel_world.run("serve")
    assert done.returncode == 2
    assert "plugins.enabled" in done.stderr
