"""The ``desires`` plugin: nine abstract desires that rise with time, are satisfied explicitly or by
using tools, and are coloured by recent memories, the body sense and fading questions.

- tools ``feel_desires`` (surface) and ``satisfy_desire`` (backend);
- a one-line feeling in ``wake_up`` and a short section in ``introspect`` (order 20 in both);
- implicit satisfaction in ``on_tool_called`` (the ``implicit`` table of the config);
- the service ``desires.levels`` (:class:`ego_core.DesireLevels`) for the self-model;
- state in ``<data dir>/desires/desires.sqlite3``, exported and imported with ``ego export`` / ``ego import``.

Nothing maps a desire to an action: the responses say how the desires feel and ask, and the agent decides.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from ego_core import (
    DESIRE_LEVELS,
    Check,
    InvalidArgumentError,
    PluginBase,
    PluginContext,
    Response,
    ScaffoldLine,
    Section,
    Tool,
    ToolOutcome,
    hookimpl,
)
from ego_desires import portable
from ego_desires.catalog import DESIRES, desire_name
from ego_desires.config import DesiresConfig
from ego_desires.curve import EXPLICIT, TOOL_PREFIX, Anchor, base_level, blended_quality, satisfied_position
from ego_desires.inputs import gather
from ego_desires.levels import Snapshot, current_position, initial_anchor, snapshot
from ego_desires.modulation import Inputs
from ego_desires.render import (
    COMPANION_SCAFFOLD,
    FEEL_SCAFFOLD,
    INTROSPECT_HINT,
    SATISFY_SCAFFOLD,
    UNRESOLVED_LINE,
    feeling_line,
    introspect_text,
    levels_line,
    satisfied_text,
)
from ego_desires.store import DesireStore, DesireStoreError

WAKE_UP_ORDER: Final = 20
"""After the last introspection (memory, 10), before the companion (30) and the body sense (40)."""
INTROSPECT_ORDER: Final = 20
DEFAULT_QUALITY: Final = 0.7

FEEL_SCHEMA: Final[Mapping[str, Any]] = {"type": "object", "properties": {}, "additionalProperties": False}
SATISFY_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 40},
        "quality": {"type": "number", "minimum": 0, "maximum": 1, "default": DEFAULT_QUALITY},
    },
    "required": ["name"],
    "additionalProperties": False,
}


def _satisfy_log_view(args: Mapping[str, Any]) -> Mapping[str, Any]:
    """The log shows a desire's name, never other text the agent may have put in ``name``."""
    return {"name": desire_name(str(args.get("name", ""))) or "(not a desire)", "quality": args.get("quality")}


class LevelsService:
    """Implements :class:`ego_core.DesireLevels`: every desire's level now, read at each call."""

    def __init__(self, read: Callable[[], Mapping[str, float]]) -> None:
        self._read = read

    def levels(self) -> Mapping[str, float]:
        return self._read()


