"""``ego connect``: a stdio MCP client (Claude Desktop, OpenClaw) served by one running ``ego serve --http``.

A message-level bridge: each JSON-RPC line the client writes on stdin is POSTed, unchanged, to the MCP endpoint
with the agent's bearer token; every message of the answer (a JSON body, or an event stream carrying progress
notifications before the response) is written back on stdout, unchanged. Prompts, resources, completion,
progress and the server's errors pass through without the bridge knowing them. The bridge adds only the HTTP
headers the streamable-HTTP transport asks for: the negotiated protocol version (from the ``initialize``
answer, or each request's own ``_meta`` in the 2026 protocol), ``Mcp-Method``/``Mcp-Name``, the
``Mcp-Param-*`` headers a tool's schema declares, and the session id when the server gives one.

When the server cannot answer (not running, stopped mid-call, the token refused), the request still gets an
answer at once: a ``tools/call`` an ``isError`` result, any other request a JSON-RPC error, each naming the URL
and what to do. The bridge loads no plugin and no model; the token is never printed or logged.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import logging
import os
import re
import sys
from collections.abc import Iterator, Mapping
from typing import Any, BinaryIO
from urllib.parse import urlsplit

import anyio
import httpx2
from anyio.abc import TaskGroup

from ego_core.errors import UsageError

_log = logging.getLogger("ego.connect")

DEFAULT_URL = "http://127.0.0.1:8765/mcp"
TOKEN_VARIABLE = "EGO_TOKEN"  # noqa: S105 (a variable name, not a secret)
# The streamable-HTTP transport's names (the MCP specification; the SDK's mcp.shared.inbound has the same).
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
VERSION_HEADER = "mcp-protocol-version"
METHOD_HEADER = "mcp-method"
NAME_HEADER = "mcp-name"
SESSION_HEADER = "mcp-session-id"
PARAM_HEADER_PREFIX = "Mcp-Param-"
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
SERVER_ERROR = -32000
"""JSON-RPC "server error": the code of the bridge's own answers when the server could not give one."""
CONNECT_SECONDS = 10.0
MAX_LINE = 64 * 1024 * 1024


class ServerUnreachableError(Exception):
    """The server gave no MCP answer; the message says why and what to do."""


def header_value(value: str) -> str:
    """A header value as the transport writes it: printable ASCII as it is, anything else base64-wrapped."""
    if re.fullmatch(r"[\x20-\x7E]*", value) and value == value.strip() and not value.startswith("=?base64?"):
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8')).decode('ascii')}?="


def declared_headers(schema: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """``(property path, token)`` of each ``x-mcp-header`` reachable through ``properties`` alone."""
    if not isinstance(schema, Mapping):
        return
    token = schema.get("x-mcp-header")
    if path and isinstance(token, str):
        yield path, token
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, sub in properties.items():
            yield from declared_headers(sub, (*path, str(name)))


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, str | int | float) else None


