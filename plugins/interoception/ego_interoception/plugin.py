"""The ``interoception`` plugin: provides the body sense service and the wake_up body line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from ego_core import BODY_SENSE, PluginContext, Section, hookimpl
from ego_interoception.body import BodySenseService, PsutilSampler, Sampler
from ego_interoception.config import CONFIG_ENV, InteroceptionConfig


class InteroceptionPlugin:
    """Entry point ``interoception``. ``sampler`` replaces the psutil readings (tests, simulations)."""

    config_class: ClassVar[type[InteroceptionConfig]] = InteroceptionConfig
    config_env: ClassVar[Mapping[str, str]] = CONFIG_ENV

    def __init__(self, sampler: Sampler | None = None) -> None:
        self._sampler = sampler

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        config: InteroceptionConfig = ctx.config
        service = BodySenseService(
            now=ctx.now,
            tz=ctx.settings.tz,
            sampler=self._sampler if self._sampler is not None else PsutilSampler(log=ctx.log),
            cache_seconds=config.cache_seconds,
            log=ctx.log,
        )
        ctx.provide(BODY_SENSE, service)

    @hookimpl
    def on_wake_up(self, ctx: PluginContext) -> Section | None:
        body = ctx.services.get(BODY_SENSE, BodySenseService)
        if body is None:
            return None
        return Section(key="interoception", text=body.summary(), slot="interoception")

    @hookimpl
    def on_attune(self, ctx: PluginContext) -> Section | None:
        """The body sense, last in attune (the same line as in wake_up)."""
        return self.on_wake_up(ctx)
