"""The markers of ego's hooks: ``hookimpl`` for implementations, :func:`spec` for specifications and the calling
kind each specification declares. A plugin that publishes hooks of its own (``register_hookspecs``) marks them
with :func:`spec` too; the dispatcher reads the kind from the specification, wherever it was declared."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, TypeVar

import pluggy

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


SETUP_KINDS = frozenset({HookKind.REGISTRATION, HookKind.LIFECYCLE, HookKind.PORTABLE})


def spec(kind: HookKind, *, firstresult: bool = False, setup: bool | None = None) -> Callable[[F], F]:
    """A hook specification of the given calling kind. ``setup``: the hook runs while a process starts, stops, is
    checked or moves its data, so its time is expected work (by default: registration, lifecycle and portable
    hooks)."""

    def mark(function: F) -> F:
        function.ego_hook_kind = kind  # type: ignore[attr-defined]
        function.ego_setup_hook = kind in SETUP_KINDS if setup is None else setup  # type: ignore[attr-defined]
        return hookspec(firstresult=firstresult)(function)

    return mark


def kind_of(specification: Callable[..., Any]) -> HookKind:
    """The calling kind a specification declared (a spec made without :func:`spec` is a notification)."""
    kind = getattr(specification, "ego_hook_kind", HookKind.NOTIFICATION)
    return kind if isinstance(kind, HookKind) else HookKind.NOTIFICATION


def is_setup(specification: Callable[..., Any]) -> bool:
    return bool(getattr(specification, "ego_setup_hook", False))
