"""The ``dedup`` plugin: refuses near-duplicate memories and proposes merges during consolidate."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from ego_core import (
    MEMORY_STORE,
    ConsolidationRun,
    InvalidArgumentError,
    Memory,
    MemoryService,
    PluginContext,
    RememberDraft,
    Response,
    Section,
    Tool,
    ToolError,
    hookimpl,
)
from ego_dedup import reviews as portable
from ego_dedup.config import CONFIG_ENV, DedupConfig
from ego_dedup.guard import duplicate_response, find_duplicate
from ego_dedup.merge import find_pairs, merge_section, window_memories
from ego_dedup.reviews import MIGRATIONS, REVIEWS, Reviews

MEMORY_ID = re.compile(r"^mem_[0-9a-f]{12}$")
KEEP_BOTH_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "a": {"type": "string", "minLength": 1, "maxLength": 200},
        "b": {"type": "string", "minLength": 1, "maxLength": 200},
        "undo": {"type": "boolean"},
    },
    "required": ["a", "b"],
    "additionalProperties": False,
}


class DedupPlugin:
    """Entry point ``dedup``. Needs the ``memory`` plugin (its ``memory.store`` service).

    Nothing is logged about a refused memory: the response goes to the agent only, and a refused save has
    no side effect at all (nothing stored, linked, synced or counted as an access).
    """

    config_class: ClassVar[type[DedupConfig]] = DedupConfig
    config_env: ClassVar[Mapping[str, str]] = CONFIG_ENV
    requires: ClassVar[tuple[str, ...]] = ("memory",)

    def __init__(self) -> None:
        self.reviews: Reviews | None = None

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        self.reviews = Reviews(ctx.database(MIGRATIONS))
        ctx.provide(REVIEWS, self.reviews)

    @hookimpl
    def on_shutdown(self) -> None:
        reviews, self.reviews = self.reviews, None
        if reviews is not None:
            reviews.database.close()

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None], ctx: PluginContext) -> None:
        config: DedupConfig = ctx.config
        register(
            Tool(
                name="keep_both",
                description="Keep both of a near-duplicate pair: never proposed again (undo takes it back).",
                input_schema=KEEP_BOTH_SCHEMA,
                handler=self.keep_both,
                tier="backend" if config.keep_both_tool else "owner",
                needs={"memory"},
            )
        )

    def keep_both(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        reviews, service = self.reviews, ctx.services.get(MEMORY_STORE, MemoryService)
        if reviews is None or service is None:
            raise ToolError("keep_both is not available: the dedup plugin has not started")
        first, second = str(args["a"]).strip(), str(args["b"]).strip()
        if first == second:
            raise InvalidArgumentError("b", "a different memory than a")
        if args.get("undo"):
            if not reviews.release(first, second):
                raise ToolError(f"Not kept: {_shown(first)} and {_shown(second)} were not kept both of.")
            return Response(data=f"Undone: {first} and {second} may be proposed as a pair again.")
        found = {m.id for m in service.get([i for i in (first, second) if MEMORY_ID.match(i)])}
        for memory_id in (first, second):
            if memory_id not in found:
                raise ToolError(f"Memory not found: {_shown(memory_id)}")
        if not reviews.keep(first, second, ctx.now()):
            return Response(data=f"Already kept both: {first} and {second}. Nothing changed.")
        return Response(data=f"Kept both: {first} and {second} are not proposed as a pair again.")

    @hookimpl(optionalhook=True)
    def on_forget(self, memory: Memory) -> None:
        if self.reviews is not None:
            self.reviews.forget(memory.id)

    @hookimpl
    def export_records(self, include_private: bool, ctx: PluginContext) -> list[Mapping[str, Any]]:
        database = ctx.read_database()
        if database is None:
            return []
        with database:
            reviews = Reviews(database)
            shown: set[str] | None = None
            if not include_private:
                service = ctx.services.get(MEMORY_STORE, MemoryService)
                named = [i for row in reviews.newest(reviews.count()) for i in row[:2]]
                found = service.get(named) if service is not None else []
                shown = {m.id for m in found if not m.is_private}
            return list(portable.export_records(reviews, shown))

    @hookimpl
    def check_records(self, records: Sequence[Mapping[str, Any]]) -> list[str]:
        return list(portable.check_records(records))

    @hookimpl
    def import_records(self, records: Sequence[Mapping[str, Any]]) -> int:
        if self.reviews is None:
            raise RuntimeError("the dedup plugin has not started")
        return portable.import_records(self.reviews, records)

    @hookimpl(optionalhook=True)
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

    @hookimpl(optionalhook=True)
    def on_consolidate(self, run: ConsolidationRun, ctx: PluginContext) -> Section | None:
        service = ctx.services.get(MEMORY_STORE, MemoryService)
        if service is None:
            return None
        config: DedupConfig = ctx.config
        with ctx.progress(2, "consolidate: looking for near-duplicates") as progress:  # fills consolidate's part
            memories = window_memories(service, run, config.max_recent)
            progress.advance()
            _dedup, threshold = config.thresholds(service.similarity_profile)
            reviews = self.reviews
            kept = reviews.kept_among if reviews is not None else (lambda _pairs: set())
            pairs = find_pairs(memories, service, threshold, config.max_merge_candidates, at=ctx.now(), kept=kept)
        return merge_section(pairs, recall=ctx.tool_served("recall"), forget=ctx.tool_served("forget"))


def _shown(value: str) -> str:
    """An id echoed in an error only when it has the form of one (never arbitrary caller text)."""
    return value if MEMORY_ID.match(value) else "that id (memory ids look like mem_ followed by 12 hex digits)"
