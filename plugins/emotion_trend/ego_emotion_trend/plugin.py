"""The ``emotion_trend`` plugin: how the last days, week and month felt.

It reads the memories' emotions through the memory service and keeps nothing of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ego_core import (
    LINE_REST,
    MEMORY_STORE,
    MemoryService,
    PluginBase,
    PluginContext,
    Response,
    Section,
    Tool,
    ToolError,
    hookimpl,
)
from ego_emotion_trend.config import EmotionTrendConfig
from ego_emotion_trend.report import INTROSPECT_POINTER, introspect_text, trend_text, wake_up_line
from ego_emotion_trend.trend import Trend, TrendReader
from ego_emotion_trend.windows import windows

TOOL = "emotion_trend"
DESCRIPTION = "How the last days, week and month felt: peaks, undercurrents, shifts, fading emotions."
SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
NO_STORE = (
    "The memory store is not available right now, so there is no emotional history to read. "
    "Try again later; `ego doctor` shows what is wrong."
)


class EmotionTrendPlugin(PluginBase):
    """Entry point ``emotion_trend``; requires the memory plugin."""

    requires: Sequence[str] = ("memory",)
    config_class: type[Any] | None = EmotionTrendConfig

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None], ctx: PluginContext) -> None:
        config: EmotionTrendConfig = ctx.config
        if config.tool:
            register(Tool(name=TOOL, description=DESCRIPTION, input_schema=SCHEMA, handler=self.emotion_trend))

    def emotion_trend(self, _args: Mapping[str, Any], ctx: PluginContext) -> Response:
        trend = _read(ctx)
        if trend is None:
            raise ToolError(NO_STORE)
        config: EmotionTrendConfig = ctx.config
        data, scaffold = trend_text(trend, ctx.now(), ctx.settings.tz, config)
        return Response(data=data, scaffold=scaffold)

    @hookimpl
    def on_wake_up(self, ctx: PluginContext) -> Section | None:
        trend = _read(ctx, named=False, fading=False)  # counts only: the line names no memory
        line = wake_up_line(trend, ctx.config) if trend is not None else None
        return Section(key=TOOL, text=line, slot=TOOL, rest=LINE_REST) if line else None

    @hookimpl
    def on_attune(self, ctx: PluginContext) -> Section | None:
        """The emotional texture of the last days, first in attune: the wake_up line (counts only)."""
        trend = _read(ctx, named=False, fading=False)
        line = wake_up_line(trend, ctx.config) if trend is not None else None
        return Section(key=TOOL, text=line, slot=TOOL, rest=LINE_REST) if line else None

    @hookimpl
    def on_introspect(self, ctx: PluginContext) -> Section | None:
        trend = _read(ctx)
        text = introspect_text(trend, ctx.now(), ctx.settings.tz, ctx.config) if trend is not None else None
        if not text:
            return None
        return Section(key=TOOL, text=text, slot=TOOL, scaffold=(INTROSPECT_POINTER,))


def _read(ctx: PluginContext, *, named: bool = True, fading: bool = True) -> Trend | None:
    """The trend at the host clock, or None when the memory service is missing (degrade gracefully)."""
    service = ctx.services.get(MEMORY_STORE, MemoryService)
    if service is None:
        return None
    config: EmotionTrendConfig = ctx.config
    return TrendReader(service, config, windows(ctx.now(), ctx.settings.tz, config)).read(named=named, fading=fading)
