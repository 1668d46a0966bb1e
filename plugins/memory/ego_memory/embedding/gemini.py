"""Google Gemini embeddings over HTTP (``batchEmbedContents``); see :mod:`.http` for transport notes."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import httpx

from ego_core import EmbedderSettings, EmbeddingError, EmbedRole

from .http import HttpEmbedder, SleepFn, resolve_api_key

DEFAULT_GEMINI_MODEL = "text-embedding-004"
DEFAULT_GEMINI_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
GEMINI_KEY_ENV_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
GEMINI_TASK_TYPES: Mapping[EmbedRole, str] = {"query": "RETRIEVAL_QUERY", "document": "RETRIEVAL_DOCUMENT"}


class GeminiEmbedder(HttpEmbedder):
    """POSTs one ``embedContent`` request per text to ``models/<model>:batchEmbedContents``."""

    provider: ClassVar[str] = "gemini"
    max_batch_size: ClassVar[int] = 100
    key_env_vars: ClassVar[tuple[str, ...]] = GEMINI_KEY_ENV_VARS
    known_dimensions: ClassVar[Mapping[str, int]] = {
        "text-embedding-004": 768,
        "embedding-001": 768,
        "gemini-embedding-001": 3072,
    }

    def __init__(
        self,
        settings: EmbedderSettings,
        *,
        client: httpx.Client | None = None,
        sleep: SleepFn = time.sleep,
        rng: Callable[[], float] = random.random,
    ) -> None:
        model = (settings.model or DEFAULT_GEMINI_MODEL).removeprefix("models/")
        super().__init__(
            settings,
            model=model,
            api_key=resolve_api_key(settings, GEMINI_KEY_ENV_VARS, "gemini"),
            base_url=settings.base_url or DEFAULT_GEMINI_BASE_URL,
            client=client,
            sleep=sleep,
            rng=rng,
        )

    def _url(self) -> str:
        return f"{self._base_url}/models/{self._model}:batchEmbedContents"

    def _auth_headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self._api_key}

    def _payload(self, texts: list[str], role: EmbedRole) -> dict[str, Any]:
        requests = []
        for text in texts:
            request: dict[str, Any] = {
                "model": f"models/{self._model}",
                "content": {"parts": [{"text": text}]},
                "taskType": GEMINI_TASK_TYPES[role],
            }
            if self._requested_dimensions is not None:
                request["outputDimensionality"] = self._requested_dimensions
            requests.append(request)
        return {"requests": requests}

    def _parse(self, body: Any) -> list[list[float]]:
        try:
            return [[float(x) for x in item["values"]] for item in body["embeddings"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbeddingError(f"gemini returned an unexpected embeddings body ({exc!r})") from None
