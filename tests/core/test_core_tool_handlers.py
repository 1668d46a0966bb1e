"""Tool handlers are called ``handler(args, ctx)`` with the context of the plugin that registered the tool; a
handler written as ``handler(args)`` still runs, with a DeprecationWarning at registration."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import attrs
import pytest

from ego_core import PluginContext, Response, Tool, hookimpl
from ego_core.testing import HostFactory, ToolRunner, mcp_client, tool_text

pytestmark = pytest.mark.anyio

EMPTY: Mapping[str, Any] = {"type": "object", "properties": {}}


@attrs.frozen
class GreeterConfig:
    greeting: str = "hello"


class Greeter:
    """Answers with its own plugin id, its config and the host clock, all read from the ``ctx`` of the call."""

    config_class = GreeterConfig

    def __init__(self, tool: str) -> None:
        self.tool = tool

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(Tool(name=self.tool, description="Greet.", input_schema=EMPTY, handler=self.greet))
        register(Tool(name=f"{self.tool}_async", description="Greet.", input_schema=EMPTY, handler=self.agreet))
        register(
            Tool(name=f"{self.tool}_owner", description="Greet.", input_schema=EMPTY, handler=self.greet, tier="owner")
        )

    def greet(self, _args: Mapping[str, Any], ctx: PluginContext) -> Response:
        config: GreeterConfig = ctx.config
        return Response(f"{config.greeting} from {ctx.plugin_id} at {ctx.now():%Y}")

    async def agreet(self, args: Mapping[str, Any], ctx: PluginContext) -> str:
        return f"async {self.greet(args, ctx).data}"


class Legacy:
    """A third-party plugin written before handlers took ``ctx``."""

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(Tool(name="old_sync", description="Old.", input_schema=EMPTY, handler=self.old))
        register(Tool(name="old_async", description="Old.", input_schema=EMPTY, handler=self.aold))
        register(Tool(name="old_lambda", description="Old.", input_schema=EMPTY, handler=lambda args: "lambda"))

    def old(self, args: Mapping[str, Any]) -> str:
        return f"old with {sorted(args)}"

    async def aold(self, _args: Mapping[str, Any]) -> str:
        return "old async"


def greeting_hosts(make_host: HostFactory) -> Any:
    host = make_host(
        {"first": Greeter("first_greet"), "second": Greeter("second_greet")},
        config={"first": {"greeting": "bonjour"}, "second": {"greeting": "こんにちは"}},
    )
    host.start()
    return host


async def test_each_handler_gets_the_context_of_the_plugin_that_registered_it(make_host: HostFactory) -> None:
    host = greeting_hosts(make_host)
    async with mcp_client(host) as client:
        first = tool_text(await client.call_tool("first_greet", {}))
        second = tool_text(await client.call_tool("second_greet", {}))
        second_async = tool_text(await client.call_tool("second_greet_async", {}))
    year = f"{host.clock.now():%Y}"
    assert first.startswith(f"bonjour from first at {year}")
    assert second.startswith(f"こんにちは from second at {year}")
    assert second_async.startswith(f"async こんにちは from second at {year}")


async def test_an_owner_tool_run_by_the_owner_surface_gets_its_plugin_context(make_host: HostFactory) -> None:
    host = greeting_hosts(make_host)
    result = await ToolRunner(host, owner=True).call("second_greet_owner", {})
    assert not result.is_error
    assert tool_text(result).startswith("こんにちは from second")


async def test_a_handler_taking_only_the_arguments_still_runs_and_is_deprecated_at_registration(
    make_host: HostFactory,
) -> None:
    with pytest.warns(DeprecationWarning, match="will stop working in ego-core 1.0") as caught:
        host = make_host({"legacy": Legacy()})
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    for tool in ("old_sync", "old_async", "old_lambda"):
        (message,) = [m for m in messages if f"tool {tool!r}" in m]
        assert "(args, ctx)" in message
        assert "ego-core 1.0" in message
    assert all(w.filename == __file__ for w in caught)  # the warning points at the plugin's register call
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # no more warnings: only the registration warned
        host.start()
        async with mcp_client(host) as client:
            assert tool_text(await client.call_tool("old_sync", {})).startswith("old with []")
            assert tool_text(await client.call_tool("old_async", {})).startswith("old async")
            assert tool_text(await client.call_tool("old_lambda", {})).startswith("lambda")


def test_handlers_that_take_args_and_ctx_are_not_deprecated(make_host: HostFactory) -> None:
    def plain(args: Mapping[str, Any], ctx: PluginContext, extra: str = "") -> str:
        return f"{ctx.plugin_id}{extra}"

    class Modern:
        @hookimpl
        def register_tools(self, register: Callable[[Tool], None]) -> None:
            register(Tool(name="plain", description="d", input_schema=EMPTY, handler=plain))
            register(Tool(name="bound", description="d", input_schema=EMPTY, handler=partial(plain, extra="!")))
            register(Tool(name="star", description="d", input_schema=EMPTY, handler=lambda *given: "star"))

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        host = make_host({"modern": Modern()})
        host.start()
    assert not host.failures
    found = host.tool("bound")
    assert found is not None
    assert found[1].handler({}, host.context(found[0])) == "modern!"
