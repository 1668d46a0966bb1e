"""Hook specifications: the whole extension surface of ego.

Rules (also in docs/hooks.md):

- Hooks are called with keyword arguments; an implementation may accept any subset of the parameters.
- Every hook can take ``ctx``: the :class:`~ego_core.PluginContext` of the implementing plugin
  (its configuration, data directory, services, logger, clock and hook caller).
- Arguments are frozen attrs values. Return new values; never mutate what you were given.
- Each spec declares its calling kind (:class:`HookKind`); the one dispatcher calls every implementation by
  it. An implementation that raises in a notification, collector or first-result hook is logged and recorded
  (``ego plugins`` shows it) and the others still run. Redaction is the exception: a redactor that raises
  fails closed.
- Do not use ``wrapper=True``/``hookwrapper=True`` implementations; the host refuses them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

import pluggy

from ego_core.types import (
    Check,
    Command,
    ConsolidationRun,
    Ember,
    Memory,
    RecallHit,
    RecallNote,
    RecallQuery,
    Redactor,
    RememberDraft,
    Response,
    ScaffoldContext,
    ScaffoldItem,
    Section,
    SurfacedHow,
    Tool,
    ToolOutcome,
)

if TYPE_CHECKING:
    from ego_core.embedding import EmbedderFactory
    from ego_core.importing import ImportFormat
    from ego_core.kernel.context import PluginContext
    from ego_core.kernel.offerings import Prompt, Resource, ResourceTemplate

PROJECT = "ego"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

F = TypeVar("F", bound=Callable[..., Any])


class HookKind(StrEnum):
    """How the dispatcher calls a hook's implementations."""

    REGISTRATION = "registration"
    """Once per plugin at startup, with a ``register`` callback; a raising implementation fails its plugin's
    registration (recorded), the other plugins register."""
    LIFECYCLE = "lifecycle"
    """Per plugin, in dependency order (``on_startup``) or its reverse (``on_shutdown``); the host decides."""
    NOTIFICATION = "notification"
    """Every implementation, isolated; non-``None`` results (response lines) are collected."""
    COLLECTOR = "collector"
    """Every implementation, isolated; the non-``None`` results are merged by the caller."""
    FIRST_RESULT = "first_result"
    """Implementations in order until one answers non-``None``; a raising one is skipped."""
    PORTABLE = "portable"
    """Per plugin, not isolated: ``ego export``/``ego import`` must fail loudly, never half-way silently."""


def spec(kind: HookKind, *, firstresult: bool = False) -> Callable[[F], F]:
    """A hook specification of the given calling kind."""

    def mark(function: F) -> F:
        function.ego_hook_kind = kind  # type: ignore[attr-defined]
        return hookspec(firstresult=firstresult)(function)

    return mark


class RegistrationSpecs:
    """Called once when a host starts, per plugin, with a ``register`` callback."""

    @spec(HookKind.REGISTRATION)
    def register_tools(self, register: Callable[[Tool], None], ctx: PluginContext) -> None:
        """Registration: contribute MCP tools by calling ``register(Tool(...))``.

        A tool name claimed by two plugins is a startup error naming both.
        """

    @spec(HookKind.REGISTRATION)
    def register_redactors(self, register: Callable[[Redactor], None], ctx: PluginContext) -> None:
        """Registration: contribute redaction rules (``register(Redactor(name, fn, order))``).

        Every log record, workspace file, gateway payload and public export passes through the rules in
        ascending ``order``. A rule that raises makes the whole text withheld (fail closed).
        """

    @spec(HookKind.REGISTRATION)
    def register_embedders(self, register: Callable[[str, EmbedderFactory], None], ctx: PluginContext) -> None:
        """Registration: contribute embedding providers by name (``register("onnx", factory)``)."""

    @spec(HookKind.REGISTRATION)
    def register_commands(self, register: Callable[[Command], None], ctx: PluginContext) -> None:
        """Registration: contribute CLI commands (``ego <group> <name>``)."""

    @spec(HookKind.REGISTRATION)
    def register_prompts(self, register: Callable[[Prompt], None], ctx: PluginContext) -> None:
        """Registration: contribute MCP prompts (``register(Prompt(name, description, render, arguments))``).

        A prompt name another plugin registered first is refused (a registration failure); the first is kept.
        """

    @spec(HookKind.REGISTRATION)
    def register_resources(self, register: Callable[[Resource | ResourceTemplate], None], ctx: PluginContext) -> None:
        """Registration: contribute read-only MCP resources (``register(Resource(uri, ...))``) and resource
        templates (``register(ResourceTemplate("ego://episodes/{episode_id}", ...))``).

        Their text passes through the redaction pipeline before it is sent. A URI (template) another plugin
        registered first is refused (a registration failure); the first is kept.
        """

    @spec(HookKind.REGISTRATION)
    def register_import_formats(self, register: Callable[[ImportFormat], None], ctx: PluginContext) -> None:
        """Registration: contribute readers for ``ego import --from NAME PATH`` (``register(ImportFormat(name,
        description, read))``). Several plugins may contribute to one format, each reading its own part; ``read``
        returns records per plugin id in that plugin's export-record schema, with ids derived from the source.
        """


