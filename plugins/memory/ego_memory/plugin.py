"""The ``memory`` plugin: emotional memories, hybrid recall, and the ``memory.store`` service."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any

import attrs

from ego_core import (
    MEMORY_STORE,
    Check,
    Claim,
    Command,
    EmbedderFactory,
    EmbeddingError,
    Ember,
    ImportFormat,
    PluginContext,
    Redactor,
    Response,
    ScaffoldItem,
    ScaffoldLine,
    Section,
    Tool,
    ToolError,
    ToolHandler,
    hookimpl,
    relative_age,
    truncate,
)
from ego_memory.api import MemoryHooks, MemorySpecs
from ego_memory.commands import memory_commands
from ego_memory.config import CONFIG_ENV, MemoryConfig
from ego_memory.embedding import BUILTIN_EMBEDDERS
from ego_memory.embedding.errors import ProviderError
from ego_memory.errors import StoreError
from ego_memory.exchange import importers, portable
from ego_memory.progress import reporting
from ego_memory.runtime import MemoryRuntime, open_runtime
from ego_memory.service import Memories
from ego_memory.surfacing.anticipation import surfacing_claims, surfacing_line
from ego_memory.surfacing.embers import EMBER_NEWEST, embers
from ego_memory.surfacing.involuntary import unbidden, unbidden_claims, unbidden_line
from ego_memory.text.privacy import QUOTE_MIN, PrivateContentRedactor
from ego_memory.text.thought import thought_quote
from ego_memory.text.wording import count_of
from ego_memory.tools.lifecycle import Lifecycle
from ego_memory.tools.memory import MemoryTools, remember_log_view
from ego_memory.tools.schemas import lifecycle_tools, memory_tools, revise_tool
from ego_memory.tools.surface import MemorySurface

_log = logging.getLogger("ego.plugin.memory")

PRIVATE_HINT = ScaffoldLine("remember(private=true) keeps what is hard to say yet.", needs={"remember"})
INTROSPECT_CONSOLIDATE = ScaffoldLine("If memory feels fragmented, run consolidate.", needs={"consolidate"})
THOUGHT_BUDGET = 80
"""wake_up quotes the last introspection (its open end) in at most this many columns, a loose outer bound (a CJK
character counts THOUGHT_WIDE): about fifteen English words."""
THOUGHT_TOKENS = 30
"""... and at most this many tokens, what binds a Japanese quote (a character is about a token: some thirty of
them, cut at a word) and text narrow but dear in tokens (decomposed accents, emoji sequences): at most a fifth of
wake_up's 150."""
THOUGHT_WIDE = 2
"""A CJK character counts the two columns it takes: the quote is bound in tokens (``THOUGHT_TOKENS``)."""
THOUGHT_FRAME = "(your own thought)"
"""Offered as the agent's own continuing thought (the inner monologue), not as a record."""
INTROSPECT_SAVE = ScaffoldLine(
    "If this is a genuinely new insight, save with remember (category: introspection).", needs={"remember"}
)


def embedding_tool_error(exc: EmbeddingError) -> ToolError:
    """What the agent reads when the embedding provider fails: the scrubbed reason and what to do about it."""
    if isinstance(exc, ProviderError):
        who = f"The {exc.provider} embedding provider"
        if exc.kind == "auth":
            variable = " or ".join(exc.key_env) or "named by [plugins.memory] api_key_env"
            return ToolError(
                f"{who} refused the API key ({exc.reason}), so this call did not complete and nothing was "
                f"changed. Check the key in the environment variable {variable}, then restart ego; until "
                "then every call that needs embeddings fails the same way."
            )
        if exc.kind == "transient":
            return ToolError(
                f"{who} is not answering right now ({exc.reason}), so this call did not complete and nothing "
                "was changed. It is probably temporary: try again in a few minutes."
            )
        return ToolError(
            f"{who} refused the request ({exc.reason}), so this call did not complete and nothing was changed. "
            "Retrying the same call will fail again; the embedding settings in [plugins.memory] (model, "
            "base_url) need checking."
        )
    return ToolError(
        f"The embedding model failed ({exc}), so this call did not complete and nothing was changed. "
        "Retrying the same call will likely fail again; `ego doctor` checks the embedding model."
    )


