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
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import attrs
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.detector import DetectionBudgetExceeded, detection_budget
from ego_shared_memory.events import EVENT_ID, AccessError, EventError, check_agent_id
from ego_shared_memory.http_errors import EXCEPTION_HANDLERS, FIELD_NAME, ApiError, Guard
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
from ego_shared_memory.service import SharedMemory
from ego_shared_memory.store import SqlStore
from ego_shared_memory.store.base import Role
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
LOOPBACK_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "::1")
"""The Host names a gateway answers to by default (it listens on 127.0.0.1 by default)."""
DETECTION_BUDGET_SECONDS = 2.0
"""How long an append's check for secrets and personal data may take (it runs in a worker thread, never on the
event loop); past it the append is refused with 503 ``busy`` and nothing is stored. Checking 64 KB takes at
most about 0.25 s on one core (``ego bench detector``)."""
TOKEN_CACHE_SECONDS = 5.0
"""A revoked token stops working within this many seconds on every replica."""
PROBE_THREADS = 4
"""Worker threads reserved for health probes."""

Clock = Callable[[], datetime]
T = TypeVar("T")


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
                named = FIELD_NAME.match(key) is not None
                label = (key if where == "body" else f"{where}.{key}") if named else where
                stack.append((child, label, depth + 1))
        elif isinstance(item, list):
            stack.extend((child, where, depth + 1) for child in item)


def _require_json(request: Request) -> None:
    """A request that announces a body must say it is JSON (415 otherwise, before the body is read)."""
    length = request.headers.get("content-length", "").strip()
    announced = (length not in ("", "0")) or "transfer-encoding" in request.headers
    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if announced and media_type != JSON_MEDIA_TYPE:
        raise ApiError(415, "unsupported_media_type", f"send the body as JSON, with Content-Type: {JSON_MEDIA_TYPE}")


async def _read_body(request: Request) -> bytes:
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
    _require_json(request)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise too_large
    return bytes(body)


async def _read_json(request: Request, *, required: bool = True) -> Any:
    """The body as checked JSON; an empty body is a 400 when ``required``, else ``{}``."""
    body = await _read_body(request)
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


def _int_param(request: Request, name: str, default: int) -> int:
    """An integer query parameter (absent or empty: ``default``; anything else not an integer: 422)."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise EventError(name, "an integer") from None


def _bool_param(request: Request, name: str, default: bool) -> bool:
    """A boolean query parameter, spelled as in :data:`BOOLEAN_SPELLINGS` (absent or empty: ``default``)."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if raw not in BOOLEAN_SPELLINGS:
        raise EventError(name, "true or false (or 1 or 0)")
    return BOOLEAN_SPELLINGS[raw]


def _cleanup_selection(body: Any) -> tuple[timedelta | None, list[str], bool]:
    """What a cleanup request selects: ``older_than`` (a duration), ``scopes`` (names or patterns) and
    ``expired``; 422 naming the field otherwise, and for an ``approve`` (deletion takes a second request)."""
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
    return older_than, scopes, expired


class TokenCache:
    """Who owns a bearer token (agent id and role), looked up in the store and remembered for
    :data:`TOKEN_CACHE_SECONDS`."""

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


