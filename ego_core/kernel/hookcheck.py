"""The implementations ego refuses, each named with its hook: unknown hooks, wrappers, async functions and
parameters with defaults."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from typing import Any

import pluggy


def refused_implementations(pm: pluggy.PluginManager, obj: object) -> list[str]:
    """A problem for each implementation of ``obj`` that ego would not call as written."""
    problems: list[str] = []
    for caller in pm.get_hookcallers(obj) or []:
        for impl in caller.get_hookimpls():
            if impl.plugin is not obj:
                continue
            defaults = _parameters_with_defaults(impl.function)
            if defaults:
                problems.append(
                    f"implements {caller.name!r} with a default value for {', '.join(defaults)}; hook "
                    "parameters take no defaults (pluggy would never pass them): remove the default"
                )
            if impl.hookwrapper or impl.wrapper:
                problems.append(f"implements {caller.name!r} as a wrapper, which ego does not allow")
            elif inspect.iscoroutinefunction(impl.function) or inspect.isasyncgenfunction(impl.function):
                problems.append(
                    f"implements {caller.name!r} as async def; hooks are called synchronously and never "
                    "awaited (tool handlers may be async, hooks may not)"
                )
    return problems


def unknown_hooks(pm: pluggy.PluginManager, obj: object) -> list[str]:
    """A problem for each hook ``obj`` implements that neither the core nor a loaded plugin publishes, unless the
    implementation is optional (``optionalhook=True``: a hook of a plugin that may be absent)."""
    known = [name for name in vars(pm.hook) if getattr(pm.hook, name).spec is not None]
    problems: list[str] = []
    for caller in pm.get_hookcallers(obj) or []:
        if caller.spec is not None:
            continue
        if all(impl.optionalhook for impl in caller.get_hookimpls() if impl.plugin is obj):
            continue
        close = difflib.get_close_matches(caller.name, known, n=1, cutoff=0.6)
        hint = (
            f"did you mean {close[0]!r}?"
            if close
            else f"ego's hooks: {', '.join(known)}; a hook of a plugin that may be absent is implemented with "
            "@hookimpl(optionalhook=True)"
        )
        problems.append(f"implements unknown hook {caller.name!r} ({hint})")
    return problems


def _parameters_with_defaults(function: Callable[..., Any]) -> list[str]:
    """The parameters of a hook implementation that have a default value (``self`` aside)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters if p.default is not inspect.Parameter.empty]