class DesiresPlugin(PluginBase):
    """Entry point ``desires``. Works alone; memory, interoception and a self-model only add modulation."""

    config_class = DesiresConfig

    def __init__(self) -> None:
        self._ctx: PluginContext | None = None
        self._store: DesireStore | None = None
        self._local = threading.local()

    # -- lifecycle ---------------------------------------------------------------------------------

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        config: DesiresConfig = ctx.config
        now = ctx.now()
        store = DesireStore(ctx.data_dir)
        # A damaged store raises here: the plugin is marked failed and the file is left for the user.
        renewed = store.open(now.timestamp(), lambda _name: initial_anchor(now, config))
        if renewed:
            ctx.log.warning("desires: unusable state of %s started anew", ", ".join(renewed))
        self._ctx, self._store = ctx, store
        ctx.provide(DESIRE_LEVELS, LevelsService(self.levels))

    @hookimpl
    def on_shutdown(self) -> None:
        if self._store is not None:
            self._store.close()
        self._ctx = self._store = None

    def _running(self) -> tuple[PluginContext, DesireStore]:
        if self._ctx is None or self._store is None:
            raise RuntimeError("the desires plugin is not started")
        return self._ctx, self._store

    # -- levels ------------------------------------------------------------------------------------

    def _inputs(self, ctx: PluginContext, config: DesiresConfig, now: datetime) -> Inputs:
        # The self-model may read our levels while we read its questions: the inner call leaves questions out.
        nested = getattr(self._local, "reading", False)
        self._local.reading = True
        try:
            return gather(ctx, now, config, questions=not nested)
        finally:
            self._local.reading = nested

    def snapshot(self) -> Snapshot:
        """Every desire now: stored state + the other plugins' inputs + the host clock."""
        ctx, store = self._running()
        config: DesiresConfig = ctx.config
        now = ctx.now()
        inputs = self._inputs(ctx, config, now)
        return snapshot(store.anchors(), inputs, now, config)

    def levels(self) -> Mapping[str, float]:
        return self.snapshot().levels()

    def satisfy(self, names: Sequence[str], quality: float, source: str) -> dict[str, tuple[Anchor | None, Anchor]]:
        """Satisfy ``names`` with ``quality`` in one transaction; each desire's state before and after."""
        ctx, store = self._running()
        config: DesiresConfig = ctx.config
        now = ctx.now()

        def change(name: str, current: Anchor | None) -> Anchor:
            anchor = current or initial_anchor(now, config)
            at = current_position(anchor, name, now, config)
            level = base_level(at, config.steepness)
            return Anchor(
                anchored_at=now.timestamp(),
                start=satisfied_position(at, quality, config.steepness),
                quality=blended_quality(quality, anchor.quality, level),
                source=source,
            )

        return store.update(names, change, now.timestamp())

    # -- tools -------------------------------------------------------------------------------------

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name="feel_desires",
                description="Feel your desires right now.",
                input_schema=FEEL_SCHEMA,
                handler=self.feel_desires,
                tier="surface",
            )
        )
        register(
            Tool(
                name="satisfy_desire",
                description="Say a desire was satisfied, and how fully (0-1).",
                input_schema=SATISFY_SCHEMA,
                handler=self.satisfy_desire,
                tier="backend",
                log_view=_satisfy_log_view,
            )
        )

    def feel_desires(self, _args: Mapping[str, Any]) -> Response:
        ctx, _store = self._running()
        config: DesiresConfig = ctx.config
        snap = self.snapshot()
        scaffold: list[str | ScaffoldLine] = [
            FEEL_SCAFFOLD,
            COMPANION_SCAFFOLD.format(companion=ctx.settings.companion_name),
        ]
        if snap.unresolved:
            scaffold += [UNRESOLVED_LINE, ScaffoldLine(INTROSPECT_HINT, needs={"introspect"})]
        return Response(levels_line(snap, config), scaffold=tuple(scaffold))

    def satisfy_desire(self, args: Mapping[str, Any]) -> Response:
        name = desire_name(str(args["name"]))
        if name is None:
            raise InvalidArgumentError("name", f"one of {', '.join(DESIRES)}")
        quality = float(args.get("quality", DEFAULT_QUALITY))
        if not (math.isfinite(quality) and 0.0 <= quality <= 1.0):
            raise InvalidArgumentError("quality", "a number from 0 to 1")
        ctx, store = self._running()
        config: DesiresConfig = ctx.config
        old, _new = self.satisfy([name], quality, EXPLICIT)[name]
        # Before and after at one moment with the same inputs, so that the difference is the satisfaction alone.
        now = ctx.now()
        inputs = self._inputs(ctx, config, now)
        anchors = store.anchors()
        after = snapshot(anchors, inputs, now, config)
        before = snapshot({**anchors, name: old} if old else anchors, inputs, now, config).reading(name)
        raised_by = {factor: changes.get(name, 0.0) for factor, changes in after.modulation.factors.items()}
        text = satisfied_text(before, after.reading(name), quality, raised_by)
        return Response(text, scaffold=(SATISFY_SCAFFOLD,))

    # -- implicit satisfaction ---------------------------------------------------------------------

    @hookimpl
    def on_tool_called(self, tool: str, result: ToolOutcome, ctx: PluginContext) -> None:
        if result.is_error or result.declined or self._store is None:
            return
        config: DesiresConfig = ctx.config
        names = config.implicit.get(tool)
        if names:
            self.satisfy(names, config.implicit_quality, TOOL_PREFIX + tool)

    # -- composed responses ------------------------------------------------------------------------

    @hookimpl
    def on_wake_up(self, ctx: PluginContext) -> Section | None:
        if self._store is None:
            return None
        return Section(key="desires", text=feeling_line(self.snapshot(), ctx.config), order=WAKE_UP_ORDER)

    @hookimpl
    def on_introspect(self, ctx: PluginContext) -> Section | None:
        if self._store is None:
            return None
        return Section(key="desires", text=introspect_text(self.snapshot(), ctx.config), order=INTROSPECT_ORDER)

    @hookimpl
    def doctor_checks(self, ctx: PluginContext) -> list[Check]:
        if self._store is None:
            return [Check("state", False, "the desires store is not open")]
        try:
            anchors = self._store.anchors()
        except (DesireStoreError, OSError) as exc:
            return [Check("state", False, f"{exc}")]
        missing = [name for name in DESIRES if name not in anchors]
        detail = f"{len(anchors)} of {len(DESIRES)} desires kept in {self._store.path}"
        if missing:
            detail += f"; unusable (restart ego to start them anew): {', '.join(missing)}"
        return [Check("state", not missing, detail)]

    # -- export / import ---------------------------------------------------------------------------

    @hookimpl
    def export_records(self, include_private: bool) -> Iterator[Mapping[str, Any]]:
        _ctx, store = self._running()
        return portable.export_records(store)

    @hookimpl
    def check_records(self, records: Sequence[Mapping[str, Any]]) -> list[str]:
        return portable.check_records(records)

    @hookimpl
    def import_records(self, records: Sequence[Mapping[str, Any]]) -> int:
        _ctx, store = self._running()
        return portable.import_records(store, records)
