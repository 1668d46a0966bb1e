"""The plugin host: discovery through entry points, selection, isolation, services and hook calls.

A host is built by :func:`build_host` (never a module-level singleton), so tests build any combination of
plugins in-process. The core calls plugins only through :class:`PluginHost`; nothing touches
``pm.hook.*`` directly, so every call is isolated per plugin.
"""

from __future__ import annotations

import importlib.metadata as importlib_metadata
import inspect
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

import attrs
import pluggy
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from ego_core import hookspecs
from ego_core.config import ConfigError, Settings, structure_plugin_config
from ego_core.embedding import Embedder, EmbedderFactory, EmbedderSettings, EmbeddingError
from ego_core.logs import install_pipeline, log_event
from ego_core.plugin import PluginDeclarationError, PluginMetadata
from ego_core.redaction import RedactionPipeline, secret_redactor
from ego_core.types import Command, Redactor, Tool

T = TypeVar("T")
ENTRY_POINT_GROUP = "ego"
CORE_PLUGIN_ID = "core"

FailureStage = Literal["load", "register", "validate", "dependency", "config", "startup", "call", "duplicate"]

_log = logging.getLogger("ego.host")
MAX_FAILURES_PER_HOOK = 10
"""Distinct failures kept per plugin and hook for ``ego plugins`` / ``ego doctor``, the newest (the log has
every one): a long-running server's record stays bounded."""


class SelectionError(ValueError):
    """The requested set of plugins cannot be served (unknown id, unmet dependency)."""


class ToolConflictError(RuntimeError):
    """Two plugins registered a tool with the same name."""


@attrs.frozen
class PluginFailure:
    plugin: str
    stage: FailureStage
    reason: str
    hook: str | None = None

    def describe(self) -> str:
        where = f"{self.stage}:{self.hook}" if self.hook else self.stage
        return f"{self.plugin} [{where}] {self.reason}"


@attrs.frozen
class InstalledPlugin:
    id: str
    entry_point: str
    distribution: str | None
    version: str | None


@attrs.frozen
class PluginStatus:
    id: str
    distribution: str | None
    version: str | None
    state: Literal["enabled", "disabled", "failed"]
    reason: str = ""
    hooks: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()


class Clock:
    """The host's notion of "now" (UTC). Benchmarks replace it with a simulated clock."""

    def __init__(self, fixed: datetime | None = None) -> None:
        self._fixed = fixed

    def now(self) -> datetime:
        return self._fixed if self._fixed is not None else datetime.now(UTC)

    def set(self, moment: datetime | None) -> None:
        if moment is not None and moment.tzinfo is None:
            raise ValueError("the clock needs a timezone-aware datetime")
        self._fixed = moment


class Services:
    """Named objects plugins provide to each other (``memory.store``, ``interoception.body``)."""

    def __init__(self) -> None:
        self._items: dict[str, tuple[str, object]] = {}
        self._lock = threading.Lock()

    def provide(self, name: str, obj: object, *, plugin: str) -> None:
        with self._lock:
            if name in self._items and self._items[name][0] != plugin:
                raise RuntimeError(f"service {name!r} is already provided by plugin {self._items[name][0]!r}")
            self._items[name] = (plugin, obj)

    def withdraw(self, plugin: str) -> None:
        with self._lock:
            self._items = {k: v for k, v in self._items.items() if v[0] != plugin}

    def get(self, name: str, kind: type[T] | None = None) -> T | None:
        """The service, or ``None`` when no enabled plugin provides it (degrade gracefully)."""
        item = self._items.get(name)
        if item is None:
            return None
        obj = item[1]
        if kind is not None and not isinstance(obj, kind):
            raise TypeError(f"service {name!r} from plugin {item[0]!r} is not a {kind.__name__}")
        return cast("T", obj)

    def names(self) -> list[str]:
        return sorted(self._items)


