"""What moved where, and the deprecation path: the old import paths keep working, with a ``DeprecationWarning``,
until ego-core 1.0.

``ego_core`` and ``ego_core.testing`` are the public surface; the modules behind them moved into rooms
(``ego_core.kernel``: the plugin host; ``ego_core.mcp``: serving, the command line and the core's own tools),
and the contracts between built-in plugins moved into those plugins (``ego_desires.api``, ...). docs/api-changes.md
lists every move; tests check that it matches :data:`MODULES` and :data:`NAMES`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType

REMOVED_IN = "1.0"

_KERNEL = (
    "config context dispatch discovery hookspecs host logs plugin redaction registries secrets status storage"
).split()
_MCP = (
    "agents bridge cli composed core_commands core_prompts factory foreign freshness http_transport init_command "
    "plugin_template portable server stdio surface validation"
).split()

MODULES: dict[str, str] = {f"ego_core.{name}": f"ego_core.kernel.{name}" for name in _KERNEL} | {
    f"ego_core.{name}": f"ego_core.mcp.{name}" for name in _MCP
}
"""Old module path → new module path."""

_PLUGIN_CONTRACTS = {
    "ego_desires.api": "DESIRE_LEVELS DesireLevels DesireSample",
    "ego_self_model.api": (
        "OPEN_QUESTIONS OpenQuestions OpenQuestion QuestionState PEOPLE People KnownPerson Absence AbsenceBand "
        "TrustChange preciousness Preciousness PRECIOUS_INTENSITY PRECIOUS_RETURNS PRECIOUS_MAX_IMPORTANCE"
    ),
    "ego_notions.api": "NOTIONS_STORE NotionStore NotionView",
}

NAMES: dict[str, str] = {name: owner for owner, names in _PLUGIN_CONTRACTS.items() for name in names.split()}
"""A name ``ego_core`` exported → the module that owns it now (a plugin's ``api``)."""


def warn_moved(old: str, new: str, stacklevel: int = 3) -> None:
    warnings.warn(
        f"{old} moved to {new}; the old path stops working in ego-core {REMOVED_IN} (see docs/api-changes.md)",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module path as the module at its new path (the same module object, not a copy)."""

    def find_spec(
        self, fullname: str, path: object = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(fullname, self) if fullname in MODULES else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warn_moved(spec.name, MODULES[spec.name], stacklevel=8)
        return importlib.import_module(MODULES[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module at the new path is already imported."""


def install() -> None:
    if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(_MovedModules())


def moved_name(name: str) -> object:
    """A name ``ego_core`` no longer exports, from its new owner, with a warning; ``AttributeError`` otherwise."""
    owner = NAMES.get(name)
    if owner is None:
        raise AttributeError(f"module 'ego_core' has no attribute {name!r}")
    warn_moved(f"ego_core.{name}", f"{owner}.{name}")
    try:
        module = importlib.import_module(owner)
    except ImportError as exc:
        raise AttributeError(f"ego_core.{name} moved to {owner}, which is not installed") from exc
    return getattr(module, name)
