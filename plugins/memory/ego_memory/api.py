"""The memory plugin's contract: the hooks it publishes (:class:`MemorySpecs`) and their typed calls
(:class:`MemoryHooks`). The store other plugins read is the core's ``MEMORY_STORE``/``MemoryService``, since every
plugin may read memories whether or not this plugin's stack is installed. Imports only ``ego_core``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ego_core import (
    ConsolidationRun,
    HookKind,
    Memory,
    PluginContext,
    RecallHit,
    RecallNote,
    RecallQuery,
    RememberDraft,
    Response,
    Section,
    SurfacedHow,
    spec,
)

SectionResult = Section | str | Sequence[Section | str]


class MemorySpecs:
    """The hooks the memory plugin publishes (its ``hookspecs``) and fires around each memory it keeps. Another
    plugin implements them with ``@hookimpl(optionalhook=True)``: without the memory plugin they are never fired."""

    @spec(HookKind.FIRST_RESULT, firstresult=True)
    def before_remember(self, draft: RememberDraft, ctx: PluginContext) -> Response | None:
        """Veto a store by returning the response to give instead (the duplicate guard).

        When: fired by the memory plugin's ``remember``, after the arguments are validated and normalised and before
        anything is embedded or stored.

        Arguments:
        - ``draft``: the memory about to be stored: ``content``, ``emotion``, ``secondary``, ``intensity``,
          ``valence``, ``arousal``, ``importance``, ``category``, ``tags``, ``is_private``, ``force`` and
          ``body_state``.

        Returns: ``None`` lets the memory be stored. A ``Response`` vetoes the store: nothing is stored,
        ``on_remember`` is not fired, and the agent gets your response instead (as a normal result, not an error). If
        ``draft.force`` is true, the agent asked to bypass the duplicate guard, and a guard returns ``None``.

        Isolation: the first non-``None`` answer wins, and later implementations are not called. One that raises is
        skipped, so a broken guard lets the memory through and never blocks it. Never put a private draft's content
        in your response or your logs.
        """

    @spec(HookKind.NOTIFICATION)
    def on_remember(
        self, memory: Memory, together: Sequence[str], ctx: PluginContext
    ) -> Sequence[str | Section] | None:
        """Notification after a memory is committed; may add lines to ``remember``'s response.

        When: fired by the memory plugin after a memory is committed (stored and auto-linked); not for a store that
        ``before_remember`` vetoed.

        Arguments:
        - ``memory``: the stored memory, including ``id``, UTC ``timestamp``, ``emotional_trace``, ``links`` and
          ``is_private``.
        - ``together``: who shared the moment, as the agent said in remember's ``with`` (names or aliases, as given);
          empty when it did not say. It is not stored with the memory: keep what you need of it.

        Returns: ``None``, or lines added to ``remember``'s response (a resurfaced question). An item may be a
        ``Section`` instead: its text is added as lines and its ``claims`` (``ego_core.Claim``: a reunion, say) join
        the answer's.

        Isolation: every implementation runs; one that raises is logged, and the memory stays stored. If
        ``memory.is_private``, copy its ``content`` nowhere outside your own store.
        """

    @spec(HookKind.COLLECTOR)
    def on_recall_result(
        self, query: RecallQuery, results: Sequence[RecallHit], ctx: PluginContext
    ) -> RecallNote | None:
        """Annotate (extra lines) or re-rank (score boosts) recall results.

        When: fired by the memory plugin's ``recall`` and ``search_memories``, after the search and before the
        response is rendered.

        Arguments:
        - ``query``: ``context``, ``n_results``, ``emotion_filter``, ``category_filter``, ``date_from``, ``date_to``
          (aware datetimes), ``valence_range``, ``arousal_range``.
        - ``results``: best first. Each hit has a ``memory``, a ``score``, a ``relevance`` (0-1, or ``None``) and
          ``unbidden`` (``True`` for a dormant memory that came back on its own, not as a match). The hits may
          include private memories.

        Returns: ``None``, or ``RecallNote(lines=(...), boosts={memory_id: delta})``. The lines are added to the
        response; the boosts of all plugins are summed and added to the scores, and the results are sorted again.

        Isolation: every implementation sees the same, unboosted results; one that raises is skipped.
        """

    @spec(HookKind.NOTIFICATION)
    def on_forget(self, memory: Memory, ctx: PluginContext) -> Sequence[str] | None:
        """Notification after a memory was deleted: remove every trace of it that your plugin keeps.

        When: fired by the memory plugin's ``forget``, after the memory is deleted from every index and its reverse
        links are removed.

        Arguments:
        - ``memory``: the memory as it was before deletion.

        Returns: ``None``, or lines added to ``forget``'s response: say so when a trace could not be removed yet (a
        file that was not writable), and when it will be.

        Isolation: every implementation runs; one that raises is logged.
        """

    @spec(HookKind.NOTIFICATION)
    def on_memory_revised(self, before: Memory, after: Memory, ctx: PluginContext) -> Sequence[str] | None:
        """Notification after a memory's importance, tags or privacy changed: keep what your plugin derived from it in
        step.

        When: fired by the memory plugin's ``revise_memory`` (an owner tool: the dashboard's corrections; offered to
        the agent with ``[plugins.memory] revise_tool = true``) once the change is committed. The text, the emotional
        trace and the links never change. Before the hook, the memory plugin masks the memory's sentences in the
        summaries of the episodes holding it.

        Arguments:
        - ``before``, ``after``: the memory as it was and as it is now (same id).

        Returns: ``None``, or lines added to the response: say so when a copy could not be removed yet.

        Isolation: every implementation runs; one that raises is logged. A memory that became private
        (``after.is_private and not before.is_private``) must leave every copy of its text your plugin keeps at rest
        (files, exports you wrote), and what you drew from its text or tags (a label, a summary) must be drawn again
        from what is public: the core's redaction masks its text in every later answer and log, but a short sentence
        drawn from it may get past it.
        """

    @spec(HookKind.COLLECTOR)
    def on_consolidate(self, run: ConsolidationRun, ctx: PluginContext) -> Section | None:
        """Work and report lines during ``consolidate`` (merge candidates, ...).

        When: fired by the memory plugin's ``consolidate``, after it has replayed the recent window.

        Arguments:
        - ``run``: ``since`` and ``until`` (aware UTC datetimes), and ``recent_ids`` (the ids of the memories in that
          window).

        Returns: a ``Section(key, text, order=100, scaffold=())`` for the consolidate response, or ``None``. Its
        scaffold lines are added to the response's; a ``ScaffoldLine`` with ``needs={"forget"}`` is shown only when
        ``forget`` is served.

        Isolation: one that raises is skipped. Keep the work bounded: look at ``recent_ids``, not the whole store.
        """

    @spec(HookKind.NOTIFICATION)
    def on_memory_surfaced(self, memory: Memory, how: SurfacedHow, ctx: PluginContext) -> None:
        """Notification that a memory came back unbidden; the desires plugin turns it into a passing impulse.

        When: fired by the plugin that surfaced it: the memory plugin, when ``recall`` or ``wake_up`` brings back a
        dormant memory nobody asked for (``how="involuntary"``; in ``wake_up`` only once its line is part of the
        answer, not when the budget left it out), or when ``remember`` echoes a dormant related memory
        (``how="echo"``). It runs in the worker thread of that tool call.

        Arguments:
        - ``memory``: the memory that surfaced, private ones included: never quote its content anywhere that leaves
          the process.
        - ``how``: ``"involuntary"`` or ``"echo"``.

        Isolation: one that raises is logged and skipped; the tool call still answers.
        """


class MemoryHooks:
    """The memory hooks as calls with typed arguments and results (``(plugin id, value)`` pairs), fired through
    the calling plugin's context: ``MemoryHooks(ctx).on_remember(memory=m, together=())``."""

    def __init__(self, ctx: PluginContext) -> None:
        self._hooks = ctx.hooks

    def before_remember(self, *, draft: RememberDraft) -> tuple[str, Response] | None:
        found = self._hooks.call("before_remember", draft=draft)
        return found[0] if found else None

    def on_remember(self, *, memory: Memory, together: Sequence[str] = ()) -> list[tuple[str, Sequence[str | Section]]]:
        return self._hooks.call("on_remember", memory=memory, together=tuple(together))

    def on_recall_result(self, *, query: RecallQuery, results: Sequence[RecallHit]) -> list[tuple[str, RecallNote]]:
        return self._hooks.call("on_recall_result", query=query, results=results)

    def on_forget(self, *, memory: Memory) -> list[tuple[str, Sequence[str]]]:
        return self._hooks.call("on_forget", memory=memory)

    def on_memory_revised(self, *, before: Memory, after: Memory) -> list[tuple[str, Sequence[str]]]:
        return self._hooks.call("on_memory_revised", before=before, after=after)

    def on_consolidate(self, *, run: ConsolidationRun) -> list[tuple[str, SectionResult]]:
        return self._hooks.call("on_consolidate", run=run)

    def on_memory_surfaced(self, *, memory: Memory, how: SurfacedHow) -> None:
        self._hooks.call("on_memory_surfaced", memory=memory, how=how)
