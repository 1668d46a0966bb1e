"""Building a host: the core plugin, the selected installed plugins and any plugin objects given."""

from __future__ import annotations

import functools
import importlib.metadata as importlib_metadata
import inspect
import logging
from collections.abc import Iterable, Mapping, Sequence

from ego_core.kernel.config import Settings
from ego_core.kernel.context import Clock
from ego_core.kernel.host import PluginHost
from ego_core.kernel.logs import log_event
from ego_core.kernel.status import CORE_PLUGIN_ID
from ego_core.mcp.composed import CorePlugin

_log = logging.getLogger("ego.host")


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
    host = PluginHost(settings, clock=clock)
    fresh = {plugin_id: _fresh(obj) for plugin_id, obj in (plugins or {}).items()}
    host.recipe = functools.partial(
        build_host,
        enabled=enabled,
        disabled=disabled,
        autoload=autoload,
        plugins=fresh,
        entry_points=entry_points,
        clock=clock,
    )
    host.add_plugin(CORE_PLUGIN_ID, CorePlugin(), essential=True)
    if enabled is None:
        enabled = settings.plugins.enabled
        disabled = [*settings.plugins.disabled, *disabled]
    # else: an explicit selection (the command line) outranks the `disabled` lists of the environment and file
    if autoload:
        host.discover(enabled=enabled, disabled=disabled, entry_points=entry_points, given=list(plugins or {}))
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
    host.resolve_dependencies()
    host.prepare()
    return host


def _fresh(obj: object) -> object:
    """What builds another plugin like ``obj``: its class for an instance (a new instance per host), else itself."""
    if isinstance(obj, type) or inspect.ismodule(obj):
        return obj
    return type(obj)
