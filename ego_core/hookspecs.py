"""Hook specifications: the whole extension surface of ego.

Rules (also in docs/hooks.md):

- Hooks are called with keyword arguments; an implementation may accept any subset of the parameters.
- Every hook can take ``ctx``: the :class:`~ego_core.host.PluginContext` of the implementing plugin
  (its configuration, data directory, services, logger, clock and hook caller).
- Arguments are frozen attrs values. Return new values; never mutate what you were given.
- The core calls each implementation in isolation: an implementation that raises in a notification or
  collector hook is logged and recorded (``ego plugins`` shows it) and the others still run. Redaction is
  the exception: a redactor that raises fails closed.
- Do not use ``wrapper=True``/``hookwrapper=True`` implementations; the host refuses them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pluggy

from ego_core.types import (
    Check,
    Command,
    ConsolidationRun,
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
    Tool,
    ToolOutcome,
)

if TYPE_CHECKING:
    from ego_core.embedding import EmbedderFactory
    from ego_core.host import PluginContext

PROJECT = "ego"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class RegistrationSpecs:
    """Called once when a host starts, per plugin, with a ``register`` callback."""

    @hookspec
    def register_tools(self, register: Callable[[Tool], None], ctx: PluginContext) -> None:
        """Registration: contribute MCP tools by calling ``register(Tool(...))``.

        A tool name claimed by two plugins is a startup error naming both.
        """

    @hookspec
    def register_redactors(self, register: Callable[[Redactor], None], ctx: PluginContext) -> None:
        """Registration: contribute redaction rules (``register(Redactor(name, fn, order))``).

        Every log record, workspace file, gateway payload and public export passes through the rules in
        ascending ``order``. A rule that raises makes the whole text withheld (fail closed).
        """

    @hookspec
    def register_embedders(self, register: Callable[[str, EmbedderFactory], None], ctx: PluginContext) -> None:
        """Registration: contribute embedding providers by name (``register("onnx", factory)``)."""

    @hookspec
    def register_commands(self, register: Callable[[Command], None], ctx: PluginContext) -> None:
        """Registration: contribute CLI commands (``ego <group> <name>``)."""


class LifecycleSpecs:
    @hookspec
    def on_startup(self, ctx: PluginContext) -> None:
        """Lifecycle: open resources and provide services (``ctx.services.provide``).

        Plugins start in dependency order. A plugin whose ``on_startup`` raises is marked failed and its
        tools are withdrawn.
        """

    @hookspec
    def on_shutdown(self, ctx: PluginContext) -> None:
        """Lifecycle: close resources. Called in reverse start order."""

    @hookspec
    def doctor_checks(self, ctx: PluginContext) -> Sequence[Check] | None:
        """Collector: health checks shown by ``ego doctor`` (store integrity, model, ...)."""


class MemorySpecs:
    @hookspec(firstresult=True)
    def before_remember(self, draft: RememberDraft, ctx: PluginContext) -> Response | None:
        """First result: veto a store by returning the response to give instead (the duplicate guard).

        Return ``None`` to let the memory be stored. The first non-``None`` answer wins; an implementation
        that raises is skipped.
        """

    @hookspec
    def on_remember(self, memory: Memory, ctx: PluginContext) -> Sequence[str] | None:
        """Notification after a memory is committed; may return extra response lines (a resurfaced question)."""

    @hookspec
    def on_recall_result(
        self, query: RecallQuery, results: Sequence[RecallHit], ctx: PluginContext
    ) -> RecallNote | None:
        """Collector: annotate (extra lines) or re-rank (score boosts) recall results."""

    @hookspec
    def on_forget(self, memory: Memory, ctx: PluginContext) -> Sequence[str] | None:
        """Notification after a memory was deleted: remove every trace of it that your plugin keeps; may return
        extra response lines (a removal that could not be completed yet)."""

    @hookspec
    def on_consolidate(self, run: ConsolidationRun, ctx: PluginContext) -> Section | None:
        """Collector: work and report lines during ``consolidate`` (merge candidates, ...)."""


class PortableSpecs:
    """``ego export`` / ``ego import``: each plugin's state as JSON-able records in one JSON Lines file."""

    @hookspec
    def export_records(self, include_private: bool, ctx: PluginContext) -> Iterable[Mapping[str, Any]] | None:
        """Collector: this plugin's state as records (mappings with a ``"type"`` key), in a stable order.

        With ``include_private=False`` (the default export) leave private data out entirely; the core also
        passes every record of such an export through the redaction pipeline.
        """

    @hookspec
    def check_records(self, records: Sequence[Mapping[str, Any]], ctx: PluginContext) -> Sequence[str] | None:
        """Collector: problems with the records an import would give this plugin (nothing is written).

        Return human-readable problems; any problem from any plugin makes the import refuse the whole file.
        """

    @hookspec
    def import_records(self, records: Sequence[Mapping[str, Any]], ctx: PluginContext) -> int | None:
        """Restore this plugin's records from an export; idempotent. Returns how many were new.

        Called only after every plugin's ``check_records`` found no problem.
        """


class ComposeSpecs:
    @hookspec
    def on_wake_up(self, ctx: PluginContext) -> Section | None:
        """Collector: a section for the session-start response (``wake_up``)."""

    @hookspec
    def on_introspect(self, ctx: PluginContext) -> Section | None:
        """Collector: a section for ``introspect``."""

    @hookspec
    def scaffold_for(self, tool: str, context: ScaffoldContext, ctx: PluginContext) -> Sequence[ScaffoldItem] | None:
        """Collector: scaffold lines appended to a tool's response (e.g. the private-memory hint)."""

    @hookspec
    def on_tool_called(self, tool: str, args: Mapping[str, Any], result: ToolOutcome, ctx: PluginContext) -> None:
        """Notification after every tool call (implicit desire satisfaction and similar reactions)."""


ALL_SPECS: tuple[type, ...] = (RegistrationSpecs, LifecycleSpecs, MemorySpecs, PortableSpecs, ComposeSpecs)


def hook_names() -> list[str]:
    return [name for spec in ALL_SPECS for name in vars(spec) if not name.startswith("_")]
