"""The ``dedup`` plugin: refuses near-duplicate memories and proposes merges during consolidate."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from ego_core import (
    MEMORY_STORE,
    ConsolidationRun,
    MemoryService,
    PluginContext,
    RememberDraft,
    Response,
    Section,
    hookimpl,
)
from ego_dedup.config import CONFIG_ENV, DedupConfig
from ego_dedup.guard import duplicate_response, find_duplicate
from ego_dedup.merge import find_pairs, merge_section, window_memories


class DedupPlugin:
    """Entry point ``dedup``. Needs the ``memory`` plugin (its ``memory.store`` service).

    Nothing is logged about a refused memory: the response goes to the agent only, and a refused save has
    no side effect at all (nothing stored, linked, synced or counted as an access).
    """

    config_class: ClassVar[type[DedupConfig]] = DedupConfig
    config_env: ClassVar[Mapping[str, str]] = CONFIG_ENV
    requires: ClassVar[tuple[str, ...]] = ("memory",)

    @hookimpl
    def before_remember(self, draft: RememberDraft, ctx: PluginContext) -> Response | None:
        if draft.force:
            return None
        service = ctx.services.get(MEMORY_STORE, MemoryService)
        if service is None:
            return None
        config: DedupConfig = ctx.config
        threshold, _merge = config.thresholds(service.similarity_profile)
        duplicate = find_duplicate(service, draft.content, threshold, draft.anticipated)
        if duplicate is None:
            return None
        return duplicate_response(duplicate, ctx.now(), recall_served=ctx.tool_served("recall"))

    @hookimpl
    def on_consolidate(self, run: ConsolidationRun, ctx: PluginContext) -> Section | None:
        service = ctx.services.get(MEMORY_STORE, MemoryService)
        if service is None:
            return None
        config: DedupConfig = ctx.config
        with ctx.progress(2, "consolidate: looking for near-duplicates") as progress:  # fills consolidate's part
            memories = window_memories(service, run, config.max_recent)
            progress.advance()
            _dedup, threshold = config.thresholds(service.similarity_profile)
            pairs = find_pairs(memories, service, threshold, config.max_merge_candidates, at=ctx.now())
        return merge_section(pairs, recall=ctx.tool_served("recall"), forget=ctx.tool_served("forget"))
