"""CLI commands of the memory plugin: ``ego memory stats|reindex|download-model``."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

from ego_core import MEMORY_STORE, Command, EmbeddingError, MemoryService, PluginHost
from ego_memory.embedding.onnx import (
    MODEL_DIR_CONFIG_KEY,
    MODEL_DIR_ENV,
    STANDARD_MODEL_NAME,
    download_model,
    missing_files,
)
from ego_memory.errors import StoreError
from ego_memory.progress import reporting
from ego_memory.runtime import open_runtime
from ego_memory.store.vector_index import describe
from ego_memory.text.privacy import PrivateContentRedactor
from ego_memory.text.wording import count_of

_log = logging.getLogger("ego.plugin.memory")

# ----------------------------------------------------------------------------------------------------
# ego memory ...


def _configure_reindex(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--force",
        action="store_true",
        help="re-embed even when the store already uses the configured model (also rebuilds a broken index "
        "on a Chroma server)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _reindex(args: argparse.Namespace, host: PluginHost, redactor: PrivateContentRedactor) -> int:
    runtime = open_runtime(
        host.context("memory"),
        redactor,
        allow_model_change=True,
        rebuild_broken_index=True if args.force else None,
        progress=not args.quiet,
    )
    try:
        store = runtime.store
        if store.rebuilt is not None:  # the vector index could not serve: opening rebuilt it from SQLite
            done = count_of(store.rebuilt, "memory", "memories")
            print(f"rebuilt the vector index from the memory database: re-embedded {done} ({store.model_id})")
            return 0
        if not store.model_mismatch and not args.force:
            print(f"the store already uses {store.model_id}; nothing to do (use --force to re-embed anyway)")
            return 0
        before = store.model_id
        ctx = host.context("memory")
        with reporting(ctx, total=store.count(), desc="reindex", bar=not args.quiet) as advance:
            embedded = store.reindex(runtime.embedder.embed, progress=advance)
        print(f"re-embedded {count_of(embedded, 'memory', 'memories')}: {before} -> {store.model_id}")
        return 0
    finally:
        runtime.close()


def _run_reindex(redactor: PrivateContentRedactor) -> Callable[[argparse.Namespace, PluginHost], int]:
    def run(args: argparse.Namespace, host: PluginHost) -> int:
        if not host.is_active("memory"):
            print("ego: error: the memory plugin is not enabled (see `ego plugins`)", file=sys.stderr)
            return 2
        try:
            return _reindex(args, host, redactor)
        except (StoreError, sqlite3.Error, OSError) as exc:
            # one line, never a traceback (the JSON log has it)
            _log.info("memory reindex failed", exc_info=True)
            message = str(exc) if isinstance(exc, StoreError) else describe(exc)
            print(f"ego: error: memory reindex: {message}", file=sys.stderr)
            return 1

    return run


def _configure_stats(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def _run_stats(args: argparse.Namespace, host: PluginHost) -> int:
    service = host.services.get(MEMORY_STORE, MemoryService)
    if service is None:
        print("ego: error: the memory plugin is not running (see `ego plugins`)", file=sys.stderr)
        return 1
    stats = {"memories": service.count(), "embedding_model": service.embedding_model}
    print(json.dumps(stats) if args.json else "\n".join(f"{k}: {v}" for k, v in stats.items()))
    return 0


def _configure_download(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--to",
        type=Path,
        default=None,
        help="the model directory to fill (default: [plugins.memory] model_dir)",
    )


def _run_download(args: argparse.Namespace, host: PluginHost) -> int:
    """Fetch the float32 all-MiniLM-L6-v2 into a model directory, on request only (the onnx embedder runs the
    int8 model installed with ego unless a model directory is configured, and never downloads)."""
    configured = host.settings.plugin_tables.get("memory", {}).get("model_dir") or os.environ.get(MODEL_DIR_ENV)
    chosen = args.to or (Path(configured).expanduser() if configured else None)
    if chosen is None:
        print(
            f"ego: error: memory download-model: no directory to fill: pass --to DIR, or set {MODEL_DIR_ENV} or "
            f"{MODEL_DIR_CONFIG_KEY} (the onnx embedder needs no download: without a model directory it runs "
            f"{STANDARD_MODEL_NAME} int8, installed with ego)",
            file=sys.stderr,
        )
        return 2
    target = chosen.absolute()
    if not missing_files(target):
        print(f"the embedding model is already in {target}")
        return 0
    try:
        download_model(target)
    except EmbeddingError as exc:
        print(f"ego: error: {exc}", file=sys.stderr)
        return 1
    print(f"downloaded {STANDARD_MODEL_NAME} into {target}")
    if configured is None or Path(configured).expanduser().absolute() != target:
        print(f"the onnx embedder runs it with {MODEL_DIR_CONFIG_KEY} = {str(target)!r} (or {MODEL_DIR_ENV})")
    return 0


def memory_commands(redactor: PrivateContentRedactor) -> list[Command]:
    """The commands; ``redactor`` is the plugin's, so a reindex logs no private text either."""
    return [
        Command(
            name="reindex",
            group="memory",
            help="re-embed every memory with the configured embedding model (resumable); rebuilds a broken index",
            configure=_configure_reindex,
            run=_run_reindex(redactor),
            starts_host=False,
        ),
        Command(
            name="stats",
            group="memory",
            help="number of memories and the embedding model",
            configure=_configure_stats,
            run=_run_stats,
        ),
        Command(
            name="download-model",
            group="memory",
            help="fetch the float32 all-MiniLM-L6-v2 (ONNX) into a model directory, while online (the onnx "
            "embedder's default, the int8 model, is installed with ego)",
            configure=_configure_download,
            run=_run_download,
            starts_host=False,
        ),
    ]