class Bridge:
    """One stdio client's session with one MCP endpoint."""

    def __init__(self, url: str, token: str, wire: BinaryIO, client: httpx2.AsyncClient) -> None:
        self.url = url
        self._token = token
        self._wire = wire
        self._client = client
        self._write_lock = anyio.Lock()
        self._legacy_version: str | None = None
        self._session: str | None = None
        self._initialize_ids: set[Any] = set()
        self._tools_list_ids: set[Any] = set()
        self._param_headers: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        self._in_flight: dict[Any, anyio.CancelScope] = {}
        self._modern_ids: set[Any] = set()
        self.client_gone = False

    # -- writing to the client

    async def write(self, message: Any) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        async with self._write_lock:
            try:
                await anyio.to_thread.run_sync(self._wire.write, data)
            except (BrokenPipeError, ValueError, OSError):
                self.client_gone = True  # the client closed its end: nothing more can reach it

    async def passed_back(self, message: Any) -> None:
        """A message from the server, noted (protocol version, tool schemas) and written to the client."""
        if isinstance(message, dict) and "id" in message and "result" in message:
            result = message["result"]
            if message["id"] in self._initialize_ids and isinstance(result, dict):
                version = result.get("protocolVersion")
                self._legacy_version = version if isinstance(version, str) else None
            if message["id"] in self._tools_list_ids and isinstance(result, dict):
                for tool in result.get("tools") or []:
                    if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                        found = list(declared_headers(tool.get("inputSchema")))
                        if found:
                            self._param_headers[tool["name"]] = found
        await self.write(message)

    # -- reading from the client

    def headers_for(self, message: Any) -> dict[str, str]:
        headers = {
            "authorization": f"Bearer {self._token}",
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
        }
        if self._session:
            headers[SESSION_HEADER] = self._session
        if not isinstance(message, dict):
            return headers
        params: dict[str, Any] = message["params"] if isinstance(message.get("params"), dict) else {}
        meta: dict[str, Any] = params["_meta"] if isinstance(params.get("_meta"), dict) else {}
        method = message.get("method")
        modern = meta.get(PROTOCOL_VERSION_META)
        if isinstance(modern, str):
            headers[VERSION_HEADER] = modern
            if isinstance(method, str):
                headers[METHOD_HEADER] = method
                name = params.get(NAME_BEARING.get(method, ""))
                if isinstance(name, str):
                    headers[NAME_HEADER] = header_value(name)
        elif self._legacy_version and method != "initialize":
            headers[VERSION_HEADER] = self._legacy_version
        if method == "tools/call" and isinstance(params.get("name"), str):
            arguments: Any = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
            for path, token in self._param_headers.get(params["name"], []):
                node: Any = arguments
                for key in path:
                    node = node.get(key) if isinstance(node, dict) else None
                rendered = _scalar(node) if node is not None else None
                if rendered is not None:
                    headers[PARAM_HEADER_PREFIX + token] = header_value(rendered)
        return headers

    async def handle_line(self, line: bytes, tasks: TaskGroup) -> None:
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            message = None  # sent as it is: the server answers it with its own parse error
        is_request = isinstance(message, dict) and "method" in message and "id" in message
        if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
            request_id = (message.get("params") or {}).get("requestId")
            scope = self._in_flight.get(request_id)
            if scope is not None and request_id in self._modern_ids:
                scope.cancel()  # in the 2026 protocol, closing the request's stream is its cancellation
                return
        if not is_request:
            await self.post(line, message)  # in order: a notification or response before the next request
            return
        assert isinstance(message, dict)
        if message.get("method") == "initialize":
            self._initialize_ids.add(message["id"])
        if message.get("method") == "tools/list":
            self._tools_list_ids.add(message["id"])
        meta = (message.get("params") or {}).get("_meta") if isinstance(message.get("params"), dict) else None
        if isinstance(meta, dict) and isinstance(meta.get(PROTOCOL_VERSION_META), str):
            self._modern_ids.add(message["id"])
        scope = anyio.CancelScope()
        self._in_flight[message["id"]] = scope
        tasks.start_soon(self._request, line, message, scope)

    async def _request(self, line: bytes, message: dict[str, Any], scope: anyio.CancelScope) -> None:
        request_id = message["id"]
        try:
            with scope:
                answered = await self.post(line, message)
                if not answered:
                    raise ServerUnreachableError(
                        f"the ego server at {self.url} accepted the request but sent no answer"
                    )
        except ServerUnreachableError as exc:
            await self.answer_failure(message, str(exc))
        finally:
            self._in_flight.pop(request_id, None)
            self._modern_ids.discard(request_id)
            self._initialize_ids.discard(request_id)
            self._tools_list_ids.discard(request_id)

    # -- the HTTP side

    async def post(self, line: bytes, message: Any) -> bool:
        """POST one message; write every message of the answer to the client. True when a response (or error)
        to the request came back."""
        request_id = message.get("id") if isinstance(message, dict) else None
        is_request = isinstance(message, dict) and "method" in message and "id" in message
        try:
            async with self._client.stream(
                "POST", self.url, content=line.strip(), headers=self.headers_for(message)
            ) as response:
                session = response.headers.get(SESSION_HEADER)
                if session:
                    self._session = session
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if response.status_code >= 400:
                    body = await response.aread()
                    return await self._error_status(response.status_code, kind, body, request_id, is_request)
                if kind == "application/json":
                    body = await response.aread()
                    if body.strip():
                        await self.passed_back(self._with_id(json.loads(body), request_id))
                        return True
                    return False
                if kind == "text/event-stream":
                    return await self._events(response, request_id)
                return False
        except httpx2.ConnectError as exc:
            if not is_request:
                self.report(f"the ego server at {self.url} is not running or not reachable ({_reason(exc)})")
                return False
            raise ServerUnreachableError(
                f"ego connect: the ego server at {self.url} is not running or not reachable ({_reason(exc)}). "
                "Start it with `ego serve --http` (docs/connect.md), then try again."
            ) from None
        except (httpx2.TransportError, httpx2.StreamError, ValueError) as exc:
            if not is_request:
                self.report(f"the ego server at {self.url} did not take a message ({_reason(exc)})")
                return False
            raise ServerUnreachableError(
                f"ego connect: the connection to the ego server at {self.url} broke before it answered "
                f"({_reason(exc)}); the server may have stopped. Check that `ego serve --http` is running "
                "(restart it if not), then try again."
            ) from None

    async def _events(self, response: httpx2.Response, request_id: Any) -> bool:
        async for event in httpx2.EventSource(response, max_event_size=MAX_LINE):
            if event.event not in ("", "message") or not event.data:
                continue
            message = self._with_id(json.loads(event.data), request_id)
            await self.passed_back(message)
            if isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message):
                return True
        return False

    @staticmethod
    def _with_id(message: Any, request_id: Any) -> Any:
        """An error answered under ``id: null`` (rejected before its id was read) under the request's id."""
        if isinstance(message, dict) and "error" in message and message.get("id") is None and request_id is not None:
            return {**message, "id": request_id}
        return message

    async def _error_status(self, status: int, kind: str, body: bytes, request_id: Any, is_request: bool) -> bool:
        if kind == "application/json":
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict) and parsed.get("jsonrpc") == "2.0" and "error" in parsed:
                if is_request or parsed.get("id") is not None:
                    await self.passed_back(self._with_id(parsed, request_id))
                return True
        detail = _error_text(body)
        if status in (401, 403):
            text = (
                f"ego connect: the ego server at {self.url} refused this agent's token (HTTP {status}). Give the "
                f"token `ego token new AGENT` printed with --token or {TOKEN_VARIABLE}, and check that its hash is "
                "under [server.tokens] in the server's ego.toml."
            )
        elif status == 404:
            text = (
                f"ego connect: there is no MCP endpoint at {self.url} (HTTP 404); check the URL's path (default /mcp)."
            )
        else:
            text = f"ego connect: the ego server at {self.url} answered HTTP {status}" + (
                f": {detail}" if detail else ""
            )
        if not is_request:
            self.report(text)
            return False
        raise ServerUnreachableError(text)

    async def answer_failure(self, request: dict[str, Any], text: str) -> None:
        """Answer a request the server could not: an ``isError`` tool result, else a JSON-RPC error."""
        self.report(text)
        if request.get("method") == "tools/call":
            result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": True}
            if request["id"] in self._modern_ids:
                result["resultType"] = "complete"
            await self.write({"jsonrpc": "2.0", "id": request["id"], "result": result})
            return
        error = {"code": SERVER_ERROR, "message": text}
        await self.write({"jsonrpc": "2.0", "id": request["id"], "error": error})

    def report(self, text: str) -> None:
        """The client's log (stderr); never the token."""
        print(text if text.startswith("ego connect") else f"ego connect: {text}", file=sys.stderr, flush=True)

    async def close(self) -> None:
        if self._session:
            with contextlib.suppress(httpx2.HTTPError):
                await self._client.delete(self.url, headers=self.headers_for(None))


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return text or type(exc).__name__


