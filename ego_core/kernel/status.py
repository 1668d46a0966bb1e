"""What went wrong with which plugin, and each plugin's state, for ``ego plugins`` and ``ego doctor``."""

from __future__ import annotations

import importlib.metadata as importlib_metadata
import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Literal

import attrs

from ego_core.kernel.logs import log_event
from ego_core.version import __version__

FailureStage = Literal["load", "register", "validate", "dependency", "config", "startup", "call", "duplicate"]
CORE_PLUGIN_ID = "core"
PluginState = Literal["enabled", "disabled", "failed"]

UNAVAILABLE_WORDING: dict[str, str] = {
    "load": "failed to load",
    "validate": "refused: invalid hook implementations",
    "register": "failed to register its tools",
    "startup": "failed to start",
}
"""How ``wake_up`` names each stage at which a plugin stopped working."""

MAX_FAILURES_PER_HOOK = 10
"""Distinct failures kept per plugin and hook for ``ego plugins`` / ``ego doctor``, the newest (the log has
every one): a long-running server's record stays bounded."""

_log = logging.getLogger("ego.host")


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
    state: PluginState
    reason: str = ""
    hooks: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()


class FailureLog:
    """Every plugin failure of one host: recorded once (bounded per plugin and hook), logged each time.

    A reason quotes an exception, which may quote a secret or private text, and it is shown on stdout by
    ``ego plugins``: it passes the redaction pipeline first.
    """

    def __init__(self, redact: Callable[[str], str]) -> None:
        self.redact = redact
        self.items: list[PluginFailure] = []

    def record(
        self, plugin: str, stage: FailureStage, reason: str, hook: str | None = None, level: int = logging.WARNING
    ) -> None:
        reason = self.redact(reason)
        failure = PluginFailure(plugin=plugin, stage=stage, reason=reason, hook=hook)
        if failure not in self.items:  # a hook raising on every call is recorded once, logged each time
            self.items.append(failure)
            same_hook = [f for f in self.items if (f.plugin, f.stage, f.hook) == (plugin, stage, hook)]
            if len(same_hook) > MAX_FAILURES_PER_HOOK:
                self.items.remove(same_hook[0])
        log_event(_log, "plugin_failure", level, plugin=plugin, stage=stage, hook=hook, reason=reason)

    def reasons_by_plugin(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for failure in self.items:
            where = f"{failure.stage}:{failure.hook}" if failure.hook else failure.stage
            found.setdefault(failure.plugin, []).append(f"[{where}] {failure.reason}")
        return found

    def unavailable(self) -> dict[str, FailureStage]:
        """Plugins that are not (fully) working since the host was built, with the first stage that failed:
        ``load``, ``validate`` (refused hook implementations), ``register`` (refused at registration, or its
        ``register_tools`` raised: none of its tools is served) or ``startup``."""
        found: dict[str, FailureStage] = {}
        for failure in self.items:
            if failure.stage in ("load", "validate", "startup") or (
                failure.stage == "register" and failure.hook in (None, "register_tools")
            ):
                found.setdefault(failure.plugin, failure.stage)
        return found


def describe_exception(exc: BaseException) -> str:
    """``TypeName: first line of the message`` (or just the type name)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def plugin_status(
    plugin_id: str,
    obj: object | None,
    installed: InstalledPlugin | None,
    failures: Sequence[str],
    *,
    active: bool,
    hooks: Sequence[str],
    requires: Sequence[str],
) -> PluginStatus:
    """One plugin's line in ``ego plugins``: where it comes from, its state and why, the hooks it implements."""
    info = installed or _distribution_of(obj, plugin_id)
    if info is None and plugin_id == CORE_PLUGIN_ID:
        info = InstalledPlugin(plugin_id, "ego_core", "ego-core", __version__)
    state: PluginState = "failed" if failures and not active else ("enabled" if active else "disabled")
    return PluginStatus(
        id=plugin_id,
        distribution=info.distribution if info else None,
        version=info.version if info else None,
        state=state,
        reason="; ".join(failures),
        hooks=tuple(sorted(hooks)),
        requires=tuple(requires),
    )


def _distribution_of(obj: object | None, plugin_id: str) -> InstalledPlugin | None:
    """For a plugin object added directly (the core, tests, embedding): the distribution its module comes from."""
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
