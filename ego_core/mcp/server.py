"""The MCP server: tools, prompts and resources from plugins, served over stdio or streamable HTTP with per-agent
bearer tokens.

Built on the MCP Python SDK's low-level ``mcp.server.Server`` (the engine under ``MCPServer``): plugins
supply compact JSON Schemas, and the core validates arguments itself so that errors name the parameter and
the accepted form without ever echoing a (possibly private) value.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import anyio
import anyio.to_thread
import attrs
import mcp_types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp_types.jsonrpc import INVALID_REQUEST

from ego_core.errors import InvalidArgumentError, ToolError
from ego_core.kernel.context import PluginContext
from ego_core.kernel.host import PluginHost
from ego_core.kernel.logs import log_event
from ego_core.mcp.agents import AgentHosts
from ego_core.mcp.surface import SurfaceRunner
from ego_core.mcp.validation import ArgumentError, ArgumentValidator
from ego_core.progress import ProgressChannel, reporting_to
from ego_core.progress import Send as ProgressSend
from ego_core.responses import compose, scaffold_text
from ego_core.types import Claim, Response, ScaffoldContext, ScaffoldItem, Tool, ToolOutcome
from ego_core.version import __version__

_log = logging.getLogger("ego.server")

INSTRUCTIONS = "ego keeps your memories, desires and sense of self across sessions. Begin with wake_up."
TOKEN_SCOPE = "ego"  # noqa: S105 (an OAuth scope name, not a secret)


CLAIMS_META = "ego/claims"
"""The ``_meta`` key of a tool result's claims (``EGO_CLAIMS=1``): a list of ``ego_core.Claim`` as JSON."""


def _text_result(text: str, *, is_error: bool = False, claims: Sequence[Claim] | None = None) -> types.CallToolResult:
    meta = {CLAIMS_META: [claim_json(claim) for claim in claims]} if claims is not None else None
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error, _meta=meta)


def claim_json(claim: Claim) -> dict[str, Any]:
    """A claim as JSON: every field that is set, datetimes in ISO 8601."""
    found: dict[str, Any] = {}
    for field in attrs.fields(Claim):
        value = getattr(claim, field.name)
        if value in ("", None, ()):
            continue
        found[field.name] = (
            value.isoformat() if isinstance(value, datetime) else list(value) if isinstance(value, tuple) else value
        )
    return found


