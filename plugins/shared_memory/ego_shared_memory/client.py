"""The agent side's way to the shared memory: the gateway over HTTP, or a store on this machine.

Both raise :class:`UnreachableError` when the memory cannot be reached (the read must then stop the agent)
and :class:`RefusedError` when the gateway answered but did not accept the request (422, 403).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

import httpx

from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.events import AccessError, EventError
from ego_shared_memory.service import SharedMemory
from ego_shared_memory.store import SqlStore, StoreError, open_store


class UnreachableError(Exception):
    """The shared memory could not be reached; ``reason`` says why (never the token)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RefusedError(Exception):
    """The request reached the memory and was refused (``status`` 422 or 403); ``payload`` is the error JSON."""

    def __init__(self, status: int, payload: Mapping[str, Any]) -> None:
        super().__init__(str(payload.get("message", "")))
        self.status = status
        self.payload = dict(payload)


class SharedClient(Protocol):
    def describe(self) -> str: ...
    def snapshot(self, scopes: Sequence[str] | None, limit: int) -> dict[str, Any]: ...
    def append(self, body: Mapping[str, Any]) -> dict[str, Any]: ...
    def close(self) -> None: ...


class GatewayClient:
    def __init__(self, url: str, token: str, *, timeout: float) -> None:
        self.url = url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=timeout, trust_env=False
        )
        self._timeout = timeout

    def describe(self) -> str:
        return f"gateway {self.url}"

    def _call(self, method: str, path: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TimeoutException:
            raise UnreachableError(f"the gateway at {self.url} did not answer within {self._timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise UnreachableError(f"cannot connect to the gateway at {self.url} ({type(exc).__name__})") from None
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            raise UnreachableError(f"{self.url} answered HTTP {response.status_code} without the gateway's JSON")
        return response.status_code, payload

    def snapshot(self, scopes: Sequence[str] | None, limit: int) -> dict[str, Any]:
        params: dict[str, Any] = {"limit_recent": limit}
        if scopes:
            params["scopes"] = ",".join(scopes)
        status, payload = self._call("GET", "/v1/memory/snapshot", params=params)
        if status == 200:
            return payload
        if status in (403, 422):
            raise RefusedError(status, payload)
        raise UnreachableError(_status_reason(status, payload))

    def append(self, body: Mapping[str, Any]) -> dict[str, Any]:
        status, payload = self._call("POST", "/v1/memory/append", json=dict(body))
        if status in (200, 201):
            return payload
        if status in (403, 422):
            raise RefusedError(status, payload)
        raise UnreachableError(_status_reason(status, payload))

    def close(self) -> None:
        self._http.close()


def _status_reason(status: int, payload: Mapping[str, Any]) -> str:
    if status == 401:
        return "the gateway refused the token (HTTP 401): it is missing, unknown or revoked"
    if status == 503:
        return "the gateway's store is unavailable (HTTP 503)"
    return f"the gateway answered HTTP {status} ({payload.get('error', 'error')})"


class LocalClient:
    """A store on this machine (``db``), opened at the first call; the configured agent writes."""

    def __init__(self, url: str, agent_id: str, settings: GatewaySettings) -> None:
        self.url = url
        self.agent_id = agent_id
        self.settings = settings
        self._service: SharedMemory | None = None
        self._lock = threading.Lock()

    def describe(self) -> str:
        return f"local store {self.url.split('?')[0] if self.url.startswith('sqlite') else 'postgresql'}"

    def _memory(self) -> SharedMemory:
        with self._lock:
            if self._service is None:
                try:
                    store: SqlStore = open_store(self.url)
                except StoreError as exc:
                    raise UnreachableError(str(exc)) from None
                self._service = SharedMemory(store, self.settings)
            return self._service

    def snapshot(self, scopes: Sequence[str] | None, limit: int) -> dict[str, Any]:
        memory = self._memory()
        try:
            return memory.snapshot(agent_id=self.agent_id, scopes=scopes, limit_recent=limit, now=datetime.now(UTC))
        except StoreError as exc:
            raise UnreachableError(str(exc)) from None
        except EventError as exc:
            raise RefusedError(
                422, {"error": "invalid", "message": exc.message, "field": exc.field, "rule": exc.rule}
            ) from None
        except AccessError as exc:
            raise RefusedError(403, {"error": "forbidden", "message": str(exc)}) from None

    def append(self, body: Mapping[str, Any]) -> dict[str, Any]:
        memory = self._memory()
        try:
            return memory.append(dict(body), agent_id=self.agent_id, now=datetime.now(UTC))
        except StoreError as exc:
            raise UnreachableError(str(exc)) from None
        except EventError as exc:
            payload: dict[str, Any] = {"error": "invalid", "message": exc.message, "field": exc.field, "rule": exc.rule}
            if exc.kinds:
                payload["kinds"] = list(exc.kinds)
            raise RefusedError(422, payload) from None
        except AccessError as exc:
            raise RefusedError(403, {"error": "forbidden", "message": str(exc)}) from None

    def close(self) -> None:
        with self._lock:
            if self._service is not None:
                self._service.store.close()
                self._service = None