def _store_errors_as_tool_errors(handler: ToolHandler) -> ToolHandler:
    """A store that cannot serve (re-indexed by another process, unreadable) or an embedding provider that
    fails (a refused key, an outage) answers with an isError result the agent can act on, not a crash."""

    def guarded(args: Mapping[str, Any], ctx: PluginContext) -> Any:
        try:
            return handler(args, ctx)
        except StoreError as exc:
            raise ToolError(f"The memory store cannot serve this call: {exc}") from None
        except EmbeddingError as exc:
            _log.warning("embedding failed: %s", exc)
            raise embedding_tool_error(exc) from None

    return guarded


ToolsMethod = Callable[[MemoryTools, Mapping[str, Any], PluginContext], Response]
LifecycleMethod = Callable[[Lifecycle, Mapping[str, Any], PluginContext], Response]

INTROSPECT_QUOTE_TOKENS = 24
"""Tokens of each recent memory introspect quotes (about 24 Japanese characters or 18 English words): five of them
leave room in its 400 tokens for the desires, the questions, the self and the people."""


class MemoryPlugin(MemorySurface):
    config_class = MemoryConfig
    config_env = CONFIG_ENV
    hookspecs = (MemorySpecs,)

    def __init__(self) -> None:
        self.runtime: MemoryRuntime | None = None
        self.memories: Memories | None = None
        """The ``memory.store`` service."""
        self.tools: MemoryTools | None = None
        self.lifecycle: Lifecycle | None = None
        self.redactor = PrivateContentRedactor()

    def _require(self) -> Memories:
        if self.memories is None:
            raise RuntimeError("the memory plugin has not started")
        return self.memories

    def _tools(self) -> MemoryTools:
        if self.tools is None:
            raise RuntimeError("the memory plugin has not started")
        return self.tools

    def _lifecycle(self) -> Lifecycle:
        if self.lifecycle is None:
            raise RuntimeError("the memory plugin has not started")
        return self.lifecycle

    # ------------------------------------------------------------------------------------------
    # Registration

    @hookimpl
    def register_embedders(self, register: Callable[[str, EmbedderFactory], None]) -> None:
        for name, factory in BUILTIN_EMBEDDERS.items():
            register(name, factory)

    @hookimpl
    def register_redactors(self, register: Callable[[Redactor], None]) -> None:
        register(Redactor(name="memory.private", redact=self.redactor, order=50))

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None], ctx: PluginContext) -> None:
        config: MemoryConfig = ctx.config
        tools = [
            *memory_tools(
                partial(self._on_tools, MemoryTools.remember),
                partial(self._on_tools, MemoryTools.recall),
                partial(self._on_tools, MemoryTools.search_memories),
                remember_log_view,
            ),
            *lifecycle_tools(
                partial(self._on_lifecycle, Lifecycle.forget),
                partial(self._on_lifecycle, Lifecycle.link),
                partial(self._on_lifecycle, Lifecycle.create_episode),
                partial(self._on_lifecycle, Lifecycle.get_episode),
                partial(self._on_lifecycle, Lifecycle.consolidate),
            ),
            revise_tool(partial(self._on_lifecycle, Lifecycle.revise), offered=config.revise_tool),
        ]
        for tool in tools:
            register(attrs.evolve(tool, handler=_store_errors_as_tool_errors(tool.handler)))

    def _on_tools(self, method: ToolsMethod, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        """A handler of remember, recall or search_memories, on the tools opened at startup."""
        return method(self._tools(), args, ctx)

    def _on_lifecycle(self, method: LifecycleMethod, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        """A handler of forget, link_memories, the episodes, consolidate or revise_memory, on the store opened at
        startup."""
        return method(self._lifecycle(), args, ctx)

    @hookimpl
    def register_commands(self, register: Callable[[Command], None]) -> None:
        for command in memory_commands(self.redactor):
            register(command)

    # ------------------------------------------------------------------------------------------
    # Lifecycle

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        runtime = open_runtime(ctx, self.redactor)
        self.runtime, self.memories, self.tools = runtime, runtime.memories, runtime.tools
        self.lifecycle = runtime.lifecycle
        runtime.lifecycle.guard_episodes()  # summaries written before a member turned private (or this rule)
        ctx.provide(MEMORY_STORE, runtime.memories)

    @hookimpl
    def on_shutdown(self) -> None:
        if self.runtime is not None:
            self.runtime.close()
        self.runtime = self.memories = self.tools = self.lifecycle = None

    @hookimpl
    def doctor_checks(self, ctx: PluginContext) -> Sequence[Check]:
        config: MemoryConfig = ctx.config
        if self.memories is None:
            return [Check("store", False, "not open (see the startup failure in `ego plugins`)")]
        memories = self.memories
        checks = [Check("embedding model", True, f"{memories.embedding_model} ({config.embedder})")]
        profile = memories.similarity_profile
        thresholds = (
            f"duplicate {profile.duplicate}, merge {profile.merge}, link {profile.link}, related {profile.related}, "
            f"floor {profile.floor}"
        )
        checks.append(
            Check(
                "similarity profile",
                True,
                f"calibrated: {thresholds}"
                if profile.calibrated
                else f"uncalibrated for this model, generic values ({thresholds}): measure with `ego bench "
                "calibrate` and set the thresholds in ego.toml",
            )
        )
        if memories.english is None:
            channel = "off" if not config.english_channel else "off (the embedder is the channel's model)"
        else:
            try:
                memories.english.warm_up()
                channel = f"{memories.english.model_id} (recall.english_weight {config.recall.english_weight})"
            except EmbeddingError as exc:
                checks.append(Check("english channel", False, str(exc)))
                channel = ""
        if channel:
            checks.append(Check("english channel", True, channel))
        problems = memories.store.integrity_problems()
        checks.append(
            Check(
                "store",
                not problems,
                "; ".join(problems)
                or f"{count_of(memories.store.count(), 'memory', 'memories')}, indexes consistent "
                f"({memories.store.directory})",
            )
        )
        return checks

    # ------------------------------------------------------------------------------------------
    # Hooks other plugins' tools trigger

    @hookimpl(specname="on_wake_up")
    def anticipation_on_wake_up(self, ctx: PluginContext) -> Section | None:
        """wake_up's second memory section (pluggy's ``specname``): an anticipated moment that has come, is near,
        or (one time in two) approaches, in one line at most."""
        return self._anticipation(ctx)

    @hookimpl
    def on_attune(self, ctx: PluginContext) -> Section | None:
        return self._anticipation(ctx)

    def _anticipation(self, ctx: PluginContext) -> Section | None:
        if self.memories is None:
            return None
        found = surfacing_line(self.memories.store, ctx.now(), ctx.settings.tz, ctx.random)
        if found is None:
            return None
        line, memory = found
        return Section(
            key="memory.anticipation",
            text=line,
            slot="memory.anticipation",
            claims=surfacing_claims(memory),
        )

    # ------------------------------------------------------------------------------------------
    # ego export / ego import

    @hookimpl
    def register_import_formats(self, register: Callable[[ImportFormat], None], ctx: PluginContext) -> None:
        config: MemoryConfig = ctx.config
        register(importers.markdown_format(config.max_content_chars))
        register(importers.ego_mcp_format())

    @hookimpl
    def export_records(self, include_private: bool) -> Iterator[Mapping[str, Any]]:
        return portable.export_records(self._require(), include_private)

    @hookimpl
    def check_records(self, records: Sequence[Mapping[str, Any]]) -> Sequence[str]:
        limit = self.memories.config.max_content_chars if self.memories is not None else None
        return portable.check_records(records, limit)

    @hookimpl
    def import_records(self, records: Sequence[Mapping[str, Any]], ctx: PluginContext) -> int:
        memories = self._require()
        total = sum(1 for r in records if r.get("type") == "memory")
        with reporting(ctx, total=total, desc="import memories", bar=sys.stderr.isatty()) as advance:
            return portable.import_records(memories, records, advance)

    @hookimpl
    def on_wake_up(self, ctx: PluginContext) -> list[Section] | None:
        if self.memories is None:
            return None
        store = self.memories.store
        now = ctx.now()
        latest = store.latest(1, category="introspection")
        memories = self.memories
        surfaced = unbidden(
            ctx,
            memories.config.involuntary_probability,
            store,
            memories.similarity_profile,
            now,
            exclude=[thought.id for thought in latest],
        )
        if latest:
            # the agent's own continuing thought stands alone: the whole wake_up stays under 150 tokens
            thought = latest[0]
            budget = THOUGHT_BUDGET
            # a private thought's open end is quoted long enough for the redactor to recognise it (separators
            # weigh less than letters there: a margin of two keeps "Still open: …" of twenty characters a quote)
            least = QUOTE_MIN + 2 if thought.is_private else 0
            snippet = thought_quote(thought.content, budget, wide=THOUGHT_WIDE, least=least, tokens=THOUGHT_TOKENS)
            when = relative_age(thought.timestamp, now) + (", private" if thought.is_private else "")
            text = f'Last introspection ({when}): "{snippet}" {THOUGHT_FRAME}'
            claims: tuple[Claim, ...] = (
                Claim(kind="quote", memory_id=thought.id, words=snippet, whole=thought.content),
            )
        else:
            newest = store.latest(1)
            if not newest:
                return [Section(key="memory", text="No memories yet.", slot="memory.thought")]
            age = relative_age(newest[0].timestamp, now)
            text = f"Memories: {store.count()}, the newest from {age}."
            claims = ()
        sections = [Section(key="memory", text=text, slot="memory.thought", claims=claims)]
        if surfaced is not None:
            unbidden_memory = surfaced
            sections.append(
                Section(
                    key="memory.unbidden",
                    text=unbidden_line(surfaced, now, ctx.settings.tz),
                    claims=unbidden_claims(surfaced, now, ctx.settings.tz),
                    slot="memory.unbidden",
                    # the other plugins hear of it only if the agent does: a crowded wake_up leaves it out
                    on_shown=lambda: MemoryHooks(ctx).on_memory_surfaced(memory=unbidden_memory, how="involuntary"),
                )
            )
        return sections

    @hookimpl
    def ember_candidates(self, ctx: PluginContext) -> Sequence[Ember] | None:
        if self.memories is None:
            return None
        store = self.memories.store
        quoted = [thought.id for thought in store.latest(1, category="introspection")]
        return embers(store.latest(EMBER_NEWEST), ctx.now(), quoted=quoted)

    @hookimpl
    def on_introspect(self, ctx: PluginContext) -> Section | None:
        if self.memories is None:
            return None
        recent = self.memories.store.latest(5)
        if not recent:
            return Section(key="memory", text="Recent memories: none yet.", slot="memory.recent")
        now = ctx.now()
        lines = ["Recent memories:"]
        for memory in recent:
            private = " (private)" if memory.is_private else ""
            quote = truncate(memory.content, 90, tokens=INTROSPECT_QUOTE_TOKENS)
            lines.append(
                f"- [{relative_age(memory.timestamp, now)}] {quote} ({memory.emotional_trace.primary}){private}"
            )
        return Section(key="memory", text="\n".join(lines), slot="memory.recent")

    @hookimpl
    def scaffold_for(self, tool: str) -> Sequence[ScaffoldItem] | None:
        if tool == "wake_up":
            # the hint teaches private memories until the first one is kept (wake_up's budget is tight)
            known = self.memories is not None and bool(self.memories.store.private_ids())
            return [] if known else [PRIVATE_HINT]
        if tool == "introspect":
            return [INTROSPECT_SAVE, INTROSPECT_CONSOLIDATE]
        return None


__all__ = ["EmbeddingError", "MemoryPlugin"]