class ToolRunner:
    """Validates, runs, composes, logs and announces one tool call."""

    def __init__(self, host: PluginHost, *, owner: bool = False) -> None:
        """``owner``: the runner of the owner's own surface (the dashboard), which may also run the tools of
        tier ``"owner"``; an agent's runner never does."""
        self.host = host
        self.owner = owner
        self._validators: dict[str, ArgumentValidator] = {}
        for _plugin, tool in host.tools(owner=owner):
            self._validators[tool.name] = ArgumentValidator(tool.input_schema)

    def list_tools(self) -> list[types.Tool]:
        return [
            types.Tool(name=tool.name, description=tool.description, input_schema=dict(tool.input_schema))
            for _plugin, tool in self.host.tools(owner=self.owner)
        ]

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        found = self.host.tool(name, owner=self.owner)
        return dict(found[1].input_schema) if found else None

    def served(self) -> set[str]:
        return {tool.name for _plugin, tool in self.host.tools(owner=self.owner)}

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        agent: str | None = None,
        progress: ProgressSend | None = None,
    ) -> types.CallToolResult:
        """Run one call; ``progress`` sends the client a progress notification (the request's own progress
        token), for what the handler reports through ``ctx.progress``."""
        started = time.perf_counter()
        found = self.host.tool(name, owner=self.owner)
        if found is None:
            available = ", ".join(sorted(self.served()))
            text = f"Unknown tool: {name}. Available tools: {available}."
            # no tool, so no log view: argument names only, never values
            fields: dict[str, Any] = {
                "tool": name[:100],
                "outcome": "unknown_tool",
                "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                "arg_names": sorted(str(key)[:100] for key in (arguments or {}))[:20],
                "response_chars": len(text),
            }
            if agent:
                fields["agent"] = agent
            log_event(_log, "tool_call", **fields)
            return _text_result(text, is_error=True)
        plugin, tool = found
        outcome = "ok"
        declined = False
        args: dict[str, Any] = dict(arguments or {})
        claims: Sequence[Claim] = ()
        try:
            args = self._validators[name].validate(arguments)
            result = await self._handle(tool, args, self.host.context(plugin), progress)
            text = await anyio.to_thread.run_sync(self._render, name, args, result)
            claims = result.claims if isinstance(result, Response) else ()
            is_error = False
            declined = isinstance(result, Response) and result.declined
            if declined:
                outcome = "declined"
        except ArgumentError as exc:
            outcome, is_error = "invalid", True
            text = f"Invalid arguments for {name}: {exc}. Fix the call and try again."
        except InvalidArgumentError as exc:  # the same form as a schema violation, whoever found it
            outcome, is_error = "invalid", True
            message = f"Invalid arguments for {name}: `{exc.parameter}`: {exc.expected}. Fix the call and try again."
            text = compose(message, scaffold_text(exc.scaffold, self.served()))
        except ToolError as exc:
            outcome, is_error = "error", True
            text = compose(exc.message, scaffold_text(exc.scaffold, self.served()))
        except Exception:
            outcome, is_error = "crash", True
            _log.error("tool %s (plugin %s) crashed", name, plugin, exc_info=True)
            text = (
                f"Internal error in {name} (plugin {plugin}). It was logged; the call did not complete, "
                "so retrying the same call will likely fail again."
            )
        duration_ms = (time.perf_counter() - started) * 1000
        self._log_call(
            tool=tool,
            plugin=plugin,
            args=args,
            outcome=outcome,
            duration_ms=duration_ms,
            response_chars=len(text),
            agent=agent,
        )
        if outcome != "invalid":
            outcome_value = ToolOutcome(plugin=plugin, is_error=is_error, text=text, declined=declined)
            await anyio.to_thread.run_sync(
                lambda: self.host.hooks.on_tool_called(tool=name, args=args, result=outcome_value)
            )
        shown = (claims if not is_error else ()) if self.host.settings.claims else None
        return _text_result(text, is_error=is_error, claims=shown)

    async def _handle(
        self, tool: Tool, args: Mapping[str, Any], ctx: PluginContext, progress: ProgressSend | None
    ) -> object:
        """The handler's result (called with ``ctx``, the context of the tool's plugin); what it reports through
        ``ctx.progress`` goes to ``progress``, in order."""
        if progress is None:
            return await _run_handler(tool, args, ctx)
        channel = ProgressChannel(progress)
        result: object = None
        failure: Exception | None = None
        async with anyio.create_task_group() as group:
            group.start_soon(channel.run)
            try:
                with reporting_to(channel):
                    result = await _run_handler(tool, args, ctx)
            except Exception as exc:  # raised below, unwrapped by the task group
                failure = exc
            finally:
                channel.close()
        if failure is not None:
            raise failure
        return result

    def _render(self, name: str, args: Mapping[str, Any], result: object) -> str:
        if isinstance(result, str):
            response = Response(data=result)
        elif isinstance(result, Response):
            response = result
        else:
            raise TypeError(f"tool {name} returned {type(result).__name__}, expected str or ego_core.Response")
        items: list[ScaffoldItem] = list(response.scaffold)
        if not response.hinted:
            context = ScaffoldContext(tool=name, arguments=args, data=response.data)
            for _plugin, lines in self.host.hooks.scaffold_for(tool=name, context=context):
                items.extend(lines)
        return compose(response.data, scaffold_text(items, self.served()))

    def _log_call(
        self,
        *,
        tool: Tool,
        plugin: str,
        args: Mapping[str, Any],
        outcome: str,
        duration_ms: float,
        response_chars: int,
        agent: str | None,
    ) -> None:
        fields: dict[str, Any] = {
            "tool": tool.name,
            "plugin": plugin,
            "outcome": outcome,
            "duration_ms": round(duration_ms, 2),
            "args": self._arguments_for_log(tool, args, rejected=outcome == "invalid"),
            "args_chars": sum(len(str(v)) for v in args.values()),
            "response_chars": response_chars,
        }
        if agent:
            fields["agent"] = agent
        log_event(_log, "tool_call", **fields)

    def _arguments_for_log(self, tool: Tool, args: Mapping[str, Any], *, rejected: bool) -> Mapping[str, Any]:
        """Names, types and sizes of the arguments; their values (redacted) only when ``log_arguments`` is on
        and the call was valid (a rejected call may be oversized or malformed)."""
        if rejected or not self.host.settings.log_arguments:
            return argument_shapes(args)
        try:
            return dict(tool.log_view(args)) if tool.log_view is not None else dict(args)
        except Exception:
            return {"arguments": "[WITHHELD: log view failed]"}


