"""The dashboard's web app: a static page (plain JS, vendored chart and graph libraries) and a JSON API.

Guards, before any route runs: the ``Host`` header must name this server exactly (a loopback name or the
address the connection came in on, or a name given with ``--allowed-host``, with the port served: no DNS
rebinding); every ``/api`` request but the login needs the owner (a session cookie from ``POST /api/login``,
or ``Authorization: Bearer <owner token>``): agents' MCP tokens are never accepted; every state-changing request
also needs the page's CSRF token (``X-Ego-Csrf``), which only a page served by this process holds.
Corrections call the tools through the same runner as the agent's calls, so they are validated, logged and
seen by other plugins (``on_tool_called``, ``on_forget``) exactly like them.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import logging
import re
import secrets
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

import anyio.to_thread
import attrs
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request, cookie_parser
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from ego_core import PluginHost, log_event
from ego_core.mcp.server import ToolRunner
from ego_dashboard import state
from ego_dashboard.owner import OwnerKey
from ego_dashboard.shared import SharedError, SharedView

_log = logging.getLogger("ego.dashboard")
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})
TOOL_AGENT = "dashboard"
"""The ``agent`` field of the ``tool_call`` records of corrections made from the dashboard."""
REVISABLE = ("importance", "tags", "private")
"""What ``POST /api/memories/{id}/revise`` may change (through the memory plugin's ``revise_memory``)."""
MAX_BODY = 4096
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SESSION_SECONDS = 12 * 3600
"""How long an owner's login lasts (sessions live in the process: a restart logs every page out)."""
LOGIN_LINK_SECONDS = 15 * 60
"""How long the one-time login link ``ego dashboard`` prints can be used (once)."""
COOKIE_PREFIX = "ego_owner_"
"""The session cookie's name is this and the port (cookies are shared by every port of a host)."""
PUBLIC_API = frozenset({"/api/login", "/api/logout"})
_HOST = re.compile(
    r"(?P<name>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)(?::(?P<port>[0-9]{1,5}))?"
)


def is_loopback(bind_host: str) -> bool:
    if bind_host.strip("[]").lower() in {"localhost", "127.0.0.1", "::1"}:
        return True
    try:
        return ipaddress.ip_address(bind_host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(address: str) -> str:
    """An address as a ``Host`` header names it: IPv6 in brackets, lower case."""
    bare = address.strip("[]").lower()
    return f"[{bare}]" if ":" in bare else bare


def check_allowed_host(name: str) -> str:
    """A ``--allowed-host`` name (a DNS name or an IP address, without a port), normalised; ValueError otherwise."""
    match = _HOST.fullmatch(name.strip())
    if match is None or match["port"] is not None:
        raise ValueError(f"--allowed-host: {name!r} is not a host name (give the name alone, e.g. mybox.lan)")
    return host_name(match["name"])


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _hashed(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class Sessions:
    """The owner's logins: random ids kept hashed, each bound to the owner token's digest at login (a new owner
    token ends them) and to an expiry. The one-time login link is a secret usable once, for a while."""

    def __init__(self, key: OwnerKey, login_secret: str | None) -> None:
        self.key = key
        self._lock = threading.Lock()
        self._open: dict[str, tuple[float, str | None]] = {}
        self._link = _hashed(login_secret) if login_secret else None
        self._link_until = time.monotonic() + LOGIN_LINK_SECONDS

    def use_link(self, secret: str) -> bool:
        """Whether ``secret`` is the login link's: the first right use spends it, as its expiry does."""
        with self._lock:
            expected = self._link
            if expected is None:
                return False
            if time.monotonic() > self._link_until:
                self._link = None
                return False
            if not hmac.compare_digest(_hashed(secret), expected):
                return False
            self._link = None
            return True

    def open(self) -> str:
        session = secrets.token_urlsafe(32)
        now = time.monotonic()
        with self._lock:
            self._open = {k: v for k, v in self._open.items() if v[0] > now}
            self._open[_hashed(session)] = (now + SESSION_SECONDS, self.key.digest())
        return session

    def valid(self, session: str) -> bool:
        if not session:
            return False
        with self._lock:
            found = self._open.get(_hashed(session))
        return found is not None and found[0] > time.monotonic() and found[1] == self.key.digest()

    def close(self, session: str) -> None:
        with self._lock:
            self._open.pop(_hashed(session), None)


def served_port(scope: Scope, fallback: int | None) -> int | None:
    server = scope.get("server")
    return int(server[1]) if server and server[1] is not None else fallback


def cookie_name(scope: Scope, fallback: int | None) -> str:
    return f"{COOKIE_PREFIX}{served_port(scope, fallback) or 0}"


def session_of(scope: Scope, cookie_header: str, fallback: int | None) -> str:
    return cookie_parser(cookie_header).get(cookie_name(scope, fallback), "")


class Guard:
    """Exact Host, the owner (session cookie or owner token) and the CSRF token, before any route runs."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        names: frozenset[str],
        port: int | None,
        key: OwnerKey,
        sessions: Sessions,
        csrf: str,
    ) -> None:
        self.app = app
        self.names = names
        self.port = port
        self.key = key
        self.sessions = sessions
        self.csrf = csrf

    def host_ok(self, scope: Scope, values: Sequence[str]) -> bool:
        """Exactly one Host header naming this server and the port it serves (a name alone for port 80)."""
        if len(values) != 1:
            return False
        match = _HOST.fullmatch(values[0])
        port = served_port(scope, self.port)
        if match is None or port is None:
            return False
        names = set(self.names)
        server = scope.get("server")
        if server and server[0]:
            names.add(host_name(str(server[0])))  # the address the connection came in on
        given = match["port"]
        port_ok = given == str(port) if given is not None else port == 80
        return port_ok and host_name(match["name"]) in names

    def owner(self, scope: Scope, headers: Mapping[str, list[str]]) -> JSONResponse | None:
        """None when the request is the owner's; else the 401 that says why."""
        authorization = headers.get("authorization", [])
        if authorization:
            scheme, _, token = authorization[0].partition(" ")
            if len(authorization) == 1 and scheme.lower() == "bearer" and self.key.verify(token.strip()):
                return None
            return error(401, "not this dashboard's owner token (agents' tokens are never accepted here)")
        cookies = "; ".join(headers.get("cookie", []))
        if self.sessions.valid(session_of(scope, cookies, self.port)):
            return None
        return error(
            401,
            "log in as the owner: open the link `ego dashboard` printed, or give this space's owner token "
            "(`ego dashboard --new-owner-token` makes a new one)",
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[str, list[str]] = {}
        for key, value in scope.get("headers", []):
            headers.setdefault(key.decode("latin-1").lower(), []).append(value.decode("latin-1"))
        problem: JSONResponse | None = None
        path = scope["path"]
        if not self.host_ok(scope, headers.get("host", [])):
            problem = error(421, "this dashboard answers only to its own address and port in the Host header")
        elif path.startswith("/api/"):
            if path not in PUBLIC_API:
                problem = self.owner(scope, headers)
            csrf = headers.get("x-ego-csrf", [""])
            if (
                problem is None
                and scope["method"] not in ("GET", "HEAD")
                and not (len(csrf) == 1 and hmac.compare_digest(csrf[0].encode(), self.csrf.encode()))
            ):
                problem = error(403, "missing or wrong CSRF token (X-Ego-Csrf): reload the page")
        if problem is not None:
            await problem(scope, receive, send)
            return
        await self.app(scope, receive, send)


class Headers:
    """Security headers on every answer: a strict CSP, no sniffing, no framing, no referrer, API not cached."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                extra = [
                    (b"content-security-policy", CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"),
                ]
                if scope["path"].startswith("/api/") or scope["path"] == "/":
                    extra.append((b"cache-control", b"no-store"))
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, with_headers)


Endpoint = Callable[[Request], Awaitable[Response]]
REVEAL_OFF = "revealing private memories is off; start the dashboard with --reveal-private"


class RevealOffError(Exception):
    """A request for private text while ``--reveal-private`` is off (403)."""


def allowed_names(bind_host: str, allowed_hosts: Sequence[str]) -> frozenset[str]:
    """The names ``Host`` may give: the loopback names, ``bind_host`` when it is a name, and ``allowed_hosts``."""
    named = [bind_host] if _HOST.fullmatch(bind_host) and not bind_host.replace(".", "").isdigit() else []
    return frozenset({*LOOPBACK_NAMES, *(check_allowed_host(name) for name in [*named, *allowed_hosts])})


def params(request: Request) -> dict[str, str]:
    """The request's query parameters (the last value of each)."""
    return dict(request.query_params.items())


async def body(request: Request) -> dict[str, Any]:
    """The request's JSON object (``{}`` when empty); 413 past :data:`MAX_BODY`, 400 when not a JSON object."""
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise HTTPException(413, f"the request body is larger than {MAX_BODY} bytes")
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise HTTPException(400, "the request body is not valid JSON") from None
    if not isinstance(value, dict):
        raise HTTPException(400, "the request body must be a JSON object")
    return value


def memory_id(request: Request) -> str:
    """The ``memory_id`` path parameter (1 to 200 characters; 400 otherwise)."""
    value = str(request.path_params["memory_id"])
    if not value or len(value) > 200:
        raise HTTPException(400, "memory id: expected 1 to 200 characters")
    return value


def text_field(payload: Mapping[str, Any], name: str) -> str:
    """The non-empty string ``payload[name]`` (400 otherwise)."""
    value = payload.get(name)
    if not isinstance(value, str) or not value.strip():
        raise HTTPException(400, f"{name}: expected a non-empty string")
    return value


def pair_of(payload: Mapping[str, Any]) -> tuple[str, str]:
    """The two different memory ids ``a`` and ``b`` of a merge candidate (400 otherwise)."""
    first, second = text_field(payload, "a"), text_field(payload, "b")
    if len(first) > 200 or len(second) > 200 or first == second:
        raise HTTPException(400, "a, b: expected two different memory ids")
    return first, second


async def json_errors(request: Request, exc: Exception) -> Response:
    """Starlette's errors (and the routes' HTTPException) as ``{"error": ...}``; anything else a bare 500."""
    if isinstance(exc, HTTPException):
        return error(exc.status_code, str(exc.detail))
    return error(500, "internal error")


@attrs.define
class Dashboard:
    """One dashboard's state and its endpoints: each coroutine named in :meth:`routes` answers one route, and
    each ``*_view`` method is read by :meth:`reader` in a worker thread."""

    host: PluginHost
    port: int | None
    key: OwnerKey
    sessions: Sessions
    shared_view: SharedView
    loopback: bool
    reveal_private: bool
    csrf: str = attrs.field(init=False, factory=lambda: secrets.token_urlsafe(32))
    page: str = attrs.field(init=False)
    _runner: ToolRunner | None = attrs.field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        page = resources.files("ego_dashboard").joinpath("static/index.html").read_text(encoding="utf-8")
        self.page = page.replace("{{CSRF}}", self.csrf).replace("{{LANG}}", self.host.settings.language)

    def routes(self) -> list[Route | Mount]:
        """Every path and method the dashboard serves, and its static files."""
        reader = self.reader
        static = resources.files("ego_dashboard").joinpath("static")
        return [
            Route("/", self.index, methods=["GET"]),
            Route("/api/login", self.login, methods=["POST"]),
            Route("/api/logout", self.logout, methods=["POST"]),
            Route("/api/status", reader(self.status_view), methods=["GET"]),
            Route("/api/memories/{memory_id}/reveal", self.reveal, methods=["POST"]),
            Route("/api/now", reader(lambda r: state.now_view(self.host)), methods=["GET"]),
            Route("/api/memories", reader(self.search), methods=["GET"]),
            Route(
                "/api/memories/{memory_id}", reader(lambda r: state.detail(self.host, memory_id(r))), methods=["GET"]
            ),
            Route("/api/memories/{memory_id}/graph", reader(self.graph), methods=["GET"]),
            Route("/api/memories/{memory_id}/forget", self.forget, methods=["POST"]),
            Route("/api/memories/{memory_id}/revise", self.revise, methods=["POST"]),
            Route("/api/questions/{question_id}/resolve", self.resolve_question, methods=["POST"]),
            Route("/api/notions/{notion_id}/relabel", self.relabel_notion, methods=["POST"]),
            Route("/api/notions/{notion_id}/merge", self.merge_notion, methods=["POST"]),
            Route("/api/self", reader(self.self_view), methods=["GET"]),
            Route("/api/history", reader(lambda r: state.history(self.host, params(r))), methods=["GET"]),
            Route(
                "/api/history/desires", reader(lambda r: state.desire_history(self.host, params(r))), methods=["GET"]
            ),
            Route("/api/people", reader(lambda r: state.people(self.host)), methods=["GET"]),
            Route("/api/logs", reader(lambda r: state.logs(self.host, params(r))), methods=["GET"]),
            Route("/api/merge-candidates", reader(lambda r: state.merge_candidates(self.host)), methods=["GET"]),
            Route("/api/merge-candidates/keep", self.keep_pair, methods=["POST"]),
            Route("/api/merge-candidates/unkeep", self.unkeep_pair, methods=["POST"]),
            Route(
                "/api/shared", reader(lambda r: self.shared_view.read(r.query_params.get("scopes"))), methods=["GET"]
            ),
            Route("/api/shared/cleanup", self.propose_cleanup, methods=["POST"]),
            Route(
                "/api/shared/cleanup/{plan_id}",
                reader(lambda r: self.shared_view.plan(str(r.path_params["plan_id"]))),
                methods=["GET"],
            ),
            Route("/api/shared/cleanup/{plan_id}/confirm", self.confirm_cleanup, methods=["POST"]),
            Mount("/static", StaticFiles(directory=str(static)), name="static"),
        ]

    # -- shared helpers

    def tool_runner(self) -> ToolRunner:
        """The owner-tier tool runner, made at first use."""
        if self._runner is None:
            self._runner = ToolRunner(self.host, owner=True)
        return self._runner

    def served(self, payload: Any, status: int = 200) -> JSONResponse:
        """``payload`` as JSON, scrubbed of what the owner must not see unasked."""
        return JSONResponse(state.scrub(self.host, payload), status_code=status)

    def reader(self, read: Callable[[Request], Any]) -> Endpoint:
        """A GET endpoint answering ``read(request)`` (run in a worker thread); None is a 404."""

        async def endpoint(request: Request) -> Response:
            try:
                payload = await anyio.to_thread.run_sync(read, request)
            except state.BadParameterError as exc:
                return error(400, self.host.redact(str(exc)))
            except SharedError as exc:
                return error(exc.status, self.host.redact(exc.message))
            except RevealOffError:
                return error(403, REVEAL_OFF)
            if payload is None:
                return error(404, "not found (or the plugin that holds it is not enabled)")
            return self.served(payload)

        return endpoint

    async def call_tool(self, name: str, args: Mapping[str, Any]) -> Response:
        """Calls the tool ``name`` as the owner: 200 ``{ok, tool}``, 409 when not served, 422 with its error."""
        if not self.host.tool_served(name, owner=True):
            return error(409, f"the tool {name} is not served (its plugin is not enabled)")
        result = await self.tool_runner().call(name, args, agent=TOOL_AGENT)
        if result.is_error:
            text = "".join(getattr(block, "text", "") for block in result.content)
            return error(422, self.host.redact(text))
        # the tool's answer is for the agent: forget's quotes the memory, whose private mask it has just removed
        return self.served({"ok": True, "tool": name})

    async def shared_action(self, work: Callable[[], Any]) -> Response:
        """``work()`` on the Shared view, in a worker thread; a SharedError is its status and message."""
        try:
            payload = await anyio.to_thread.run_sync(work)
        except SharedError as exc:
            return error(exc.status, self.host.redact(exc.message))
        return self.served(payload)

    # -- readers (worker threads)

    def status_view(self, _request: Request) -> Any:
        """The plugins and the dashboard's settings."""
        return {
            "plugins": state.plugins(self.host),
            "loopback": self.loopback,
            "reveal_private": self.reveal_private,
            "language": self.host.settings.language,
            "timezone": self.host.settings.timezone,
        }

    def search(self, request: Request) -> Any:
        """Memories matching the query; private text only with ``private_text=1`` and ``--reveal-private``."""
        wanted = params(request)
        flag = wanted.get("private_text", "")
        if flag not in ("", "0", "1", "false", "true"):
            raise state.BadParameterError("private_text: expected 1 or 0")
        private_text = flag in ("1", "true")
        if private_text and not self.reveal_private:
            raise RevealOffError
        found = state.search(self.host, wanted, private_text=private_text)
        if private_text:
            hits = sum(1 for card in found.get("results", []) if card.get("private"))
            log_event(_log, "dashboard_private_search", private_results=hits)  # never the words searched
        return found

    def graph(self, request: Request) -> Any:
        """A memory's neighbourhood, ``depth`` (1 to 3) links deep."""
        depth = state._int(params(request), "depth", 1, 1, 3)
        return state.graph(self.host, memory_id(request), depth)

    def self_view(self, _request: Request) -> Any:
        """The self model's open questions and notions."""
        return {"questions": state.questions(self.host), "notions": state.notions(self.host)}

    # -- page and owner login

    async def index(self, _request: Request) -> Response:
        """GET /: the page, holding this process's CSRF token."""
        return HTMLResponse(self.page)

    async def login(self, request: Request) -> Response:
        """POST /api/login: the login link's secret or the owner token opens a session (its cookie)."""
        payload = await body(request)
        link, token = payload.get("login"), payload.get("owner_token")
        if not isinstance(link, str | None) or not isinstance(token, str | None) or (link is None) == (token is None):
            return error(400, "give either login (the link's secret) or owner_token, as a string")
        if link is not None:
            ok = await anyio.to_thread.run_sync(self.sessions.use_link, link.strip())
        else:
            ok = await anyio.to_thread.run_sync(self.key.verify, str(token).strip())
        how = "link" if link is not None else "owner_token"
        if not ok:
            log_event(_log, "dashboard_login_refused", how=how)
            return error(
                401,
                "the login link was used or has expired: log in with the owner token, or restart `ego dashboard`"
                if link is not None
                else "not this dashboard's owner token",
            )
        log_event(_log, "dashboard_login", how=how)
        answer = JSONResponse({"ok": True})
        answer.set_cookie(
            cookie_name(request.scope, self.port),
            self.sessions.open(),
            max_age=SESSION_SECONDS,
            path="/",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return answer

    async def logout(self, request: Request) -> Response:
        """POST /api/logout: ends the session and deletes its cookie."""
        await body(request)
        name = cookie_name(request.scope, self.port)
        self.sessions.close(request.cookies.get(name, ""))
        answer = JSONResponse({"ok": True})
        answer.delete_cookie(name, path="/", httponly=True, samesite="strict")
        return answer

    # -- corrections (owner-tier tools)

    async def reveal(self, request: Request) -> Response:
        """POST /api/memories/{memory_id}/reveal: a private memory's text (only with ``--reveal-private``)."""
        if not self.reveal_private:
            return error(403, REVEAL_OFF)
        await body(request)
        wanted = memory_id(request)
        found = await anyio.to_thread.run_sync(lambda: state.private_text(self.host, wanted))
        if found is None:
            return error(404, "no private memory with this id")
        log_event(_log, "dashboard_reveal", memory_id=wanted)
        # deliberately not redacted: the owner asked for this text (never cached: every API answer is no-store)
        return JSONResponse({"id": wanted, "content": found})

    async def forget(self, request: Request) -> Response:
        """POST /api/memories/{memory_id}/forget: the ``forget`` tool."""
        await body(request)
        return await self.call_tool("forget", {"memory_id": memory_id(request)})

    async def revise(self, request: Request) -> Response:
        """POST /api/memories/{memory_id}/revise: ``revise_memory`` with the fields of :data:`REVISABLE`."""
        payload = await body(request)
        unknown = sorted(set(payload) - set(REVISABLE))
        if unknown:
            return error(400, f"unknown field {unknown[0][:40]!r}: a revision changes {', '.join(REVISABLE)}")
        if not payload:
            return error(400, f"nothing to change: give {', '.join(REVISABLE)}")
        return await self.call_tool("revise_memory", {"memory_id": memory_id(request), **payload})

    async def resolve_question(self, request: Request) -> Response:
        """POST /api/questions/{question_id}/resolve: ``update_self`` resolves it, with an answer if given."""
        payload = await body(request)
        question = str(request.path_params["question_id"])
        answer = payload.get("answer")
        if answer is not None and not isinstance(answer, str):
            return error(400, "answer: expected a string")
        value: Any = {"id": question, "answer": answer} if answer else question
        return await self.call_tool("update_self", {"field": "resolve_question", "value": value})

    async def relabel_notion(self, request: Request) -> Response:
        """POST /api/notions/{notion_id}/relabel: ``curate_notions`` gives it a new label."""
        label = text_field(await body(request), "label")
        args = {"action": "relabel", "id": str(request.path_params["notion_id"]), "label": label}
        return await self.call_tool("curate_notions", args)

    async def merge_notion(self, request: Request) -> Response:
        """POST /api/notions/{notion_id}/merge: ``curate_notions`` merges it into another."""
        into = text_field(await body(request), "into")
        args = {"action": "merge", "id": str(request.path_params["notion_id"]), "into": into}
        return await self.call_tool("curate_notions", args)

    async def keep_pair(self, request: Request) -> Response:
        """POST /api/merge-candidates/keep: ``keep_both`` marks the pair as not duplicates."""
        first, second = pair_of(await body(request))
        response = await self.call_tool("keep_both", {"a": first, "b": second})
        return self.served({"ok": True, "kept": True}) if response.status_code == 200 else response

    async def unkeep_pair(self, request: Request) -> Response:
        """POST /api/merge-candidates/unkeep: ``keep_both`` undoes that mark."""
        first, second = pair_of(await body(request))
        response = await self.call_tool("keep_both", {"a": first, "b": second, "undo": True})
        return self.served({"ok": True, "kept": False}) if response.status_code == 200 else response

    # -- shared memory cleanup

    async def propose_cleanup(self, request: Request) -> Response:
        """POST /api/shared/cleanup: proposes a cleanup plan (deletes nothing)."""
        payload = await body(request)
        return await self.shared_action(lambda: self.shared_view.propose(payload))

    async def confirm_cleanup(self, request: Request) -> Response:
        """POST /api/shared/cleanup/{plan_id}/confirm: deletes exactly the plan's events."""
        await body(request)
        plan_id = str(request.path_params["plan_id"])
        response = await self.shared_action(lambda: self.shared_view.confirm(plan_id))
        if response.status_code == 200:
            log_event(_log, "dashboard_cleanup_confirm", plan_id=plan_id)
        return response

    # -- lifetime

    async def adopt_legacy_kept_pairs(self) -> None:
        """Pairs the dashboard kept in its own file before the dedup plugin kept them go to the plugin (once)."""
        data_dir = self.host.settings.data_dir.expanduser()
        legacy = state.legacy_kept_pairs(data_dir)
        if not legacy or not self.host.tool_served("keep_both", owner=True):
            return
        for first, second in legacy:
            await self.tool_runner().call("keep_both", {"a": first, "b": second}, agent=TOOL_AGENT)
        path = data_dir / "dashboard" / state.LEGACY_KEPT_FILE
        path.replace(path.with_name(path.name + ".adopted"))
        log_event(_log, "dashboard_kept_pairs_adopted", pairs=len(legacy))

    @asynccontextmanager
    async def lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        """While the app lives: the host started (legacy kept pairs adopted), then the Shared view and host closed."""
        await anyio.to_thread.run_sync(self.host.start)
        await self.adopt_legacy_kept_pairs()
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(self.shared_view.close)
            await anyio.to_thread.run_sync(self.host.stop)


def build_app(
    host: PluginHost,
    *,
    bind_host: str = "127.0.0.1",
    port: int | None = None,
    allowed_hosts: Sequence[str] = (),
    login_secret: str | None = None,
    owner: OwnerKey | None = None,
    reveal_private: bool = False,
    gateway_operator_token: str | None = None,
) -> Starlette:
    """The dashboard for ``host`` (started with the app, stopped with it; ``host.start`` is counted).

    The owner logs in with the one-time ``login_secret`` (the link ``ego dashboard`` prints) or the owner token of
    ``owner`` (default: the space's, :func:`ego_dashboard.owner.owner_path`). ``Host`` must be a loopback name,
    the address the connection came in on, or one of ``allowed_hosts``, with the port the server reports
    (``port`` when it reports none). ``reveal_private`` allows the requests that answer or match a private
    memory's text (``POST .../reveal``, ``GET /api/memories?private_text=1``), made only on the owner's click.
    ``gateway_operator_token``: the shared memory gateway's operator token, for the janitor's part of the
    Shared view (conflicts, audit, cleanup plans); the agent's own token comes from the plugin's configuration.
    """
    names = allowed_names(bind_host, allowed_hosts)
    key = owner if owner is not None else OwnerKey.of(host.settings.data_dir)
    dashboard = Dashboard(
        host,
        port=port,
        key=key,
        sessions=Sessions(key, login_secret),
        shared_view=SharedView(host, gateway_operator_token),
        loopback=is_loopback(bind_host),
        reveal_private=reveal_private,
    )
    guard = Middleware(Guard, names=names, port=port, key=key, sessions=dashboard.sessions, csrf=dashboard.csrf)
    return Starlette(
        routes=dashboard.routes(),
        lifespan=dashboard.lifespan,
        middleware=[Middleware(Headers), guard],
        exception_handlers={HTTPException: json_errors, Exception: json_errors},
    )
