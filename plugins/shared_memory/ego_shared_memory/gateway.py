"""The gateway: an ASGI app (Starlette) over one store, with per-agent bearer tokens.

Every answer is JSON, errors included (``{"error": code, "message": ...}``, plus ``field``/``rule`` for a
422 and ``kinds`` when sensitive data was refused). ``/openapi.json`` describes every route and response.

Malformed input is a 4xx, never a 500: a body is read at most :data:`MAX_BODY_BYTES` (checked against
Content-Length first, then while it streams), JSON nested deeper than :data:`MAX_JSON_DEPTH` is refused, and so
is text that a store could not keep as it is (NUL, unpaired surrogates). A request whose Host is not one the
gateway serves is refused (no redirect ever names it). Every store call runs in a worker thread, never on the
event loop. An unexpected error is a 500 with a short JSON body; the connection stays usable.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import unquote_to_bytes

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.datastructures import Headers, QueryParams
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.detector import DetectionBudgetExceeded, detection_budget
from ego_shared_memory.events import EVENT_ID, AccessError, EventError, check_agent_id
from ego_shared_memory.janitor import (
    MAX_CLEANUP_SCOPES,
    STEPS,
    confirm_cleanup,
    find_plan,
    parse_duration,
    plan_view,
    propose_cleanup,
    run_janitor,
)
from ego_shared_memory.openapi import openapi_document
from ego_shared_memory.service import NotFoundError, SharedMemory
from ego_shared_memory.store import CleanupPlanError, SqlStore, StoreError
from ego_shared_memory.store.base import Role, StoreBusyError, StoreFullError
from ego_shared_memory.store.sql import STORABLE_RULE, storable
from ego_shared_memory.tokens import hash_token

_log = logging.getLogger("ego.shared_memory.gateway")

MAX_BODY_BYTES = 64 * 1024
MAX_JSON_DEPTH = 32
"""Arrays and objects nested deeper than this are refused (400), each array or object one level: a memory event
is two levels deep."""
JSON_MEDIA_TYPE = "application/json"
"""A request body must be sent as this (parameters such as ``; charset=utf-8`` aside); anything else is a 415."""
BOOLEAN_SPELLINGS: Mapping[str, bool] = {"true": True, "false": False, "1": True, "0": False}
"""A boolean query parameter's values; an empty one is the default, any other is a 422."""
UTF8_RULE = "percent-encoded UTF-8 text (no encoded surrogates)"
RETRY_AFTER_SECONDS = 2
"""Sent as Retry-After with every 503 (busy, store full, store unavailable)."""
LOOPBACK_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "::1")
"""The Host names a gateway answers to by default (it listens on 127.0.0.1 by default)."""
_FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")
DETECTION_BUDGET_SECONDS = 2.0
"""How long an append's check for secrets and personal data may take (it runs in a worker thread, never on the
event loop); past it the append is refused with 503 ``busy`` and nothing is stored. Checking 64 KB takes at
most about 0.25 s on one core (``ego bench detector``)."""
TOKEN_CACHE_SECONDS = 5.0
"""A revoked token stops working within this many seconds on every replica."""

Clock = Callable[[], datetime]
T = TypeVar("T")


