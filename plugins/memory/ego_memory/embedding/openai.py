"""OpenAI (or any OpenAI-compatible server) embeddings over HTTP; see :mod:`.http` for transport notes."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import httpx

from ego_core import EmbedderSettings, EmbeddingError, EmbedRole

from .http import HttpEmbedder, SleepFn, resolve_api_key

DEFAULT_OPENAI_MODEL = "text-embedding-3-small"
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENAI_KEY_ENV_VARS = ("OPENAI_API_KEY",)


class OpenAIEmbedder(HttpEmbedder):
    """POSTs ``{"model", "input"}`` to ``/embeddings`` with a Bearer token."""

    provider: ClassVar[str] = "openai"
    max_batch_size: ClassVar[int] = 2048
    key_env_vars: ClassVar[tuple[str, ...]] = OPENAI_KEY_ENV_VARS
    known_dimensions: ClassVar[Mapping[str, int]] = {
        "text-embedding-3-small": 1536,
        "text-embedding-3-large": 3072,
        "text-embedding-ada-002": 1536,
    }

    def __init__(
        self,
        settings: EmbedderSettings,
        *,
        client: httpx.Client | None = None,
        sleep: SleepFn = time.sleep,
        rng: Callable[[], float] = random.random,
    ) -> None:
        super().__init__(
            settings,
            model=settings.model or DEFAULT_OPENAI_MODEL,
            api_key=resolve_api_key(settings, OPENAI_KEY_ENV_VARS, "openai"),
            base_url=settings.base_url or DEFAULT_OPENAI_BASE_URL,
            client=client,
            sleep=sleep,
            rng=rng,
        )

    def _url(self) -> str:
        return f"{self._base_url}/embeddings"

    def _auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"}

    def _payload(self, texts: list[str], role: EmbedRole) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self._model, "input": texts}
        if self._requested_dimensions is not None:
            payload["dimensions"] = self._requested_dimensions
        return payload

    def _parse(self, body: Any) -> list[list[float]]:
        try:
            items = sorted(body["data"], key=lambda item: int(item["index"]))
            return [[float(x) for x in item["embedding"]] for item in items]
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbeddingError(f"openai returned an unexpected embeddings body ({exc!r})") from None
