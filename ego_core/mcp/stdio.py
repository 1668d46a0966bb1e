"""MCP over stdio: the wire kept for the protocol, and an answer for every line a client sends.

- :func:`protocol_stdout` / :func:`protocol_stdin` keep fds 1 and 0 for the protocol: plugins (and their child
  processes) print to stderr and read EOF.
- :class:`MalformedLineGuard` stands between stdin and the SDK's transport. The SDK drops a line it cannot parse
  without a reply, so a client waiting on that request would wait forever; the guard answers such a line with
  the JSON-RPC error the protocol defines — parse error (-32700) for text that is not JSON, invalid request
  (-32600) for JSON that is not a JSON-RPC message — under the request's id when the line reveals one, else
  ``null`` — and logs one record (never the line's content). Valid lines pass unchanged. (Upstream:
  modelcontextprotocol/python-sdk#2751; when the SDK answers such lines itself, the guard can go.) The guard
  also reads the bytes itself: a line that is not valid UTF-8 is a parse error, never text with U+FFFD in
  place of what was sent; and a message whose ``id`` is neither a string nor an integer (``{"a":1}``,
  ``null``, ``true``, ``1.5``), which the SDK would take for a notification and leave unanswered, is an
  invalid request answered under the id ``null``.
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any, BinaryIO, TextIO

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from ego_core.kernel.host import PluginHost
from ego_core.kernel.logs import log_event
from ego_core.mcp.server import build_server

_log = logging.getLogger("ego.server")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
ID_SCAN_LIMIT = 1 << 20
"""How far into a malformed line to look for its top-level ``"id"`` (characters)."""


@contextmanager
def protocol_stdout() -> Iterator[TextIO]:
    """Keep the MCP wire for ourselves: a private duplicate of fd 1 carries the protocol, while fd 1 and
    ``sys.stdout`` point at stderr for as long as we serve, so nothing a plugin prints (even text still
    sitting in ``sys.stdout``'s buffer when the process exits) can reach the wire."""
    sys.stdout.flush()
    wire_fd = os.dup(1)
    saved_fd = os.dup(1)
    os.dup2(2, 1)
    saved_stdout = sys.stdout
    sys.stdout = sys.stderr
    wire = io.TextIOWrapper(os.fdopen(wire_fd, "wb", buffering=0), encoding="utf-8", write_through=True)
    try:
        yield wire
    finally:
        sys.stdout = saved_stdout
        with suppress(OSError):
            wire.close()
        os.dup2(saved_fd, 1)
        os.close(saved_fd)


@contextmanager
def protocol_stdin() -> Iterator[BinaryIO]:
    """The protocol's input (bytes: :class:`MalformedLineGuard` decodes each line) on a private duplicate of
    fd 0; fd 0 reads the null device meanwhile, so nothing else in the process (or a child process) can take
    bytes off the wire."""
    wire_fd = os.dup(0)
    saved_fd = os.dup(0)
    null_fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null_fd, 0)
    os.close(null_fd)
    wire: BinaryIO = os.fdopen(wire_fd, "rb")
    try:
        yield wire
    finally:
        with suppress(OSError):
            wire.close()
        os.dup2(saved_fd, 0)
        os.close(saved_fd)


def top_level_id(line: str) -> int | str | None:
    """The value of the top-level ``"id"`` key of a (possibly broken) JSON object, when it is an integer or a
    string written before the point where the line breaks; else ``None``."""
    depth = 0
    index = 0
    limit = min(len(line), ID_SCAN_LIMIT)
    key_at_depth_one: str | None = None
    while index < limit:
        char = line[index]
        if char == '"':
            end = _string_end(line, index, limit)
            if end < 0:
                return None
            token = line[index : end + 1]
            rest = line[end + 1 : end + 64].lstrip()
            if depth == 1 and key_at_depth_one is None and rest.startswith(":"):
                key_at_depth_one = _json_string(token)
            elif depth == 1 and key_at_depth_one == "id":
                return _json_string(token)
            else:
                key_at_depth_one = None
            index = end + 1
            continue
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        elif char == ",":
            key_at_depth_one = None
        elif depth == 1 and key_at_depth_one == "id" and (char == "-" or char.isdigit()):
            digits = char
            index += 1
            while index < limit and line[index].isdigit() and len(digits) <= 19:
                digits += line[index]
                index += 1
            return int(digits) if len(digits) <= 19 else None
        index += 1
    return None


def _string_end(line: str, start: int, limit: int) -> int:
    index = start + 1
    while index < limit:
        if line[index] == "\\":
            index += 2
            continue
        if line[index] == '"':
            return index
        index += 1
    return -1


def _json_string(token: str) -> str | None:
    try:
        value = json.loads(token)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def undecodable_reply(line: str, what: str = "line") -> tuple[types.JSONRPCError, str]:
    """The parse error for bytes that are not UTF-8 (``line``: decoded with replacement, only to find the id)."""
    reason = "not valid UTF-8"
    error = types.ErrorData(code=PARSE_ERROR, message=f"Parse error: the {what} is {reason}; nothing was done")
    return types.JSONRPCError(jsonrpc="2.0", id=top_level_id(line), error=error), reason


BAD_ID = "`id` must be a string or an integer"


