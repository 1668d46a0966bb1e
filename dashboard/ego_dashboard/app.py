"""The dashboard's web app: a static page (plain JS, vendored chart and graph libraries) and a JSON API.

Guards: on a loopback address only loopback ``Host`` names are answered (no DNS rebinding); bound anywhere
else every ``/api`` request needs an agent's bearer token (``ego token new``). Every state-changing request
also needs the page's CSRF token (``X-Ego-Csrf``), which only a page served by this process holds.
Corrections call the tools through the same runner as the agent's calls, so they are validated, logged and
seen by other plugins (``on_tool_called``, ``on_forget``) exactly like them.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from ego_core import PluginHost, log_event
from ego_core.http_transport import hash_token
from ego_core.server import ToolRunner
from ego_dashboard import state
from ego_dashboard.shared import SharedError, SharedView

_log = logging.getLogger("ego.dashboard")
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
TOOL_AGENT = "dashboard"
REVISABLE = ("importance", "tags", "private")
"""What ``POST /api/memories/{id}/revise`` may change (through the memory plugin's ``revise_memory``)."""
"""The ``agent`` field of the ``tool_call`` records of corrections made from the dashboard."""
MAX_BODY = 4096
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def is_loopback(bind_host: str) -> bool:
    if bind_host.strip("[]").lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(bind_host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_name(header: str) -> str:
    if header.startswith("["):
        return header[: header.find("]") + 1].lower()
    return header.rsplit(":", 1)[0].lower() if header.count(":") == 1 else header.lower()


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class Guard:
    """Host check, bearer token (when required) and CSRF token, before any route runs."""

    def __init__(self, app: ASGIApp, *, loopback: bool, tokens: Mapping[str, str], csrf: str) -> None:
        self.app = app
        self.loopback = loopback
        self.tokens = dict(tokens)
        self.csrf = csrf

    def _token_ok(self, header: str) -> bool:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return False
        digest = hash_token(token.strip())
        return any(hmac.compare_digest(digest, expected) for expected in self.tokens.values())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        problem: JSONResponse | None = None
        if self.loopback and _host_name(headers.get("host", "")) not in LOOPBACK_NAMES:
            problem = error(421, "this dashboard answers only to localhost, 127.0.0.1 or [::1]")
        elif scope["path"].startswith("/api/"):
            if not self.loopback and not self._token_ok(headers.get("authorization", "")):
                problem = error(401, "this dashboard needs an agent's token (Authorization: Bearer ...)")
            elif scope["method"] not in ("GET", "HEAD") and not hmac.compare_digest(
                headers.get("x-ego-csrf", "").encode(), self.csrf.encode()
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


def build_app(
    host: PluginHost,
    *,
    bind_host: str = "127.0.0.1",
    tokens: Mapping[str, str] | None = None,
    reveal_private: bool = False,
    gateway_operator_token: str | None = None,
) -> Starlette:
    """The dashboard for ``host`` (started with the app, stopped with it; ``host.start`` is counted).

    ``reveal_private`` allows the one request that answers a private memory's text (``POST .../reveal``, made
    only by the owner's click); without it that request is refused and no answer holds private text.
    ``gateway_operator_token``: the shared memory gateway's operator token, for the janitor's part of the
    Shared view (conflicts, audit, cleanup plans); the agent's own token comes from the plugin's configuration.
    """
    loopback = is_loopback(bind_host)
    tokens = dict(tokens if tokens is not None else host.settings.server.tokens)
    if not loopback and not tokens:
        raise ValueError(
            f"bound to {bind_host}, the dashboard needs an agent's token: run `ego token new <agent>` and put the "
            "printed line under [server.tokens] in ego.toml (or set EGO_HTTP_TOKENS)"
        )
    csrf = secrets.token_urlsafe(32)
    page = resources.files("ego_dashboard").joinpath("static/index.html").read_text(encoding="utf-8")
    page = page.replace("{{CSRF}}", csrf).replace("{{TOKEN_NEEDED}}", "false" if loopback else "true")
    runner: list[ToolRunner] = []
    shared_view = SharedView(host, gateway_operator_token)

    def tool_runner() -> ToolRunner:
        if not runner:
            runner.append(ToolRunner(host, owner=True))
        return runner[0]

    def served(payload: Any, status: int = 200) -> JSONResponse:
        return JSONResponse(state.scrub(host, payload), status_code=status)

    def reader(read: Callable[[Request], Any]) -> Endpoint:
        async def endpoint(request: Request) -> Response:
            try:
                payload = await anyio.to_thread.run_sync(read, request)
            except state.BadParameterError as exc:
                return error(400, host.redact(str(exc)))
            except SharedError as exc:
                return error(exc.status, host.redact(exc.message))
            if payload is None:
                return error(404, "not found (or the plugin that holds it is not enabled)")
            return served(payload)

        return endpoint

    def params(request: Request) -> dict[str, str]:
        return dict(request.query_params.items())

    async def index(_request: Request) -> Response:
        return HTMLResponse(page)

    async def body(request: Request) -> dict[str, Any]:
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

    async def call_tool(name: str, args: Mapping[str, Any]) -> Response:
        if not host.tool_served(name, owner=True):
            return error(409, f"the tool {name} is not served (its plugin is not enabled)")
        result = await tool_runner().call(name, args, agent=TOOL_AGENT)
        if result.is_error:
            text = "".join(getattr(block, "text", "") for block in result.content)
            return error(422, host.redact(text))
        # the tool's answer is for the agent: forget's quotes the memory, whose private mask it has just removed
        return served({"ok": True, "tool": name})

    def memory_id(request: Request) -> str:
        value = str(request.path_params["memory_id"])
        if not value or len(value) > 200:
            raise HTTPException(400, "memory id: expected 1 to 200 characters")
        return value

    async def forget(request: Request) -> Response:
        await body(request)
        return await call_tool("forget", {"memory_id": memory_id(request)})

    async def revise(request: Request) -> Response:
        payload = await body(request)
        unknown = sorted(set(payload) - set(REVISABLE))
        if unknown:
            return error(400, f"unknown field {unknown[0][:40]!r}: a revision changes {', '.join(REVISABLE)}")
        if not payload:
            return error(400, f"nothing to change: give {', '.join(REVISABLE)}")
        return await call_tool("revise_memory", {"memory_id": memory_id(request), **payload})

    async def reveal(request: Request) -> Response:
        if not reveal_private:
            return error(403, "revealing private memories is off; start the dashboard with --reveal-private")
        await body(request)
        wanted = memory_id(request)
        found = await anyio.to_thread.run_sync(lambda: state.private_text(host, wanted))
        if found is None:
            return error(404, "no private memory with this id")
        log_event(_log, "dashboard_reveal", memory_id=wanted)
        # deliberately not redacted: the owner asked for this text (never cached: every API answer is no-store)
        return JSONResponse({"id": wanted, "content": found})

    async def resolve_question(request: Request) -> Response:
        payload = await body(request)
        question = str(request.path_params["question_id"])
        answer = payload.get("answer")
        if answer is not None and not isinstance(answer, str):
            return error(400, "answer: expected a string")
        value: Any = {"id": question, "answer": answer} if answer else question
        return await call_tool("update_self", {"field": "resolve_question", "value": value})

    def text_field(payload: Mapping[str, Any], name: str) -> str:
        value = payload.get(name)
        if not isinstance(value, str) or not value.strip():
            raise HTTPException(400, f"{name}: expected a non-empty string")
        return value

    async def relabel_notion(request: Request) -> Response:
        label = text_field(await body(request), "label")
        args = {"action": "relabel", "id": str(request.path_params["notion_id"]), "label": label}
        return await call_tool("curate_notions", args)

    async def merge_notion(request: Request) -> Response:
        into = text_field(await body(request), "into")
        args = {"action": "merge", "id": str(request.path_params["notion_id"]), "into": into}
        return await call_tool("curate_notions", args)

    def pair_of(payload: Mapping[str, Any]) -> tuple[str, str]:
        first, second = text_field(payload, "a"), text_field(payload, "b")
        if len(first) > 200 or len(second) > 200 or first == second:
            raise HTTPException(400, "a, b: expected two different memory ids")
        return first, second

    async def keep_pair(request: Request) -> Response:
        first, second = pair_of(await body(request))
        response = await call_tool("keep_both", {"a": first, "b": second})
        return served({"ok": True, "kept": True}) if response.status_code == 200 else response

    async def unkeep_pair(request: Request) -> Response:
        first, second = pair_of(await body(request))
        response = await call_tool("keep_both", {"a": first, "b": second, "undo": True})
        return served({"ok": True, "kept": False}) if response.status_code == 200 else response

    async def adopt_legacy_kept_pairs() -> None:
        """Pairs the dashboard kept in its own file before the dedup plugin kept them go to the plugin (once)."""
        legacy = state.legacy_kept_pairs(host.settings.data_dir.expanduser())
        if not legacy or not host.tool_served("keep_both", owner=True):
            return
        for first, second in legacy:
            await tool_runner().call("keep_both", {"a": first, "b": second}, agent=TOOL_AGENT)
        path = host.settings.data_dir.expanduser() / "dashboard" / state.LEGACY_KEPT_FILE
        path.replace(path.with_name(path.name + ".adopted"))
        log_event(_log, "dashboard_kept_pairs_adopted", pairs=len(legacy))

    async def shared_action(work: Callable[[], Any]) -> Response:
        try:
            payload = await anyio.to_thread.run_sync(work)
        except SharedError as exc:
            return error(exc.status, host.redact(exc.message))
        return served(payload)

    async def propose_cleanup(request: Request) -> Response:
        payload = await body(request)
        return await shared_action(lambda: shared_view.propose(payload))

    async def confirm_cleanup(request: Request) -> Response:
        await body(request)
        plan_id = str(request.path_params["plan_id"])
        response = await shared_action(lambda: shared_view.confirm(plan_id))
        if response.status_code == 200:
            log_event(_log, "dashboard_cleanup_confirm", plan_id=plan_id)
        return response

    def graph(request: Request) -> Any:
        depth = state._int(params(request), "depth", 1, 1, 3)
        return state.graph(host, memory_id(request), depth)

    def self_view(_request: Request) -> Any:
        return {"questions": state.questions(host), "notions": state.notions(host)}

    async def json_errors(request: Request, exc: Exception) -> Response:
        if isinstance(exc, HTTPException):
            return error(exc.status_code, str(exc.detail))
        return error(500, "internal error")

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(host.start)
        await adopt_legacy_kept_pairs()
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(shared_view.close)
            await anyio.to_thread.run_sync(host.stop)

    static = resources.files("ego_dashboard").joinpath("static")
    routes = [
        Route("/", index, methods=["GET"]),
        Route(
            "/api/status",
            reader(lambda r: {"plugins": state.plugins(host), "loopback": loopback, "reveal_private": reveal_private}),
            methods=["GET"],
        ),
        Route("/api/memories/{memory_id}/reveal", reveal, methods=["POST"]),
        Route("/api/now", reader(lambda r: state.now_view(host)), methods=["GET"]),
        Route("/api/memories", reader(lambda r: state.search(host, params(r))), methods=["GET"]),
        Route("/api/memories/{memory_id}", reader(lambda r: state.detail(host, memory_id(r))), methods=["GET"]),
        Route("/api/memories/{memory_id}/graph", reader(graph), methods=["GET"]),
        Route("/api/memories/{memory_id}/forget", forget, methods=["POST"]),
        Route("/api/memories/{memory_id}/revise", revise, methods=["POST"]),
        Route("/api/questions/{question_id}/resolve", resolve_question, methods=["POST"]),
        Route("/api/notions/{notion_id}/relabel", relabel_notion, methods=["POST"]),
        Route("/api/notions/{notion_id}/merge", merge_notion, methods=["POST"]),
        Route("/api/self", reader(self_view), methods=["GET"]),
        Route("/api/history", reader(lambda r: state.history(host, params(r))), methods=["GET"]),
        Route("/api/history/desires", reader(lambda r: state.desire_history(host, params(r))), methods=["GET"]),
        Route("/api/people", reader(lambda r: state.people(host)), methods=["GET"]),
        Route("/api/logs", reader(lambda r: state.logs(host, params(r))), methods=["GET"]),
        Route("/api/merge-candidates", reader(lambda r: state.merge_candidates(host)), methods=["GET"]),
        Route("/api/merge-candidates/keep", keep_pair, methods=["POST"]),
        Route("/api/merge-candidates/unkeep", unkeep_pair, methods=["POST"]),
        Route("/api/shared", reader(lambda r: shared_view.read(r.query_params.get("scopes"))), methods=["GET"]),
        Route("/api/shared/cleanup", propose_cleanup, methods=["POST"]),
        Route(
            "/api/shared/cleanup/{plan_id}",
            reader(lambda r: shared_view.plan(str(r.path_params["plan_id"]))),
            methods=["GET"],
        ),
        Route("/api/shared/cleanup/{plan_id}/confirm", confirm_cleanup, methods=["POST"]),
        Mount("/static", StaticFiles(directory=str(static)), name="static"),
    ]
    return Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[
            Middleware(Headers),
            Middleware(Guard, loopback=loopback, tokens=tokens, csrf=csrf),
        ],
        exception_handlers={HTTPException: json_errors, Exception: json_errors},
    )
