"""Errors of the embedding providers that callers act on (kept free of httpx, so importing them is cheap)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ego_core import EmbeddingError

API_KEY_ENV_SETTING = "api_key_env"
"""``EmbedderSettings.extra`` key: the variable named by ``[plugins.memory] api_key_env``, for messages."""

ProviderErrorKind = Literal["auth", "transient", "request"]


class ProviderError(EmbeddingError):
    """An HTTP embedding provider failed in a way the caller can act on.

    ``kind``: ``auth`` (no key, or the provider refused it: 401/403), ``transient`` (still failing after
    every retry: 408/429/5xx, timeouts, connection errors; may work later) or ``request`` (refused for
    another reason; retrying will not help). ``reason`` is short and scrubbed (never the key, and for
    ``auth`` not even the provider's text, which can quote part of it); ``key_env`` names the environment
    variable(s) the key is read from.
    """

    def __init__(
        self, message: str, *, provider: str, kind: ProviderErrorKind, reason: str, key_env: Sequence[str] = ()
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.kind: ProviderErrorKind = kind
        self.reason = reason
        self.key_env = tuple(key_env)
