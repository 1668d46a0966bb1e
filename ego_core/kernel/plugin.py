"""What ego reads from a plugin object besides its hook implementations.

A plugin is a class (instantiated once per host), an instance or a module whose functions carry
``@hookimpl``. It may declare five attributes, described by :class:`Plugin`; :class:`PluginBase` gives the
defaults. The host reads them once, through :meth:`PluginMetadata.of`, and checks their types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

import attrs


@runtime_checkable
class Plugin(Protocol):
    """The optional attributes of a plugin object.

    - ``requires``: ids of plugins that must be enabled for this one to work (``("memory",)``).
    - ``config_class``: an attrs class that the ``[plugins.<id>]`` table is structured into (``ctx.config``).
    - ``config_env``: environment variable name → the field of ``config_class`` it overrides.
    - ``local_state``: why the files in its data directory are not exported (a cache, a journal of side
      effects), for a plugin that keeps files there but implements no ``export_records``: ``ego export``
      warns about such a plugin unless it says why.
    - ``hookspecs``: classes of hook specifications (methods marked with ``ego_core.spec``) this plugin publishes:
      the hooks it calls and others implement, as pytest's ``pytest_addhooks``. An implementation of a hook a
      plugin publishes is marked ``@hookimpl(optionalhook=True)``: the publisher may not be installed.
    """

    requires: Sequence[str]
    config_class: type[Any] | None
    config_env: Mapping[str, str]
    local_state: str | None
    hookspecs: Sequence[type]


class PluginBase:
    """Defaults for :class:`Plugin`'s attributes; subclass it and override what you need."""

    requires: Sequence[str] = ()
    config_class: type[Any] | None = None
    config_env: Mapping[str, str] = MappingProxyType({})
    local_state: str | None = None
    hookspecs: Sequence[type] = ()


class PluginDeclarationError(TypeError):
    """A plugin declares one of its optional attributes with the wrong type."""


@attrs.frozen
class PluginMetadata:
    requires: tuple[str, ...] = ()
    config_class: type[Any] | None = None
    config_env: Mapping[str, str] = attrs.field(factory=lambda: MappingProxyType({}))
    hookspecs: tuple[type, ...] = ()

    @classmethod
    def of(cls, obj: object) -> PluginMetadata:
        """Read and check the attributes ``obj`` declares (the others take their defaults)."""
        requires = getattr(obj, "requires", None) or ()
        if isinstance(requires, str) or not isinstance(requires, Sequence | frozenset | set):
            raise PluginDeclarationError("`requires` must be a sequence of plugin ids, e.g. ('memory',)")
        if not all(isinstance(dep, str) and dep for dep in requires):
            raise PluginDeclarationError("`requires` must hold plugin ids (non-empty strings)")
        config_class = getattr(obj, "config_class", None)
        if config_class is not None and not (isinstance(config_class, type) and attrs.has(config_class)):
            raise PluginDeclarationError("`config_class` must be an attrs class (or None)")
        config_env = getattr(obj, "config_env", None) or {}
        if not isinstance(config_env, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in config_env.items()
        ):
            raise PluginDeclarationError("`config_env` must map environment variable names to config fields")
        if config_env and config_class is None:
            raise PluginDeclarationError("`config_env` needs a `config_class` whose fields it sets")
        hookspecs = getattr(obj, "hookspecs", None) or ()
        if isinstance(hookspecs, type) or not all(isinstance(item, type) for item in hookspecs):
            raise PluginDeclarationError("`hookspecs` must be a sequence of classes of hook specifications")
        return cls(
            hookspecs=tuple(hookspecs),
            requires=tuple(dict.fromkeys(requires)),
            config_class=config_class,
            config_env=MappingProxyType(dict(config_env)),
        )
