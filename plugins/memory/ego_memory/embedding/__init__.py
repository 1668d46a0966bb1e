"""Built-in embedding providers of the memory plugin, keyed by the name used in configuration."""

from __future__ import annotations

from ego_core import Embedder, EmbedderFactory, EmbedderSettings

from .cache import CachedEmbedder
from .onnx import PACKAGED_MODEL_ID, OnnxEmbedder
from .profiles import profile_for
from .use import UseEmbedder


def _use(settings: EmbedderSettings) -> Embedder:
    return UseEmbedder(settings)


def _onnx(settings: EmbedderSettings) -> Embedder:
    return OnnxEmbedder(settings)


def _sentence_transformers(settings: EmbedderSettings) -> Embedder:
    from .sentence_transformers import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(settings)


def _openai(settings: EmbedderSettings) -> Embedder:
    from .openai import OpenAIEmbedder

    return OpenAIEmbedder(settings)


def _gemini(settings: EmbedderSettings) -> Embedder:
    from .gemini import GeminiEmbedder

    return GeminiEmbedder(settings)


DEFAULT_EMBEDDER = "use"
"""Universal Sentence Encoder multilingual v3: Japanese and English in one space, shipped with its weights."""

BUILTIN_EMBEDDERS: dict[str, EmbedderFactory] = {
    "use": _use,
    "onnx": _onnx,
    "sentence-transformers": _sentence_transformers,
    "openai": _openai,
    "gemini": _gemini,
}

__all__ = [
    "BUILTIN_EMBEDDERS",
    "DEFAULT_EMBEDDER",
    "PACKAGED_MODEL_ID",
    "CachedEmbedder",
    "OnnxEmbedder",
    "UseEmbedder",
    "profile_for",
]
