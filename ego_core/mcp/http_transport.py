"""MCP over streamable HTTP: one bearer token per agent (stored hashed), each agent served from its own space.

Authorization is a static bearer token in the ``Authorization`` header (RFC 6750), made by ``ego token new``;
there is no OAuth authorization server, so none is advertised: the protected-resource metadata (RFC 9728, at
``/.well-known/oauth-protected-resource<path>``) names the resource, the header method and the scope only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import socket
import sys
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

import mcp_types as types
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ego_core.kernel.host import PluginHost
from ego_core.kernel.logs import log_event
from ego_core.mcp.agents import AgentHosts
from ego_core.mcp.server import TOKEN_SCOPE, build_server
from ego_core.mcp.stdio import (
    ID_SCAN_LIMIT,
    INVALID_REQUEST,
    PARSE_ERROR,
    bad_id_reply,
    malformed_reply,
    top_level_id,
    undecodable_reply,
)

_log = logging.getLogger("ego.server")


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


def http_app(agents: AgentHosts, *, bind_host: str, port: int, path: str, tokens: Mapping[str, str]) -> Starlette:
    """The streamable-HTTP app: each request's token chooses its agent, and the agent's own host serves it."""
    server = build_server(agents.any_host, agents=agents)
    base = f"http://{bind_host if ':' not in bind_host else f'[{bind_host}]'}:{port}"
    auth = AuthSettings(
        issuer_url=AnyHttpUrl(base),  # required by the SDK's settings; unused: no authorization-server routes
        resource_server_url=None,  # the SDK would advertise `issuer_url` as an authorization server: none exists
        required_scopes=[TOKEN_SCOPE],
        validate_token_resource=False,
    )
    app = server.streamable_http_app(
        streamable_http_path=path,
        stateless_http=True,
        host=bind_host,
        auth=auth,
        token_verifier=HashedTokenVerifier(tokens),
        custom_starlette_routes=[resource_metadata_route(base, path)],
    )
    app.add_middleware(JsonErrors, path=path)
    return app


def resource_metadata(base: str, path: str) -> dict[str, Any]:
    """RFC 9728 protected-resource metadata of what exists: the resource, its scope and the bearer header. No
    ``authorization_servers``: tokens come from ``ego token new``, not from an OAuth server."""
    return {
        "resource": base + path,
        "bearer_methods_supported": ["header"],
        "scopes_supported": [TOKEN_SCOPE],
        "resource_name": "ego",
    }


def resource_metadata_route(base: str, path: str) -> Route:
    metadata = resource_metadata(base, path)

    async def handle(_request: Request) -> JSONResponse:
        return JSONResponse(metadata, headers={"Cache-Control": "public, max-age=3600"})

    return Route(METADATA_PREFIX + path.rstrip("/"), endpoint=handle, methods=["GET"])


METADATA_PREFIX = "/.well-known/oauth-protected-resource"
BODY_KEPT = ID_SCAN_LIMIT
"""How much of a request body the error answers may look at (for its id; the SDK reads the body itself)."""


def rpc_error_body(status: int, answer: bytes, request: bytes, complete: bool) -> bytes | None:
    """A short JSON-RPC error for the MCP endpoint's answer to a bad body, or ``None`` to pass ``answer`` on.

    The SDK answers a body that is not a JSON-RPC message with pydantic's full report (a dozen union-branch
    errors with links to pydantic's site) and takes one with an id that is neither a string nor an integer for
    a notification (202, no answer); both become one message naming the problem, as over stdio.
    """
    text = request.decode("utf-8", "replace")
    if status == HTTPStatus.ACCEPTED:
        try:
            parsed: Any = json.loads(text, parse_int=lambda digits: 0) if complete else None
        except (ValueError, RecursionError):
            return None
        taken_for_notification = isinstance(parsed, dict) and "id" in parsed and "method" in parsed
        return _dump(bad_id_reply()[0]) if taken_for_notification else None  # a request with a valid id gets 200
    try:
        message = str(json.loads(answer)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return None
    if not message.startswith(("Parse error", "Validation error")):
        return None
    try:
        request.decode("utf-8")
    except UnicodeDecodeError as exc:
        if complete or exc.start < len(request) - 4:  # not only a character cut at the end of what was kept
            return _dump(undecodable_reply(text, "body")[0])
    if not complete:
        code, words = (
            (PARSE_ERROR, "Parse error: the body is not valid JSON")
            if message.startswith("Parse error")
            else (INVALID_REQUEST, "Invalid request: the body is not a JSON-RPC 2.0 message this server accepts")
        )
        error = types.ErrorData(code=code, message=f"{words}; nothing was done")
        return _dump(types.JSONRPCError(jsonrpc="2.0", id=top_level_id(text), error=error))
    reply, reason = malformed_reply(text, "body")
    if reply is None:  # a notification the SDK refused: it still gets this HTTP answer
        error = types.ErrorData(code=INVALID_REQUEST, message=f"Invalid request: {reason}; nothing was done")
        reply = types.JSONRPCError(jsonrpc="2.0", id=None, error=error)
    return _dump(reply)


def _dump(reply: types.JSONRPCError) -> bytes:
    return reply.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")


class JsonErrors:
    """Every 4xx/5xx answer has a JSON body (``{"error": ...}``), including the router's 404 and the SDK's
    plain-text refusals; a GET of the MCP path is 405, as this stateless server offers no event stream. A request
    with more than one ``Authorization`` header is 400 (RFC 6750 ``invalid_request``): which agent it speaks for
    is never a matter of which header comes first."""

    def __init__(self, app: ASGIApp, path: str) -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if sum(1 for name, _value in scope["headers"] if name.lower() == b"authorization") > 1:
            refusal = {"error": "invalid_request", "error_description": "send one Authorization header, not several"}
            challenge = (b"www-authenticate", b'Bearer error="invalid_request"')
            await _send_json(send, 400, refusal, extra=[challenge])
            return
        if scope["method"] == "GET" and scope["path"].rstrip("/") == self.path.rstrip("/"):
            message = "this server offers no event stream over GET; send JSON-RPC requests with POST"
            await _send_json(send, 405, {"error": message}, extra=[(b"allow", b"POST")])
            return
        held: dict[str, Any] = {}
        rpc = scope["method"] == "POST" and scope["path"].rstrip("/") == self.path.rstrip("/")
        request = bytearray()
        complete = [False]

        async def keep_request(_receive: Receive = receive) -> Message:
            message = await _receive()
            if message["type"] == "http.request":
                chunk = message.get("body", b"")
                request.extend(chunk[: max(0, BODY_KEPT - len(request))])
                complete[0] = len(request) < BODY_KEPT and not message.get("more_body", False)
            return message

        async def send_json_errors(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = {k.lower(): v for k, v in message.get("headers", [])}
                is_json = headers.get(b"content-type", b"").startswith(b"application/json")
                if rpc and (message["status"] == HTTPStatus.ACCEPTED or (message["status"] == 400 and is_json)):
                    held.update(start=message, body=b"", rpc=True)
                    return
                if message["status"] >= 400 and not is_json:
                    held["start"] = message
                    held["body"] = b""
                    return
            elif message["type"] == "http.response.body" and "start" in held:
                held["body"] += message.get("body", b"")
                if message.get("more_body", False):
                    return
                start = held["start"]
                if held.get("rpc"):
                    short = rpc_error_body(start["status"], held["body"], bytes(request), complete[0])
                    if short is None:
                        await send(start)
                        await send({"type": "http.response.body", "body": held["body"]})
                    else:
                        await _send_body(send, 400, short, extra=[])
                    return
                text = held["body"].decode("utf-8", "replace").strip() or HTTPStatus(start["status"]).phrase
                keep = [(k, v) for k, v in start.get("headers", []) if k.lower() in (b"www-authenticate", b"allow")]
                await _send_json(send, start["status"], {"error": text}, extra=keep)
                return
            await send(message)

        await self.app(scope, keep_request if rpc else receive, send_json_errors)


async def _send_json(send: Send, status: int, payload: Mapping[str, Any], extra: list[tuple[bytes, bytes]]) -> None:
    await _send_body(send, status, json.dumps(payload).encode("utf-8"), extra)


async def _send_body(send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]]) -> None:
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
    """Serve every agent that has a token, each from its own space (hosts built like ``host``)."""
    import uvicorn

    if not tokens:
        raise ValueError(
            "HTTP serving needs at least one agent token: run `ego token new <agent>` and put the printed "
            "line under [server.tokens] in ego.toml (or set EGO_HTTP_TOKENS)"
        )
    check_listen_address(bind_host, port, path)
    agents = AgentHosts.build(host, tokens)
    app = http_app(agents, bind_host=bind_host, port=port, path=path, tokens=tokens)
    config = uvicorn.Config(app, host=bind_host, port=port, log_config=None, access_log=False, lifespan="on")
    _log.info("serving MCP over HTTP at http://%s:%d%s", bind_host, port, path)
    shown_host = f"[{bind_host}]" if ":" in bind_host else bind_host
    print(f"ego: serving MCP over HTTP at http://{shown_host}:{port}{path}; Ctrl-C stops", file=sys.stderr)
    agents.start()  # before listening: a configuration error ends the process with its message
    try:
        uvicorn.Server(config).run()
    finally:
        agents.stop()