class ApiError(Exception):
    def __init__(self, status: int, error: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.payload: dict[str, Any] = {"error": error, "message": message, **extra}


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _check_json(document: Any) -> None:
    """Refuses a document nested deeper than :data:`MAX_JSON_DEPTH` (400) or holding text no store keeps as it
    is (422 naming the field when it is a plain name; the text itself is never echoed)."""
    stack: list[tuple[Any, str, int]] = [(document, "body", 0)]
    while stack:
        item, where, depth = stack.pop()  # depth: the arrays and objects around item
        if depth >= MAX_JSON_DEPTH and isinstance(item, (dict, list)):
            raise ApiError(400, "bad_request", f"the JSON is nested more than {MAX_JSON_DEPTH} levels deep")
        if isinstance(item, str):
            if not storable(item):
                raise EventError(where, STORABLE_RULE)
        elif isinstance(item, dict):
            for key, child in item.items():
                if not storable(key):
                    raise EventError(where, STORABLE_RULE)
                named = _FIELD_NAME.match(key) is not None
                label = (key if where == "body" else f"{where}.{key}") if named else where
                stack.append((child, label, depth + 1))
        elif isinstance(item, list):
            stack.extend((child, where, depth + 1) for child in item)


def _host_name(header: str) -> str:
    """The name in a Host header, lower-case, without the port (``[::1]:8765`` → ``::1``)."""
    host = header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _undecodable_parameter(query_string: bytes) -> str | None:
    """The name of the first query parameter (or ``query``) whose percent-decoded bytes are not UTF-8; Starlette
    would replace them with U+FFFD silently."""
    for pair in query_string.split(b"&"):
        name, _, value = (unquote_to_bytes(part.replace(b"+", b" ")) for part in pair.partition(b"="))
        try:
            label = name.decode("utf-8")
        except UnicodeDecodeError:
            return "query"
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            return label if _FIELD_NAME.match(label) else "query"
    return None


def _error_body(status: int, payload: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> JSONResponse:
    extra = dict(headers or {})
    if status == 503:
        extra.setdefault("Retry-After", str(RETRY_AFTER_SECONDS))
    return JSONResponse(dict(payload), status_code=status, headers=extra or None)


class _Guard:
    """The outermost layer of the app (inside Starlette's own error middleware): refuses a Host the gateway
    does not serve and a query parameter that is not UTF-8 or holds NUL, and turns an unexpected exception into a
    500 with a JSON body *without* re-raising it — re-raised, the server would close the keep-alive connection and
    the client's next request on it would fail too. A client that hangs up mid-request is no error: one info
    line, and no answer (there is no one to send it to)."""

    def __init__(self, app: ASGIApp, allowed_hosts: tuple[str, ...]) -> None:
        self.app = app
        self.allowed_hosts = frozenset(host.lower().strip("[]") for host in allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        started = False

        async def tracked(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except ClientDisconnect:
            _log.info("gateway: the client hung up during %s %s", scope.get("method"), scope.get("path"))
        except Exception as exc:
            if started:
                raise
            _log.error("gateway request failed", exc_info=exc)
            response = _error_body(500, {"error": "internal", "message": "internal error; it was logged"})
            await response(scope, receive, send)

    def _refusal(self, scope: Scope) -> Response | None:
        if "*" not in self.allowed_hosts:
            host = _host_name(Headers(scope=scope).get("host", ""))
            if host not in self.allowed_hosts:
                return _error_body(
                    421,
                    {
                        "error": "misdirected",
                        "message": "the Host header names a host this gateway does not serve (see --allowed-host)",
                    },
                )
        query_string: bytes = scope.get("query_string", b"")
        undecodable = _undecodable_parameter(query_string)
        if undecodable is not None:
            return _error_body(
                422,
                {
                    "error": "invalid",
                    "message": f"{undecodable}: expected {UTF8_RULE}",
                    "field": undecodable,
                    "rule": UTF8_RULE,
                },
            )
        for name, value in QueryParams(query_string).multi_items():
            if not storable(value):
                field = name if _FIELD_NAME.match(name) else "query"
                return _error_body(
                    422,
                    {
                        "error": "invalid",
                        "message": f"{field}: expected {STORABLE_RULE}",
                        "field": field,
                        "rule": STORABLE_RULE,
                    },
                )
        return None


class TokenCache:
    def __init__(self, store: SqlStore) -> None:
        self.store = store
        self._entries: dict[str, tuple[tuple[str, Role] | None, float]] = {}
        self._lock = threading.Lock()

    async def owner(self, token: str) -> tuple[str, Role] | None:
        digest = hash_token(token)
        now = time.monotonic()
        with self._lock:
            cached = self._entries.get(digest)
        if cached is not None and cached[1] > now:
            return cached[0]
        owner = await anyio.to_thread.run_sync(self.store.token_owner, digest)
        with self._lock:
            if len(self._entries) > 10_000:
                self._entries.clear()
            self._entries[digest] = (owner, now + TOKEN_CACHE_SECONDS)
        return owner


def build_app(
    store: SqlStore,
    settings: GatewaySettings,
    *,
    clock: Clock = _utc_now,
    janitor_every: float | None = None,
    detection_budget_seconds: float = DETECTION_BUDGET_SECONDS,
    allowed_hosts: Sequence[str] = LOOPBACK_HOSTS,
) -> Starlette:
    """The gateway over ``store``. ``janitor_every`` (seconds) runs the janitor in the background (never
    deleting anything). ``detection_budget_seconds``: see :data:`DETECTION_BUDGET_SECONDS`. ``allowed_hosts``:
    the names a request's Host header may give (``*``: any); others get 421."""
    service = SharedMemory(store, settings)
    tokens = TokenCache(store)
    probes: list[anyio.CapacityLimiter] = []

    async def quick(work: Callable[[], T]) -> T:
        """A store call, in a worker thread: a store waits on the network (PostgreSQL) or on another process's
        write lock (SQLite: the CLI janitor, a second gateway), and the event loop must keep answering."""
        return await anyio.to_thread.run_sync(work)

    def probe_limiter() -> anyio.CapacityLimiter:
        """Health probes have threads of their own: requests waiting for a lock never hold them up."""
        if not probes:
            probes.append(anyio.CapacityLimiter(4))
        return probes[0]

    async def identify(request: Request, role: Role) -> str:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(401, "unauthorized", "send the agent's token as Authorization: Bearer <token>")
        owner = await tokens.owner(token.strip())
        if owner is None:
            raise ApiError(401, "unauthorized", "the token is unknown or revoked; ask the operator for a new one")
        agent, token_role = owner
        if token_role != role:
            if role == "admin":
                raise ApiError(403, "forbidden", "the janitor endpoints need an operator token (--admin)")
            raise ApiError(403, "forbidden", "operator tokens run the janitor; they cannot read or write memories")
        return agent

    def require_json(request: Request) -> None:
        """A request that announces a body must say it is JSON (415 otherwise, before the body is read)."""
        length = request.headers.get("content-length", "").strip()
        announced = (length not in ("", "0")) or "transfer-encoding" in request.headers
        media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if announced and media_type != JSON_MEDIA_TYPE:
            raise ApiError(
                415, "unsupported_media_type", f"send the body as JSON, with Content-Type: {JSON_MEDIA_TYPE}"
            )

    async def read_body(request: Request) -> bytes:
        """The body, never more than MAX_BODY_BYTES of it in memory: a larger Content-Length is refused before
        reading, and a body that streams past the limit (chunked, or longer than announced) is cut off. A body
        not sent as JSON is refused before it is read."""
        too_large = ApiError(413, "too_large", f"the body is larger than {MAX_BODY_BYTES} bytes")
        length = request.headers.get("content-length")
        if length is not None:
            if not length.strip().isdigit():
                raise ApiError(400, "bad_request", "Content-Length is not a number")
            if int(length) > MAX_BODY_BYTES:
                raise too_large
        require_json(request)
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                raise too_large
        return bytes(body)

    async def read_json(request: Request, *, required: bool = True) -> Any:
        body = await read_body(request)
        if not body.strip():
            if required:
                raise ApiError(400, "bad_request", "expected a JSON body")
            return {}
        try:
            document = json.loads(body, parse_constant=_reject_constant)
        except RecursionError:
            raise ApiError(400, "bad_request", f"the JSON is nested more than {MAX_JSON_DEPTH} levels deep") from None
        except (ValueError, UnicodeDecodeError):
            raise ApiError(400, "bad_request", "the body is not valid JSON (NaN and Infinity are refused)") from None
        _check_json(document)
        return document

    def int_param(request: Request, name: str, default: int) -> int:
        raw = request.query_params.get(name)
        if raw is None or raw == "":
            return default
        try:
            return int(raw)
        except ValueError:
            raise EventError(name, "an integer") from None

    def bool_param(request: Request, name: str, default: bool) -> bool:
        raw = request.query_params.get(name)
        if raw is None or raw == "":
            return default
        if raw not in BOOLEAN_SPELLINGS:
            raise EventError(name, "true or false (or 1 or 0)")
        return BOOLEAN_SPELLINGS[raw]

    async def append(request: Request) -> Response:
        agent = await identify(request, "agent")
        body = await read_json(request)

        def checked_append() -> dict[str, Any]:
            # The body's text is checked for secrets (in parse_event) before anything is stored: in this worker
            # thread, within the budget, so that no content can hold up the event loop and the other requests.
            with detection_budget(detection_budget_seconds):
                return service.append(body, agent_id=agent, now=clock())

        try:
            result = await anyio.to_thread.run_sync(checked_append)
        except DetectionBudgetExceeded:
            raise ApiError(
                503,
                "busy",
                f"the content could not be checked for secrets and personal data within {detection_budget_seconds:g} "
                "s; nothing was stored. Try again later (shorter content is checked faster)",
            ) from None
        return JSONResponse(result, status_code=200 if result["status"] == "duplicate" else 201)

    async def snapshot(request: Request) -> Response:
        agent = await identify(request, "agent")
        claimed = request.query_params.get("agent_id")
        if claimed:
            check_agent_id(claimed)
            if claimed != agent:
                raise AccessError(f"agent_id {claimed} does not match the token, which belongs to {agent}")
        limit = int_param(request, "limit_recent", 50)
        scopes = request.query_params.get("scopes") or None
        result = await quick(lambda: service.snapshot(agent_id=agent, scopes=scopes, limit_recent=limit, now=clock()))
        return JSONResponse(result)

    async def event(request: Request) -> Response:
        agent = await identify(request, "agent")
        event_id = request.path_params["event_id"]
        if not EVENT_ID.match(event_id):
            raise EventError("event_id", "an event id evt_<24 hex digits>")
        result = await anyio.to_thread.run_sync(lambda: service.event(agent_id=agent, event_id=event_id, now=clock()))
        return JSONResponse(result)

    async def search(request: Request) -> Response:
        agent = await identify(request, "agent")
        params = request.query_params
        limit = int_param(request, "limit", 20)
        include = bool_param(request, "include_deprecated", False)
        kind = params.get("kind") or None
        result = await anyio.to_thread.run_sync(
            lambda: service.search(
                agent_id=agent,
                query=params.get("q", ""),
                scopes=params.get("scopes") or None,
                kind=kind,
                limit=limit,
                include_deprecated=include,
                now=clock(),
            )
        )
        return JSONResponse(result)

    async def health(_request: Request) -> Response:
        events = await anyio.to_thread.run_sync(store.max_seq, limiter=probe_limiter())
        return JSONResponse(
            {"status": "ok", "backend": store.backend, "ruleset_stamp": settings.ruleset_stamp, "last_seq": events}
        )

    async def openapi(_request: Request) -> Response:
        return JSONResponse(openapi_document())

    async def janitor_run(request: Request) -> Response:
        actor = await identify(request, "admin")
        body = await read_json(request, required=False)
        if not isinstance(body, Mapping):
            raise EventError("body", "a JSON object {steps, full_scan}")
        steps = body.get("steps", list(STEPS))
        if not isinstance(steps, list) or not steps or any(step not in STEPS for step in steps):
            raise EventError("steps", "a non-empty list of " + ", ".join(STEPS))
        full = body.get("full_scan", False)
        if not isinstance(full, bool):
            raise EventError("full_scan", "true or false")
        report = await anyio.to_thread.run_sync(
            lambda: run_janitor(store, settings, clock(), steps=steps, full_scan=full)
        )
        _log.info("janitor run by %s: %s", actor, ", ".join(steps))
        return JSONResponse(report)

    async def janitor_conflicts(request: Request) -> Response:
        await identify(request, "admin")
        conflicts = await anyio.to_thread.run_sync(store.open_conflicts)
        return JSONResponse(
            {
                "conflicts": [
                    {
                        "id": c.id,
                        "scope": c.scope,
                        "dedupe_key": c.dedupe_key,
                        "event_id": c.event_id,
                        "previous_event_id": c.previous_event_id,
                        "detected_at": c.detected_at.isoformat(),
                        "resolution_event_id": c.resolution_event_id,
                    }
                    for c in conflicts
                ]
            }
        )

    async def janitor_candidates(request: Request) -> Response:
        await identify(request, "admin")
        rows = await anyio.to_thread.run_sync(store.candidates)
        return JSONResponse(
            {"candidates": [{"event_id": e, "reason": r, "marked_at": m.isoformat()} for e, r, m in rows]}
        )

    async def janitor_audit(request: Request) -> Response:
        await identify(request, "admin")
        limit = int_param(request, "limit", 100)
        if not 1 <= limit <= 1000:
            raise EventError("limit", "an integer from 1 to 1000")
        records = await anyio.to_thread.run_sync(lambda: store.audit(limit))
        return JSONResponse(
            {
                "audit": [
                    {
                        "id": r.id,
                        "at": r.at.isoformat(),
                        "actor": r.actor,
                        "action": r.action,
                        "event_id": r.event_id,
                        "detail": r.detail,
                    }
                    for r in records
                ]
            }
        )

    async def janitor_cleanup(request: Request) -> Response:
        """Proposes a cleanup plan; deletes nothing (confirming the plan's id does)."""
        actor = await identify(request, "admin")
        body = await read_json(request)
        if not isinstance(body, Mapping):
            raise EventError("body", "a JSON object {older_than, expired, scopes}")
        if "approve" in body:
            raise EventError(
                "approve",
                "absent: deletion takes two steps. This request proposes a plan (nothing is deleted); review it, "
                "then POST /v1/janitor/cleanup/{plan_id}/confirm deletes exactly its events",
            )
        older = body.get("older_than")
        if older is not None and not isinstance(older, str):
            raise EventError("older_than", "a duration such as 30d, 12h or 2w")
        try:
            older_than = parse_duration(older) if older is not None else None
        except ValueError as exc:
            raise EventError("older_than", str(exc).removeprefix("expected ")) from None
        scopes = body.get("scopes", [])
        if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
            raise EventError("scopes", "a list of scopes, or *, agent:* or project:*")
        if len(scopes) > MAX_CLEANUP_SCOPES:
            raise EventError("scopes", f"at most {MAX_CLEANUP_SCOPES} scopes or patterns")
        expired = body.get("expired", False)
        if not isinstance(expired, bool):
            raise EventError("expired", "true or false")
        if older_than is None and not expired:
            raise EventError("older_than", "a duration (or expired: true): what to select")
        plan = await anyio.to_thread.run_sync(
            lambda: propose_cleanup(
                store,
                clock(),
                older_than=older_than,
                scope_patterns=scopes,
                expired_only=expired,
                actor=f"gateway:{actor}",
            )
        )
        _log.info("cleanup plan %s proposed by %s: %d event(s)", plan.plan_id, actor, len(plan.event_ids))
        return JSONResponse(plan_view(plan, clock()), status_code=201)

    async def janitor_cleanup_plan(request: Request) -> Response:
        await identify(request, "admin")
        plan_id = request.path_params["plan_id"]
        plan = await anyio.to_thread.run_sync(lambda: find_plan(store, plan_id))
        return JSONResponse(plan_view(plan, clock()))

    async def janitor_cleanup_confirm(request: Request) -> Response:
        """Deletes exactly the events of an open plan (each deletion audited), once."""
        actor = await identify(request, "admin")
        require_json(request)  # it reads no body, but refuses one not sent as JSON alike
        plan_id = request.path_params["plan_id"]
        done = await anyio.to_thread.run_sync(
            lambda: confirm_cleanup(store, plan_id, actor=f"gateway:{actor}", now=clock())
        )
        _log.info("cleanup plan %s confirmed by %s: %d event(s) deleted", plan_id, actor, len(done.deleted))
        return JSONResponse(
            {
                **plan_view(done.plan, clock()),
                "deleted_event_ids": list(done.deleted),
                "already_gone": list(done.already_gone),
            }
        )

    async def plan_problem(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, CleanupPlanError)
        status = {"unknown": 404, "expired": 410, "confirmed": 409}[exc.problem]
        error = {"unknown": "not_found", "expired": "plan_expired", "confirmed": "plan_confirmed"}[exc.problem]
        return JSONResponse({"error": error, "message": str(exc)}, status_code=status)

    async def problem(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        if exc.status in (413, 415):
            headers = {"Connection": "close"}  # the rest of the body was not read
        return _error_body(exc.status, exc.payload, headers)

    async def invalid(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, EventError)
        payload: dict[str, Any] = {"error": "invalid", "message": exc.message, "field": exc.field, "rule": exc.rule}
        if exc.kinds:
            payload["error"] = "sensitive_data"
            payload["kinds"] = list(exc.kinds)
        return JSONResponse(payload, status_code=422)

    async def forbidden(_request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": "forbidden", "message": str(exc)}, status_code=403)

    async def not_found(_request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": "not_found", "message": str(exc)}, status_code=404)

    async def http_error(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return JSONResponse(
            {"error": "http", "message": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers
        )

    async def unavailable(_request: Request, exc: Exception) -> Response:
        _log.error("store unavailable: %s", exc)
        if isinstance(exc, StoreFullError):
            payload = {
                "error": "store_full",
                "message": "the store has no space left; nothing was written. The operator must free space",
            }
        elif isinstance(exc, StoreBusyError):
            payload = {"error": "busy", "message": "the store is locked by other writers; try again shortly"}
        else:
            payload = {"error": "unavailable", "message": "the store is unavailable; try again shortly"}
        return _error_body(503, payload)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        stop = threading.Event()
        worker: threading.Thread | None = None
        if janitor_every:

            def loop() -> None:
                while not stop.wait(janitor_every):
                    try:
                        run_janitor(store, settings, clock())
                    except Exception:
                        _log.error("periodic janitor run failed", exc_info=True)

            worker = threading.Thread(target=loop, name="shared-memory-janitor", daemon=True)
            worker.start()
        try:
            yield
        finally:
            stop.set()
            if worker is not None:
                worker.join(timeout=30)

    handlers: Mapping[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
        ApiError: problem,
        EventError: invalid,
        AccessError: forbidden,
        NotFoundError: not_found,
        CleanupPlanError: plan_problem,
        HTTPException: http_error,
        StoreError: unavailable,
    }
    routes = [
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/v1/health", health, methods=["GET"]),
        Route("/v1/memory/snapshot", snapshot, methods=["GET"]),
        Route("/v1/memory/append", append, methods=["POST"]),
        Route("/v1/memory/events/{event_id}", event, methods=["GET"]),
        Route("/v1/memory/search", search, methods=["GET"]),
        Route("/v1/janitor/run", janitor_run, methods=["POST"]),
        Route("/v1/janitor/conflicts", janitor_conflicts, methods=["GET"]),
        Route("/v1/janitor/candidates", janitor_candidates, methods=["GET"]),
        Route("/v1/janitor/audit", janitor_audit, methods=["GET"]),
        Route("/v1/janitor/cleanup", janitor_cleanup, methods=["POST"]),
        Route("/v1/janitor/cleanup/{plan_id}", janitor_cleanup_plan, methods=["GET"]),
        Route("/v1/janitor/cleanup/{plan_id}/confirm", janitor_cleanup_confirm, methods=["POST"]),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers=dict(handlers),
        lifespan=lifespan,
        middleware=[Middleware(_Guard, allowed_hosts=tuple(allowed_hosts))],
    )
    app.router.redirect_slashes = False  # a redirect would be built from the request's Host
    return app
