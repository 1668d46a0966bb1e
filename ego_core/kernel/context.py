"""What a plugin's hook implementations receive as ``ctx``: its config, data dir, clock, services and hooks."""

from __future__ import annotations

import json
import logging
import random
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

import attrs

from ego_core.embedding import Embedder, EmbedderSettings
from ego_core.kernel.config import Settings
from ego_core.kernel.dispatch import HookCaller
from ego_core.kernel.storage import (
    Database,
    Migration,
    Synchronous,
    open_database,
    private_directory,
    read_database,
    write_atomically,
)

if TYPE_CHECKING:
    from ego_core.progress import Progress

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


class SessionMarker:
    """When the previous session began: the core's ``wake_up`` records each start in ``<data dir>/core/session.json``.

    :meth:`begin` (called by ``wake_up`` before the plugins' sections are composed) keeps the start it finds as
    the previous one and records the new one, so ``ctx.previous_session()`` answers "since when" during that
    ``wake_up`` and for the rest of the session.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._previous: datetime | None = None
        self._begun = False

    def _stored(self) -> datetime | None:
        try:
            value = json.loads(self.path.read_text(encoding="utf-8")).get("wake_up")
            moment = datetime.fromisoformat(value) if isinstance(value, str) else None
        except (OSError, ValueError, AttributeError):
            return None
        return moment if moment is not None and moment.tzinfo is not None else None

    def previous(self) -> datetime | None:
        """The start of the previous session (``None`` before the first): before this process's first
        ``wake_up``, the last one recorded."""
        with self._lock:
            return self._previous if self._begun else self._stored()

    def begin(self, now: datetime) -> datetime | None:
        """Record a session starting ``now``; returns the previous start."""
        with self._lock:
            self._previous, self._begun = self._stored(), True
            try:
                private_directory(self.path.parent)
                write_atomically(self.path, json.dumps({"wake_up": now.astimezone(UTC).isoformat()}))
            except OSError as exc:  # a read-only data directory: wake_up still answers
                logging.getLogger("ego.host").warning("could not record the session start: %s", exc.strerror)
            return self._previous


class HostFacilities(Protocol):
    """What a plugin context asks of the host that made it."""

    def tool_served(self, name: str) -> bool: ...

    def redaction(self, text: str) -> str: ...

    def make_embedder(self, name: str, settings: EmbedderSettings) -> Embedder: ...

    def embedder_names(self) -> list[str]: ...

    def unavailable_plugins(self) -> list[str]: ...

    def previous_session(self) -> datetime | None: ...

    def unavailable_stages(self) -> dict[str, Any]: ...

    def begin_session(self, now: datetime) -> datetime | None: ...


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
    _random: random.Random | None = attrs.field(default=None, init=False, repr=False)

    @property
    def random(self) -> random.Random:
        """This plugin's source of chance (an involuntary recollection, a hint shown one time in four). With
        ``random_seed`` set (``EGO_RANDOM_SEED``), each plugin's sequence is fixed by the seed and its id."""
        if self._random is None:
            seed = self.settings.random_seed
            self._random = random.Random(f"{seed}:{self.plugin_id}") if seed is not None else random.Random()
        return self._random

    @property
    def data_dir(self) -> Path:
        """``<data dir>/<plugin id>``, created on first use; only its owner may enter it (mode 0700)."""
        return private_directory(self.settings.data_dir.expanduser() / self.plugin_id)

    def now(self) -> datetime:
        return self.clock.now()

    def provide(self, name: str, obj: object) -> None:
        self.services.provide(name, obj, plugin=self.plugin_id)

    def tool_served(self, name: str) -> bool:
        return self.host.tool_served(name)

    def redact(self, text: str) -> str:
        """``text`` as it may leave the process (logs, files, the gateway): through the redaction pipeline."""
        return self.host.redaction(text)

    def progress(self, total: float | None, message: str | None = None) -> AbstractContextManager[Progress]:
        """``with ctx.progress(total, "reindex") as progress: ... progress.advance(n)``: how far a long call has
        come, sent to the MCP client as progress notifications when it asked for them (a no-op otherwise, and
        outside a tool call). Inside ``progress.part(amount)`` another plugin's ``ctx.progress`` fills that part."""
        from ego_core.progress import open_progress

        return open_progress(total, message)

    def embedder(self, name: str, settings: EmbedderSettings) -> Embedder:
        return self.host.make_embedder(name, settings)

    def embedder_names(self) -> list[str]:
        """The embedders plugins registered (``register_embedders``), to check a configured name."""
        return self.host.embedder_names()

    def unavailable_plugins(self) -> list[str]:
        """Selected plugins that are not working: they failed to load or to start."""
        return self.host.unavailable_plugins()

    def previous_session(self) -> datetime | None:
        """When the previous session began (its ``wake_up``), or ``None`` before the first: during ``wake_up``
        and for the rest of the session, the start before this one. For "since we last met" lines."""
        return self.host.previous_session()

    def database(
        self,
        migrations: Sequence[Migration],
        name: str | None = None,
        *,
        synchronous: Synchronous = "NORMAL",
        secure_delete: bool = False,
    ) -> Database:
        """Open this plugin's SQLite database ``<data dir>/<name>`` (default ``<plugin id>.sqlite3``): created
        with mode 0600, in WAL mode, its schema brought up to date by ``migrations`` (``migrations[i]``, SQL or
        a function of the connection, takes it from version ``i`` to ``i + 1``). Writes go through ``with
        database.write() as db:``. ``synchronous`` and ``secure_delete``: see :func:`open_database`. Usually
        opened in ``on_startup`` and closed in ``on_shutdown``."""
        path = self.data_dir / (name or f"{self.plugin_id}.sqlite3")
        return open_database(path, migrations, synchronous=synchronous, secure_delete=secure_delete)

    def read_database(self, name: str | None = None) -> Database | None:
        """The same database read-only, or ``None`` when it does not exist yet: nothing is created or migrated,
        so ``doctor_checks`` and ``export_records`` can read it when ``on_startup`` did not run (or failed)."""
        path = self.settings.data_dir.expanduser() / self.plugin_id / (name or f"{self.plugin_id}.sqlite3")
        return read_database(path)
