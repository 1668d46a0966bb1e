"""The ``notions`` plugin: concepts formed from densely linked memories, reinforced by experience."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ego_core import (
    LINE_REST,
    MEMORY_STORE,
    Check,
    ConsolidationRun,
    DatabaseVersionError,
    Ember,
    ImportFormat,
    Memory,
    MemoryService,
    PluginBase,
    PluginContext,
    RecallHit,
    RecallNote,
    RecallQuery,
    Response,
    Section,
    Tool,
    ToolError,
    hookimpl,
    log_event,
)
from ego_notions import curate, importer, portable
from ego_notions.api import NOTIONS_STORE
from ego_notions.book import NotionBook
from ego_notions.render import attune_text, introspect_text, recall_lines
from ego_notions.store import DB_NAME, MIGRATIONS, NotionDB, unusable

NOT_RUNNING = "The notions store is not open; `ego doctor` shows why."
WEAKENED_EMBER = "...something I thought I understood feels less certain now"
WEAKENED_WARMTH = 0.4


class NotionsPlugin(PluginBase):
    """Entry point ``notions``; requires the memory plugin."""

    requires: Sequence[str] = ("memory",)

    def __init__(self) -> None:
        self._book: NotionBook | None = None

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
        try:
            database = ctx.database(MIGRATIONS, DB_NAME)
        except (sqlite3.DatabaseError, DatabaseVersionError) as exc:
            raise unusable(ctx.data_dir / DB_NAME, exc) from None
        db = NotionDB(database)

        def memories() -> MemoryService | None:
            return ctx.services.get(MEMORY_STORE, MemoryService)

        self._book = NotionBook(db, ctx.now, memories, ctx.log, tz=lambda: ctx.settings.tz, services=ctx.services)
        service = memories()
        if service is not None and service.count() == 0:
            self._book.mark_indexed()  # a new store: tags are read as memories come, nothing to read back
        self._book.reconcile()  # once after the upgrade: labels drawn from memories made private since
        ctx.provide(NOTIONS_STORE, self._book)

    @hookimpl
    def on_shutdown(self) -> None:
        if self._book is not None:
            self._book.db.close()
        self._book = None

    @hookimpl
    def doctor_checks(self, ctx: PluginContext) -> Sequence[Check]:
        if self._book is not None:
            return [Check("notions store", True, f"{self._book.db.count()} notion(s)")]
        try:
            database = ctx.read_database(DB_NAME)
            if database is None:
                return [Check("notions store", True, "0 notion(s)")]
            with database:
                if database.version > len(MIGRATIONS):
                    raise DatabaseVersionError(f"schema version {database.version}, newer than {len(MIGRATIONS)}")
                count = NotionDB(database).count()
        except (sqlite3.DatabaseError, DatabaseVersionError) as exc:
            return [Check("notions store", False, str(unusable(Path(DB_NAME), exc)))]
        return [Check("notions store", True, f"{count} notion(s)")]

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name=curate.NAME,
                description=curate.DESCRIPTION,
                input_schema=curate.SCHEMA,
                handler=self.curate_notions,
            )
        )

    def curate_notions(self, args: Mapping[str, Any], _ctx: PluginContext) -> Response:
        return curate.curate(self._running(), args)

    @hookimpl(optionalhook=True)
    def on_consolidate(self, run: ConsolidationRun) -> Section | None:
        report = self._running().consolidate(run)
        text = report.summary()
        return Section(key="notions", text=text, slot="notions") if text else None

    @hookimpl(optionalhook=True)
    def on_remember(self, memory: Memory) -> None:
        self._running().remembered(memory)

    @hookimpl(optionalhook=True)
    def on_forget(self, memory: Memory) -> None:
        self._running().forgot(memory.id)

    @hookimpl(optionalhook=True)
    def on_memory_revised(self, after: Memory) -> None:
        self._running().revised(after)

    @hookimpl(optionalhook=True)
    def on_recall_result(self, query: RecallQuery, results: Sequence[RecallHit]) -> RecallNote | None:
        lines = recall_lines(self._running(), [hit.memory for hit in results])
        return RecallNote(lines=lines) if lines else None

    @hookimpl
    def on_introspect(self) -> Section | None:
        text = introspect_text(self._running())
        return Section(key="notions", text=text, slot="notions") if text else None

    @hookimpl
    def on_attune(self) -> Section | None:
        """The strongest convictions, and a notion a contradiction weakened lately."""
        text = attune_text(self._running())
        return Section(key="notions", text=text, slot="notions", rest=LINE_REST) if text else None

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
