"""The one path through which every hook implementation is called.

:class:`Dispatcher` calls implementations in pluggy's order (``tryfirst`` … ``trylast``), passes each only the
arguments it names (``ctx`` is its own plugin's context), isolates it according to the hook's kind (declared on
its spec, see :class:`~ego_core.kernel.markers.HookKind`), refuses awaitables, and traces every call when
``trace_hooks`` is on. :class:`HookCaller` (``ctx.hooks``) and :class:`HostHooks` (the host's own calls) give a
typed method per hook, so no call site names a hook as a string.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs
import pluggy

from ego_core.embedding import EmbedderFactory
from ego_core.importing import ImportFormat
from ego_core.kernel.logs import FILE_ONLY, log_event
from ego_core.kernel.markers import HookKind, is_setup, kind_of
from ego_core.kernel.status import FailureLog, FailureStage, describe_exception
from ego_core.offerings import Prompt, Resource, ResourceTemplate
from ego_core.types import (
    Check,
    Command,
    Ember,
    Redactor,
    ScaffoldContext,
    ScaffoldItem,
    Section,
    Tool,
    ToolOutcome,
)

_log = logging.getLogger("ego.hooks")
SLOW_HOOK_MS = 1000

_STAGE: dict[HookKind, FailureStage] = {
    HookKind.REGISTRATION: "register",
    HookKind.NOTIFICATION: "call",
    HookKind.COLLECTOR: "call",
    HookKind.FIRST_RESULT: "call",
}
"""Where a raising implementation is recorded; lifecycle outcomes are judged by the host, portable ones raise."""


class AwaitableResultError(TypeError):
    """An implementation returned an awaitable: it did not run (hooks are synchronous and never awaited)."""


@attrs.frozen
class Outcome:
    """What one implementation did: ``ok`` and its ``value``, or the ``error`` it raised."""

    plugin: str
    ok: bool
    value: Any = None
    error: BaseException | None = None


class Dispatcher:
    """Calls the implementations of one plugin manager's hooks.

    ``context_of(plugin_id)`` gives the plugin's context, or ``None`` when the plugin is not active (withdrawn or
    never started); such plugins are not called.
    """

    def __init__(
        self,
        pm: pluggy.PluginManager,
        context_of: Callable[[str], object | None],
        failures: FailureLog,
        *,
        trace: bool = False,
    ) -> None:
        self.pm = pm
        self.context_of = context_of
        self.failures = failures
        self.trace = trace
        self._argnames: dict[str, frozenset[str]] = {}

    # ------------------------------------------------------------------------------------------
    # Checks at the call site

    def _spec(self, hook: str) -> Callable[..., Any]:
        caller = getattr(self.pm.hook, hook, None)
        if caller is None or caller.spec is None:
            raise TypeError(f"{hook!r} is not an ego hook (no plugin loaded here publishes it)")
        function: Callable[..., Any] = caller.spec.function
        return function

    def kind(self, hook: str) -> HookKind:
        """The calling kind ``hook``'s specification declares."""
        return kind_of(self._spec(hook))

    def parameters(self, hook: str) -> frozenset[str]:
        """The arguments a call of ``hook`` must pass (the spec's parameters but ``ctx``)."""
        if hook not in self._argnames:
            self._spec(hook)
            self._argnames[hook] = frozenset(getattr(self.pm.hook, hook).spec.argnames) - {"ctx"}
        return self._argnames[hook]

    def _check_call(self, hook: str, kwargs: Mapping[str, Any]) -> None:
        expected = self.parameters(hook)
        if set(kwargs) != expected:
            missing = sorted(expected - set(kwargs))
            unexpected = sorted(set(kwargs) - expected)
            detail = "; ".join(
                part
                for part in (
                    f"missing {', '.join(missing)}" if missing else "",
                    f"unexpected {', '.join(unexpected)}" if unexpected else "",
                )
                if part
            )
            raise TypeError(f"hook {hook}() takes {', '.join(sorted(expected)) or 'no arguments'}: {detail}")

    # ------------------------------------------------------------------------------------------
    # Calls

    def implementers(self, hook: str) -> list[str]:
        """Active plugins implementing ``hook``, in call order."""
        return [impl.plugin_name for impl in self._impls(hook)]

    def _impls(self, hook: str) -> list[pluggy.HookImpl]:
        caller = getattr(self.pm.hook, hook)
        return [impl for impl in reversed(caller.get_hookimpls()) if self.context_of(impl.plugin_name) is not None]

    def fan_out(self, hook: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """Every implementation (or, for a first-result hook, up to the first answer): non-``None`` results."""
        kind = self.kind(hook)
        if kind not in (HookKind.NOTIFICATION, HookKind.COLLECTOR, HookKind.FIRST_RESULT):
            raise TypeError(f"hook {hook} is a {kind} hook; call it per plugin")
        self._check_call(hook, kwargs)
        results: list[tuple[str, Any]] = []
        for impl in self._impls(hook):
            outcome = self._invoke(impl, hook, kind, kwargs)
            if outcome.ok and outcome.value is not None:
                results.append((outcome.plugin, outcome.value))
                if kind is HookKind.FIRST_RESULT:
                    break
        return results

    def call_plugin(self, plugin_id: str, hook: str, **kwargs: Any) -> Outcome | None:
        """One plugin's implementation (``None`` when it has none or is not active).

        Registration failures are recorded; a lifecycle outcome is the caller's to judge; a portable hook's
        exception propagates.
        """
        kind = self.kind(hook)
        if kind not in (HookKind.REGISTRATION, HookKind.LIFECYCLE, HookKind.PORTABLE):
            raise TypeError(f"hook {hook} is a {kind} hook; call it for every plugin")
        self._check_call(hook, kwargs)
        for impl in self._impls(hook):
            if impl.plugin_name == plugin_id:
                return self._invoke(impl, hook, kind, kwargs)
        return None

    def fan_out_to(self, hook: str, contexts: Mapping[str, object], **kwargs: Any) -> list[tuple[str, Any]]:
        """``hook`` for the plugins in ``contexts`` only, each with the context given even when it is not active
        (``ego doctor`` asks the plugins withdrawn at startup why), isolated like any other call."""
        kind = self.kind(hook)
        self._check_call(hook, kwargs)
        impls = [impl for impl in reversed(getattr(self.pm.hook, hook).get_hookimpls()) if impl.plugin_name in contexts]
        outcomes = [self._invoke(impl, hook, kind, kwargs, contexts[impl.plugin_name]) for impl in impls]
        return [(outcome.plugin, outcome.value) for outcome in outcomes if outcome.ok and outcome.value is not None]

    def _invoke(
        self, impl: pluggy.HookImpl, hook: str, kind: HookKind, kwargs: Mapping[str, Any], context: object = None
    ) -> Outcome:
        plugin_id = impl.plugin_name
        available = {**kwargs, "ctx": context if context is not None else self.context_of(plugin_id)}
        args = [available[name] for name in impl.argnames]
        started = time.perf_counter()
        try:
            value = impl.function(*args)
        except Exception as exc:
            self._trace(hook, plugin_id, started, "raised")
            if kind is HookKind.PORTABLE:
                raise
            if kind is HookKind.LIFECYCLE:
                return Outcome(plugin_id, ok=False, error=exc)
            _log.error("plugin %s raised in %s", plugin_id, hook, exc_info=True, extra={FILE_ONLY: True})
            reason = f"raised {describe_exception(exc)}"
            if kind is HookKind.REGISTRATION:
                reason = f"{hook} {reason}"
            self.failures.record(plugin_id, _STAGE[kind], reason, hook)
            return Outcome(plugin_id, ok=False, error=exc)
        elapsed_ms = (time.perf_counter() - started) * 1000
        if inspect.isawaitable(value):
            if inspect.iscoroutine(value):
                value.close()  # never awaited: close it so Python does not warn about it later
            self._trace(hook, plugin_id, started, "awaitable")
            problem = AwaitableResultError(f"{hook} returned an awaitable; hooks are synchronous and are never awaited")
            if kind in _STAGE:
                self.failures.record(plugin_id, _STAGE[kind], str(problem), hook)
            return Outcome(plugin_id, ok=False, error=problem)
        if elapsed_ms > SLOW_HOOK_MS:
            level = logging.INFO if is_setup(self._spec(hook)) else logging.WARNING
            log_event(_log, "slow_hook", level, plugin=plugin_id, hook=hook, ms=round(elapsed_ms))
        self._trace(hook, plugin_id, started, "ok" if value is not None else "none")
        return Outcome(plugin_id, ok=True, value=value)

    def _trace(self, hook: str, plugin_id: str, started: float, outcome: str) -> None:
        if self.trace:
            duration = round((time.perf_counter() - started) * 1000, 3)
            log_event(_log, "hook_call", hook=hook, plugin=plugin_id, duration_ms=duration, outcome=outcome)


SectionResult = Section | str | Sequence[Section | str]


class HookCaller:
    """``ctx.hooks``: the hooks a plugin may trigger, one typed method each (results as ``(plugin id, value)``)."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self._dispatch = dispatcher

    def call(self, hook: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """A hook by name, with its arguments by keyword: for the hooks a plugin publishes (``hookspecs``), which
        its ``api`` module wraps in typed methods. Results as for the typed methods."""
        return self._dispatch.fan_out(hook, **kwargs)

    def on_wake_up(self) -> list[tuple[str, SectionResult]]:
        return self._dispatch.fan_out("on_wake_up")

    def ember_candidates(self) -> list[tuple[str, Sequence[Ember]]]:
        return self._dispatch.fan_out("ember_candidates")

    def on_introspect(self) -> list[tuple[str, SectionResult]]:
        return self._dispatch.fan_out("on_introspect")

    def on_attune(self, *, person: str | None) -> list[tuple[str, SectionResult]]:
        return self._dispatch.fan_out("on_attune", person=person)

    def on_prompt(self, *, prompt: str, arguments: Mapping[str, str]) -> list[tuple[str, SectionResult]]:
        return self._dispatch.fan_out("on_prompt", prompt=prompt, arguments=arguments)

    def complete_values(self, *, kind: str, prefix: str) -> list[tuple[str, Sequence[str]]]:
        return self._dispatch.fan_out("complete_values", kind=kind, prefix=prefix)

    def scaffold_for(self, *, tool: str, context: ScaffoldContext) -> list[tuple[str, Sequence[ScaffoldItem]]]:
        return self._dispatch.fan_out("scaffold_for", tool=tool, context=context)

    def on_tool_called(self, *, tool: str, args: Mapping[str, Any], result: ToolOutcome) -> None:
        self._dispatch.fan_out("on_tool_called", tool=tool, args=args, result=result)

    def doctor_checks(self) -> list[tuple[str, Check | Sequence[Check]]]:
        return self._dispatch.fan_out("doctor_checks")


class HostHooks(HookCaller):
    """The host's own calls: registration, lifecycle and export/import, each for one plugin."""

    def implementers(self, hook: str) -> list[str]:
        return self._dispatch.implementers(hook)

    def register_tools(self, plugin_id: str, *, register: Callable[[Tool], None]) -> Outcome | None:
        return self._dispatch.call_plugin(plugin_id, "register_tools", register=register)

    def register_redactors(self, plugin_id: str, *, register: Callable[[Redactor], None]) -> Outcome | None:
        return self._dispatch.call_plugin(plugin_id, "register_redactors", register=register)

    def register_embedders(self, plugin_id: str, *, register: Callable[[str, EmbedderFactory], None]) -> Outcome | None:
        return self._dispatch.call_plugin(plugin_id, "register_embedders", register=register)

    def register_commands(self, plugin_id: str, *, register: Callable[[Command], None]) -> Outcome | None:
        return self._dispatch.call_plugin(plugin_id, "register_commands", register=register)

    def register_prompts(self, plugin_id: str, *, register: Callable[[Prompt], None]) -> Outcome | None:
        return self._dispatch.call_plugin(plugin_id, "register_prompts", register=register)

    def register_resources(
        self, plugin_id: str, *, register: Callable[[Resource | ResourceTemplate], None]
    ) -> Outcome | None:
        return self._dispatch.call_plugin(plugin_id, "register_resources", register=register)

    def register_import_formats(self, plugin_id: str, *, register: Callable[[ImportFormat], None]) -> Outcome | None:
        return self._dispatch.call_plugin(plugin_id, "register_import_formats", register=register)

    def on_startup(self, plugin_id: str) -> Outcome | None:
        return self._dispatch.call_plugin(plugin_id, "on_startup")

    def on_shutdown(self, plugin_id: str) -> Outcome | None:
        return self._dispatch.call_plugin(plugin_id, "on_shutdown")

    def export_records(self, plugin_id: str, *, include_private: bool) -> Iterable[Mapping[str, Any]] | None:
        outcome = self._dispatch.call_plugin(plugin_id, "export_records", include_private=include_private)
        return outcome.value if outcome is not None else None

    def check_records(self, plugin_id: str, *, records: Sequence[Mapping[str, Any]]) -> Sequence[str] | None:
        outcome = self._dispatch.call_plugin(plugin_id, "check_records", records=records)
        return outcome.value if outcome is not None else None

    def import_records(self, plugin_id: str, *, records: Sequence[Mapping[str, Any]]) -> int | None:
        outcome = self._dispatch.call_plugin(plugin_id, "import_records", records=records)
        return outcome.value if outcome is not None else None