class LifecycleSpecs:
    @spec(HookKind.LIFECYCLE)
    def on_startup(self, ctx: PluginContext) -> None:
        """Lifecycle: open resources and provide services (``ctx.services.provide``).

        Plugins start in dependency order. A plugin whose ``on_startup`` raises is marked failed and its
        tools are withdrawn.
        """

    @spec(HookKind.LIFECYCLE)
    def on_shutdown(self, ctx: PluginContext) -> None:
        """Lifecycle: close resources. Called in reverse start order."""

    @spec(HookKind.COLLECTOR)
    def doctor_checks(self, ctx: PluginContext) -> Sequence[Check] | None:
        """Collector: health checks shown by ``ego doctor`` (store integrity, model, ...)."""


class MemorySpecs:
    @spec(HookKind.FIRST_RESULT, firstresult=True)
    def before_remember(self, draft: RememberDraft, ctx: PluginContext) -> Response | None:
        """First result: veto a store by returning the response to give instead (the duplicate guard).

        Return ``None`` to let the memory be stored. The first non-``None`` answer wins; an implementation
        that raises is skipped.
        """

    @spec(HookKind.NOTIFICATION)
    def on_remember(
        self, memory: Memory, together: Sequence[str], ctx: PluginContext
    ) -> Sequence[str | Section] | None:
        """Notification after a memory is committed; may return extra response lines (a resurfaced question), or
        Sections whose text is added as lines and whose claims the answer keeps (a reunion). ``together``: who
        shared the moment, as the agent said (remember's ``with``; empty when it did not say)."""

    @spec(HookKind.COLLECTOR)
    def on_recall_result(
        self, query: RecallQuery, results: Sequence[RecallHit], ctx: PluginContext
    ) -> RecallNote | None:
        """Collector: annotate (extra lines) or re-rank (score boosts) recall results."""

    @spec(HookKind.NOTIFICATION)
    def on_forget(self, memory: Memory, ctx: PluginContext) -> Sequence[str] | None:
        """Notification after a memory was deleted: remove every trace of it that your plugin keeps; may return
        extra response lines (a removal that could not be completed yet)."""

    @spec(HookKind.NOTIFICATION)
    def on_memory_revised(self, before: Memory, after: Memory, ctx: PluginContext) -> Sequence[str] | None:
        """Notification after a memory's importance, tags or privacy changed (its text never changes): keep what
        your plugin derived from it in step; a memory that became private must leave every copy of its text
        you keep. May return extra response lines (a copy that could not be removed yet)."""

    @spec(HookKind.COLLECTOR)
    def on_consolidate(self, run: ConsolidationRun, ctx: PluginContext) -> Section | None:
        """Collector: work and report lines during ``consolidate`` (merge candidates, ...)."""

    @spec(HookKind.NOTIFICATION)
    def on_memory_surfaced(self, memory: Memory, how: SurfacedHow, ctx: PluginContext) -> None:
        """Notification that a memory came back unbidden (``how``: ``"involuntary"`` or ``"echo"``), fired by the
        plugin that surfaced it; the desires plugin turns it into a passing impulse."""