def bad_id_reply() -> tuple[types.JSONRPCError, str]:
    error = types.ErrorData(code=INVALID_REQUEST, message=f"Invalid request: {BAD_ID}; nothing was done")
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=error), BAD_ID


def has_bad_id(line: str, message: types.JSONRPCMessage) -> bool:
    """Whether a line the SDK accepted as a notification carries an ``id`` after all (an object, ``null``, a
    boolean or a fraction: no id JSON-RPC allows), so that it is a request that must be answered."""
    if not isinstance(message, types.JSONRPCNotification) or '"id"' not in line:
        return False
    try:
        parsed: Any = json.loads(line, parse_int=lambda digits: 0)
    except (ValueError, RecursionError):
        return False
    return isinstance(parsed, dict) and "id" in parsed


def jsonrpc_problem(parsed: Any, what: str = "line") -> str:
    """What keeps a parsed JSON value from being a JSON-RPC 2.0 message, in one phrase naming the member (never
    its value: it could be private)."""
    if not isinstance(parsed, dict):
        return f"the {what} must be one JSON-RPC message: a JSON object (batches are not accepted)"
    if parsed.get("jsonrpc") != "2.0":
        return '`jsonrpc` must be "2.0"'
    if "id" in parsed and (isinstance(parsed["id"], bool) or not isinstance(parsed["id"], int | str)):
        return BAD_ID
    if "method" in parsed:
        if not isinstance(parsed["method"], str):
            return "`method` must be a string"
        if parsed.get("params") is not None and not isinstance(parsed["params"], dict):
            return "`params` must be an object"
    elif "result" in parsed or "error" in parsed:
        if "id" not in parsed:
            return "a response needs the `id` of the request it answers"
        error = parsed.get("error")
        if "error" in parsed and not (
            isinstance(error, dict) and isinstance(error.get("code"), int) and isinstance(error.get("message"), str)
        ):
            return "`error` must be an object with an integer `code` and a string `message`"
    else:
        return "a request needs a `method` (a string)"
    return f"the {what} is not a JSON-RPC 2.0 message this server accepts"


def malformed_reply(line: str, what: str = "line") -> tuple[types.JSONRPCError | None, str]:
    """The error answer to a line (or an HTTP body: ``what``) the transport cannot accept (``None``: a
    notification, which gets none), and the reason for the log."""
    try:
        parsed: Any = json.loads(line, parse_int=lambda digits: 0)  # any size: we only need the shape
    except (ValueError, RecursionError):
        parsed = None
    message_id = top_level_id(line)
    if parsed is None:
        reason = f"the {what} is not valid JSON (or nested too deeply)"
        error = types.ErrorData(code=PARSE_ERROR, message=f"Parse error: {reason}; nothing was done")
    else:
        reason = jsonrpc_problem(parsed, what)
        if isinstance(parsed, dict) and "id" not in parsed and "method" in parsed:
            return None, f"{reason} (a notification: no reply)"
        error = types.ErrorData(code=INVALID_REQUEST, message=f"Invalid request: {reason}; nothing was done")
    return types.JSONRPCError(jsonrpc="2.0", id=message_id, error=error), reason


class MalformedLineGuard:
    """An async line iterator over the protocol's stdin that answers malformed lines itself (see the module)."""

    def __init__(self, lines: AsyncIterable[bytes]) -> None:
        self._lines: AsyncIterator[bytes] = aiter(lines)
        self._replies: Any = None
        self._ready = anyio.Event()

    def answer_through(self, write_stream: Any) -> None:
        self._replies = write_stream
        self._ready.set()

    def __aiter__(self) -> MalformedLineGuard:
        return self

    async def __anext__(self) -> str:
        while True:
            raw = await anext(self._lines)
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                await self._answer(raw.decode("utf-8", "replace"), undecodable_reply)
                continue
            try:
                message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except Exception:
                await self._answer(line, malformed_reply)
                continue
            if has_bad_id(line, message):
                await self._answer(line, lambda _line: bad_id_reply())
                continue
            return line

    async def _answer(self, line: str, explain: Callable[[str], tuple[types.JSONRPCError | None, str]]) -> None:
        reply, reason = explain(line)
        log_event(
            _log,
            "malformed_request",
            logging.WARNING,
            reason=reason,
            chars=len(line),
            answered=reply is not None,
            id_known=reply is not None and reply.id is not None,
        )
        if reply is not None:
            await self._ready.wait()
            await self._replies.send(SessionMessage(reply))


def serve_stdio(host: PluginHost, wire: TextIO) -> None:
    """Serve MCP over stdin and ``wire`` (see :func:`protocol_stdout`). The plugins start before the first
    message is read, so a configuration error ends the process with its message instead of failing a call."""
    server = build_server(host)

    async def main() -> None:
        with protocol_stdin() as stdin:
            guard = MalformedLineGuard(anyio.wrap_file(stdin))
            async with stdio_server(stdin=guard, stdout=anyio.wrap_file(wire)) as (  # type: ignore[arg-type]
                read_stream,
                write_stream,
            ):
                guard.answer_through(write_stream)
                await server.run(read_stream, write_stream, server.create_initialization_options())

    host.start()
    try:
        anyio.run(main)
    finally:
        host.stop()
