"""Finding plugins: entry points in the ``ego`` group, the user's selection, and dependency order."""

from __future__ import annotations

import importlib.metadata as importlib_metadata
from collections.abc import Iterable, Mapping, Sequence

import attrs
import pluggy

from ego_core.kernel.status import CORE_PLUGIN_ID, InstalledPlugin, describe_exception

ENTRY_POINT_GROUP = "ego"


class SelectionError(ValueError):
    """The requested set of plugins cannot be served (unknown id, unmet dependency)."""


@attrs.frozen
class Installed:
    """The ``ego`` entry points, by plugin id (the first distribution claiming an id wins)."""

    entry_points: Mapping[str, importlib_metadata.EntryPoint]
    plugins: Mapping[str, InstalledPlugin]
    clashes: Sequence[tuple[str, str]]
    """(plugin id, why it was skipped) for each later distribution that claimed a taken id."""


def find_installed(entry_points: Iterable[importlib_metadata.EntryPoint] | None = None) -> Installed:
    found = list(importlib_metadata.entry_points(group=ENTRY_POINT_GROUP)) if entry_points is None else entry_points
    eps: dict[str, importlib_metadata.EntryPoint] = {}
    plugins: dict[str, InstalledPlugin] = {}
    clashes: list[tuple[str, str]] = []
    for ep in found:
        dist = ep.dist.name if ep.dist is not None else None
        if ep.name in eps:
            other = eps[ep.name].dist
            clashes.append(
                (
                    ep.name,
                    f"plugin id provided by both {other.name if other else '?'} and {dist or '?'}; using the first",
                )
            )
            continue
        eps[ep.name] = ep
        plugins[ep.name] = InstalledPlugin(
            id=ep.name, entry_point=ep.value, distribution=dist, version=ep.dist.version if ep.dist else None
        )
    return Installed(entry_points=eps, plugins=plugins, clashes=clashes)


def choose(known: Sequence[str], enabled: Sequence[str] | None, disabled: Sequence[str], always: str) -> list[str]:
    """The plugin ids to load: ``enabled`` (default: all ``known``) minus ``disabled``.

    ``always`` (the core) is accepted in either list and never loaded from an entry point; it cannot be disabled.
    """
    if always in disabled:
        raise SelectionError(f"the {always!r} plugin cannot be disabled (it serves wake_up and introspect)")
    for name in [*(enabled or []), *disabled]:
        if name not in known and name != always:
            listing = ", ".join(known) if known else "none"
            raise SelectionError(f"unknown plugin {name!r}; installed plugins: {listing}")
    chosen = enabled if enabled is not None else known
    return [name for name in chosen if name not in set(disabled) and name != always]


def load(ep: importlib_metadata.EntryPoint) -> tuple[object | None, str]:
    """The plugin object, or ``None`` and why it could not be imported."""
    try:
        return ep.load(), ""
    except SystemExit as exc:
        return None, f"import called sys.exit({exc.code!r})"
    except Exception as exc:
        return None, f"import failed: {describe_exception(exc)}"


def unmet(requires: Mapping[str, Sequence[str]], active: Iterable[str]) -> dict[str, list[str]]:
    """Plugins whose ``requires`` are not all active, with the missing ids."""
    present = set(active)
    return {
        plugin: missing
        for plugin, needs in requires.items()
        if plugin in present and (missing := [dep for dep in needs if dep not in present])
    }


def dependency_order(ids: Sequence[str], requires: Mapping[str, Sequence[str]]) -> list[str]:
    """``ids`` with every plugin after the plugins it requires (otherwise in the given order)."""
    order: list[str] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in order or name not in ids:
            return
        if name in visiting:
            raise SelectionError(f"plugin dependency cycle through {name!r}")
        visiting.add(name)
        for dep in requires.get(name, ()):
            visit(dep)
        visiting.discard(name)
        order.append(name)

    for name in ids:
        visit(name)
    return order


def id_taken(pm: pluggy.PluginManager, installed: Mapping[str, InstalledPlugin], plugin_id: str, obj: object) -> str:
    """Why ``obj`` cannot be registered as ``plugin_id`` (``""`` when it can), in words, not pluggy's repr."""
    existing = pm.get_plugin(plugin_id)
    if existing is not None:
        source = installed.get(plugin_id)
        origin = (
            f"the installed distribution {source.distribution}"
            if source and source.distribution
            else ("the core" if plugin_id == CORE_PLUGIN_ID else f"a {type(existing).__name__} object")
        )
        return f"the plugin id {plugin_id!r} is already registered, by {origin}; choose another id"
    other = pm.get_name(obj)
    if other is not None:
        return f"this plugin object is already registered as {other!r}; give each id its own object"
    return ""