class PortableSpecs:
    """``ego export`` / ``ego import``: each plugin's state as JSON-able records in one JSON Lines file."""

    @spec(HookKind.PORTABLE)
    def export_records(self, include_private: bool, ctx: PluginContext) -> Iterable[Mapping[str, Any]] | None:
        """Collector: this plugin's state as records (mappings with a ``"type"`` key), in a stable order.

        With ``include_private=False`` (the default export) leave private data out entirely; the core also
        passes every record of such an export through the redaction pipeline.
        """

    @spec(HookKind.PORTABLE)
    def check_records(self, records: Sequence[Mapping[str, Any]], ctx: PluginContext) -> Sequence[str] | None:
        """Collector: problems with the records an import would give this plugin (nothing is written).

        Return human-readable problems; any problem from any plugin makes the import refuse the whole file.
        """

    @spec(HookKind.PORTABLE)
    def import_records(self, records: Sequence[Mapping[str, Any]], ctx: PluginContext) -> int | None:
        """Restore this plugin's records from an export; idempotent. Returns how many were new.

        Called only after every plugin's ``check_records`` found no problem.
        """


class ComposeSpecs:
    @spec(HookKind.COLLECTOR)
    def on_wake_up(self, ctx: PluginContext) -> Section | None:
        """Collector: a section for the session-start response (``wake_up``)."""

    @spec(HookKind.COLLECTOR)
    def ember_candidates(self, ctx: PluginContext) -> Sequence[Ember] | None:
        """Collector: fragments that still smoulder; ``wake_up`` shows the two warmest of all plugins' under
        ``Embers:``."""

    @spec(HookKind.COLLECTOR)
    def on_introspect(self, ctx: PluginContext) -> Section | None:
        """Collector: a section for ``introspect``."""

    @spec(HookKind.COLLECTOR)
    def on_attune(self, person: str | None, ctx: PluginContext) -> Section | None:
        """Collector: a section for the heartbeat check-in (``attune``); ``person`` is whom the agent attunes
        toward, or None for the companion."""

    @spec(HookKind.COLLECTOR)
    def on_prompt(self, prompt: str, arguments: Mapping[str, str], ctx: PluginContext) -> Section | None:
        """Collector: lines for a prompt composed from the plugins (the core's ``wake-up`` and ``heartbeat``);
        ``arguments`` are the prompt's arguments as the client gave them (checked and trimmed)."""

    @spec(HookKind.COLLECTOR)
    def complete_values(self, kind: str, prefix: str, ctx: PluginContext) -> Sequence[str] | None:
        """Collector: values of a ``kind`` you know (``"person"``, ``"desire"``, ``"episode"``) that start with
        ``prefix``, for ``completion/complete`` on prompt arguments and resource-template variables."""

    @spec(HookKind.COLLECTOR)
    def scaffold_for(self, tool: str, context: ScaffoldContext, ctx: PluginContext) -> Sequence[ScaffoldItem] | None:
        """Collector: scaffold lines appended to a tool's response (e.g. the private-memory hint)."""

    @spec(HookKind.NOTIFICATION)
    def on_tool_called(self, tool: str, args: Mapping[str, Any], result: ToolOutcome, ctx: PluginContext) -> None:
        """Notification after every tool call (implicit desire satisfaction and similar reactions)."""


ALL_SPECS: tuple[type, ...] = (RegistrationSpecs, LifecycleSpecs, MemorySpecs, PortableSpecs, ComposeSpecs)


def _hooks_of(spec_class: type) -> list[str]:
    return [name for name in vars(spec_class) if not name.startswith("_")]


def hook_names() -> list[str]:
    return [name for spec_class in ALL_SPECS for name in _hooks_of(spec_class)]


def setup_hooks() -> frozenset[str]:
    """Hooks that run while a process starts, stops, is checked or moves its data (registration, lifecycle,
    ``doctor_checks``, export and import): their time is expected work, such as opening a store or loading a
    model, never an agent waiting on a tool."""
    portable = [name for name, kind in hook_kinds().items() if kind is HookKind.PORTABLE]
    return frozenset([*_hooks_of(RegistrationSpecs), *_hooks_of(LifecycleSpecs), *portable])


def hook_kinds() -> dict[str, HookKind]:
    """Every hook's calling kind, by name."""
    return {name: getattr(spec_class, name).ego_hook_kind for spec_class in ALL_SPECS for name in _hooks_of(spec_class)}