class HookCaller:
    """Isolated calls of one hook across plugins, in pluggy's order (tryfirst … trylast)."""

    def __init__(self, host: PluginHost) -> None:
        self._host = host

    def notify(self, hook: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call every implementation; return the non-``None`` results with their plugin ids."""
        return [(plugin, result) for plugin, result in self._host.iter_results(hook, kwargs) if result is not None]

    collect = notify

    def first(self, hook: str, **kwargs: Any) -> tuple[str, Any] | None:
        """The first non-``None`` result; implementations that raise are skipped."""
        for plugin, result in self._host.iter_results(hook, kwargs):
            if result is not None:
                return plugin, result
        return None


@attrs.define
class PluginContext:
    """What a plugin's hook implementations receive as ``ctx``."""

    plugin_id: str
    host: PluginHost
    config: Any
    log: logging.Logger

    @property
    def settings(self) -> Settings:
        return self.host.settings

    @property
    def data_dir(self) -> Path:
        """``<data dir>/<plugin id>``, created on first use."""
        path = self.host.settings.data_dir.expanduser() / self.plugin_id
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def services(self) -> Services:
        return self.host.services

    @property
    def hooks(self) -> HookCaller:
        return self.host.hooks

    @property
    def clock(self) -> Clock:
        return self.host.clock

    def now(self) -> datetime:
        return self.host.clock.now()

    def provide(self, name: str, obj: object) -> None:
        self.host.services.provide(name, obj, plugin=self.plugin_id)

    def tool_served(self, name: str) -> bool:
        return self.host.tool_served(name)

    def redact(self, text: str) -> str:
        return self.host.redaction(text)

    def embedder(self, name: str, settings: EmbedderSettings) -> Embedder:
        return self.host.make_embedder(name, settings)

    def embedder_names(self) -> list[str]:
        """The embedders plugins registered (``register_embedders``), to check a configured name."""
        return self.host.embedder_names()


def _entry_points() -> list[importlib_metadata.EntryPoint]:
    return list(importlib_metadata.entry_points(group=ENTRY_POINT_GROUP))


class PluginHost:
    """Holds one ``pluggy.PluginManager`` and everything the core knows about plugins."""

    def __init__(self, settings: Settings, *, clock: Clock | None = None) -> None:
        self.settings = settings
        self.clock = clock or Clock()
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        for spec in hookspecs.ALL_SPECS:
            self.pm.add_hookspecs(spec)
        self.services = Services()
        self.hooks = HookCaller(self)
        self.failures: list[PluginFailure] = []
        self.installed: dict[str, InstalledPlugin] = {}
        self.requested: list[str] = []
        self._contexts: dict[str, PluginContext] = {}
        self._order: list[str] = []
        self._tools: dict[str, tuple[str, Tool]] = {}
        self._withdrawn: set[str] = set()
        self._embedders: dict[str, tuple[str, EmbedderFactory]] = {}
        self._metadata: dict[str, PluginMetadata] = {}
        self._started = 0
        self._start_lock = threading.Lock()
        self.redaction = RedactionPipeline([secret_redactor()])

    # ---------------------------------------------------------------------------------------------
    # Registration

    def add_plugin(self, plugin_id: str, obj: object, *, essential: bool = False) -> bool:
        """Register one plugin object (a module, or an instance); record a failure instead of raising."""
        if isinstance(obj, type):
            cls = obj
            try:
                obj = cls()
            except Exception as exc:
                self._fail(plugin_id, "load", f"constructing {cls.__name__} raised {_exc(exc)}")
                return False
        try:
            metadata = PluginMetadata.of(obj)
        except PluginDeclarationError as exc:
            if essential:
                raise
            self._fail(plugin_id, "register", str(exc))
            return False
        self._metadata[plugin_id] = metadata
        try:
            self.pm.register(obj, name=plugin_id)
        except (pluggy.PluginValidationError, ValueError) as exc:
            if essential:
                raise
            self._fail(plugin_id, "register", str(exc))
            return False
        problems = self._invalid_hooks(obj)
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
            plugin_id=plugin_id, host=self, config=config, log=logging.getLogger(f"ego.plugin.{plugin_id}")
        )
        return True

    def _invalid_hooks(self, obj: object) -> list[str]:
        """A problem (naming its hook) for each implementation ego refuses: unknown hooks, wrappers, async."""
        problems: list[str] = []
        for caller in self.pm.get_hookcallers(obj) or []:
            if caller.spec is None:
                problems.append(f"implements unknown hook {caller.name!r} (known hooks: see docs/hooks.md)")
                continue
            for impl in caller.get_hookimpls():
                if impl.plugin is not obj:
                    continue
                if impl.hookwrapper or impl.wrapper:
                    problems.append(f"implements {caller.name!r} as a wrapper, which ego does not allow")
                elif inspect.iscoroutinefunction(impl.function) or inspect.isasyncgenfunction(impl.function):
                    problems.append(
                        f"implements {caller.name!r} as async def; hooks are called synchronously and never "
                        "awaited (tool handlers may be async, hooks may not)"
                    )
        return problems

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
    ) -> None:
        """Load the selected plugins from the ``ego`` entry-point group."""
        eps: dict[str, importlib_metadata.EntryPoint] = {}
        for ep in _entry_points() if entry_points is None else entry_points:
            dist = ep.dist.name if ep.dist is not None else None
            if ep.name in eps:
                other = eps[ep.name].dist
                self._fail(
                    ep.name,
                    "duplicate",
                    f"plugin id provided by both {other.name if other else '?'} and {dist or '?'}; using the first",
                )
                continue
            eps[ep.name] = ep
            self.installed[ep.name] = InstalledPlugin(
                id=ep.name,
                entry_point=ep.value,
                distribution=dist,
                version=ep.dist.version if ep.dist is not None else None,
            )
        known = sorted(eps)
        for name in [*(enabled or []), *disabled]:
            if name not in eps:
                listing = ", ".join(known) if known else "none"
                raise SelectionError(f"unknown plugin {name!r}; installed plugins: {listing}")
        self.requested = list(enabled) if enabled is not None else []
        chosen = [name for name in (enabled if enabled is not None else known) if name not in set(disabled)]
        for name in chosen:
            try:
                obj = eps[name].load()
            except SystemExit as exc:
                self._fail(name, "load", f"import called sys.exit({exc.code!r})")
                continue
            except Exception as exc:
                self._fail(name, "load", f"import failed: {_exc(exc)}")
                continue
            self.add_plugin(name, obj)
        self.resolve_dependencies()

    def resolve_dependencies(self) -> None:
        """Drop plugins whose declared ``requires`` are not active; explicit requests fail loudly."""
        changed = True
        while changed:
            changed = False
            for plugin_id in self.plugin_ids():
                obj = self.pm.get_plugin(plugin_id)
                missing = [dep for dep in self._metadata[plugin_id].requires if self.pm.get_plugin(dep) is None]
                if not missing:
                    continue
                need = ", ".join(missing)
                if plugin_id in self.requested:
                    suggestion = ",".join(dict.fromkeys([*missing, *self.requested]))
                    raise SelectionError(
                        f"plugin {plugin_id!r} requires {need}, which is not enabled; "
                        f"enable both, e.g. --plugins {suggestion}"
                    )
                self.pm.unregister(obj)
                self._contexts.pop(plugin_id, None)
                self._fail(plugin_id, "dependency", f"requires plugin(s) {need}, which are not enabled or failed")
                changed = True

    def orphan_config_tables(self) -> list[str]:
        """Ids of ``[plugins.<id>]`` tables that no installed plugin reads (a typo, or an uninstalled plugin)."""
        known = {*self.installed, *self._contexts}
        return sorted(table for table in self.settings.plugin_tables if table not in known)

    def plugin_ids(self) -> list[str]:
        """Active plugins (registered and not failed), core first."""
        names = [name for name, _ in self.pm.list_name_plugin() if name in self._contexts]
        return sorted(names, key=lambda n: (n != CORE_PLUGIN_ID, n))

    def context(self, plugin_id: str) -> PluginContext:
        return self._contexts[plugin_id]

    def _fail(
        self, plugin: str, stage: FailureStage, reason: str, hook: str | None = None, level: int = logging.WARNING
    ) -> None:
        # a reason quotes an exception, which may quote a secret or private text: it is shown on stdout too
        reason = self.redaction(reason)
        failure = PluginFailure(plugin=plugin, stage=stage, reason=reason, hook=hook)
        if failure not in self.failures:  # a hook raising on every call is recorded once, logged each time
            self.failures.append(failure)
            same_hook = [f for f in self.failures if (f.plugin, f.stage, f.hook) == (plugin, stage, hook)]
            if len(same_hook) > MAX_FAILURES_PER_HOOK:
                self.failures.remove(same_hook[0])
        log_event(_log, "plugin_failure", level, plugin=plugin, stage=stage, hook=hook, reason=reason)

    # ---------------------------------------------------------------------------------------------
    # Isolated calls

    def iter_results(self, hook: str, kwargs: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
        caller = getattr(self.pm.hook, hook)
        for impl in reversed(caller.get_hookimpls()):
            plugin_id = impl.plugin_name
            if plugin_id not in self._contexts or plugin_id in self._withdrawn:
                continue
            available = {**kwargs, "ctx": self._contexts[plugin_id]}
            try:
                args = [available[name] for name in impl.argnames]
            except KeyError as exc:
                self._fail(plugin_id, "call", f"asks for unknown argument {exc}", hook)
                continue
            started = time.perf_counter()
            try:
                result = impl.function(*args)
            except Exception as exc:
                _log.error("plugin %s raised in %s", plugin_id, hook, exc_info=True)
                self._fail(plugin_id, "call", f"raised {_exc(exc)}", hook)
                continue
            elapsed = (time.perf_counter() - started) * 1000
            if elapsed > 1000:
                log_event(_log, "slow_hook", logging.WARNING, plugin=plugin_id, hook=hook, ms=round(elapsed))
            if self._refuse_awaitable(plugin_id, "call", hook, result):
                continue
            yield plugin_id, result

    def call_one(self, plugin_id: str, hook: str, **kwargs: Any) -> tuple[bool, Any]:
        """Call one plugin's implementation of ``hook`` without isolation: exceptions propagate.

        For operations that must fail loudly (imports). Returns (implemented, result).
        """
        caller = getattr(self.pm.hook, hook)
        for impl in caller.get_hookimpls():
            if impl.plugin_name != plugin_id:
                continue
            available = {**kwargs, "ctx": self._contexts[plugin_id]}
            return True, impl.function(*[available[name] for name in impl.argnames])
        return False, None

    def implementers(self, hook: str) -> list[str]:
        """Active plugins implementing ``hook``, by id."""
        caller = getattr(self.pm.hook, hook)
        names = {impl.plugin_name for impl in caller.get_hookimpls()}
        return [p for p in self.plugin_ids() if p in names and self.is_active(p)]

    def _refuse_awaitable(self, plugin_id: str, stage: FailureStage, hook: str, result: object) -> bool:
        """A hook that returned a coroutine did not run: record it (hooks are never awaited)."""
        if not inspect.isawaitable(result):
            return False
        if inspect.iscoroutine(result):
            result.close()  # never awaited: close it so Python does not warn about it later
        self._fail(plugin_id, stage, f"{hook} returned an awaitable; hooks are synchronous and are never awaited", hook)
        return True

    # ---------------------------------------------------------------------------------------------
    # Startup

    def prepare(self) -> None:
        """Collect registrations (redactors, embedders, tools). Raises on conflicting tool names."""
        self.redaction = RedactionPipeline([secret_redactor()])
        collected: list[Redactor] = []
        owners: dict[str, str] = {r.name: CORE_PLUGIN_ID for r in self.redaction.redactors}
        for plugin_id in self.plugin_ids():

            def add_redactor(redactor: Redactor, _plugin: str = plugin_id) -> None:
                _check_redactor(redactor)
                hook = "register_redactors"
                if redactor.name.startswith(RESERVED_REDACTOR_PREFIX) and _plugin != CORE_PLUGIN_ID:
                    self._fail(
                        _plugin,
                        "register",
                        f"redactor name {redactor.name!r} uses the prefix {RESERVED_REDACTOR_PREFIX!r}, which is "
                        f"reserved for the core; name it {_plugin}.<rule>. It was not registered",
                        hook,
                    )
                    return
                if redactor.name in owners:
                    self._fail(
                        _plugin,
                        "register",
                        f"redactor {redactor.name!r} is already registered by plugin {owners[redactor.name]!r}; "
                        "the first one is kept",
                        hook,
                    )
                    return
                owners[redactor.name] = _plugin
                collected.append(redactor)

            # a redactor registered before the hook raised is kept: dropping a rule could only let more through
            self._call_register(plugin_id, "register_redactors", add_redactor)
        self.redaction.extend(collected)
        install_pipeline(self.redaction)

        self._embedders = {}
        for plugin_id in self.plugin_ids():

            def add_embedder(name: str, factory: EmbedderFactory, _plugin: str = plugin_id) -> None:
                if not isinstance(name, str) or not name or not callable(factory):
                    raise TypeError(
                        "register_embedders expects register(name: str, factory: Callable[[EmbedderSettings], "
                        f"Embedder]), got ({type(name).__name__}, {type(factory).__name__})"
                    )
                if name in self._embedders:
                    self._fail(
                        _plugin,
                        "register",
                        f"embedder {name!r} already provided by {self._embedders[name][0]}",
                        "register_embedders",
                    )
                    return
                self._embedders[name] = (_plugin, factory)

            self._call_register(plugin_id, "register_embedders", add_embedder)

        self._tools = {}
        for plugin_id in self.plugin_ids():
            pending: dict[str, Tool] = {}

            def add_tool(tool: Tool, _plugin: str = plugin_id, _pending: dict[str, Tool] = pending) -> None:
                if not isinstance(tool, Tool):
                    raise TypeError(f"register_tools expects ego_core.Tool, got {type(tool).__name__}")
                try:
                    Draft202012Validator.check_schema(dict(tool.input_schema))
                except SchemaError as exc:
                    raise ValueError(f"tool {tool.name!r} has an invalid input schema: {exc.message}") from None
                if tool.name in self._tools or tool.name in _pending:
                    owner = self._tools[tool.name][0] if tool.name in self._tools else _plugin
                    raise ToolConflictError(
                        f"tool {tool.name!r} is registered by both plugin {owner!r} "
                        f"and plugin {_plugin!r}; disable one of them (--disable)"
                    )
                _pending[tool.name] = tool

            # all or nothing: a plugin whose register_tools raised serves none of its tools
            if self._call_register(plugin_id, "register_tools", add_tool, reraise=(ToolConflictError,)):
                for name, tool in pending.items():
                    self._tools[name] = (plugin_id, tool)

    def _call_register(
        self,
        plugin_id: str,
        hook: str,
        register: Callable[..., None],
        reraise: tuple[type[Exception], ...] = (),
    ) -> bool:
        """Call one plugin's registration hook; ``False`` (and a recorded failure) when it raised."""
        caller = getattr(self.pm.hook, hook)
        for impl in caller.get_hookimpls():
            if impl.plugin_name != plugin_id:
                continue
            available = {"register": register, "ctx": self._contexts[plugin_id]}
            try:
                result = impl.function(*[available[name] for name in impl.argnames])
            except reraise:
                raise
            except Exception as exc:
                _log.error("plugin %s raised in %s", plugin_id, hook, exc_info=True)
                self._fail(plugin_id, "register", f"{hook} raised {_exc(exc)}", hook)
                return False
            if self._refuse_awaitable(plugin_id, "register", hook, result):
                return False
        return True

    def commands(self, reserved: Collection[str] = ()) -> list[tuple[str, Command]]:
        """Commands from ``register_commands``, as (plugin id, command).

        A command whose name is taken (a ``reserved`` core command, or an earlier plugin's command or group) is
        skipped and recorded as a registration failure of the later plugin. Plugins may share a group.
        """
        found: list[tuple[str, Command]] = []
        top_level: dict[str, tuple[str, str]] = dict.fromkeys(reserved, (CORE_PLUGIN_ID, "command"))
        grouped: dict[tuple[str, str], str] = {}
        for plugin_id in self.plugin_ids():

            def add(command: Command, _plugin: str = plugin_id) -> None:
                if not isinstance(command, Command):
                    raise TypeError(f"register_commands expects ego_core.Command, got {type(command).__name__}")
                clash = _command_clash(command, top_level, grouped)
                if clash:
                    self._fail(_plugin, "register", f"{clash}; it was skipped", "register_commands")
                    return
                if command.group is None:
                    top_level[command.name] = (_plugin, "command")
                else:
                    top_level.setdefault(command.group, (_plugin, "group"))
                    grouped[(command.group, command.name)] = _plugin
                found.append((_plugin, command))

            self._call_register(plugin_id, "register_commands", add)
        return found

    def start(self) -> None:
        """Run ``on_startup`` in dependency order (idempotent; counted, so nested users share one start)."""
        with self._start_lock:
            self._started += 1
            if self._started > 1:
                return
            self._order = self._dependency_order()
            for plugin_id in self._order:
                self._start_one(plugin_id)

    def _start_one(self, plugin_id: str) -> None:
        missing = [d for d in self._metadata[plugin_id].requires if d in self._withdrawn]
        if missing:
            self._withdraw(plugin_id, "startup", f"required plugin(s) {', '.join(missing)} failed to start")
            return
        impl = next((i for i in self.pm.hook.on_startup.get_hookimpls() if i.plugin_name == plugin_id), None)
        if impl is None:
            return
        try:
            result = impl.function(*[{"ctx": self._contexts[plugin_id]}[name] for name in impl.argnames])
        except ConfigError as exc:  # the user's configuration is wrong: a startup error, not an isolated plugin
            self._withdrawn.add(plugin_id)
            self.services.withdraw(plugin_id)
            # recorded in the JSON log; the command itself reports it on stderr
            self._fail(plugin_id, "startup", f"invalid configuration: {exc}", level=logging.INFO)
            raise
        except Exception as exc:
            _log.error("plugin %s failed to start", plugin_id, exc_info=True)
            self._withdraw(plugin_id, "startup", f"on_startup raised {_exc(exc)}")
            return
        if inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()
            self._withdraw(plugin_id, "startup", "on_startup returned an awaitable; hooks are never awaited")

    def _withdraw(self, plugin_id: str, stage: FailureStage, reason: str) -> None:
        self._withdrawn.add(plugin_id)
        self.services.withdraw(plugin_id)
        self._fail(plugin_id, stage, reason)

    def _dependency_order(self) -> list[str]:
        ids = self.plugin_ids()
        order: list[str] = []
        visiting: set[str] = set()

        def visit(name: str) -> None:
            if name in order or name not in ids:
                return
            if name in visiting:
                raise SelectionError(f"plugin dependency cycle through {name!r}")
            visiting.add(name)
            for dep in self._metadata[name].requires:
                visit(dep)
            visiting.discard(name)
            order.append(name)

        for name in ids:
            visit(name)
        return order

    def stop(self) -> None:
        with self._start_lock:
            if self._started == 0:
                return
            self._started -= 1
            if self._started > 0:
                return
            for plugin_id in reversed(self._order):
                if plugin_id in self._withdrawn:
                    continue
                impl = next((i for i in self.pm.hook.on_shutdown.get_hookimpls() if i.plugin_name == plugin_id), None)
                if impl is None:
                    continue
                try:
                    result = impl.function(*[{"ctx": self._contexts[plugin_id]}[name] for name in impl.argnames])
                except Exception as exc:
                    _log.error("plugin %s failed to shut down", plugin_id, exc_info=True)
                    self._fail(plugin_id, "call", f"on_shutdown raised {_exc(exc)}", "on_shutdown")
                    continue
                self._refuse_awaitable(plugin_id, "call", "on_shutdown", result)
            self.services = Services()

    @property
    def started(self) -> bool:
        return self._started > 0

    # ---------------------------------------------------------------------------------------------
    # Queries

    def tools(self) -> list[tuple[str, Tool]]:
        """Served tools as (plugin id, tool): surface tools first, then backend, each by name."""
        served = [(p, t) for p, t in self._tools.values() if p not in self._withdrawn]
        return sorted(served, key=lambda pt: (pt[1].tier != "surface", pt[1].name))

    def tool(self, name: str) -> tuple[str, Tool] | None:
        item = self._tools.get(name)
        if item is None or item[0] in self._withdrawn:
            return None
        return item

    def tool_served(self, name: str) -> bool:
        return self.tool(name) is not None

    def is_active(self, plugin_id: str) -> bool:
        return plugin_id in self._contexts and plugin_id not in self._withdrawn

    def embedder_names(self) -> list[str]:
        return sorted(self._embedders)

    def make_embedder(self, name: str, settings: EmbedderSettings) -> Embedder:
        if name not in self._embedders:
            known = ", ".join(self.embedder_names()) or "none"
            raise EmbeddingError(f"unknown embedder {name!r}; available: {known}")
        return self._embedders[name][1](settings)

    def _distribution_of(self, plugin_id: str) -> InstalledPlugin | None:
        """For a plugin object added directly (tests, embedding): the distribution its module comes from."""
        obj = self.pm.get_plugin(plugin_id)
        if obj is None:
            return None
        module = obj.__name__ if inspect.ismodule(obj) else type(obj).__module__
        names = importlib_metadata.packages_distributions().get(module.split(".")[0], [])
        if not names:
            return None
        try:
            version = importlib_metadata.version(names[0])
        except importlib_metadata.PackageNotFoundError:
            version = None
        return InstalledPlugin(id=plugin_id, entry_point=module, distribution=names[0], version=version)

    def statuses(self) -> list[PluginStatus]:
        """Every installed plugin with its state, for ``ego plugins``."""
        failed: dict[str, list[str]] = {}
        for failure in self.failures:
            failed.setdefault(failure.plugin, []).append(
                f"[{failure.stage}{':' + failure.hook if failure.hook else ''}] {failure.reason}"
            )
        result = []
        ids = sorted(set(self.installed) | set(self._contexts) | set(failed))
        for plugin_id in ids:
            info = self.installed.get(plugin_id) or self._distribution_of(plugin_id)
            obj = self.pm.get_plugin(plugin_id)
            hooks = tuple(sorted(c.name for c in self.pm.get_hookcallers(obj) or [])) if obj is not None else ()
            metadata = self._metadata.get(plugin_id)
            requires = metadata.requires if metadata is not None else ()
            if plugin_id in failed and not self.is_active(plugin_id):
                state: Literal["enabled", "disabled", "failed"] = "failed"
            elif self.is_active(plugin_id):
                state = "enabled"
            else:
                state = "disabled"
            result.append(
                PluginStatus(
                    id=plugin_id,
                    distribution=info.distribution if info else ("ego-core" if plugin_id == CORE_PLUGIN_ID else None),
                    version=info.version if info else (_core_version() if plugin_id == CORE_PLUGIN_ID else None),
                    state=state,
                    reason="; ".join(failed.get(plugin_id, [])),
                    hooks=hooks,
                    requires=requires,
                )
            )
        return result


RESERVED_REDACTOR_PREFIX = "ego."
"""Redactor names starting with this belong to the core (``ego.secrets``); plugins use ``<plugin id>.<rule>``."""


def _check_redactor(redactor: object) -> None:
    if not isinstance(redactor, Redactor):
        raise TypeError(f"register_redactors expects ego_core.Redactor, got {type(redactor).__name__}")
    if not isinstance(redactor.name, str) or not redactor.name:
        raise TypeError("a Redactor needs a non-empty str name")
    if not callable(redactor.redact):
        raise TypeError(f"redactor {redactor.name!r}: redact must be callable")
    if isinstance(redactor.order, bool) or not isinstance(redactor.order, int | float):
        raise TypeError(f"redactor {redactor.name!r}: order must be a number")


def _command_clash(
    command: Command, top_level: Mapping[str, tuple[str, str]], grouped: Mapping[tuple[str, str], str]
) -> str:
    """Why ``command`` cannot be added (``""`` when it can)."""

    def taken(name: str) -> str:
        owner, kind = top_level[name]
        if owner == CORE_PLUGIN_ID:
            return f"the core command 'ego {name}'"
        return f"plugin {owner!r}'s {'command group' if kind == 'group' else 'command'} 'ego {name}'"

    if command.group is None:
        if command.name in top_level:
            return f"command 'ego {command.name}' clashes with {taken(command.name)}"
        return ""
    full = f"ego {command.group} {command.name}"
    if command.group in top_level and top_level[command.group][1] != "group":
        return f"command '{full}' clashes with {taken(command.group)}"
    if (command.group, command.name) in grouped:
        return f"command '{full}' is already registered by plugin {grouped[(command.group, command.name)]!r}"
    return ""


def _core_version() -> str:
    from ego_core import __version__

    return __version__


def _exc(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def build_host(
    settings: Settings,
    *,
    enabled: Sequence[str] | None = None,
    disabled: Sequence[str] = (),
    autoload: bool = True,
    plugins: Mapping[str, object] | None = None,
    entry_points: Iterable[importlib_metadata.EntryPoint] | None = None,
    clock: Clock | None = None,
) -> PluginHost:
    """Build a host: the core plugin, the selected installed plugins and any plugin objects given.

    ``enabled``/``disabled`` default to the settings' selection (CLI > env > config file); ``autoload=False``
    skips entry points entirely (tests pass ``plugins=`` instead).
    """
    from ego_core.composed import CorePlugin

    host = PluginHost(settings, clock=clock)
    host.add_plugin(CORE_PLUGIN_ID, CorePlugin(), essential=True)
    if enabled is None:
        enabled = settings.plugins.enabled
        disabled = [*settings.plugins.disabled, *disabled]
    # else: an explicit selection (the command line) outranks the `disabled` lists of the environment and file
    if autoload:
        host.discover(enabled=enabled, disabled=disabled, entry_points=entry_points)
        for table in host.orphan_config_tables():
            log_event(
                _log,
                "config_unknown_plugin",
                logging.WARNING,
                table=f"[plugins.{table}]",
                reason=f"no installed plugin has the id {table!r}; installed: {', '.join(sorted(host.installed))}",
            )
    for plugin_id, obj in (plugins or {}).items():
        host.add_plugin(plugin_id, obj)
    if plugins:
        host.resolve_dependencies()
    host.prepare()
    return host
