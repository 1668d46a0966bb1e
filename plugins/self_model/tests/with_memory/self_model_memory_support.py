"""The spy embedder of the self_model tests that need the memory plugin: it records every text embedded."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ego_core import Embedder, EmbedRole, PluginContext, Vectors, hookimpl


class SpyEmbedder:
    """The default embedder (``use``), recording each batch of texts it is asked for."""

    def __init__(self, inner: Embedder, calls: list[list[str]]) -> None:
        self.inner = inner
        self.calls = calls

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str], role: EmbedRole = "document") -> Vectors:
        self.calls.append(list(texts))
        return self.inner.embed(texts, role)


class SpyPlugin:
    """Registers the embedder ``spy`` (configure ``[plugins.memory] embedder = "spy"``)."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    @hookimpl
    def register_embedders(self, register: Callable[[str, Any], None], ctx: PluginContext) -> None:
        register("spy", lambda settings: SpyEmbedder(ctx.embedder("use", settings), self.calls))

    def texts(self) -> list[str]:
        return [text for call in self.calls for text in call]