@attrs.define
class Gateway:
    """One gateway's state and its endpoints: each public coroutine below answers one route of :meth:`routes`.
    ``janitor_every`` (seconds, or None) runs the janitor in the background while the app lives."""

    store: SqlStore
    settings: GatewaySettings
    clock: Clock = _utc_now
    janitor_every: float | None = None
    detection_budget_seconds: float = DETECTION_BUDGET_SECONDS
    service: SharedMemory = attrs.field(init=False)
    tokens: TokenCache = attrs.field(init=False)
    _probes: anyio.CapacityLimiter | None = attrs.field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        self.service = SharedMemory(self.store, self.settings)
        self.tokens = TokenCache(self.store)

    def routes(self) -> list[Route]:
        """Every path and method the gateway serves (``/openapi.json`` describes each)."""
        return [
            Route("/openapi.json", self.openapi, methods=["GET"]),
            Route("/v1/health", self.health, methods=["GET"]),
            Route("/v1/memory/snapshot", self.snapshot, methods=["GET"]),
            Route("/v1/memory/append", self.append, methods=["POST"]),
            Route("/v1/memory/events/{event_id}", self.event, methods=["GET"]),
            Route("/v1/memory/search", self.search, methods=["GET"]),
            Route("/v1/janitor/run", self.janitor_run, methods=["POST"]),
            Route("/v1/janitor/conflicts", self.janitor_conflicts, methods=["GET"]),
            Route("/v1/janitor/candidates", self.janitor_candidates, methods=["GET"]),
            Route("/v1/janitor/audit", self.janitor_audit, methods=["GET"]),
            Route("/v1/janitor/cleanup", self.janitor_cleanup, methods=["POST"]),
            Route("/v1/janitor/cleanup/{plan_id}", self.janitor_cleanup_plan, methods=["GET"]),
            Route("/v1/janitor/cleanup/{plan_id}/confirm", self.janitor_cleanup_confirm, methods=["POST"]),
        ]

    # -- shared helpers

    async def quick(self, work: Callable[[], T]) -> T:
        """A store call, in a worker thread: a store waits on the network (PostgreSQL) or on another process's
        write lock (SQLite: the CLI janitor, a second gateway), and the event loop must keep answering."""
        return await anyio.to_thread.run_sync(work)

    def probe_limiter(self) -> anyio.CapacityLimiter:
        """Health probes have threads of their own: requests waiting for a lock never hold them up. Made on first
        use, inside the event loop."""
        if self._probes is None:
            self._probes = anyio.CapacityLimiter(PROBE_THREADS)
        return self._probes

    async def identify(self, request: Request, role: Role) -> str:
        """The agent (or operator) whose bearer token the request sends; 401 without a known token, 403 when the
        token's role is not ``role``."""
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(401, "unauthorized", "send the agent's token as Authorization: Bearer <token>")
        owner = await self.tokens.owner(token.strip())
        if owner is None:
            raise ApiError(401, "unauthorized", "the token is unknown or revoked; ask the operator for a new one")
        agent, token_role = owner
        if token_role != role:
            if role == "admin":
                raise ApiError(403, "forbidden", "the janitor endpoints need an operator token (--admin)")
            raise ApiError(403, "forbidden", "operator tokens run the janitor; they cannot read or write memories")
        return agent

    # -- memory endpoints (agent tokens)

    async def append(self, request: Request) -> Response:
        """POST /v1/memory/append: 201 with the stored event, 200 for a duplicate."""
        agent = await self.identify(request, "agent")
        body = await _read_json(request)

        def checked_append() -> dict[str, Any]:
            # The body's text is checked for secrets (in parse_event) before anything is stored: in this worker
            # thread, within the budget, so that no content can hold up the event loop and the other requests.
            with detection_budget(self.detection_budget_seconds):
                return self.service.append(body, agent_id=agent, now=self.clock())

        try:
            result = await self.quick(checked_append)
        except DetectionBudgetExceeded:
            raise ApiError(
                503,
                "busy",
                "the content could not be checked for secrets and personal data within "
                f"{self.detection_budget_seconds:g} s; nothing was stored. Try again later (shorter content is "
                "checked faster)",
            ) from None
        return JSONResponse(result, status_code=200 if result["status"] == "duplicate" else 201)

    async def snapshot(self, request: Request) -> Response:
        """GET /v1/memory/snapshot: what the token's agent may see; ``agent_id``, if given, must be that agent."""
        agent = await self.identify(request, "agent")
        claimed = request.query_params.get("agent_id")
        if claimed:
            check_agent_id(claimed)
            if claimed != agent:
                raise AccessError(f"agent_id {claimed} does not match the token, which belongs to {agent}")
        limit = _int_param(request, "limit_recent", 50)
        scopes = request.query_params.get("scopes") or None
        result = await self.quick(
            lambda: self.service.snapshot(agent_id=agent, scopes=scopes, limit_recent=limit, now=self.clock())
        )
        return JSONResponse(result)

    async def event(self, request: Request) -> Response:
        """GET /v1/memory/events/{event_id}: one event the agent may read."""
        agent = await self.identify(request, "agent")
        event_id = request.path_params["event_id"]
        if not EVENT_ID.match(event_id):
            raise EventError("event_id", "an event id evt_<24 hex digits>")
        result = await self.quick(lambda: self.service.event(agent_id=agent, event_id=event_id, now=self.clock()))
        return JSONResponse(result)

    async def search(self, request: Request) -> Response:
        """GET /v1/memory/search: events matching ``q`` (and ``scopes``, ``kind``) that the agent may read."""
        agent = await self.identify(request, "agent")
        params = request.query_params
        limit = _int_param(request, "limit", 20)
        include = _bool_param(request, "include_deprecated", False)
        kind = params.get("kind") or None
        result = await self.quick(
            lambda: self.service.search(
                agent_id=agent,
                query=params.get("q", ""),
                scopes=params.get("scopes") or None,
                kind=kind,
                limit=limit,
                include_deprecated=include,
                now=self.clock(),
            )
        )
        return JSONResponse(result)

    # -- open endpoints

    async def health(self, _request: Request) -> Response:
        """GET /v1/health: no token; the backend, the ruleset stamp and the last event's sequence number."""
        events = await anyio.to_thread.run_sync(self.store.max_seq, limiter=self.probe_limiter())
        return JSONResponse(
            {
                "status": "ok",
                "backend": self.store.backend,
                "ruleset_stamp": self.settings.ruleset_stamp,
                "last_seq": events,
            }
        )

    async def openapi(self, _request: Request) -> Response:
        """GET /openapi.json: the OpenAPI description of every route."""
        return JSONResponse(openapi_document())

    # -- janitor endpoints (operator tokens)

    async def janitor_run(self, request: Request) -> Response:
        """POST /v1/janitor/run: runs the janitor's ``steps`` (all by default); it never deletes anything."""
        actor = await self.identify(request, "admin")
        body = await _read_json(request, required=False)
        if not isinstance(body, Mapping):
            raise EventError("body", "a JSON object {steps, full_scan}")
        steps = body.get("steps", list(STEPS))
        if not isinstance(steps, list) or not steps or any(step not in STEPS for step in steps):
            raise EventError("steps", "a non-empty list of " + ", ".join(STEPS))
        full = body.get("full_scan", False)
        if not isinstance(full, bool):
            raise EventError("full_scan", "true or false")
        report = await self.quick(
            lambda: run_janitor(self.store, self.settings, self.clock(), steps=steps, full_scan=full)
        )
        _log.info("janitor run by %s: %s", actor, ", ".join(steps))
        return JSONResponse(report)

    async def janitor_conflicts(self, request: Request) -> Response:
        """GET /v1/janitor/conflicts: the open conflicts."""
        await self.identify(request, "admin")
        conflicts = await self.quick(self.store.open_conflicts)
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

    async def janitor_candidates(self, request: Request) -> Response:
        """GET /v1/janitor/candidates: events marked for the operator's review."""
        await self.identify(request, "admin")
        rows = await self.quick(self.store.candidates)
        return JSONResponse(
            {"candidates": [{"event_id": e, "reason": r, "marked_at": m.isoformat()} for e, r, m in rows]}
        )

    async def janitor_audit(self, request: Request) -> Response:
        """GET /v1/janitor/audit: the latest ``limit`` (1 to 1000) audit records."""
        await self.identify(request, "admin")
        limit = _int_param(request, "limit", 100)
        if not 1 <= limit <= 1000:
            raise EventError("limit", "an integer from 1 to 1000")
        records = await self.quick(lambda: self.store.audit(limit))
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

    async def janitor_cleanup(self, request: Request) -> Response:
        """POST /v1/janitor/cleanup: proposes a cleanup plan; deletes nothing (confirming the plan's id does)."""
        actor = await self.identify(request, "admin")
        older_than, scopes, expired = _cleanup_selection(await _read_json(request))
        plan = await self.quick(
            lambda: propose_cleanup(
                self.store,
                self.clock(),
                older_than=older_than,
                scope_patterns=scopes,
                expired_only=expired,
                actor=f"gateway:{actor}",
            )
        )
        _log.info("cleanup plan %s proposed by %s: %d event(s)", plan.plan_id, actor, len(plan.event_ids))
        return JSONResponse(plan_view(plan, self.clock()), status_code=201)

    async def janitor_cleanup_plan(self, request: Request) -> Response:
        """GET /v1/janitor/cleanup/{plan_id}: one plan, as proposed."""
        await self.identify(request, "admin")
        plan_id = request.path_params["plan_id"]
        plan = await self.quick(lambda: find_plan(self.store, plan_id))
        return JSONResponse(plan_view(plan, self.clock()))

    async def janitor_cleanup_confirm(self, request: Request) -> Response:
        """POST /v1/janitor/cleanup/{plan_id}/confirm: deletes exactly the events of an open plan (each deletion
        audited), once."""
        actor = await self.identify(request, "admin")
        _require_json(request)  # it reads no body, but refuses one not sent as JSON alike
        plan_id = request.path_params["plan_id"]
        done = await self.quick(
            lambda: confirm_cleanup(self.store, plan_id, actor=f"gateway:{actor}", now=self.clock())
        )
        _log.info("cleanup plan %s confirmed by %s: %d event(s) deleted", plan_id, actor, len(done.deleted))
        return JSONResponse(
            {
                **plan_view(done.plan, self.clock()),
                "deleted_event_ids": list(done.deleted),
                "already_gone": list(done.already_gone),
            }
        )

    # -- lifetime

    @asynccontextmanager
    async def lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        """While the app lives: the periodic janitor in a daemon thread, when ``janitor_every`` is set."""
        stop = threading.Event()
        worker: threading.Thread | None = None
        if self.janitor_every:
            every = self.janitor_every
            worker = threading.Thread(
                target=self._janitor_loop, args=(stop, every), name="shared-memory-janitor", daemon=True
            )
            worker.start()
        try:
            yield
        finally:
            stop.set()
            if worker is not None:
                worker.join(timeout=30)

    def _janitor_loop(self, stop: threading.Event, every: float) -> None:
        """Runs the janitor every ``every`` seconds until ``stop`` is set; a failed run is logged, not fatal."""
        while not stop.wait(every):
            try:
                run_janitor(self.store, self.settings, self.clock())
            except Exception:
                _log.error("periodic janitor run failed", exc_info=True)


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
    gateway = Gateway(
        store,
        settings,
        clock=clock,
        janitor_every=janitor_every,
        detection_budget_seconds=detection_budget_seconds,
    )
    app = Starlette(
        routes=gateway.routes(),
        exception_handlers=dict(EXCEPTION_HANDLERS),
        lifespan=gateway.lifespan,
        middleware=[Middleware(Guard, allowed_hosts=tuple(allowed_hosts))],
    )
    app.router.redirect_slashes = False  # a redirect would be built from the request's Host
    return app
