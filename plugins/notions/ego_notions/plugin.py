"""The ``notions`` plugin: concepts formed from densely linked memories, reinforced by experience."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ego_core import (
    LINE_REST,
    MEMORY_STORE,
    NOTIONS_STORE,
    Check,
    ConsolidationRun,
    Ember,
    ImportFormat,
    Memory,
    MemoryService,
    PluginBase,
    PluginContext,
    RecallHit,
    RecallNote,
    RecallQuery,
    Section,
    Tool,
    ToolError,
    hookimpl,
    log_event,
)
from ego_notions import curate, importer, portable
from ego_notions.book import NotionBook
from ego_notions.render import attune_text, introspect_text, recall_lines
from ego_notions.store import NotionDB, StateError

CONSOLIDATE_ORDER = 40
INTROSPECT_ORDER = 27
"""After desires (20) and emotion_trend's wake-up line (25), before the open questions (30)."""
ATTUNE_ORDER = 25
"""After the desire currents and interests (20), before the person attuned toward (30)."""
NOT_RUNNING = "The notions store is not open; `ego doctor` shows why."
WEAKENED_EMBER = "...something I thought I understood feels less certain now"
WEAKENED_WARMTH = 0.4


class NotionsPlugin(PluginBase):
    """Entry point ``notions``; requires the memory plugin."""

    requires: Sequence[str] = ("memory",)

    def __init__(self) -> None:
        self._book: NotionBook | None = None
        self._ctx: PluginContext | None = None

    @property
    def book(self) -> NotionBook | None:
        """The notions store while the plugin runs (for benchmarks and tools that host it in-process)."""
        return self._book

    def _running(self) -> NotionBook:
        if self._book is None:
            raise ToolError(NOT_RUNNING)
        return self._book

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        db = NotionDB(ctx.data_dir)
        db.count()  # open and check the database now, not on the first call

        def memories() -> MemoryService | None:
            return ctx.services.get(MEMORY_STORE, MemoryService)

        self._book = NotionBook(db, ctx.now, memories, ctx.log, tz=lambda: ctx.settings.tz, services=ctx.services)
        service = memories()
        if service is not None and service.count() == 0:
            self._book.mark_indexed()  # a new store: tags are read as memories come, nothing to read back
        self._book.reconcile()  # once after the upgrade: labels drawn from memories made private since
        self._ctx = ctx
        ctx.provide(NOTIONS_STORE, self._book)

    @hookimpl
    def on_shutdown(self) -> None:
        if self._book is not None:
            self._book.db.close()
        self._book = None
        self._ctx = None

    @hookimpl
    def doctor_checks(self, ctx: PluginContext) -> Sequence[Check]:
        try:
            count = NotionDB(ctx.data_dir).count() if self._book is None else self._book.db.count()
        except StateError as exc:
            return [Check("notions store", False, str(exc))]
        return [Check("notions store", True, f"{count} notion(s)")]

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name=curate.NAME,
                description=curate.DESCRIPTION,
                input_schema=curate.SCHEMA,
                handler=lambda args: curate.curate(self._running(), args),
            )
        )

    @hookimpl
    def on_consolidate(self, run: ConsolidationRun) -> Section | None:
        report = self._running().consolidate(run)
        text = report.summary()
        return Section(key="notions", text=text, order=CONSOLIDATE_ORDER) if text else None

    @hookimpl
    def on_remember(self, memory: Memory) -> None:
        self._running().remembered(memory)

    @hookimpl
    def on_forget(self, memory: Memory) -> None:
        self._running().forgot(memory.id)

    @hookimpl
    def on_memory_revised(self, after: Memory) -> None:
        self._running().revised(after)

    @hookimpl
    def on_recall_result(self, query: RecallQuery, results: Sequence[RecallHit]) -> RecallNote | None:
        lines = recall_lines(self._running(), [hit.memory for hit in results])
        return RecallNote(lines=lines) if lines else None

    @hookimpl
    def on_introspect(self) -> Section | None:
        text = introspect_text(self._running())
        return Section(key="notions", text=text, order=INTROSPECT_ORDER) if text else None

    @hookimpl
    def on_attune(self) -> Section | None:
        """The strongest convictions, and a notion a contradiction weakened lately."""
        text = attune_text(self._running())
        return Section(key="notions", text=text, order=ATTUNE_ORDER, rest=LINE_REST) if text else None

    @hookimpl
    def ember_candidates(self) -> list[Ember] | None:
        """Each wake_up compares the notions' confidence with what the previous one saw: one ember when any fell
        by at least 0.1 (never a label: the feeling, not the notion)."""
        book = self._running()
        weakened = book.look_back()
        if not weakened:
            return None
        log_event(book.log, "notions_weakened", count=len(weakened))
        return [Ember(text=WEAKENED_EMBER, warmth=WEAKENED_WARMTH)]

    @hookimpl
    def register_import_formats(self, register: Callable[[ImportFormat], None]) -> None:
        register(importer.ego_mcp_format())

    @hookimpl
    def export_records(self, include_private: bool) -> Iterator[Mapping[str, Any]]:
        book = self._running()
        book.current(book.db.all())  # every label drawn from what is public now
        return portable.export_records(book.db, book.memories(), include_private)

    @hookimpl
    def check_records(self, records: Sequence[Mapping[str, Any]]) -> Sequence[str]:
        return list(portable.check_records(records))

    @hookimpl
    def import_records(self, records: Sequence[Mapping[str, Any]]) -> int:
        count: int = portable.import_records(self._running().db, records)
        return count
