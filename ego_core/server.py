"""The MCP server: tools from plugins, served over stdio or streamable HTTP with per-agent bearer tokens.

Built on the MCP Python SDK's low-level ``mcp.server.Server`` (the engine under ``MCPServer``): plugins
supply compact JSON Schemas, and the core validates arguments itself so that errors name the parameter and
the accepted form without ever echoing a (possibly private) value.
"""

from __future__ import annotations

import hashlib
import hmac
import inspect
import json
import logging
import secrets
import socket
import sys
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ego_core.errors import ToolError
from ego_core.host import PluginHost
from ego_core.logs import log_event
from ego_core.responses import compose, scaffold_text
from ego_core.types import Response, ScaffoldContext, ScaffoldItem, Tool, ToolOutcome
from ego_core.validation import ArgumentError, ArgumentValidator
from ego_core.version import __version__

_log = logging.getLogger("ego.server")

INSTRUCTIONS = "ego keeps your memories, desires and sense of self across sessions. Begin with wake_up."
TOKEN_SCOPE = "ego"  # noqa: S105 (an OAuth scope name, not a secret)


def _text_result(text: str, *, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)


class ToolRunner:
    """Validates, runs, composes, logs and announces one tool call."""

    def __init__(self, host: PluginHost) -> None:
        self.host = host
        self._validators: dict[str, ArgumentValidator] = {}
        for _plugin, tool in host.tools():
            self._validators[tool.name] = ArgumentValidator(tool.input_schema)

    def list_tools(self) -> list[types.Tool]:
        return [
            types.Tool(name=tool.name, description=tool.description, input_schema=dict(tool.input_schema))
            for _plugin, tool in self.host.tools()
        ]

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        found = self.host.tool(name)
        return dict(found[1].input_schema) if found else None

    def served(self) -> set[str]:
        return {tool.name for _plugin, tool in self.host.tools()}

    async def call(
        self, name: str, arguments: Mapping[str, Any] | None, agent: str | None = None
    ) -> types.CallToolResult:
        started = time.perf_counter()
        found = self.host.tool(name)
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
        try:
            args = self._validators[name].validate(arguments)
            if inspect.iscoroutinefunction(tool.handler):
                result = await tool.handler(args)
            else:
                result = await anyio.to_thread.run_sync(tool.handler, args)
            if inspect.isawaitable(result):
                result = await result
            text = await anyio.to_thread.run_sync(self._render, name, args, result)
            is_error = False
            declined = isinstance(result, Response) and result.declined
            if declined:
                outcome = "declined"
        except ArgumentError as exc:
            outcome, is_error = "invalid", True
            text = f"Invalid arguments for {name}: {exc}. Fix the call and try again."
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
        return _text_result(text, is_error=is_error)

    def _render(self, name: str, args: Mapping[str, Any], result: object) -> str:
        if isinstance(result, str):
            response = Response(data=result)
        elif isinstance(result, Response):
            response = result
        else:
            raise TypeError(f"tool {name} returned {type(result).__name__}, expected str or ego_core.Response")
        items: list[ScaffoldItem] = list(response.scaffold)
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


