"""End to end: prompts, resources, completion and progress from a real ``ego serve``, over stdio and over
streamable HTTP (each agent served from its own space), driven by the MCP SDK client.

A plugin installed as a distribution (entry point ``almanac``) offers a prompt, a resource, a resource template,
a step for the core's wake-up prompt, completion values, and a slow tool that reports progress.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
from e2e_support import serving_http
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from ego_core.testing import tool_text

if TYPE_CHECKING:
    from conftest import EgoWorld

pytestmark = pytest.mark.anyio

CLAUDE_TOKEN = "ego_claude-surface-token-0123456789abcdef"
OPENCLAW_TOKEN = "ego_openclaw-surface-token-fedcba987654"
STEPS = 5

ALMANAC = """
import time
from ego_core import Prompt, PromptArgument, Resource, ResourceTemplate, Section, Tool, hookimpl

EMPTY = {"type": "object", "properties": {}, "additionalProperties": False}
NOTE = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
DAYS = ["monday", "tuesday", "wednesday"]


class Almanac:
    @hookimpl
    def register_tools(self, register, ctx):
        def count_slowly(args, ctx):
            with ctx.progress(STEPS, "counting") as progress:
                for _ in range(STEPS):
                    time.sleep(0.15)
                    progress.advance()
            return "counted"

        def note(args, ctx):
            (ctx.data_dir / "note.txt").write_text(args["text"], encoding="utf-8")
            return "noted"

        register(Tool(name="count_slowly", description="Count.", input_schema=EMPTY, handler=count_slowly))
        register(Tool(name="note", description="Note.", input_schema=NOTE, handler=note))

    @hookimpl
    def register_prompts(self, register):
        register(
            Prompt(
                name="almanac",
                description="What the almanac says about a day.",
                render=lambda arguments: "Read the almanac for " + arguments["day"] + ".",
                arguments=(PromptArgument("day", "a day of the week", required=True, values="day"),),
            )
        )

    @hookimpl
    def register_resources(self, register, ctx):
        def noted():
            path = ctx.data_dir / "note.txt"
            return path.read_text(encoding="utf-8") if path.exists() else "no note"

        register(Resource("almanac://note", "note", "The note.", read=noted))
        register(
            ResourceTemplate(
                "almanac://day/{day}",
                "day",
                "One day.",
                read=lambda variables: ("A day called " + variables["day"]) if variables["day"] in DAYS else None,
                values={"day": "day"},
            )
        )

    @hookimpl
    def on_prompt(self, prompt, arguments):
        if prompt == "wake-up":
            return Section(key="almanac", text="Glance at the almanac.", order=50)
        return None

    @hookimpl
    def complete_values(self, kind, prefix):
        return [day for day in DAYS if day.startswith(prefix)] if kind == "day" else None
""".replace("STEPS", str(STEPS))


def install_almanac(world: EgoWorld) -> None:
    world.dist("ego-almanac", "ego_almanac", ALMANAC, ep_name="almanac")
    info = world.site / "ego_almanac-0.1.0.dist-info" / "entry_points.txt"
    info.write_text("[ego]\nalmanac = ego_almanac:Almanac\n", encoding="utf-8")


async def exercise(client: Any) -> None:
    """What a person at a client does: pick prompts, attach resources, complete arguments, watch a long call."""
    assert client.server_capabilities.prompts is not None
    assert client.server_capabilities.resources is not None
    assert client.server_capabilities.completions is not None
    assert client.server_capabilities.logging is None  # deprecated (SEP-2577): not offered
    prompts = [p.name for p in (await client.list_prompts()).prompts]
    assert prompts == ["wake-up", "heartbeat", "almanac"]
    wake = (await client.get_prompt("wake-up", {"person": "Aiko"})).messages[0].content.text
    assert wake.startswith("Session start.")
    assert "- Glance at the almanac." in wake
    almanac = (await client.get_prompt("almanac", {"day": "tuesday"})).messages[0].content.text
    assert almanac == "Read the almanac for tuesday."
    with pytest.raises(MCPError) as missing:
        await client.get_prompt("almanac", {})
    assert "`day` is required" in missing.value.error.message

    assert [r.uri for r in (await client.list_resources()).resources] == ["almanac://note"]
    templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["almanac://day/{day}"]
    day = (await client.read_resource("almanac://day/monday")).contents[0]
    assert (day.uri, day.text) == ("almanac://day/monday", "A day called monday")
    with pytest.raises(MCPError):
        await client.read_resource("almanac://day/someday")

    days = await client.complete({"type": "ref/prompt", "name": "almanac"}, {"name": "day", "value": "t"})
    assert days.completion.values == ["tuesday"]
    by_template = await client.complete(
        {"type": "ref/resource", "uri": "almanac://day/{day}"}, {"name": "day", "value": ""}
    )
    assert by_template.completion.values == ["monday", "tuesday", "wednesday"]

    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    counted = await client.call_tool("count_slowly", {}, progress_callback=on_progress)
    assert tool_text(counted) == "counted"
    positions = [position for position, _total, _message in seen]
    assert len(positions) >= 2, seen
    assert positions == sorted(set(positions))
    assert positions[-1] == STEPS
    assert {total for _position, total, _message in seen} == {STEPS}
    assert {message for _position, _total, message in seen} == {"counting"}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_stdio_serves_prompts_resources_completion_and_progress(world: EgoWorld, mode: str) -> None:
    install_almanac(world)
    async with Client(world.stdio(*world.without_real_plugins()), mode=mode) as client:
        await exercise(client)
    reads = [r for r in world.log_records() if r.get("event") == "resource_read"]
    assert {r["resource"] for r in reads} == {"almanac://day/{day}"}  # a template is logged, never its values
    gets = [r for r in world.log_records() if r.get("event") == "prompt_get"]
    assert {(g["prompt"], g["outcome"]) for g in gets} == {("wake-up", "ok"), ("almanac", "ok")}
    assert "Aiko" not in world.log_text()


@pytest.fixture(scope="module")
def almanac_http(make_world: Callable[[str], EgoWorld]) -> Iterator[tuple[str, EgoWorld]]:
    world = make_world("surface-http")
    install_almanac(world)
    with serving_http(world, {"claude": CLAUDE_TOKEN, "openclaw": OPENCLAW_TOKEN}) as (url, _proc, _stderr):
        yield url, world


async def test_http_serves_prompts_resources_completion_and_progress(almanac_http: tuple[str, EgoWorld]) -> None:
    url, _world = almanac_http
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {CLAUDE_TOKEN}"}) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        await exercise(client)


async def test_over_http_each_agent_reads_resources_from_its_own_space(almanac_http: tuple[str, EgoWorld]) -> None:
    url, _world = almanac_http
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {CLAUDE_TOKEN}"}) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        assert tool_text(await client.call_tool("note", {"text": "claude's own note"})) == "noted"
        mine = (await client.read_resource("almanac://note")).contents[0].text
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {OPENCLAW_TOKEN}"}) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        theirs = (await client.read_resource("almanac://note")).contents[0].text
    assert mine == "claude's own note"
    assert theirs == "no note"


async def test_http_without_a_token_gets_no_prompt_or_resource(almanac_http: tuple[str, EgoWorld]) -> None:
    url, _world = almanac_http
    async with httpx2.AsyncClient() as http:
        answer = await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "almanac://note"}},
            headers={"Accept": "application/json, text/event-stream"},
        )
    assert answer.status_code == 401
