"""Optional provider backed by ``sentence-transformers`` (install ``ego-memory[sentence-transformers]``)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ego_core import EmbedderSettings, EmbeddingError, EmbedRole, Vectors

DEFAULT_ST_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
INSTALL_HINT = "pip install 'ego-memory[sentence-transformers]'"
ROLE_PROMPTS: dict[str, tuple[str, ...]] = {"query": ("query",), "document": ("document", "passage")}


class SentenceTransformerEmbedder:
    """Any sentence-transformers model by hub name or local path; vectors are normalised float32."""

    def __init__(self, settings: EmbedderSettings) -> None:
        try:
            from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found, unused-ignore]
        except ImportError as exc:
            raise EmbeddingError(
                f"The sentence-transformers embedder needs the optional extra: {INSTALL_HINT}"
            ) from exc
        self._model_name = settings.model or (str(settings.model_dir) if settings.model_dir else DEFAULT_ST_MODEL)
        self._batch_size = max(1, settings.batch_size)
        device = settings.extra.get("device")
        try:
            self._model: Any = SentenceTransformer(self._model_name, device=device)
        except Exception as exc:
            raise EmbeddingError(f"cannot load sentence-transformers model {self._model_name!r}: {exc}") from exc
        dimension_of = getattr(self._model, "get_sentence_embedding_dimension", None) or getattr(
            self._model, "get_embedding_dimension", None
        )
        declared = dimension_of() if dimension_of is not None else None
        # torch modules are not documented as safe for concurrent forward passes.
        self._lock = threading.Lock()
        self._dimension = int(declared) if declared else int(self.embed(["dimension probe"]).shape[1])

    @property
    def model_id(self) -> str:
        return f"sentence-transformers:{self._model_name}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str], role: EmbedRole = "document") -> Vectors:
        """A model with prompts named ``query`` / ``document`` (or ``passage``) gets the one for ``role``."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        prompts = getattr(self._model, "prompts", None) or {}
        prompt_name = next((name for name in ROLE_PROMPTS[role] if name in prompts), None)
        try:
            with self._lock:
                vectors = self._model.encode(
                    list(texts),
                    batch_size=self._batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                    **({"prompt_name": prompt_name} if prompt_name else {}),
                )
        except Exception as exc:
            raise EmbeddingError(f"sentence-transformers model {self._model_name!r} failed: {exc}") from exc
        return np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(texts), -1)
