"""The workspace writer: appends entries, rewrites the inner monologue, removes forgotten memories.

Layout under the workspace directory (an OpenClaw workspace)::

    memory/YYYY-MM-DD.md              every non-private memory, one line, by local date
    MEMORY.md                         curated memories (importance >= 4, or introspection, relationship,
                                      self_discovery, lesson), one line each, with the date
    memory/inner-monologue-latest.md  the latest introspection memory, overwritten each time
    .ego-workspace.lock               the lock file (empty)

Every public method that takes a memory refuses a private one with :class:`PrivateMemoryError` (so does
the rendering underneath): private memories never reach a workspace file, whoever calls. Every change is
an atomic replace under the workspace lock; lines the writer did not write are kept byte for byte.

A write or removal that fails (disk full, permissions) leaves the files as they were, raises
:class:`WorkspaceWriteError`, and is kept pending in this process: it is retried, under the lock, before
every later write or removal. A pending line is dropped when its memory is forgotten. (A failed inner
monologue is not retried: the next introspection memory rewrites that file.)
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import date, tzinfo
from pathlib import Path
from typing import Literal

import attrs

from ego_core.types import Memory
from ego_workspace_sync.files import LOCK_NAME, WorkspaceLock, atomic_remove, atomic_write, stale_temporaries
from ego_workspace_sync.render import (
    CURATED_HEADER,
    INTROSPECTION,
    MAX_PREVIOUS,
    MonologueHead,
    Redact,
    RenderError,
    carries_marker,
    daily_header,
    entry_line,
    is_curated,
    local_day,
    marker,
    monologue_text,
    refuse_private,
)

_log = logging.getLogger("ego.plugin.workspace_sync")

DAILY_GLOB = "????-??-??.md"
CURATED_NAME = "MEMORY.md"
MONOLOGUE_NAME = "inner-monologue-latest.md"
PROBE_NAME = ".ego-doctor-probe"

Target = Literal["daily", "curated", "monologue"]
Fallback = Callable[[Sequence[str]], Memory | None]
"""Given earlier inner-monologue ids (newest first), the first that still exists (or ``None``)."""


class WorkspaceWriteError(OSError):
    """Some workspace file could not be changed; the files named were left as they were."""


@attrs.frozen
class _Write:
    target: Target
    path: Path
    run: Callable[[], bool]
    """Does the write; whether the file changed."""


@attrs.frozen
class _PendingSync:
    memory: Memory
    targets: frozenset[Target]


class WorkspaceWriter:
    """Writes one workspace. Thread-safe and safe across processes (see :class:`WorkspaceLock`)."""

    def __init__(self, root: Path, *, tz: tzinfo, redact: Redact, log: logging.Logger | None = None) -> None:
        self.root = root
        self.memory_dir = root / "memory"
        self.curated_path = root / CURATED_NAME
        self.monologue_path = self.memory_dir / MONOLOGUE_NAME
        self.tz = tz
        self.redact = redact
        self.log = log or _log
        self._lock = WorkspaceLock(root / LOCK_NAME)
        self._pending_lock = threading.Lock()
        self._pending_removals: dict[str, Fallback | None] = {}
        self._pending_syncs: dict[str, _PendingSync] = {}

    # ------------------------------------------------------------------------------------------
    # Paths and state

    def daily_path(self, day: date) -> Path:
        return self.memory_dir / f"{day.isoformat()}.md"

    def daily_paths(self) -> list[Path]:
        if not self.memory_dir.is_dir():
            return []
        return sorted(p for p in self.memory_dir.glob(DAILY_GLOB) if p.is_file())

    @property
    def pending_removals(self) -> tuple[str, ...]:
        """Forgotten memories whose lines could not be removed yet."""
        with self._pending_lock:
            return tuple(self._pending_removals)

    @property
    def pending_syncs(self) -> tuple[str, ...]:
        """Memories whose lines could not be written yet."""
        with self._pending_lock:
            return tuple(self._pending_syncs)

    # ------------------------------------------------------------------------------------------
    # Writing

    def sync(self, memory: Memory) -> list[Path]:
        """Write everything a new memory adds: the daily line, the curated line, the inner monologue.

        Returns the files changed. Raises :class:`PrivateMemoryError` for a private memory (nothing written),
        :class:`WorkspaceWriteError` naming the files that could not be written (the others were).
        """
        refuse_private(memory)
        targets: list[Target] = ["daily"]
        if is_curated(memory):
            targets.append("curated")
        if memory.category == INTROSPECTION:
            targets.append("monologue")
        return self._run(memory, targets)

    def append_daily(self, memory: Memory) -> bool:
        """Append the memory's line to its local day's log; ``False`` if it was already there."""
        refuse_private(memory)
        return bool(self._run(memory, ["daily"]))

    def append_curated(self, memory: Memory) -> bool:
        """Append the memory's line to ``MEMORY.md`` (whatever its importance); ``False`` if already there."""
        refuse_private(memory)
        return bool(self._run(memory, ["curated"]))

    def write_monologue(self, memory: Memory) -> None:
        """Overwrite ``memory/inner-monologue-latest.md`` with this memory."""
        refuse_private(memory)
        self._run(memory, ["monologue"])

    def _plan(self, memory: Memory, targets: Iterable[Target]) -> tuple[list[_Write], list[tuple[Target, str]]]:
        """The writes for a memory, rendered (and checked) before any lock is taken.

        A target that cannot be rendered safely is refused on its own; the others are still written.
        """
        refuse_private(memory)
        writes: list[_Write] = []
        refused: list[tuple[Target, str]] = []
        for target in targets:
            try:
                writes.append(self._render(memory, target))
            except RenderError as exc:
                refused.append((target, str(exc)))
        return writes, refused

    def _render(self, memory: Memory, target: Target) -> _Write:
        if target == "daily":
            day = local_day(memory, self.tz)
            path, header = self.daily_path(day), daily_header(day)
            line = entry_line(memory, tz=self.tz, redact=self.redact)
            return _Write(target, path, self._appender(path, header, line, memory.id))
        if target == "curated":
            line = entry_line(memory, tz=self.tz, redact=self.redact, with_date=True)
            return _Write(target, self.curated_path, self._appender(self.curated_path, CURATED_HEADER, line, memory.id))
        monologue_text(memory, tz=self.tz, redact=self.redact)  # refuse early, outside the lock
        return _Write(target, self.monologue_path, self._monologue_writer(memory))

    def _run(self, memory: Memory, targets: Sequence[Target]) -> list[Path]:
        writes, refused = self._plan(memory, targets)
        try:
            with self._lock.hold():
                self._retry_pending()
                changed, failed = self._attempt(writes)
        except OSError as exc:  # the lock itself (every write's own failure is caught in _attempt)
            self._keep_sync(memory, targets)
            raise WorkspaceWriteError(f"could not lock the workspace ({_reason(exc)}); nothing was written") from exc
        if failed:
            self._keep_sync(memory, [target for target, _reason_text in failed])
        problems = [*refused, *failed]
        if problems:
            names = ", ".join(f"{target} ({text})" for target, text in problems)
            raise WorkspaceWriteError(f"could not update {names}; those files were left as they were")
        return changed

    def _attempt(self, writes: Sequence[_Write]) -> tuple[list[Path], list[tuple[Target, str]]]:
        """Every write is attempted (under the lock); the files changed and the targets that failed."""
        changed: list[Path] = []
        failed: list[tuple[Target, str]] = []
        for write in writes:
            try:
                if write.run():
                    changed.append(write.path)
            except (OSError, RenderError) as exc:
                failed.append((write.target, _reason(exc)))
        return changed, failed

    def _keep_sync(self, memory: Memory, targets: Iterable[Target]) -> None:
        """Keep failed log lines for a retry. The inner monologue is not retried: it is a "latest" view, and a
        later retry could overwrite a newer monologue; the next introspection memory rewrites it."""
        lines = frozenset(t for t in targets if t != "monologue")
        if not lines:
            return
        with self._pending_lock:
            previous = self._pending_syncs.get(memory.id)
            merged = lines | (previous.targets if previous is not None else frozenset())
            self._pending_syncs[memory.id] = _PendingSync(memory, merged)

    def _appender(self, path: Path, header: str, line: str, memory_id: str) -> Callable[[], bool]:
        def append() -> bool:
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                data = b""
            if any(carries_marker(existing, memory_id) for existing in data.split(b"\n")):
                return False  # already there (a retry, or a second notification)
            if not data:
                data = header.encode("utf-8")
            elif not data.endswith(b"\n"):
                data += b"\n"
            atomic_write(path, data + line.encode("utf-8") + b"\n")
            return True

        return append

    def _monologue_writer(self, memory: Memory) -> Callable[[], bool]:
        def write() -> bool:
            head = self._monologue_head()
            earlier = (head.memory_id, *head.previous) if head is not None else ()
            text = monologue_text(memory, tz=self.tz, redact=self.redact, previous=earlier)
            atomic_write(self.monologue_path, text.encode("utf-8"))
            return True

        return write

    # ------------------------------------------------------------------------------------------
    # Forgetting

    def forget(self, memory_id: str, *, fallback: Fallback | None = None) -> int:
        """Remove every trace of a memory: its lines in the daily logs and ``MEMORY.md`` (exactly the lines
        ending with its marker) and, if it is the latest inner monologue, that file (replaced by the newest
        earlier monologue ``fallback`` still finds, else removed).

        Returns the number of lines removed. On failure the removal is kept pending and retried before every
        later write, and :class:`WorkspaceWriteError` is raised.
        """
        marker(memory_id)
        with self._pending_lock:
            self._pending_syncs.pop(memory_id, None)
        try:
            with self._lock.hold():
                self._retry_pending()
                return self._remove_everywhere(memory_id, fallback)
        except (OSError, RenderError) as exc:
            with self._pending_lock:
                self._pending_removals[memory_id] = fallback
            raise WorkspaceWriteError(
                f"could not remove {memory_id} from the workspace ({_reason(exc)}); it will be retried"
            ) from exc

    def _retry_pending(self) -> None:
        """Pending removals, then pending writes (called under the lock)."""
        with self._pending_lock:
            removals = list(self._pending_removals.items())
        for memory_id, fallback in removals:
            try:
                self._remove_everywhere(memory_id, fallback)
            except (OSError, RenderError) as exc:
                self.log.warning("workspace removal of %s still failing: %s", memory_id, _reason(exc))
                continue
            with self._pending_lock:
                self._pending_removals.pop(memory_id, None)
            self.log.info("workspace removal of %s completed on retry", memory_id)
        with self._pending_lock:
            syncs = list(self._pending_syncs.values())
        for pending in syncs:
            writes, refused = self._plan(pending.memory, sorted(pending.targets))
            if refused:
                self.log.warning("workspace sync of %s cannot be rendered; dropped", pending.memory.id)
            _changed, failed = self._attempt(writes)
            with self._pending_lock:
                if pending.memory.id not in self._pending_syncs:
                    continue  # forgotten meanwhile
                if failed:
                    self._pending_syncs[pending.memory.id] = _PendingSync(
                        pending.memory, frozenset(target for target, _text in failed)
                    )
                else:
                    del self._pending_syncs[pending.memory.id]
            if not failed:
                self.log.info("workspace sync of %s completed on retry", pending.memory.id)

    def _remove_everywhere(self, memory_id: str, fallback: Fallback | None) -> int:
        for directory in (self.root, self.memory_dir):
            for leftover in stale_temporaries(directory):  # we hold the lock: no writer is mid-write
                leftover.unlink(missing_ok=True)
        removed = 0
        for path in [*self.daily_paths(), self.curated_path]:
            removed += self._remove_lines(path, memory_id)
        self._forget_monologue(memory_id, fallback)
        return removed

    @staticmethod
    def _remove_lines(path: Path, memory_id: str) -> int:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return 0
        if marker(memory_id).encode("ascii") not in data:
            return 0
        lines = data.split(b"\n")
        kept = [line for line in lines if not carries_marker(line, memory_id)]
        if len(kept) == len(lines):
            return 0
        atomic_write(path, b"\n".join(kept))
        return len(lines) - len(kept)

    def _monologue_head(self) -> MonologueHead | None:
        try:
            with self.monologue_path.open("rb") as handle:
                first = handle.readline()
        except FileNotFoundError:
            return None
        return MonologueHead.parse(first.decode("utf-8", errors="replace").rstrip("\n"))

    def _forget_monologue(self, memory_id: str, fallback: Fallback | None) -> None:
        head = self._monologue_head()
        if head is None:
            return
        if head.memory_id == memory_id:
            earlier = [i for i in head.previous if i != memory_id]
            replacement = fallback(earlier) if fallback is not None and earlier else None
            if replacement is None or replacement.is_private or replacement.category != INTROSPECTION:
                atomic_remove(self.monologue_path)
                return
            rest = [i for i in earlier if i != replacement.id]
            text = monologue_text(replacement, tz=self.tz, redact=self.redact, previous=rest)
            atomic_write(self.monologue_path, text.encode("utf-8"))
        elif memory_id in head.previous:
            data = self.monologue_path.read_bytes()
            body = data.split(b"\n", 1)[1] if b"\n" in data else b""
            kept = MonologueHead(head.memory_id, tuple(i for i in head.previous if i != memory_id)[:MAX_PREVIOUS])
            atomic_write(self.monologue_path, kept.render().encode("utf-8") + b"\n" + body)

    # ------------------------------------------------------------------------------------------
    # Health

    def probe(self) -> str | None:
        """``None`` if the workspace (and its ``memory/`` directory) can be written, else the reason."""
        try:
            self.memory_dir.mkdir(parents=True, exist_ok=True)
            for directory in (self.root, self.memory_dir):
                probe = directory / PROBE_NAME
                atomic_write(probe, b"ok")
                probe.unlink()
        except OSError as exc:
            return _reason(exc)
        return None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{type(exc).__name__}: {exc.strerror}"
    return type(exc).__name__
