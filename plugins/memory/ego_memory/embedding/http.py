"""Shared machinery for embedding providers reached over HTTP (OpenAI, Gemini).

The clients are synchronous ``httpx.Client`` instances on purpose: ego runs tool handlers in worker
threads, so a blocking request never stalls the event loop, and a sync client keeps providers usable from
plain code and tests. ``httpx.Client`` is safe to share between threads.

API keys travel only in request headers, never in URLs, and are scrubbed from every error message.
Transient failures (408, 429, 5xx, timeouts, connection errors) are retried with exponential backoff and
jitter, honouring ``Retry-After`` up to a cap.
"""

from __future__ import annotations

import email.utils
import math
import os
import random
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar

import httpx
import numpy as np

from ego_core import EmbedderSettings, EmbeddingError, EmbedRole, Vectors

from .errors import API_KEY_ENV_SETTING, ProviderError, ProviderErrorKind

SleepFn = Callable[[float], None]

BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0
RETRY_AFTER_CAP_S = 60.0
RETRYABLE_EXCEPTIONS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
RETRYABLE_CLIENT_STATUSES = frozenset({408, 429})


AUTH_STATUSES = frozenset({401, 403})


def key_env_names(settings: EmbedderSettings, env_vars: Sequence[str]) -> tuple[str, ...]:
    """Where the key comes from: the configured ``api_key_env`` variable first, then the provider's defaults."""
    configured = settings.extra.get(API_KEY_ENV_SETTING)
    names = [str(configured)] if configured else []
    return tuple(dict.fromkeys([*names, *env_vars]))


def resolve_api_key(settings: EmbedderSettings, env_vars: Sequence[str], provider: str) -> str:
    """``settings.api_key`` first, then the first non-empty environment variable."""
    if settings.api_key:
        return settings.api_key
    for name in env_vars:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    configured = settings.extra.get(API_KEY_ENV_SETTING)
    defaults = " or ".join(env_vars)
    if configured:
        message = (
            f"No API key for the {provider} embedder: the environment variable {configured} (named by "
            f"[plugins.memory] api_key_env) is not set, and neither is {defaults}. Set {configured} to the key."
        )
    else:
        message = (
            f"No API key for the {provider} embedder: set the environment variable {defaults}, or name the "
            "variable holding the key with the api_key_env option of [plugins.memory] (for example MY_KEY_VARIABLE)."
        )
    raise ProviderError(
        message, provider=provider, kind="auth", reason="no API key", key_env=key_env_names(settings, env_vars)
    )


