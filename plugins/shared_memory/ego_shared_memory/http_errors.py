"""How the gateway says no: the request guard (Host, query text, unexpected errors) and the JSON error answers.

Every error is ``{"error": code, "message": ...}``, plus ``field``/``rule`` for a 422 and ``kinds`` when
sensitive data was refused; every 503 carries Retry-After. :data:`EXCEPTION_HANDLERS` maps each exception a
route may raise to its answer.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import unquote_to_bytes

from starlette.datastructures import Headers, QueryParams
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ego_shared_memory.events import AccessError, EventError
from ego_shared_memory.service import NotFoundError
from ego_shared_memory.store import CleanupPlanError, StoreError
from ego_shared_memory.store.base import StoreBusyError, StoreFullError
from ego_shared_memory.store.sql import STORABLE_RULE, storable

_log = logging.getLogger("ego.shared_memory.gateway")

RETRY_AFTER_SECONDS = 2
"""Sent as Retry-After with every 503 (busy, store full, store unavailable)."""
UTF8_RULE = "percent-encoded UTF-8 text (no encoded surrogates)"
FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")
"""A query parameter or JSON key that an error may name as its ``field``; any other is reported by where it is."""

ExceptionHandler = Callable[[Request, Exception], Awaitable[Response]]


class ApiError(Exception):
    """An error answer a route decides on itself: its status and JSON payload."""

    def __init__(self, status: int, error: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.payload: dict[str, Any] = {"error": error, "message": message, **extra}


def error_response(status: int, payload: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> JSONResponse:
    """A JSON error answer; a 503 also says when to try again (Retry-After)."""
    extra = dict(headers or {})
    if status == 503:
        extra.setdefault("Retry-After", str(RETRY_AFTER_SECONDS))
    return JSONResponse(dict(payload), status_code=status, headers=extra or None)


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
            return label if FIELD_NAME.match(label) else "query"
    return None


class Guard:
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
            response = error_response(500, {"error": "internal", "message": "internal error; it was logged"})
            await response(scope, receive, send)

    def _refusal(self, scope: Scope) -> Response | None:
        """The answer to a request refused before any route sees it (421, or 422 for the query), or None."""
        if "*" not in self.allowed_hosts:
            host = _host_name(Headers(scope=scope).get("host", ""))
            if host not in self.allowed_hosts:
                return error_response(
                    421,
                    {
                        "error": "misdirected",
                        "message": "the Host header names a host this gateway does not serve (see --allowed-host)",
                    },
                )
        query_string: bytes = scope.get("query_string", b"")
        undecodable = _undecodable_parameter(query_string)
        if undecodable is not None:
            return _invalid_query(undecodable, UTF8_RULE)
        for name, value in QueryParams(query_string).multi_items():
            if not storable(value):
                return _invalid_query(name if FIELD_NAME.match(name) else "query", STORABLE_RULE)
        return None


def _invalid_query(field: str, rule: str) -> Response:
    return error_response(
        422, {"error": "invalid", "message": f"{field}: expected {rule}", "field": field, "rule": rule}
    )


async def _api_error(_request: Request, exc: Exception) -> Response:
    """A route's own :class:`ApiError`; a 401 names the scheme, a 413 or 415 closes the unread connection."""
    assert isinstance(exc, ApiError)
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    if exc.status in (413, 415):
        headers = {"Connection": "close"}  # the rest of the body was not read
    return error_response(exc.status, exc.payload, headers)


async def _invalid(_request: Request, exc: Exception) -> Response:
    """422 naming the field and its rule; ``sensitive_data`` with the kinds found when content was refused."""
    assert isinstance(exc, EventError)
    payload: dict[str, Any] = {"error": "invalid", "message": exc.message, "field": exc.field, "rule": exc.rule}
    if exc.kinds:
        payload["error"] = "sensitive_data"
        payload["kinds"] = list(exc.kinds)
    return JSONResponse(payload, status_code=422)


async def _forbidden(_request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": "forbidden", "message": str(exc)}, status_code=403)


async def _not_found(_request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": "not_found", "message": str(exc)}, status_code=404)


async def _plan_problem(_request: Request, exc: Exception) -> Response:
    """A cleanup plan that is unknown (404), expired (410) or already confirmed (409)."""
    assert isinstance(exc, CleanupPlanError)
    status = {"unknown": 404, "expired": 410, "confirmed": 409}[exc.problem]
    error = {"unknown": "not_found", "expired": "plan_expired", "confirmed": "plan_confirmed"}[exc.problem]
    return JSONResponse({"error": error, "message": str(exc)}, status_code=status)


async def _http_error(_request: Request, exc: Exception) -> Response:
    """Starlette's own errors (unknown path 404, wrong method 405), as JSON."""
    assert isinstance(exc, HTTPException)
    return JSONResponse({"error": "http", "message": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)


async def _unavailable(_request: Request, exc: Exception) -> Response:
    """503 when the store cannot answer: full, locked by other writers, or unreachable."""
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
    return error_response(503, payload)


EXCEPTION_HANDLERS: Mapping[Any, ExceptionHandler] = {
    ApiError: _api_error,
    EventError: _invalid,
    AccessError: _forbidden,
    NotFoundError: _not_found,
    CleanupPlanError: _plan_problem,
    HTTPException: _http_error,
    StoreError: _unavailable,
}
"""The answer to each exception a route may raise (Starlette picks the nearest class in the exception's MRO)."""
