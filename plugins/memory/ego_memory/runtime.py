"""Opening the memory runtime: the embedder, the store (with the private redactor fed from it), and the
behaviour over them. ``on_startup`` and ``ego memory reindex`` open it the same way."""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager

import attrs

from ego_core import ConfigError, EmbedderSettings, PluginContext
from ego_memory.config import MemoryConfig
from ego_memory.embedding import CachedEmbedder
from ego_memory.embedding.english import EnglishEncoder
from ego_memory.embedding.errors import API_KEY_ENV_SETTING
from ego_memory.embedding.onnx import ModelDirError
from ego_memory.index.public_passages import PublicPassages
from ego_memory.progress import progress_bar
from ego_memory.service import Memories
from ego_memory.store.maintenance import Advance
from ego_memory.store.memory_store import MemoryStore
from ego_memory.store.schema import FILE_NAME, open_in
from ego_memory.text.language import tokens
from ego_memory.text.privacy import PrivateContentRedactor
from ego_memory.tools.lifecycle import Lifecycle
from ego_memory.tools.memory import MemoryTools

_log = logging.getLogger("ego.plugin.memory")


def embedder_settings(config: MemoryConfig, env: Mapping[str, str] | None = None) -> EmbedderSettings:
    env = os.environ if env is None else env
    api_key = env.get(config.api_key_env) if config.api_key_env else None
    extra = {API_KEY_ENV_SETTING: config.api_key_env} if config.api_key_env else {}
    return EmbedderSettings(
        model=config.model, model_dir=config.model_dir, api_key=api_key, base_url=config.base_url, extra=extra
    )


LOCAL_EMBEDDERS = frozenset({"use", "onnx", "sentence-transformers"})
"""Embedders that run on this machine: a store made with another model is re-embedded with them when it opens
(a remote provider is never sent every memory unasked: ``ego memory reindex`` does that)."""


def _reembed(
    store: MemoryStore, embedder: CachedEmbedder, bar: Callable[[int, str], AbstractContextManager[Advance]]
) -> None:
    """Re-embed every memory of a store made with another model (resumable if interrupted)."""
    total = store.count()
    _log.warning("re-embedding %d memories: %s -> %s", total, store.model_id, embedder.model_id)
    print(
        f"ego: the memory store was made with {store.model_id}; re-embedding {total} memories with "
        f"{embedder.model_id} (once; `ego memory reindex` does the same)",
        file=sys.stderr,
    )
    with bar(total, "reindex") as advance:
        store.reindex(embedder.embed, progress=advance)


SAME_AS_ENGLISH = frozenset({"onnx:all-MiniLM-L6-v2", EnglishEncoder.model_id})
"""Embedders that are the English channel's model already (float32 or int8): the channel would add nothing."""
ENGLISH_FILL_NOTICE = 200
"""From this many memories to read, opening says on stderr why it takes a moment."""


def _fill_english(memories: Memories, bar: Callable[[int, str], AbstractContextManager[Advance]]) -> None:
    """Give the memories the English channel has not read their English vectors (a store from before it)."""
    missing = memories.store.count_without_english()
    if not missing:
        return
    if missing >= ENGLISH_FILL_NOTICE:
        print(f"ego: reading {missing} memories for the English recall channel (once)", file=sys.stderr)
    with bar(missing, "english") as advance:
        memories.fill_english(progress=advance)


WARM_UP_WAIT_SECONDS = 60.0


def _warm_up(embedder: CachedEmbedder, english: EnglishEncoder | None) -> None:
    """Load the models' weights and the Japanese dictionary while the agent connects, not in its first call."""
    try:
        warm_up = getattr(embedder.inner, "warm_up", None)
        if callable(warm_up):
            warm_up()
        if english is not None:
            english.warm_up()
        tokens("準備")
    except Exception as exc:  # the first real call reports the failure to the agent
        _log.info("warming up the embedder failed: %s", exc)


@attrs.frozen
class MemoryRuntime:
    """Everything the memory plugin serves from, open on one data directory."""

    embedder: CachedEmbedder
    store: MemoryStore
    redactor: PrivateContentRedactor
    memories: Memories
    lifecycle: Lifecycle
    tools: MemoryTools
    warming: threading.Thread | None = None
    """The warm-up thread: closing waits for it, so no native code of the model is running when the process
    ends (a short command such as ``ego memory reindex`` could otherwise exit in the middle of it)."""

    def close(self) -> None:
        if self.warming is not None:
            self.warming.join(timeout=WARM_UP_WAIT_SECONDS)
        self.memories.close()
        if isinstance(self.redactor.public, PublicPassages):
            self.redactor.public.close()
        self.store.close()


def open_runtime(
    ctx: PluginContext,
    redactor: PrivateContentRedactor,
    *,
    allow_model_change: bool = False,
    rebuild_broken_index: bool | None = None,
    progress: bool = True,
) -> MemoryRuntime:
    """Make the configured embedder, open the store (rebuilding a vector index that cannot serve, with a
    progress bar on a terminal) and keep ``redactor`` loaded with every private memory.

    ``allow_model_change`` opens a store built with another embedding model (for a reindex only).
    """
    config: MemoryConfig = ctx.config
    names = ctx.embedder_names()
    if config.embedder not in names:
        raise ConfigError(
            f"plugins.memory.embedder (or EGO_EMBEDDER): unknown embedder {config.embedder!r}; expected one "
            f"of {', '.join(names)}"
        )
    try:
        embedder = CachedEmbedder(ctx.embedder(config.embedder, embedder_settings(config)))
    except ModelDirError as exc:
        raise ConfigError(f"plugins.memory.model_dir (or EGO_EMBEDDING_MODEL_DIR): {exc}") from None

    def bar(total: int, description: str) -> AbstractContextManager[Advance]:
        return progress_bar(total=total, desc=description, enabled=progress and sys.stderr.isatty())

    store = MemoryStore(
        ctx.data_dir,
        embedder.model_id,
        chroma_url=config.chroma_url,
        exact_search_limit=config.exact_search_limit,
        database=lambda: open_in(ctx),
    )
    store.on_private_contents = redactor.load
    reembed = not allow_model_change and config.embedder in LOCAL_EMBEDDERS
    store.open(
        embedder.embed,
        allow_model_change=allow_model_change or reembed,
        progress=bar,
        rebuild_broken_index=rebuild_broken_index,
    )
    if reembed and store.model_mismatch:
        try:
            _reembed(store, embedder, bar)
        except BaseException:
            store.close()
            raise
    english = EnglishEncoder() if config.english_channel and embedder.model_id not in SAME_AS_ENGLISH else None
    memories = Memories(ctx, config, store, embedder, redactor, english=english)
    if english is not None:
        try:
            _fill_english(memories, bar)
        except BaseException:
            store.close()
            raise
    redactor.public = PublicPassages(lambda: ctx.read_database(FILE_NAME))
    warming = threading.Thread(target=_warm_up, args=(embedder, english), name="ego-memory-warm-up", daemon=True)
    warming.start()
    return MemoryRuntime(embedder, store, redactor, memories, Lifecycle(memories), MemoryTools(memories), warming)
