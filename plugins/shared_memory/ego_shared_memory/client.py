"""The agent side's way to the shared memory: the gateway over HTTP, or a store on this machine.

Both raise :class:`UnreachableError` when the memory cannot be reached (the read must then stop the agent)
and :class:`RefusedError` when the gateway answered but did not accept the request (422, 403).

Every call the gateway client makes is idempotent (a snapshot is a read; an append is recognised by its
idempotency key), so a call that fails in transit or with a 5xx is tried once more before the failure is
reported. An append whose outcome stayed unknown is remembered in :class:`PendingAppends`, so that resending
it — even from a restarted agent with a new run id — reuses the run id it was first sent with and gets
``duplicate`` if the first attempt was in fact committed.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

import httpx

from ego_core import write_atomically
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


RETRY_STATUSES = frozenset({500, 502, 503, 504})
"""Answers after which a call is tried once more (the gateway or its store failed, not the request)."""
RETRY_PAUSE_SECONDS = 0.5
MAX_RETRY_PAUSE_SECONDS = 2.0
"""A Retry-After up to this is honoured before the second try; a longer one is cut to it."""


class GatewayClient:
    """``agent``: the agent these calls are for (the space of an ego serving several); each call names it, and
    the gateway refuses (403) a token of another agent."""

    def __init__(self, url: str, token: str, *, timeout: float, agent: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.agent = agent
        self._http = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=timeout, trust_env=False
        )
        self._timeout = timeout
        self.attempts = 0
        """Requests sent so far (retries included)."""

    def describe(self) -> str:
        return f"gateway {self.url}"

    def _call(self, method: str, path: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
        """One idempotent call, tried twice when the first attempt fails in transit or with a 5xx."""
        try:
            return self._attempt(method, path, **kwargs)
        except _RetryableError as first:
            time.sleep(first.pause)
        try:
            return self._attempt(method, path, **kwargs)
        except _RetryableError as second:
            if second.answer is not None:
                return second.answer
            raise UnreachableError(second.reason) from None

    def _attempt(self, method: str, path: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
        self.attempts += 1
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TimeoutException:
            reason = f"the gateway at {self.url} did not answer within {self._timeout:g} s"
            raise _RetryableError(reason, RETRY_PAUSE_SECONDS) from None
        except httpx.HTTPError as exc:
            reason = f"cannot connect to the gateway at {self.url} ({type(exc).__name__})"
            raise _RetryableError(reason, RETRY_PAUSE_SECONDS) from None
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            reason = f"{self.url} answered HTTP {response.status_code} without the gateway's JSON"
            if response.status_code in RETRY_STATUSES:
                raise _RetryableError(reason, RETRY_PAUSE_SECONDS)
            raise UnreachableError(reason)
        if response.status_code in RETRY_STATUSES:
            raise _RetryableError(
                _status_reason(response.status_code, payload),
                _pause(response.headers.get("retry-after")),
                answer=(response.status_code, payload),
            )
        return response.status_code, payload

    def snapshot(self, scopes: Sequence[str] | None, limit: int) -> dict[str, Any]:
        params: dict[str, Any] = {"limit_recent": limit}
        if self.agent is not None:
            params["agent_id"] = self.agent
        if scopes:
            params["scopes"] = ",".join(scopes)
        status, payload = self._call("GET", "/v1/memory/snapshot", params=params)
        if status == 200:
            return payload
        if status in (403, 422):
            raise RefusedError(status, payload)
        raise UnreachableError(_status_reason(status, payload))

    def append(self, body: Mapping[str, Any]) -> dict[str, Any]:
        claimed = {"agent_id": self.agent} if self.agent is not None else {}
        status, payload = self._call("POST", "/v1/memory/append", json={**body, **claimed})
        if status in (200, 201):
            return payload
        if status in (403, 422):
            raise RefusedError(status, payload)
        raise UnreachableError(_status_reason(status, payload))

    def close(self) -> None:
        self._http.close()


class _RetryableError(Exception):
    """An attempt that may succeed when tried again; ``answer``: the gateway's (5xx) answer, if it gave one."""

    def __init__(self, reason: str, pause: float, *, answer: tuple[int, dict[str, Any]] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.pause = pause
        self.answer = answer


def _pause(retry_after: str | None) -> float:
    if retry_after is not None and retry_after.strip().isdigit():
        return min(float(retry_after.strip()), MAX_RETRY_PAUSE_SECONDS)
    return RETRY_PAUSE_SECONDS


def _status_reason(status: int, payload: Mapping[str, Any]) -> str:
    if status == 401:
        return "the gateway refused the token (HTTP 401): it is missing, unknown or revoked"
    if status == 503:
        error = payload.get("error")
        if error == "store_full":
            return "the gateway's store is full (HTTP 503); the operator must free space"
        if error == "busy":
            return "the gateway is busy (HTTP 503); try again shortly"
        return "the gateway's store is unavailable (HTTP 503)"
    return f"the gateway answered HTTP {status} ({payload.get('error', 'error')})"


PENDING_DAYS = 7
"""How long an append whose outcome stayed unknown is remembered (its run id reused when it is resent)."""


class PendingAppends:
    """Appends sent whose outcome is unknown (no answer, or a 5xx): a fingerprint of each (every field but
    ``run_id``, hashed: no content is kept) and the run id it was sent with, in a JSON file (0600) that
    outlives the agent's process. Resending the same entry reuses that run id, so the idempotency key is the
    same and a first attempt that was in fact committed answers ``duplicate`` instead of storing a copy.
    ``path`` ``None``: kept in memory only."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._memory: dict[str, dict[str, str]] = {}

    @staticmethod
    def fingerprint(target: str, body: Mapping[str, Any]) -> str:
        fields = {key: value for key, value in body.items() if key != "run_id"}
        text = json.dumps([target, fields], sort_keys=True, ensure_ascii=True, default=str)
        return hashlib.sha256(text.encode("ascii")).hexdigest()

    def run_id(self, fingerprint: str, now: datetime) -> str | None:
        with self._lock:
            entry = self._load(now).get(fingerprint)
        return entry["run_id"] if entry else None

    def remember(self, fingerprint: str, run_id: str, now: datetime) -> None:
        with self._lock:
            entries = self._load(now)
            entries[fingerprint] = {"run_id": run_id, "at": now.astimezone(UTC).isoformat()}
            self._save(entries)

    def forget(self, fingerprint: str, now: datetime) -> None:
        with self._lock:
            entries = self._load(now)
            if entries.pop(fingerprint, None) is not None:
                self._save(entries)

    def _load(self, now: datetime) -> dict[str, dict[str, str]]:
        if self.path is None:
            entries = self._memory
        else:
            try:
                loaded = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                loaded = {}
            entries = loaded if isinstance(loaded, dict) else {}
        oldest = now - timedelta(days=PENDING_DAYS)
        return {
            key: entry
            for key, entry in entries.items()
            if isinstance(entry, dict) and isinstance(entry.get("run_id"), str) and _recent(entry.get("at"), oldest)
        }

    def _save(self, entries: dict[str, dict[str, str]]) -> None:
        if self.path is None:
            self._memory = entries
            return
        try:
            write_atomically(self.path, json.dumps(entries))  # mode 0600
        except OSError:  # best effort: without the file, a resend after a restart may store a second copy
            self._memory = entries
            self.path = None


def _recent(at: object, oldest: datetime) -> bool:
    if not isinstance(at, str):
        return False
    try:
        return datetime.fromisoformat(at) >= oldest
    except ValueError:
        return False


class LocalClient:
    """A store on this machine (``db``), opened at the first call; the configured agent writes. ``agent``: the
    agent these calls are for (the space of an ego serving several); every call is refused (403) unless it is
    ``agent_id``."""

    def __init__(self, url: str, agent_id: str, settings: GatewaySettings, *, agent: str | None = None) -> None:
        self.url = url
        self.agent_id = agent_id
        self.agent = agent
        self.settings = settings
        self._service: SharedMemory | None = None
        self._lock = threading.Lock()

    def describe(self) -> str:
        return f"local store {self.url.split('?')[0] if self.url.startswith('sqlite') else 'postgresql'}"

    def _memory(self) -> SharedMemory:
        if self.agent is not None and self.agent != self.agent_id:
            message = (
                f"this shared memory is written as {self.agent_id} (plugins.shared_memory.agent_id), and "
                f"{self.agent} may not act as another agent"
            )
            raise RefusedError(403, {"error": "forbidden", "message": message})
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
