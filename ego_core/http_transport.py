"""MCP over streamable HTTP: one bearer token per agent (stored hashed), each agent served from its own space."""

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

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ego_core.agents import AgentHosts
from ego_core.host import PluginHost
from ego_core.logs import log_event
from ego_core.server import TOKEN_SCOPE, build_server

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