def build_server(host: PluginHost) -> Server[None]:
    """An MCP server for ``host``: the host starts when the first connection opens, stops with the last."""
    runner = ToolRunner(host)

    @asynccontextmanager
    async def lifespan(_server: Server[None]) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(host.start)
        try:
            yield None
        finally:
            await anyio.to_thread.run_sync(host.stop)

    async def on_list_tools(
        _ctx: ServerRequestContext[None], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=runner.list_tools())

    async def on_call_tool(
        _ctx: ServerRequestContext[None], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        token = get_access_token()
        return await runner.call(params.name, params.arguments, agent=token.client_id if token else None)

    server: Server[None] = Server(
        "ego",
        version=__version__,
        title="ego",
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        get_tool_input_schema=runner.input_schema,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
    return server


# ------------------------------------------------------------------------------------------------------
# HTTP with bearer tokens


def hash_token(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return "ego_" + secrets.token_urlsafe(32)


class HashedTokenVerifier:
    """Accepts a bearer token whose SHA-256 matches one configured per agent; the agent is the client id."""

    def __init__(self, tokens: Mapping[str, str]) -> None:
        self._tokens = dict(tokens)

    async def verify_token(self, token: str) -> AccessToken | None:
        digest = hash_token(token)
        agent = None
        for candidate, expected in self._tokens.items():
            if hmac.compare_digest(digest, expected):
                agent = candidate
        if agent is None:
            log_event(_log, "auth_rejected", logging.WARNING)
            return None
        return AccessToken(token=token, client_id=agent, scopes=[TOKEN_SCOPE])


def http_app(host: PluginHost, *, bind_host: str, port: int, path: str, tokens: Mapping[str, str]) -> Starlette:
    if not tokens:
        raise ValueError(
            "HTTP serving needs at least one agent token: run `ego token new <agent>` and put the printed "
            "line under [server.tokens] in ego.toml (or set EGO_HTTP_TOKENS)"
        )
    server = build_server(host)
    base = f"http://{bind_host if ':' not in bind_host else f'[{bind_host}]'}:{port}"
    auth = AuthSettings(
        issuer_url=AnyHttpUrl(base),
        resource_server_url=AnyHttpUrl(base + path),
        required_scopes=[TOKEN_SCOPE],
        validate_token_resource=False,
    )
    app = server.streamable_http_app(
        streamable_http_path=path,
        stateless_http=True,
        host=bind_host,
        auth=auth,
        token_verifier=HashedTokenVerifier(tokens),
    )
    app.add_middleware(JsonErrors, path=path)
    return app


class JsonErrors:
    """Every 4xx/5xx answer has a JSON body (``{"error": ...}``), including the router's 404 and the SDK's
    plain-text refusals; a GET of the MCP path is 405, as this stateless server offers no event stream."""

    def __init__(self, app: ASGIApp, path: str) -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] == "GET" and scope["path"].rstrip("/") == self.path.rstrip("/"):
            message = "this server offers no event stream over GET; send JSON-RPC requests with POST"
            await _send_json(send, 405, {"error": message}, extra=[(b"allow", b"POST")])
            return
        held: dict[str, Any] = {}

        async def send_json_errors(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = {k.lower(): v for k, v in message.get("headers", [])}
                if message["status"] >= 400 and not headers.get(b"content-type", b"").startswith(b"application/json"):
                    held["start"] = message
                    held["body"] = b""
                    return
            elif message["type"] == "http.response.body" and "start" in held:
                held["body"] += message.get("body", b"")
                if message.get("more_body", False):
                    return
                start = held["start"]
                text = held["body"].decode("utf-8", "replace").strip() or HTTPStatus(start["status"]).phrase
                keep = [(k, v) for k, v in start.get("headers", []) if k.lower() in (b"www-authenticate", b"allow")]
                await _send_json(send, start["status"], {"error": text}, extra=keep)
                return
            await send(message)

        await self.app(scope, receive, send_json_errors)


async def _send_json(send: Send, status: int, payload: Mapping[str, Any], extra: list[tuple[bytes, bytes]]) -> None:
    body = json.dumps(payload).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def check_listen_address(bind_host: str, port: int, path: str) -> None:
    """A clear error (ValueError) for an HTTP address ego cannot serve at, before the server starts."""
    if not path.startswith("/"):
        raise ValueError(f"--path: expected a URL path starting with /, got {path!r}")
    try:
        infos = socket.getaddrinfo(bind_host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError):
        raise ValueError(f"--host: {bind_host!r} is not an IP address or a resolvable host name") from None
    family, kind, proto, _name, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise ValueError(
                f"cannot listen on {bind_host}:{port} ({exc.strerror}); choose another --port or --host"
            ) from None


def serve_http(host: PluginHost, *, bind_host: str, port: int, path: str, tokens: Mapping[str, str]) -> None:
    import uvicorn

    check_listen_address(bind_host, port, path)
    app = http_app(host, bind_host=bind_host, port=port, path=path, tokens=tokens)
    config = uvicorn.Config(app, host=bind_host, port=port, log_config=None, access_log=False, lifespan="on")
    _log.info("serving MCP over HTTP at http://%s:%d%s", bind_host, port, path)
    shown_host = f"[{bind_host}]" if ":" in bind_host else bind_host
    print(f"ego: serving MCP over HTTP at http://{shown_host}:{port}{path}; Ctrl-C stops", file=sys.stderr)
    host.start()  # before listening: a configuration error ends the process with its message
    try:
        uvicorn.Server(config).run()
    finally:
        host.stop()