async def _run_handler(tool: Tool, args: Mapping[str, Any], ctx: PluginContext) -> object:
    if inspect.iscoroutinefunction(tool.handler):
        result: object = await tool.handler(args, ctx)
    else:
        result = await anyio.to_thread.run_sync(tool.handler, args, ctx)
    if inspect.isawaitable(result):
        result = await result
    return result


def argument_shapes(args: Mapping[str, Any]) -> dict[str, Any]:
    """``{"content": {"type": "string", "chars": 42}, "tags": {"type": "array", "items": 3}, ...}``: what a log
    may say about arguments without holding any of their text (a recall query is the agent's thought too)."""
    shapes: dict[str, Any] = {}
    for name, value in list(args.items())[:50]:
        key = str(name)[:64]
        if isinstance(value, str):
            shapes[key] = {"type": "string", "chars": len(value)}
        elif isinstance(value, bool) or value is None:
            shapes[key] = {"type": "boolean" if isinstance(value, bool) else "null"}
        elif isinstance(value, int | float):
            shapes[key] = {"type": "number"}
        elif isinstance(value, Mapping):
            shapes[key] = {"type": "object", "keys": len(value)}
        elif isinstance(value, list | tuple):
            shapes[key] = {"type": "array", "items": len(value)}
        else:
            shapes[key] = {"type": type(value).__name__}
    return shapes


def build_server(host: PluginHost, *, agents: AgentHosts | None = None) -> Server[None]:
    """An MCP server for ``host``: the host starts when the first connection opens, stops with the last.

    With ``agents`` (HTTP), each call is served by the host of the agent its bearer token names; ``host`` (one of
    them: they serve the same plugins) answers what is the same for all, such as the tool list.
    """
    runner = ToolRunner(host)
    runners = {agent: ToolRunner(agent_host) for agent, agent_host in agents.hosts.items()} if agents else {}
    surface = SurfaceRunner(host)
    surfaces = {agent: SurfaceRunner(agent_host) for agent, agent_host in agents.hosts.items()} if agents else {}

    def surface_of_caller() -> SurfaceRunner:
        """The host that serves this request: over HTTP the one of the agent its token names."""
        if agents is None:
            return surface
        token = get_access_token()
        chosen = surfaces.get(token.client_id) if token is not None else None
        if chosen is None:  # the token verifier admits configured agents only; never serve another's space
            raise MCPError(code=INVALID_REQUEST, message="This connection has no agent of its own; it cannot use ego.")
        return chosen

    @asynccontextmanager
    async def lifespan(_server: Server[None]) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(agents.start if agents else host.start)
        try:
            yield None
        finally:
            await anyio.to_thread.run_sync(agents.stop if agents else host.stop)

    async def on_list_tools(
        _ctx: ServerRequestContext[None], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=runner.list_tools())

    async def on_call_tool(
        ctx: ServerRequestContext[None], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        token = get_access_token()
        agent = token.client_id if token else None
        progress = ctx.session.report_progress  # a no-op unless the request carries a progress token
        if agents is None:
            return await runner.call(params.name, params.arguments, agent=agent, progress=progress)
        chosen = runners.get(agent) if agent is not None else None
        if chosen is None:  # the token verifier admits configured agents only; never serve another's space
            return _text_result("This connection has no agent of its own; it cannot use ego.", is_error=True)
        return await chosen.call(params.name, params.arguments, agent=agent, progress=progress)

    async def on_list_prompts(
        _ctx: ServerRequestContext[None], _params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=surface.list_prompts())

    async def on_get_prompt(
        _ctx: ServerRequestContext[None], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        return await surface_of_caller().get_prompt(params.name, params.arguments)

    async def on_list_resources(
        _ctx: ServerRequestContext[None], _params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=surface.list_resources())

    async def on_list_resource_templates(
        _ctx: ServerRequestContext[None], _params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=surface.list_templates())

    async def on_read_resource(
        _ctx: ServerRequestContext[None], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await surface_of_caller().read_resource(str(params.uri))

    async def on_completion(
        _ctx: ServerRequestContext[None], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        return await surface_of_caller().complete(params.ref, params.argument.name, params.argument.value)

    server: Server[None] = Server(
        "ego",
        version=__version__,
        title="ego",
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        get_tool_input_schema=runner.input_schema,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_prompts=on_list_prompts,
        on_get_prompt=on_get_prompt,
        on_list_resources=on_list_resources,
        on_list_resource_templates=on_list_resource_templates,
        on_read_resource=on_read_resource,
        on_completion=on_completion,
    )
    return server
