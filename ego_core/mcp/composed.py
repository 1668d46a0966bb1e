"""The core plugin: ``wake_up``, ``introspect`` and ``attune``, composed from other plugins' sections, the
``wake-up`` and ``heartbeat`` prompts, and the core's CLI commands."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ego_core.kernel.context import PluginContext
from ego_core.kernel.markers import hookimpl
from ego_core.kernel.status import UNAVAILABLE_WORDING
from ego_core.mcp.core_commands import core_commands
from ego_core.mcp.core_prompts import core_prompts
from ego_core.mcp.freshness import ShownLines
from ego_core.offerings import Prompt
from ego_core.responses import compose_sections, estimate_tokens
from ego_core.types import (
    LINE_REST,
    Claim,
    Command,
    Response,
    ScaffoldContext,
    ScaffoldItem,
    ScaffoldLine,
    Section,
    Tool,
)

EMPTY_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

WAKE_UP_SCAFFOLD: tuple[ScaffoldItem, ...] = (
    ScaffoldLine("Start with introspect to organize your thoughts.", needs={"introspect"}),
)
INTROSPECT_SCAFFOLD: tuple[ScaffoldItem, ...] = ("Reflect on these in your own words. How do you feel right now?",)
ATTUNE_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"person": {"type": "string", "maxLength": 100}},
    "additionalProperties": False,
}
ATTUNE_SCAFFOLD: tuple[ScaffoldItem, ...] = ("What am I actually feeling right now — not what I think I should feel?",)


EMBERS_SHOWN = 2
WAKE_UP_TOKENS = 150
INTROSPECT_TOKENS = 400
ATTUNE_TOKENS = 200
"""What each composed answer may cost the agent (WordPiece tokens); sections of low priority give way."""


def _reserved(*texts: str | ScaffoldItem) -> int:
    """Tokens the answer spends whatever the sections: its header, its scaffold and the separator."""
    lines = [item.text if isinstance(item, ScaffoldLine) else item for item in texts]
    return estimate_tokens("\n".join(["---", *lines]))


def _hints(ctx: PluginContext, tool: str, arguments: Mapping[str, Any]) -> list[ScaffoldItem]:
    """What ``scaffold_for`` adds to ``tool``'s answer, gathered before composing it (no data yet), so the
    budget counts it."""
    context = ScaffoldContext(tool=tool, arguments=arguments)
    return [item for _plugin, items in ctx.hooks.scaffold_for(tool=tool, context=context) for item in items]


def embers_section(ctx: PluginContext) -> Section | None:
    """``Embers:`` and the two warmest fragments the plugins offer (``ember_candidates``), or None."""
    offered = [ember for _plugin, embers in ctx.hooks.ember_candidates() for ember in embers if ember.text.strip()]
    if not offered:
        return None
    warmest = sorted(offered, key=lambda ember: -ember.warmth)[:EMBERS_SHOWN]
    text = "Embers: " + " / ".join(ember.text.strip() for ember in warmest)
    claims = tuple(claim for ember in warmest for claim in ember.claims)
    return Section(key="embers", text=text, slot="embers", claims=claims, rest=LINE_REST)


class CorePlugin:
    """Always registered under the id ``core``; cannot be disabled."""

    def __init__(self) -> None:
        self._shown: ShownLines | None = None

    def _freshness(self, ctx: PluginContext, tool: str) -> dict[str, Any]:
        """compose_sections' ``resting`` and ``shown`` for ``tool``: a line that rests gives way
        (``Section.rest``), by what ``<data dir>/core/shown.db`` remembers."""
        if self._shown is None:
            self._shown = ShownLines(ctx.data_dir / "shown.db")
        lines, now = self._shown, ctx.now()

        def resting(section: Section) -> bool:
            return lines.resting(tool, section, now)

        def shown(sections: Sequence[Section]) -> None:
            lines.shown(tool, sections, now)

        return {"resting": resting, "shown": shown}

    @hookimpl
    def on_shutdown(self) -> None:
        if self._shown is not None:
            self._shown.close()

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(
            Tool(
                name="wake_up",
                description="Start a session: your last thoughts, desires and state, as you left them.",
                input_schema=EMPTY_SCHEMA,
                handler=self.wake_up,
                tier="surface",
            )
        )
        register(
            Tool(
                name="introspect",
                description="Gather material for reflection: recent memories, desires, open questions.",
                input_schema=EMPTY_SCHEMA,
                handler=self.introspect,
                tier="surface",
            )
        )
        register(
            Tool(
                name="attune",
                description="Heartbeat check-in: feelings, desires, interests, body.",
                input_schema=ATTUNE_SCHEMA,
                handler=self.attune,
                tier="surface",
            )
        )

    @hookimpl
    def register_prompts(self, register: Callable[[Prompt], None], ctx: PluginContext) -> None:
        for prompt in core_prompts(ctx):
            register(prompt)

    @hookimpl
    def register_commands(self, register: Callable[[Command], None]) -> None:
        for command in core_commands():
            register(command)

    def wake_up(self, _args: Mapping[str, Any], ctx: PluginContext) -> Response:
        ctx.host.begin_session(ctx.now())  # before the sections: ctx.previous_session() is the one before this
        now = ctx.now().astimezone(ctx.settings.tz)
        header = f"Awake: {now:%a %d %b %Y, %H:%M} ({ctx.settings.timezone})."
        hints = _hints(ctx, "wake_up", _args)
        claims: list[Claim] = []
        answered = ctx.hooks.on_wake_up()
        texts, scaffold = compose_sections(
            [*answered, ("core", embers_section(ctx))],
            answer="wake_up",
            budget=WAKE_UP_TOKENS,
            reserved=_reserved(header, *WAKE_UP_SCAFFOLD, *hints),
            claims=claims,
            **self._freshness(ctx, "wake_up"),
        )
        if not texts:  # a plugin that keeps something but has nothing yet is not "nothing kept in this setup"
            texts = [
                "Nothing carried over yet."
                if answered
                else "Nothing carried over yet: no memories, desires or self-model are kept in this setup."
            ]
        failed = ctx.host.unavailable_stages()
        if failed:
            named = ", ".join(f"{plugin} ({UNAVAILABLE_WORDING[stage]})" for plugin, stage in failed.items())
            texts.append(f"Not working right now: {named}; whoever runs ego can see why with `ego doctor`.")
        return Response(
            data="\n".join([header, *texts]),
            scaffold=(*WAKE_UP_SCAFFOLD, *scaffold, *hints),
            hinted=True,
            claims=tuple(claims),
        )

    def introspect(self, _args: Mapping[str, Any], ctx: PluginContext) -> Response:
        hints = _hints(ctx, "introspect", _args)
        claims: list[Claim] = []
        texts, scaffold = compose_sections(
            ctx.hooks.on_introspect(),
            answer="introspect",
            budget=INTROSPECT_TOKENS,
            reserved=_reserved(*INTROSPECT_SCAFFOLD, *hints),
            claims=claims,
            **self._freshness(ctx, "introspect"),
        )
        if not texts:
            texts = ["Nothing to reflect on yet: no memories, desires or questions are being kept."]
        return Response(
            data="\n\n".join(texts),
            scaffold=(*INTROSPECT_SCAFFOLD, *scaffold, *hints),
            hinted=True,
            claims=tuple(claims),
        )

    def attune(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        person = str(args.get("person") or "").strip() or None
        hints = _hints(ctx, "attune", args)
        claims: list[Claim] = []
        texts, scaffold = compose_sections(
            ctx.hooks.on_attune(person=person),
            answer="attune",
            budget=ATTUNE_TOKENS,
            reserved=_reserved(*ATTUNE_SCAFFOLD, *hints),
            claims=claims,
            **self._freshness(ctx, "attune"),
        )
        if not texts:
            texts = ["Nothing to attune to yet: no memories, desires or body sense are kept in this setup."]
        return Response(
            data="\n".join(texts), scaffold=(*ATTUNE_SCAFFOLD, *scaffold, *hints), hinted=True, claims=tuple(claims)
        )
