"""The embedding-provider contract shared by the core and plugins.

A plugin contributes providers through the ``register_embedders`` hook; the memory plugin (and any
other plugin that needs vectors) picks one by name from configuration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import attrs
import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]

EmbedRole = Literal["query", "document"]
"""What a text is to the model: a ``document`` is stored and compared with other documents (a memory, an open
question); a ``query`` looks for documents (a recall context). Symmetric models embed both alike; asymmetric
ones (e5's ``query:`` / ``passage:`` prefixes, Gemini's task types) do not."""


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

    def embed(self, texts: Sequence[str], role: EmbedRole = "document") -> Vectors:
        """Return an ``(len(texts), dimension)`` array; row i is the unit vector of ``texts[i]`` in ``role``.

        Every caller says which role its texts play. (A provider whose ``embed`` takes only ``texts`` still
        works: the memory plugin then embeds queries as documents.)"""
        ...


@attrs.frozen
class SimilarityProfile:
    """What cosine similarities of one embedding model mean, calibrated on real pairs of sentences.

    Every threshold that compares two vectors is read from here (unless configuration overrides it), so the
    duplicate guard or the links mean the same whatever the model and the language.
    """

    model_id: str
    duplicate: float
    """At least this similar (and saying the same: no negation, number or wording contrast) is a duplicate."""
    merge: float
    """At least this similar is proposed as a merge candidate by consolidate."""
    link: float
    """At least this similar is linked (``similar``) when a memory is stored."""
    related: float
    """At least this similar is related: a new memory brings back an open question."""
    floor: float
    """Below this similarity a recall hit that shares no word with the context is noise, not shown."""
    calibrated: bool = True
    """False for a model nobody has calibrated: the values are a generic guess."""
    source: str = ""
    """How the values were chosen (data, rule), for ``ego doctor`` and the docs."""


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
