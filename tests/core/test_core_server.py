"""The MCP server in memory (both client modes): tools, errors, scaffolds, composed tools, call logging."""

from __future__ import annotations

import asyncio
import importlib.metadata
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import attrs
import pytest

from ego_core import (
    PRIVATE_MARK,
    Clock,
    InvalidArgumentError,
    PluginContext,
    PluginHost,
    Response,
    ScaffoldContext,
    ScaffoldLine,
    Section,
    Tool,
    ToolError,
    ToolOutcome,
    hookimpl,
)
from ego_core.kernel.config import Settings
from ego_core.testing import mcp_client, tool_text

if TYPE_CHECKING:
    from conftest import JsonLog
    from ego_core.testing import HostFactory

pytestmark = pytest.mark.anyio

SECRET = "sk-live-4f3c2b1a0987654321fedcba"

COUNT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
        "mode": {
            "type": "string",
            "enum": ["ok", "tool_error", "invalid", "crash", "bad_type", "async", "declined"],
        },
    },
    "additionalProperties": False,
}


class Demo:
    """A plugin with one tool of each behaviour, scaffold contributions and a call listener."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any], ToolOutcome]] = []

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(Tool(name="count", description="Count.", input_schema=COUNT_SCHEMA, handler=self.count))
        register(Tool(name="acount", description="Async count.", input_schema=COUNT_SCHEMA, handler=self.acount))

    def count(self, args: Mapping[str, Any], _ctx: PluginContext) -> Any:
        mode = args.get("mode", "ok")
        if mode == "tool_error":
            raise ToolError(
                "No memory with that id. Use an id from recall.",
                scaffold=[ScaffoldLine("Try recall first.", needs={"recall"}), "Check the id and try again."],
            )
        if mode == "invalid":
            raise InvalidArgumentError("date_from", "an ISO 8601 date")
        if mode == "crash":
            raise RuntimeError(f"internal detail /home/user/.ego with {SECRET}")
        if mode == "bad_type":
            return {"not": "a response"}
        if mode == "declined":
            return Response(data="Not counted: already counted.", declined=True)
        return Response(
            data=f"counted {args['n']}",
            scaffold=(
                "What did you notice?",
                ScaffoldLine("Open introspect for more.", needs={"introspect"}),
                ScaffoldLine("Use recall to look back.", needs={"recall"}),
                ScaffoldLine("Both!", needs={"introspect", "recall"}),
                "What did you notice?",  # duplicates appear once
            ),
        )

    async def acount(self, args: Mapping[str, Any], _ctx: PluginContext) -> str:
        await asyncio.sleep(0)
        return f"async {args['n']}"

    @hookimpl
    def scaffold_for(self, tool: str, context: ScaffoldContext) -> list[Any] | None:
        if tool != "count":
            return None
        return [f"(seen {context.data!r} with n={context.arguments['n']})", ScaffoldLine("x", needs={"nope"})]

    @hookimpl
    def on_tool_called(self, tool: str, args: Mapping[str, Any], result: ToolOutcome) -> None:
        self.calls.append((tool, dict(args), result))


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def demo() -> Demo:
    return Demo()


@pytest.fixture
def host(make_host: HostFactory, demo: Demo) -> PluginHost:
    return make_host({"demo": demo})


async def test_server_info_names_ego_with_its_real_version(host: PluginHost, mode: str) -> None:
    async with mcp_client(host, mode=mode) as client:
        assert client.server_info.name == "ego"
        assert client.server_info.version == importlib.metadata.version("ego-core")
        assert "wake_up" in (client.instructions or "")


async def test_tools_are_listed_with_their_schemas_surface_first(host: PluginHost, mode: str) -> None:
    async with mcp_client(host, mode=mode) as client:
        tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == ["attune", "introspect", "wake_up", "acount", "count"]
    count = next(t for t in tools if t.name == "count")
    assert count.description == "Count."
    assert count.input_schema == COUNT_SCHEMA


async def test_a_successful_call_composes_data_and_served_scaffold_lines(
    host: PluginHost, demo: Demo, mode: str
) -> None:
    async with mcp_client(host, mode=mode) as client:
        result = await client.call_tool("count", {})
    assert not result.is_error
    assert tool_text(result) == (
        "counted 2\n\n---\nWhat did you notice?\nOpen introspect for more.\n(seen 'counted 2' with n=2)"
    )
    # lines needing an unserved tool (recall, nope) were dropped; the default n=2 reached the handler
    [(tool, args, outcome)] = demo.calls
    assert (tool, args) == ("count", {"n": 2})
    assert outcome == ToolOutcome(plugin="demo", is_error=False, text=tool_text(result))


async def test_async_handlers_are_awaited(host: PluginHost, mode: str) -> None:
    async with mcp_client(host, mode=mode) as client:
        result = await client.call_tool("acount", {"n": 4})
    assert (result.is_error, tool_text(result)) == (False, "async 4")


async def test_a_tool_error_is_an_error_result_with_its_served_scaffold(
    host: PluginHost, demo: Demo, mode: str
) -> None:
    async with mcp_client(host, mode=mode) as client:
        result = await client.call_tool("count", {"mode": "tool_error"})
    assert result.is_error
    assert tool_text(result) == "No memory with that id. Use an id from recall.\n\n---\nCheck the id and try again."
    assert demo.calls[-1][2].is_error


async def test_an_invalid_argument_error_names_the_parameter(host: PluginHost, mode: str) -> None:
    async with mcp_client(host, mode=mode) as client:
        result = await client.call_tool("count", {"mode": "invalid"})
    assert result.is_error
    assert (
        tool_text(result) == "Invalid arguments for count: `date_from`: an ISO 8601 date. Fix the call and try again."
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"n": 9}, "`n` must be an integer from 1 to 5"),
        ({"n": "three"}, "`n` must be an integer from 1 to 5"),
        ({"colour": SECRET}, "unknown parameter `colour`; accepted parameters: mode, n"),
        ({"mode": SECRET}, "`mode` must be one of: ok, tool_error, invalid, crash, bad_type, async, declined"),
    ],
)
async def test_schema_violations_are_error_results_that_explain_the_fix(
    host: PluginHost, demo: Demo, mode: str, args: dict[str, Any], expected: str
) -> None:
    async with mcp_client(host, mode=mode) as client:
        result = await client.call_tool("count", args)
    text = tool_text(result)
    assert result.is_error
    assert text == f"Invalid arguments for count: {expected}. Fix the call and try again."
    assert SECRET not in text
    assert demo.calls == []  # invalid calls never reach the handler or on_tool_called


@pytest.mark.parametrize("what", ["crash", "bad_type"])
async def test_unexpected_exceptions_are_sanitised(
    capsys: pytest.CaptureFixture[str], json_log: JsonLog, host: PluginHost, mode: str, what: str
) -> None:
    async with mcp_client(host, mode=mode) as client:
        result = await client.call_tool("count", {"mode": what})
        again = await client.call_tool("count", {})
    text = tool_text(result)
    assert result.is_error
    assert text.startswith("Internal error in count (plugin demo). It was logged")
    assert "RuntimeError" not in text
    assert ".ego" not in text
    assert SECRET not in text
    assert not again.is_error  # the server keeps serving
    crash = next(r for r in json_log.records() if r["msg"] == "tool count (plugin demo) crashed")
    assert ("RuntimeError" if what == "crash" else "TypeError") in crash["exc"]
    assert SECRET not in json_log.text()
    assert SECRET not in capsys.readouterr().err


async def test_an_unknown_tool_is_an_error_listing_the_served_ones(
    host: PluginHost, mode: str, json_log: JsonLog
) -> None:
    async with mcp_client(host, mode=mode) as client:
        result = await client.call_tool("recall", {"context": "the secret garden"})
    assert result.is_error
    assert tool_text(result) == "Unknown tool: recall. Available tools: acount, attune, count, introspect, wake_up."
    [record] = [r for r in json_log.records() if r.get("event") == "tool_call"]
    assert (record["tool"], record["outcome"], record["arg_names"]) == ("recall", "unknown_tool", ["context"])
    assert "secret garden" not in json_log.text()  # argument names only, never values


# --------------------------------------------------------------------------------------------------
# Composed wake_up and introspect


async def test_wake_up_and_introspect_with_zero_feature_plugins(make_host: HostFactory, mode: str) -> None:
    async with mcp_client(make_host(), mode=mode) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        wake = await client.call_tool("wake_up", {})
        intro = await client.call_tool("introspect", {})
    assert tools == {"wake_up", "introspect", "attune"}
    assert not wake.is_error
    data, _, scaffold = tool_text(wake).partition("\n\n---\n")
    assert data.startswith("Awake: ")
    assert "(UTC)" in data
    assert "Nothing carried over yet" in data
    assert scaffold == "Start with introspect to organize your thoughts."
    assert not intro.is_error
    assert tool_text(intro).startswith("Nothing to reflect on yet")


class Contributor:
    def __init__(self, key: str, order: int, text: str, hint: Any = None) -> None:
        self.key, self.order, self.text, self.hint = key, order, text, hint

    @hookimpl
    def on_wake_up(self) -> Section:
        scaffold = (self.hint,) if self.hint else ()
        return Section(key=self.key, text=self.text, order=self.order, scaffold=scaffold)

    @hookimpl
    def on_introspect(self) -> list[Any]:
        return [Section(key=self.key, text=f"{self.key} reflects", order=self.order), "", "plain text section"]


class BrokenWake:
    @hookimpl
    def on_wake_up(self) -> Section:
        raise RuntimeError("no state file")

    @hookimpl
    def on_introspect(self) -> Section:
        raise RuntimeError("no state file")


async def test_wake_up_composes_sections_in_order_and_isolates_failures(make_host: HostFactory, mode: str) -> None:
    host = make_host(
        {
            "late": Contributor("late", 200, "Desires: to understand."),
            "broken": BrokenWake(),
            "early": Contributor("early", 10, "Last memory: a walk.", hint=ScaffoldLine("Try recall.", {"recall"})),
            "mid": Contributor("mid", 100, "Body: calm.", hint="How does your body feel?"),
        },
        clock=Clock(datetime(2025, 1, 31, 9, 30, tzinfo=UTC)),
    )
    async with mcp_client(host, mode=mode) as client:
        wake = await client.call_tool("wake_up", {})
        intro = await client.call_tool("introspect", {})
    assert not wake.is_error
    assert tool_text(wake) == (
        "Awake: Fri 31 Jan 2025, 09:30 (UTC).\nLast memory: a walk.\nBody: calm.\nDesires: to understand."
        "\n\n---\nStart with introspect to organize your thoughts.\nHow does your body feel?"
    )
    assert not intro.is_error
    assert tool_text(intro).startswith("early reflects\n\nplain text section")
    assert {(f.plugin, f.hook) for f in host.failures} == {("broken", "on_wake_up"), ("broken", "on_introspect")}


class FailingStart:
    @hookimpl
    def on_startup(self) -> None:
        raise OSError("the model could not be downloaded")

    @hookimpl
    def on_wake_up(self) -> Section:
        return Section(key="failing", text="never shown")


async def test_wake_up_tells_the_agent_which_plugins_failed_to_start(make_host: HostFactory, mode: str) -> None:
    host = make_host({"early": Contributor("early", 10, "Last memory: a walk."), "failing": FailingStart()})
    async with mcp_client(host, mode=mode) as client:
        text = tool_text(await client.call_tool("wake_up", {}))
    data = text.partition("\n\n---\n")[0]
    assert data.splitlines()[1:] == [
        "Last memory: a walk.",
        "Not working right now: failing (failed to start); whoever runs ego can see why with `ego doctor`.",
    ]
    assert "could not be downloaded" not in text  # the reason is for the operator, not the agent


async def test_wake_up_shows_local_time(make_host: HostFactory, ego_settings: Settings, mode: str) -> None:
    settings = attrs.evolve(ego_settings, timezone="Asia/Tokyo")
    host = make_host(settings=settings, clock=Clock(datetime(2025, 1, 31, 23, 30, tzinfo=UTC)))
    async with mcp_client(host, mode=mode) as client:
        text = tool_text(await client.call_tool("wake_up", {}))
    assert text.startswith("Awake: Sat 01 Feb 2025, 08:30 (Asia/Tokyo).")


async def test_wake_up_takes_no_arguments(make_host: HostFactory, mode: str) -> None:
    async with mcp_client(make_host(), mode=mode) as client:
        result = await client.call_tool("wake_up", {"verbose": True})
    assert result.is_error
    assert "unknown parameter `verbose`; accepted parameters: none" in tool_text(result)


# --------------------------------------------------------------------------------------------------
# One structured log record per tool call


async def test_each_tool_call_writes_one_json_record(
    json_log: JsonLog, make_host: HostFactory, demo: Demo, ego_settings: Settings
) -> None:
    # argument values are logged only with the log_arguments debugging aid (the default logs their shapes)
    host = make_host({"demo": demo}, settings=attrs.evolve(ego_settings, log_arguments=True))
    async with mcp_client(host) as client:
        await client.call_tool("count", {"n": 3})
        await client.call_tool("count", {"mode": "tool_error"})
        await client.call_tool("count", {"n": 99})
        await client.call_tool("wake_up", {})
    calls = json_log.events("tool_call")
    assert [(c["tool"], c["plugin"], c["outcome"]) for c in calls] == [
        ("count", "demo", "ok"),
        ("count", "demo", "error"),
        ("count", "demo", "invalid"),
        ("wake_up", "core", "ok"),
    ]
    first = calls[0]
    assert first["args"] == {"n": 3}
    assert first["args_chars"] == 1
    assert first["response_chars"] == len("counted 3\n\n---\nWhat did you notice?\nOpen introspect for more.") + len(
        "\n(seen 'counted 3' with n=3)"
    )
    assert isinstance(first["duration_ms"], float)
    assert first["duration_ms"] >= 0
    assert first["level"] == "info"
    assert first["logger"] == "ego.server"
    assert "agent" not in first  # no token on in-memory connections


class Diary:
    """A tool whose private arguments must never reach the log."""

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        schema = {
            "type": "object",
            "properties": {"content": {"type": "string"}, "private": {"type": "boolean", "default": False}},
            "required": ["content"],
        }

        def log_view(args: Mapping[str, Any]) -> Mapping[str, Any]:
            if args.get("private"):
                return {**args, "content": PRIVATE_MARK, "content_length": len(args["content"])}
            return args

        register(Tool(name="note", description="Note.", input_schema=schema, handler=self.note, log_view=log_view))
        register(
            Tool(
                name="broken_view",
                description="Broken log view.",
                input_schema=schema,
                handler=self.note,
                log_view=lambda args: 1 / 0,  # type: ignore[arg-type,return-value]
            )
        )

    def note(self, args: Mapping[str, Any], _ctx: PluginContext) -> str:
        return "noted"


async def test_log_view_keeps_private_arguments_out_of_the_log(
    json_log: JsonLog, make_host: HostFactory, mode: str, ego_settings: Settings
) -> None:
    private = "I told Aiko I was fine; I was not"
    host = make_host({"diary": Diary()}, settings=attrs.evolve(ego_settings, log_arguments=True))
    async with mcp_client(host, mode=mode) as client:
        assert tool_text(await client.call_tool("note", {"content": private, "private": True})) == "noted"
        await client.call_tool("note", {"content": f"public: {SECRET}"})
        await client.call_tool("broken_view", {"content": private})
    assert "Aiko" not in json_log.text()
    assert SECRET not in json_log.text()
    private_call, public_call, broken_call = json_log.events("tool_call")
    assert private_call["args"] == {"content": PRIVATE_MARK, "private": True, "content_length": len(private)}
    assert public_call["args"] == {"content": "public: [REDACTED]", "private": False}
    assert broken_call["args"] == {"arguments": "[WITHHELD: log view failed]"}


async def test_a_tool_with_an_invalid_schema_is_refused_and_the_rest_served(
    make_host: HostFactory, demo: Demo, mode: str
) -> None:
    class BadSchema:
        @hookimpl
        def register_tools(self, register: Callable[[Tool], None]) -> None:
            register(Tool(name="bad", description="d", input_schema={"type": "objekt"}, handler=lambda _args, _ctx: ""))

    host = make_host({"bad": BadSchema(), "demo": demo})
    [failure] = host.failures
    assert (failure.plugin, failure.stage) == ("bad", "register")
    assert "tool 'bad' has an invalid input schema" in failure.reason
    async with mcp_client(host, mode=mode) as client:
        served = {t.name for t in (await client.list_tools()).tools}
        assert served == {"wake_up", "introspect", "attune", "count", "acount"}


async def test_a_declined_answer_is_not_an_error_but_is_announced_as_declined(
    json_log: JsonLog, host: PluginHost, demo: Demo
) -> None:
    async with mcp_client(host) as client:
        result = await client.call_tool("count", {"mode": "declined"})
        done = await client.call_tool("count", {"mode": "ok"})
    assert not result.is_error
    assert tool_text(result).startswith("Not counted: already counted.")
    assert not done.is_error
    outcomes = [(tool, outcome.declined, outcome.is_error) for tool, _args, outcome in demo.calls]
    assert outcomes == [("count", True, False), ("count", False, False)]
    assert [r["outcome"] for r in json_log.records() if r.get("event") == "tool_call"] == ["declined", "ok"]
