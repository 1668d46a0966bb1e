"""The embedding-provider contract shared by the core and plugins.

A plugin contributes providers through the ``register_embedders`` hook; the memory plugin (and any
other plugin that needs vectors) picks one by name from configuration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import attrs
import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class EmbeddingError(RuntimeError):
    """An embedding provider could not produce vectors (bad model dir, HTTP failure, ...)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    @property
    def model_id(self) -> str:
        """Stable identity of the model, recorded with every stored vector (e.g. ``onnx:all-MiniLM-L6-v2``)."""
        ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return an ``(len(texts), dimension)`` array; row i is the unit vector of ``texts[i]``."""
        ...


@attrs.frozen
class EmbedderSettings:
    """What a provider factory receives. Providers ignore the fields they do not use."""

    model: str | None = None
    """Model name (``sentence-transformers``, ``openai``, ``gemini``)."""
    model_dir: Path | None = None
    """Local model directory (``onnx``, ``sentence-transformers``)."""
    api_key: str | None = attrs.field(default=None, repr=False)
    base_url: str | None = None
    timeout_s: float = 30.0
    max_retries: int = 4
    batch_size: int = 64
    extra: Mapping[str, Any] = attrs.field(factory=dict)


EmbedderFactory = Callable[[EmbedderSettings], Embedder]
