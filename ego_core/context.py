"""What a plugin's hook implementations receive as ``ctx``: its config, data dir, clock, services and hooks."""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

import attrs

from ego_core.config import Settings
from ego_core.dispatch import HookCaller
from ego_core.embedding import Embedder, EmbedderSettings

T = TypeVar("T")


class Clock:
    """The host's notion of "now" (UTC). Tests and benchmarks fix it or move it."""

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

    def clear(self) -> None:
        with self._lock:
            self._items = {}

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


class HostFacilities(Protocol):
    """What a plugin context asks of the host that made it."""

    def tool_served(self, name: str) -> bool: ...

    def redaction(self, text: str) -> str: ...

    def make_embedder(self, name: str, settings: EmbedderSettings) -> Embedder: ...

    def embedder_names(self) -> list[str]: ...

    def unavailable_plugins(self) -> list[str]: ...


@attrs.define
class PluginContext:
    """What a plugin's hook implementations receive as ``ctx``."""

    plugin_id: str
    config: Any
    log: logging.Logger
    settings: Settings
    clock: Clock
    services: Services
    hooks: HookCaller
    host: HostFacilities

    @property
    def data_dir(self) -> Path:
        """``<data dir>/<plugin id>``, created on first use."""
        path = self.settings.data_dir.expanduser() / self.plugin_id
        path.mkdir(parents=True, exist_ok=True)
        return path

    def now(self) -> datetime:
        return self.clock.now()

    def provide(self, name: str, obj: object) -> None:
        self.services.provide(name, obj, plugin=self.plugin_id)

    def tool_served(self, name: str) -> bool:
        return self.host.tool_served(name)

    def redact(self, text: str) -> str:
        """``text`` as it may leave the process (logs, files, the gateway): through the redaction pipeline."""
        return self.host.redaction(text)

    def embedder(self, name: str, settings: EmbedderSettings) -> Embedder:
        return self.host.make_embedder(name, settings)

    def embedder_names(self) -> list[str]:
        """The embedders plugins registered (``register_embedders``), to check a configured name."""
        return self.host.embedder_names()

    def unavailable_plugins(self) -> list[str]:
        """Selected plugins that are not working: they failed to load or to start."""
        return self.host.unavailable_plugins()