def _error_text(body: bytes) -> str:
    try:
        parsed = json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace").strip()[:300]
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), str):
        return str(parsed["error"])[:300]
    return ""


def check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"the URL must be the server's MCP endpoint, e.g. {DEFAULT_URL}; got {url!r}")
    return url


async def _serve(url: str, token: str, wire_in: BinaryIO, wire_out: BinaryIO) -> None:
    timeout = httpx2.Timeout(CONNECT_SECONDS, read=None)
    async with httpx2.AsyncClient(timeout=timeout) as client:
        bridge = Bridge(url, token, wire_out, client)
        stdin = anyio.wrap_file(wire_in)
        try:
            async with anyio.create_task_group() as tasks:
                while line := await stdin.readline():
                    await bridge.handle_line(line, tasks)
                # stdin closed: the requests still running are answered, then the bridge ends
        finally:
            with anyio.CancelScope(shield=True):
                await bridge.close()


def run_connect(args: argparse.Namespace, _host: object = None) -> int:
    url = check_url(args.url)
    token = args.token or os.environ.get(TOKEN_VARIABLE, "")
    if not token.strip():
        raise UsageError(
            f"ego connect needs this agent's token: --token TOKEN or {TOKEN_VARIABLE} "
            "(`ego token new AGENT` makes one and prints the line for the server's ego.toml)"
        )
    for name in ("httpx", "httpx2", "httpcore", "httpcore2"):  # their debug lines carry headers: never the token
        logging.getLogger(name).setLevel(logging.WARNING)
    # the protocol owns stdout: fd 1 points at stderr meanwhile, so nothing else can write on the wire
    sys.stdout.flush()
    wire_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    wire_out = os.fdopen(wire_fd, "wb", buffering=0)
    wire_in = os.fdopen(os.dup(0), "rb")
    if sys.stdin.isatty():
        print(f"ego connect: bridging stdio to {url}; an MCP client writes on stdin; Ctrl-C stops", file=sys.stderr)
    try:
        anyio.run(_serve, url, token.strip(), wire_in, wire_out)
    except KeyboardInterrupt:
        return 130
    finally:
        wire_out.close()
        wire_in.close()
    return 0


def configure_connect(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "url", nargs="?", default=DEFAULT_URL, help=f"the server's MCP endpoint (default {DEFAULT_URL})"
    )
    parser.add_argument(
        "--token", default=None, help=f"this agent's bearer token (default: ${TOKEN_VARIABLE}); never printed"
    )
