"""The plugin host: one ``pluggy.PluginManager`` and what the core knows about its plugins.

It composes the pieces of the kernel that each do one job: discovery and selection (:mod:`.discovery`), the
dispatcher (:mod:`.dispatch`), the registries (:mod:`.registries`), plugin contexts and services
(:mod:`.context`) and the failure record (:mod:`.status`). Hosts are built by
:func:`ego_core.build_host`, never as a module-level singleton, so tests build any combination in-process.
"""

from __future__ import annotations

import importlib.metadata as importlib_metadata
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

import pluggy

from ego_core.embedding import Embedder, EmbedderSettings
from ego_core.kernel import hookspecs, markers
from ego_core.kernel.config import ConfigError, Settings, structure_plugin_config
from ego_core.kernel.context import Clock, PluginContext, Services, SessionMarker
from ego_core.kernel.discovery import (
    SelectionError,
    choose,
    dependency_order,
    find_installed,
    id_taken,
    load,
    unmet,
)
from ego_core.kernel.dispatch import AwaitableResultError, Dispatcher, HostHooks
from ego_core.kernel.hookcheck import refused_implementations, unknown_hooks
from ego_core.kernel.logs import FILE_ONLY, install_pipeline
from ego_core.kernel.plugin import PluginDeclarationError, PluginMetadata
from ego_core.kernel.redaction import RedactionPipeline, secret_redactor
from ego_core.kernel.registries import Offerings, Registries
from ego_core.kernel.status import (
    CORE_PLUGIN_ID,
    FailureLog,
    FailureStage,
    InstalledPlugin,
    PluginFailure,
    PluginStatus,
    describe_exception,
    plugin_status,
)
from ego_core.types import Command, Tool

_log = logging.getLogger("ego.host")
TIER_ORDER = {"surface": 0, "backend": 1, "owner": 2}