def parse_retry_after(headers: httpx.Headers, now: Callable[[], datetime] | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (delta-seconds or HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        current = now() if now is not None else datetime.now(UTC)
        seconds = (when - current).total_seconds()
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def backoff_delay(attempt: int, rng: Callable[[], float] = random.random) -> float:
    """Exponential backoff for retry ``attempt`` (0-based) with jitter in [50%, 100%] of the step."""
    step = min(BACKOFF_CAP_S, BACKOFF_BASE_S * (2.0**attempt))
    return step * (0.5 + 0.5 * rng())


def provider_error_message(response: httpx.Response) -> str:
    """The human-readable message from an OpenAI/Gemini style error body, else the raw text."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:500]
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
        if body.get("message"):
            return str(body["message"])
    return response.text.strip()[:500]


def l2_normalise(rows: Sequence[Sequence[float]]) -> Vectors:
    matrix = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(matrix / np.clip(norms, 1e-12, None), dtype=np.float32)


class HttpEmbedder(ABC):
    """An Embedder that batches texts into JSON POSTs; subclasses build requests and parse responses."""

    provider: ClassVar[str] = ""
    max_batch_size: ClassVar[int] = 2048
    known_dimensions: ClassVar[Mapping[str, int]] = {}
    key_env_vars: ClassVar[tuple[str, ...]] = ()
    """The environment variables the key is read from when the settings carry none (for messages)."""

    def __init__(
        self,
        settings: EmbedderSettings,
        *,
        model: str,
        api_key: str,
        base_url: str,
        client: httpx.Client | None = None,
        sleep: SleepFn = time.sleep,
        rng: Callable[[], float] = random.random,
    ) -> None:
        if settings.batch_size < 1:
            raise EmbeddingError(f"batch_size must be at least 1, got {settings.batch_size}")
        self._model = model
        self._api_key = api_key
        self._base_url = base_url.rstrip("/")
        self._batch_size = min(settings.batch_size, self.max_batch_size)
        self._max_retries = max(0, settings.max_retries)
        self._timeout_s = settings.timeout_s
        self._owns_client = client is None
        self._client = client if client is not None else httpx.Client(timeout=settings.timeout_s)
        self._sleep = sleep
        self._rng = rng
        self._requested_dimensions = self._read_requested_dimensions(settings.extra)
        self._dimension: int | None = self._requested_dimensions or self.known_dimensions.get(model)
        self._dimension_lock = threading.Lock()
        self._key_env = key_env_names(settings, self.key_env_vars)

    @property
    def model(self) -> str:
        return self._model

    @property
    def model_id(self) -> str:
        suffix = f"@{self._requested_dimensions}" if self._requested_dimensions else ""
        return f"{self.provider}:{self._model}{suffix}"

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._embed_batch(["dimension probe"])
        if self._dimension is None:
            raise EmbeddingError(f"{self.provider} returned no vectors to learn the dimension from")
        return self._dimension

    def embed(self, texts: Sequence[str], role: EmbedRole = "document") -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        batches = [
            self._embed_batch(list(texts[start : start + self._batch_size]), role)
            for start in range(0, len(texts), self._batch_size)
        ]
        return np.ascontiguousarray(np.concatenate(batches), dtype=np.float32)

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> HttpEmbedder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @abstractmethod
    def _url(self) -> str: ...

    @abstractmethod
    def _auth_headers(self) -> dict[str, str]: ...

    @abstractmethod
    def _payload(self, texts: list[str], role: EmbedRole) -> dict[str, Any]: ...

    @abstractmethod
    def _parse(self, body: Any) -> list[list[float]]:
        """Vectors in input order; raise EmbeddingError on a malformed body."""

    def _embed_batch(self, texts: list[str], role: EmbedRole = "document") -> Vectors:
        body = self._post(self._payload(texts, role))
        rows = self._parse(body)
        if len(rows) != len(texts):
            raise EmbeddingError(f"{self.provider} returned {len(rows)} vectors for {len(texts)} texts")
        widths = {len(row) for row in rows}
        if len(widths) != 1 or 0 in widths:
            raise EmbeddingError(f"{self.provider} returned vectors of inconsistent or empty width {widths}")
        self._check_dimension(widths.pop())
        return l2_normalise(rows)

    def _check_dimension(self, width: int) -> None:
        with self._dimension_lock:
            if self._dimension is None:
                self._dimension = width
        if width != self._dimension:
            raise EmbeddingError(
                f"{self.provider} model {self._model} returned {width}-dimensional vectors, expected {self._dimension}"
            )

    def _error(self, message: str, kind: ProviderErrorKind, reason: str) -> ProviderError:
        return ProviderError(
            self._scrub(message), provider=self.provider, kind=kind, reason=self._scrub(reason), key_env=self._key_env
        )

    def _post(self, payload: dict[str, Any]) -> Any:
        url = self._url()
        headers = {"Content-Type": "application/json", **self._auth_headers()}
        attempt = 0
        while True:
            retry_after: float | None = None
            try:
                response = self._client.post(url, json=payload, headers=headers, timeout=self._timeout_s)
            except RETRYABLE_EXCEPTIONS as exc:
                failure = f"{type(exc).__name__}: {exc}"
                reason = type(exc).__name__
            except httpx.HTTPError as exc:
                raise self._error(
                    f"{self.provider} request to {url} failed: {exc}", "request", type(exc).__name__
                ) from None
            else:
                if response.is_success:
                    return self._decode(response)
                status = response.status_code
                message = self._scrub(provider_error_message(response))
                failure = f"HTTP {status}: {message}"
                reason = f"HTTP {status}"
                if status in AUTH_STATUSES:
                    raise self._error(f"{self.provider} embedding request failed with {failure}", "auth", reason)
                if status not in RETRYABLE_CLIENT_STATUSES and status < 500:
                    raise self._error(
                        f"{self.provider} embedding request failed with {failure}", "request", f"{reason}: {message}"
                    )
                retry_after = parse_retry_after(response.headers)
            if attempt >= self._max_retries:
                raise self._error(
                    f"{self.provider} embedding request failed after {attempt + 1} attempts; last error: {failure}",
                    "transient",
                    f"{reason}, {attempt + 1} attempts",
                )
            delay = retry_after if retry_after is not None else backoff_delay(attempt, self._rng)
            self._sleep(min(delay, RETRY_AFTER_CAP_S))
            attempt += 1

    def _decode(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError:
            raise EmbeddingError(f"{self.provider} returned a non-JSON body (HTTP {response.status_code})") from None

    def _scrub(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    @staticmethod
    def _read_requested_dimensions(extra: Mapping[str, Any]) -> int | None:
        value = extra.get("dimensions")
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise EmbeddingError(f"extra.dimensions must be a positive integer, got {value!r}")
        return value
