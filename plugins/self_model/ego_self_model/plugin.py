"""The ``self_model`` plugin: who the agent is becoming, its open questions, and the people it knows.

Works alone; with the memory plugin, remembering counts interactions and brings back forgotten questions; with
the desires plugin, a high cognitive_coherence lets introspect show the fading questions.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any

from ego_core import (
    Check,
    DatabaseVersionError,
    ImportFormat,
    Memory,
    PluginBase,
    PluginContext,
    RecallHit,
    RecallNote,
    RecallQuery,
    Response,
    Section,
    Tool,
    hookimpl,
)
from ego_self_model import importer, portable
from ego_self_model.api import OPEN_QUESTIONS, PEOPLE
from ego_self_model.config import SelfModelConfig
from ego_self_model.mcp_surface import SelfModelSurface
from ego_self_model.people import companion_detail, companion_of
from ego_self_model.people_service import PeopleService
from ego_self_model.questions import OpenQuestionsService
from ego_self_model.ripening import Ripening
from ego_self_model.schemas import (
    AM_I_BEING_GENUINE,
    CONSIDER_THEM,
    DESCRIPTIONS,
    SCHEMAS,
    UPDATE_RELATIONSHIP,
    UPDATE_SELF,
)
from ego_self_model.selfmodel import SelfModel
from ego_self_model.store import DB_NAME, MIGRATIONS, SYNCHRONOUS, StateStore, unusable


def _log_view(args: Mapping[str, Any]) -> Mapping[str, Any]:
    """What of a call may be logged: the field names, never the values (a question, a note about someone)."""
    return {name: (value if name == "field" else f"<{type(value).__name__}>") for name, value in args.items()}


ModelTool = Callable[[SelfModel, Mapping[str, Any], PluginContext], Response]


class SelfModelPlugin(SelfModelSurface, PluginBase):
    config_class = SelfModelConfig

    def __init__(self) -> None:
        self.model: SelfModel | None = None

    def _running(self) -> SelfModel:
        if self.model is None:
            raise RuntimeError("the self_model plugin has not started")
        return self.model

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        handlers: dict[str, tuple[ModelTool, str]] = {
            CONSIDER_THEM: (SelfModel.consider_them, "surface"),
            AM_I_BEING_GENUINE: (SelfModel.am_i_being_genuine, "surface"),
            UPDATE_SELF: (SelfModel.update_self, "backend"),
            UPDATE_RELATIONSHIP: (SelfModel.update_relationship, "backend"),
        }
        for name, (method, tier) in handlers.items():
            register(
                Tool(
                    name=name,
                    description=DESCRIPTIONS[name],
                    input_schema=SCHEMAS[name],
                    handler=partial(self._call, method),
                    tier="surface" if tier == "surface" else "backend",
                    log_view=_log_view,
                )
            )

    def _call(self, method: ModelTool, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        """A tool of the running model (its store is opened at startup)."""
        return method(self._running(), args, ctx)

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        config: SelfModelConfig = ctx.config
        try:
            database = ctx.database(MIGRATIONS, DB_NAME, synchronous=SYNCHRONOUS)
        except (sqlite3.DatabaseError, DatabaseVersionError) as exc:
            raise unusable(ctx.data_dir / DB_NAME, exc) from None
        store = StateStore(database)
        self.model = SelfModel(ctx, store, config)
        ctx.provide(OPEN_QUESTIONS, OpenQuestionsService(store, ctx.now, config))
        ctx.provide(PEOPLE, PeopleService(store, ctx.settings.companion_name))

    @hookimpl
    def on_shutdown(self) -> None:
        if self.model is not None:
            self.model.store.close()
            self.model = None

    @hookimpl
    def doctor_checks(self) -> Sequence[Check]:
        if self.model is None:
            return [Check("self-model state", False, "not open (see the startup failure in `ego plugins`)")]
        store = self.model.store
        now = self.model.ctx.now()
        with store.reading() as db:
            problems = [row[0] for row in db.execute("PRAGMA quick_check")]
            questions = len(store.questions(db, resolved=None))
            people = len(store.people(db))
            everyone = store.people(db)
        ok = problems == ["ok"]
        detail = f"{questions} questions, {people} people ({store.path})" if ok else "; ".join(problems[:5])
        configured = self.model.ctx.settings.companion_name
        companion = companion_of(everyone, configured, now, self.model.config, store.public_counts())
        return [
            Check("self-model state", ok, detail),
            Check("companion", True, companion_detail(companion, everyone, configured)),
        ]

    # ------------------------------------------------------------------------------------------
    # Other plugins' actions

    @hookimpl(optionalhook=True)
    def on_remember(self, memory: Memory, together: Sequence[str]) -> Sequence[str | Section] | None:
        return self._running().remembered(memory, together) or None

    @hookimpl(optionalhook=True)
    def on_forget(self, memory: Memory) -> Sequence[str] | None:
        return self._running().forgot(memory) or None

    @hookimpl(optionalhook=True)
    def on_memory_revised(self, after: Memory) -> None:
        self._running().revised(after)

    @hookimpl(optionalhook=True)
    def on_recall_result(self, query: RecallQuery, results: Sequence[RecallHit]) -> RecallNote | None:
        lines = self._running().recalled(query, results)
        return RecallNote(lines=lines) if lines else None

    def _ripening(self) -> Ripening:
        model = self._running()
        return Ripening(model.ctx, model.store, model.config)

    @hookimpl(optionalhook=True)
    def on_consolidate(self) -> Section | None:
        return self._ripening().consolidated()

    @hookimpl
    def on_wake_up(self) -> list[Section]:
        edge = self._ripening().open_edge()
        return [*self._running().wake_up(), *([edge] if edge is not None else [])]

    @hookimpl
    def on_attune(self, person: str | None) -> list[Section]:
        model = self._running()
        hint = self._ripening().hint(model.ctx.random)
        return [model.attune(person), *([hint] if hint is not None else [])]

    @hookimpl
    def on_introspect(self) -> list[Section]:
        sections = self._running().introspect()
        ripened = self._ripening().take_ripened()
        if ripened is None:
            return sections
        return [*(s for s in sections if s.key != "self_model.resurfacing"), ripened]

    # ------------------------------------------------------------------------------------------
    # ego export / ego import

    @hookimpl
    def register_import_formats(self, register: Callable[[ImportFormat], None], ctx: PluginContext) -> None:
        register(importer.ego_mcp_format(ctx.config))

    @hookimpl
    def export_records(self, include_private: bool) -> Iterator[Mapping[str, Any]]:
        return portable.export_records(self._running().store, include_private)

    @hookimpl
    def check_records(self, records: Sequence[Mapping[str, Any]], ctx: PluginContext) -> Sequence[str]:
        return portable.check_records(records, ctx.config)

    @hookimpl
    def import_records(self, records: Sequence[Mapping[str, Any]]) -> int:
        model = self._running()
        return portable.import_records(model.store, records, model.config)