class PluginHost:
    """Holds one ``pluggy.PluginManager`` and everything the core knows about plugins."""

    def __init__(self, settings: Settings, *, clock: Clock | None = None) -> None:
        self.settings = settings
        self.clock = clock or Clock()
        self.pm = pluggy.PluginManager(markers.PROJECT)
        for specs in hookspecs.ALL_SPECS:
            self.pm.add_hookspecs(specs)
        self.services = Services()
        self.session = SessionMarker(settings.data_dir.expanduser() / CORE_PLUGIN_ID / "session.json")
        """When sessions began (the core's ``wake_up`` records them)."""
        self.redaction = RedactionPipeline([secret_redactor()])
        self.failure_log = FailureLog(self.redact)
        self.dispatcher = Dispatcher(self.pm, self._active_context, self.failure_log, trace=settings.trace_hooks)
        self.hooks = HostHooks(self.dispatcher)
        self.registries = Registries(self.hooks, self.failure_log)
        self.offerings = Offerings(self.hooks, self.failure_log)
        self.installed: dict[str, InstalledPlugin] = {}
        self.requested: list[str] = []
        self._contexts: dict[str, PluginContext] = {}
        self._metadata: dict[str, PluginMetadata] = {}
        self._withdrawn: set[str] = set()
        self._order: list[str] = []
        self._started = 0
        self._start_lock = threading.Lock()
        self.recipe: Callable[[Settings], PluginHost] | None = None
        """How this host was built (the plugin selection), to build another like it (:meth:`sibling`)."""

    def sibling(self, settings: Settings) -> PluginHost:
        """A new host serving the same plugins (fresh instances) on other settings: another agent's space."""
        if self.recipe is None:
            raise RuntimeError("this host was not built by build_host; it cannot build a sibling")
        return self.recipe(settings)

    @property
    def failures(self) -> list[PluginFailure]:
        return self.failure_log.items

    def redact(self, text: str) -> str:
        return self.redaction(text)

    # ---------------------------------------------------------------------------------------------
    # Adding plugins

    def add_plugin(self, plugin_id: str, obj: object, *, essential: bool = False) -> bool:
        """Register one plugin object (a module, a class or an instance); record a failure instead of raising."""
        if isinstance(obj, type):
            cls = obj
            try:
                obj = cls()
            except Exception as exc:
                self._fail(plugin_id, "load", f"constructing {cls.__name__} raised {describe_exception(exc)}")
                return False
        try:
            metadata = PluginMetadata.of(obj)
        except PluginDeclarationError as exc:
            if essential:
                raise
            self._fail(plugin_id, "register", str(exc))
            return False
        taken = id_taken(self.pm, self.installed, plugin_id, obj)
        if taken:  # only code that adds plugin objects itself gets here (discovery keeps one plugin per id)
            raise ValueError(taken)
        self._metadata[plugin_id] = metadata
        try:
            for specs in metadata.hookspecs:
                self.pm.add_hookspecs(specs)
            self.pm.register(obj, name=plugin_id)
        except (pluggy.PluginValidationError, ValueError) as exc:
            if essential:
                raise
            self._fail(plugin_id, "register", "; ".join(line.strip() for line in str(exc).splitlines() if line.strip()))
            return False
        problems = refused_implementations(self.pm, obj)
        if problems:
            self.pm.unregister(obj)
            problem = "; ".join(problems)
            if essential:
                raise RuntimeError(problem)
            self._fail(plugin_id, "validate", problem)  # each problem names its hook
            return False
        try:
            config = self._plugin_config(plugin_id, metadata)
        except ConfigError:
            self.pm.unregister(obj)
            raise
        self._contexts[plugin_id] = PluginContext(
            plugin_id=plugin_id,
            config=config,
            log=logging.getLogger(f"ego.plugin.{plugin_id}"),
            settings=self.settings,
            clock=self.clock,
            services=self.services,
            hooks=self.hooks,
            host=self,
        )
        return True

    def _plugin_config(self, plugin_id: str, metadata: PluginMetadata) -> Any:
        table = self.settings.plugin_tables.get(plugin_id, {})
        if metadata.config_class is None:
            return dict(table)
        return structure_plugin_config(plugin_id, metadata.config_class, table, metadata.config_env)

    def discover(
        self,
        *,
        enabled: Sequence[str] | None,
        disabled: Sequence[str] = (),
        entry_points: Iterable[importlib_metadata.EntryPoint] | None = None,
        given: Iterable[str] = (),
    ) -> None:
        """Load the selected plugins from the ``ego`` entry-point group; the ids in ``given`` (plugin objects the
        caller adds itself, such as a test's) are not loaded from their entry points: the given object replaces
        the installed one."""
        installed = find_installed(entry_points)
        for plugin_id, reason in installed.clashes:
            self._fail(plugin_id, "duplicate", reason)
        self.installed.update(installed.plugins)
        replaced = set(given)
        chosen = [
            name
            for name in choose(sorted({*installed.entry_points, *replaced}), enabled, disabled, always=CORE_PLUGIN_ID)
            if name not in replaced
        ]
        self.requested = [name for name in enabled or [] if name != CORE_PLUGIN_ID] if enabled is not None else []
        for name in chosen:
            obj, problem = load(installed.entry_points[name])
            if obj is None:
                self._fail(name, "load", problem)
                continue
            self.add_plugin(name, obj)
        if not replaced:  # otherwise the caller resolves them once it added the given plugins
            self.resolve_dependencies()

    def resolve_dependencies(self) -> None:
        """Once every plugin is added (and has published its hooks): drop plugins that implement an unknown hook
        and plugins whose declared ``requires`` are not active; explicit requests fail loudly."""
        for plugin_id in self.plugin_ids():
            problems = unknown_hooks(self.pm, self.pm.get_plugin(plugin_id))
            if problems and plugin_id == CORE_PLUGIN_ID:
                raise RuntimeError("; ".join(problems))
            if problems:
                self.pm.unregister(self.pm.get_plugin(plugin_id))
                self._contexts.pop(plugin_id, None)
                self._fail(plugin_id, "validate", "; ".join(problems))
        while missing_by_plugin := unmet({p: self._metadata[p].requires for p in self.plugin_ids()}, self.plugin_ids()):
            for plugin_id, missing in missing_by_plugin.items():
                need = ", ".join(missing)
                if plugin_id in self.requested:
                    suggestion = ",".join(dict.fromkeys([*missing, *self.requested]))
                    raise SelectionError(
                        f"plugin {plugin_id!r} requires {need}, which is not enabled; "
                        f"enable both, e.g. --plugins {suggestion}"
                    )
                self.pm.unregister(self.pm.get_plugin(plugin_id))
                self._contexts.pop(plugin_id, None)
                self._fail(plugin_id, "dependency", f"requires plugin(s) {need}, which are not enabled or failed")

    def orphan_config_tables(self) -> list[str]:
        """Ids of ``[plugins.<id>]`` tables that no installed plugin reads (a typo, or an uninstalled plugin)."""
        known = {*self.installed, *self._contexts}
        return sorted(table for table in self.settings.plugin_tables if table not in known)

    def _fail(
        self, plugin: str, stage: FailureStage, reason: str, hook: str | None = None, level: int = logging.WARNING
    ) -> None:
        self.failure_log.record(plugin, stage, reason, hook, level)

    # ---------------------------------------------------------------------------------------------
    # Registrations and lifecycle

    def prepare(self) -> None:
        """Collect registrations (redactors, embedders, tools, prompts, resources). Raises on conflicting tool
        names."""
        ids = self.plugin_ids()
        self.redaction = RedactionPipeline([secret_redactor(), *self.registries.collect_redactors(ids)])
        install_pipeline(self.redaction)
        self.registries.collect_embedders(ids)
        self.registries.collect_tools(ids)
        self.offerings.collect(ids)

    def commands(self) -> list[tuple[str, Command]]:
        """Every active plugin's CLI commands (the core's first), as (plugin id, command)."""
        return self.registries.collect_commands(self.plugin_ids())

    def start(self) -> None:
        """Run ``on_startup`` in dependency order (idempotent; counted, so nested users share one start)."""
        with self._start_lock:
            self._started += 1
            if self._started > 1:
                return
            requires = {p: self._metadata[p].requires for p in self.plugin_ids()}
            self._order = dependency_order(self.plugin_ids(), requires)
            for plugin_id in self._order:
                self._start_one(plugin_id)

    def _start_one(self, plugin_id: str) -> None:
        missing = [d for d in self._metadata[plugin_id].requires if d in self._withdrawn]
        if missing:
            self._withdraw(plugin_id, "startup", f"required plugin(s) {', '.join(missing)} failed to start")
            return
        outcome = self.hooks.on_startup(plugin_id)
        if outcome is None or outcome.ok:
            return
        if isinstance(outcome.error, ConfigError):  # the user's configuration is wrong: a startup error
            self._withdrawn.add(plugin_id)
            self.services.withdraw(plugin_id)
            # recorded in the JSON log; the command itself reports it on stderr
            self._fail(plugin_id, "startup", f"invalid configuration: {outcome.error}", level=logging.INFO)
            raise outcome.error
        if isinstance(outcome.error, AwaitableResultError):
            self._withdraw(plugin_id, "startup", "on_startup returned an awaitable; hooks are never awaited")
            return
        _log.error("plugin %s failed to start", plugin_id, exc_info=outcome.error, extra={FILE_ONLY: True})
        self._withdraw(plugin_id, "startup", f"on_startup raised {describe_exception(outcome.error or Exception())}")

    def _withdraw(self, plugin_id: str, stage: FailureStage, reason: str) -> None:
        self._withdrawn.add(plugin_id)
        self.services.withdraw(plugin_id)
        self._fail(plugin_id, stage, reason)

    def stop(self) -> None:
        with self._start_lock:
            if self._started == 0:
                return
            self._started -= 1
            if self._started > 0:
                return
            for plugin_id in reversed(self._order):
                outcome = self.hooks.on_shutdown(plugin_id)
                if outcome is None or outcome.ok:
                    continue
                if isinstance(outcome.error, AwaitableResultError):
                    reason = "on_shutdown returned an awaitable; hooks are synchronous and are never awaited"
                else:
                    _log.error(
                        "plugin %s failed to shut down", plugin_id, exc_info=outcome.error, extra={FILE_ONLY: True}
                    )
                    reason = f"on_shutdown raised {describe_exception(outcome.error or Exception())}"
                self._fail(plugin_id, "call", reason, "on_shutdown")
            self.services.clear()

    @property
    def started(self) -> bool:
        return self._started > 0

    # ---------------------------------------------------------------------------------------------
    # Queries

    def plugin_ids(self) -> list[str]:
        """Registered plugins (not dropped for a failed load or dependency), core first."""
        names = [name for name, _ in self.pm.list_name_plugin() if name in self._contexts]
        return sorted(names, key=lambda n: (n != CORE_PLUGIN_ID, n))

    def _active_context(self, plugin_id: str) -> PluginContext | None:
        return None if plugin_id in self._withdrawn else self._contexts.get(plugin_id)

    def context(self, plugin_id: str) -> PluginContext:
        return self._contexts[plugin_id]

    def plugin(self, plugin_id: str) -> object | None:
        """The registered plugin object (an instance or a module)."""
        return self.pm.get_plugin(plugin_id)

    def is_active(self, plugin_id: str) -> bool:
        return self._active_context(plugin_id) is not None

    def previous_session(self) -> datetime | None:
        return self.session.previous()

    def unavailable_plugins(self) -> list[str]:
        return sorted(self.unavailable_stages())

    def unavailable_stages(self) -> dict[str, FailureStage]:
        """Selected plugins that are not working, with the stage that failed: ``load``, ``validate``,
        ``register`` (refused, or none of its tools served) or ``startup``."""
        return {
            plugin: stage
            for plugin, stage in sorted(self.failure_log.unavailable().items())
            if stage == "register" or not self.is_active(plugin)
        }

    def begin_session(self, now: datetime) -> datetime | None:
        """A session starts (the core's ``wake_up``): record it; returns when the previous one began."""
        return self.session.begin(now)

    def withdrawn_doctor_checks(self) -> list[tuple[str, Any]]:
        """``doctor_checks`` of the plugins withdrawn at startup, each with its own context: theirs say why."""
        withdrawn = {p: self._contexts[p] for p in sorted(self._withdrawn) if p in self._contexts}
        return self.dispatcher.fan_out_to("doctor_checks", withdrawn)

    def tools(self, *, owner: bool = False) -> list[tuple[str, Tool]]:
        """Served tools as (plugin id, tool): surface tools first, then backend, each by name; ``owner`` adds
        the tools only the owner's surfaces run (tier ``"owner"``), last."""
        served = [
            (p, t) for p, t in self.registries.tools.values() if self._serves(p, t) and (owner or t.tier != "owner")
        ]
        return sorted(served, key=lambda pt: (TIER_ORDER[pt[1].tier], pt[1].name))

    def _serves(self, plugin_id: str, tool: Tool) -> bool:
        """A tool is served while its plugin is, and every plugin it ``needs`` is active."""
        return plugin_id not in self._withdrawn and all(self.is_active(need) for need in tool.needs)

    def tool(self, name: str, *, owner: bool = False) -> tuple[str, Tool] | None:
        item = self.registries.tools.get(name)
        if item is None or not self._serves(*item) or (item[1].tier == "owner" and not owner):
            return None
        return item

    def tool_served(self, name: str, *, owner: bool = False) -> bool:
        """Whether an agent can call ``name`` (with ``owner``: whether the owner's surfaces can)."""
        return self.tool(name, owner=owner) is not None

    def embedder_names(self) -> list[str]:
        return self.registries.embedder_names()

    def make_embedder(self, name: str, settings: EmbedderSettings) -> Embedder:
        return self.registries.make_embedder(name, settings)

    def statuses(self) -> list[PluginStatus]:
        """Every installed plugin with its state, for ``ego plugins``."""
        ids = sorted({*self.installed, *self._contexts, *self.failure_log.reasons_by_plugin()})
        return [
            plugin_status(
                plugin_id,
                self.pm.get_plugin(plugin_id),
                self.installed.get(plugin_id),
                self.failure_log.reasons_by_plugin().get(plugin_id, []),
                active=self.is_active(plugin_id),
                hooks=[caller.name for caller in self.pm.get_hookcallers(self.pm.get_plugin(plugin_id)) or []],
                requires=self._metadata[plugin_id].requires if plugin_id in self._metadata else (),
            )
            for plugin_id in ids
        ]
