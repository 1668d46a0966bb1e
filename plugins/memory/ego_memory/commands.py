"""CLI commands of the memory plugin: ``ego memory stats|reindex``."""

from __future__ import annotations

import argparse
import json
import sys

from ego_core import MEMORY_STORE, Command, MemoryService, PluginHost

# ----------------------------------------------------------------------------------------------------
# ego memory ...


def _configure_reindex(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--force", action="store_true", help="re-embed even when the store already uses the configured model"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _run_reindex(args: argparse.Namespace, host: PluginHost) -> int:
    from ego_memory.config import embedder_settings
    from ego_memory.embedding import CachedEmbedder
    from ego_memory.progress import progress_bar
    from ego_memory.store import MemoryStore

    if not host.is_active("memory"):
        print("ego: error: the memory plugin is not enabled (see `ego plugins`)", file=sys.stderr)
        return 2
    ctx = host.context("memory")
    config = ctx.config
    embedder = CachedEmbedder(host.make_embedder(config.embedder, embedder_settings(config)))
    store = MemoryStore(ctx.data_dir, embedder.model_id, chroma_url=config.chroma_url)
    store.open(embedder.embed, allow_model_change=True)
    try:
        if not store.model_mismatch and not args.force:
            print(f"the store already uses {store.model_id}; nothing to do (use --force to re-embed anyway)")
            return 0
        before = store.model_id
        with progress_bar(total=store.count(), desc="reindex", enabled=not args.quiet) as advance:
            embedded = store.reindex(embedder.embed, progress=advance)
        print(f"re-embedded {embedded} memories: {before} -> {store.model_id}")
    finally:
        store.close()
    return 0


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


def memory_commands() -> list[Command]:
    return [
        Command(
            name="reindex",
            group="memory",
            help="re-embed every memory with the configured embedding model (resumable)",
            configure=_configure_reindex,
            run=_run_reindex,
            starts_host=False,
        ),
        Command(
            name="stats",
            group="memory",
            help="number of memories and the embedding model",
            configure=_configure_stats,
            run=_run_stats,
        ),
    ]
