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
:class:`WorkspaceWriteError`, and is kept pending in a :class:`~ego_workspace_sync.journal.PendingJournal`
(a file in the plugin's data directory when the plugin runs, so it survives a restart): it is retried, under
the lock, before every later write or removal and by :meth:`WorkspaceWriter.recover` at startup. A pending line
is dropped when its memory is forgotten. (A failed inner monologue is not retried: the next introspection
memory rewrites that file.)
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import date, tzinfo
from pathlib import Path
from typing import Literal

import attrs

from ego_core import Memory
from ego_workspace_sync.files import (
    LOCK_NAME,
    WorkspaceLock,
    atomic_remove,
    carry_over_late_appends,
    real_path,
    rewrite,
    stale_temporaries,
)
from ego_workspace_sync.journal import PendingJournal
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
Lookup = Callable[[Sequence[str]], Sequence[Memory]]
"""The memories that still exist among the ids given (to retry pending writes after a restart)."""


class WorkspaceWriteError(OSError):
    """Some workspace file could not be changed; the files named were left as they were.

    ``reason`` is the cause in a few words (no content); ``kept`` whether the pending work was saved in the
    journal file (``False``: it is kept in this process only).
    """

    def __init__(self, message: str, *, reason: str = "", kept: bool = True) -> None:
        super().__init__(message)
        self.reason = reason or message
        self.kept = kept


@attrs.frozen
class _Write:
    target: Target
    path: Path
    run: Callable[[], bool]
    """Does the write; whether the file changed."""


class WorkspaceWriter:
    """Writes one workspace. Thread-safe and safe across processes (see :class:`WorkspaceLock`).

    ``journal``: the file that keeps failed writes and removals across restarts (without one they are kept in
    this object only). ``fallback`` finds the earlier inner monologue to restore when the latest is forgotten;
    ``lookup`` finds a memory whose pending lines are retried after a restart.
    """

    def __init__(
        self,
        root: Path,
        *,
        tz: tzinfo,
        redact: Redact,
        log: logging.Logger | None = None,
        journal: Path | None = None,
        fallback: Fallback | None = None,
        lookup: Lookup | None = None,
    ) -> None:
        self.root = root
        self.memory_dir = root / "memory"
        self.curated_path = root / CURATED_NAME
        self.monologue_path = self.memory_dir / MONOLOGUE_NAME
        self.tz = tz
        self.redact = redact
        self.log = log or _log
        self.fallback = fallback
        self.lookup = lookup
        self.journal = PendingJournal(journal, root, log=self.log)
        self._lock = WorkspaceLock(root / LOCK_NAME)
        self._cache_lock = threading.Lock()
        self._memories: dict[str, Memory] = {}
        """The memories of pending writes made in this process (after a restart, ``lookup`` finds them)."""

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
        return self.journal.read().removals

    @property
    def pending_syncs(self) -> tuple[str, ...]:
        """Memories whose lines could not be written yet."""
        return tuple(self.journal.read().writes)

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
            kept = self._keep_sync(memory, targets)
            reason = _reason(exc)
            raise WorkspaceWriteError(
                f"could not lock the workspace ({reason}); nothing was written", reason=reason, kept=kept
            ) from exc
        kept = self._keep_sync(memory, [target for target, _reason_text in failed]) if failed else True
        problems = [*refused, *failed]
        if problems:
            names = ", ".join(f"{target} ({text})" for target, text in problems)
            raise WorkspaceWriteError(
                f"could not update {names}; those files were left as they were",
                reason="; ".join(text for _target, text in problems),
                kept=kept,
            )
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

    def _keep_sync(self, memory: Memory, targets: Iterable[Target]) -> bool:
        """Keep failed log lines for a retry; whether that reached the journal file. The inner monologue is not
        retried: it is a "latest" view, and a later retry could overwrite a newer monologue; the next
        introspection memory rewrites it."""
        lines = frozenset(t for t in targets if t != "monologue")
        if not lines:
            return True
        with self._cache_lock:
            self._memories[memory.id] = memory
        return self.journal.add_write(memory.id, frozenset(lines))

    def _appender(self, path: Path, header: str, line: str, memory_id: str) -> Callable[[], bool]:
        def change(current: bytes | None) -> bytes | None:
            data = current or b""
            if any(carries_marker(existing, memory_id) for existing in data.split(b"\n")):
                return None  # already there (a retry, or a second notification)
            if not data:
                data = header.encode("utf-8")
            elif not data.endswith(b"\n"):
                data += b"\n"
            return data + line.encode("utf-8") + b"\n"

        return lambda: rewrite(path, change)

    def _monologue_writer(self, memory: Memory) -> Callable[[], bool]:
        def change(current: bytes | None) -> bytes:
            head = _monologue_head(current)
            earlier = (head.memory_id, *head.previous) if head is not None else ()
            return monologue_text(memory, tz=self.tz, redact=self.redact, previous=earlier).encode("utf-8")

        return lambda: rewrite(self.monologue_path, change)

    # ------------------------------------------------------------------------------------------
    # Forgetting

    def forget(self, memory_id: str, *, fallback: Fallback | None = None) -> int:
        """Remove every trace of a memory: its lines in the daily logs and ``MEMORY.md`` (exactly the lines
        ending with its marker) and, if it is the latest inner monologue, that file (replaced by the newest
        earlier monologue ``fallback`` still finds, else removed).

        Returns the number of lines removed. On failure the removal is kept pending (in the journal) and
        retried before every later write and at the next start, and :class:`WorkspaceWriteError` is raised.
        """
        marker(memory_id)
        with self._cache_lock:
            self._memories.pop(memory_id, None)
        if memory_id in self.journal.read().writes:
            self.journal.drop_write(memory_id)
        try:
            with self._lock.hold():
                self._retry_pending()
                return self._remove_everywhere(memory_id, fallback or self.fallback)
        except (OSError, RenderError) as exc:
            kept = self.journal.add_removal(memory_id)
            reason = _reason(exc)
            raise WorkspaceWriteError(
                f"could not remove {memory_id} from the workspace ({reason}); it will be retried",
                reason=reason,
                kept=kept,
            ) from exc

    def close(self) -> None:
        """At shutdown: what other programs appended to files just before ego replaced them goes into the files."""
        try:
            with self._lock.hold():
                carry_over_late_appends(self.root)
        except OSError as exc:
            self.log.warning("workspace: late appends of other programs could not be carried over: %s", _reason(exc))

    def recover(self) -> None:
        """At startup: remove temporary files a killed writer left, and retry pending work. Creates nothing
        when the workspace does not exist (the pending work waits for the first write then)."""
        if not self.root.is_dir():
            return
        pending = self.journal.read()
        if not pending and not stale_temporaries(self._temporary_dirs()):
            return
        try:
            with self._lock.hold():
                self._remove_temporaries()
                self._retry_pending()
        except OSError as exc:
            self.log.warning("workspace recovery at startup failed: %s", _reason(exc))

    def _retry_pending(self) -> None:
        """Pending removals, then pending writes (called under the lock)."""
        pending = self.journal.read()
        for memory_id in pending.removals:
            try:
                self._remove_everywhere(memory_id, self.fallback)
            except (OSError, RenderError) as exc:
                self.log.warning("workspace removal of %s still failing: %s", memory_id, _reason(exc))
                continue
            self.journal.done_removal(memory_id)
            self.log.info("workspace removal of %s completed on retry", memory_id)
        for memory_id, targets in pending.writes.items():
            memory = self._pending_memory(memory_id)
            if memory is None:
                continue
            writes, refused = self._plan(memory, sorted(t for t in ("daily", "curated") if t in targets))
            if refused:
                self.log.warning("workspace sync of %s cannot be rendered; dropped", memory_id)
            _changed, failed = self._attempt(writes)
            left = frozenset(target for target, _text in failed)
            self.journal.retried_write(memory_id, left)
            if not left:
                with self._cache_lock:
                    self._memories.pop(memory_id, None)
                self.log.info("workspace sync of %s completed on retry", memory_id)

    def _pending_memory(self, memory_id: str) -> Memory | None:
        """The memory of a pending write; ``None`` (and the write dropped, when it cannot be done) otherwise."""
        with self._cache_lock:
            memory = self._memories.get(memory_id)
        if memory is None and self.lookup is not None:
            try:
                found = [m for m in self.lookup([memory_id]) if m.id == memory_id]
            except Exception as exc:  # the store is unavailable right now: keep the write pending
                self.log.warning("workspace sync of %s: memory lookup failed (%s)", memory_id, type(exc).__name__)
                return None
            memory = found[0] if found else None
        if memory is None or memory.is_private:
            self.journal.drop_write(memory_id)
            self.log.warning("workspace sync of %s dropped: the memory is gone", memory_id)
            return None
        return memory

    def _temporary_dirs(self) -> list[Path]:
        """Where our temporary files can be: the workspace, ``memory/``, and the directories of linked files."""
        dirs = {self.root, self.memory_dir}
        for path in [self.curated_path, self.monologue_path, *self.daily_paths()]:
            if path.is_symlink():
                dirs.add(real_path(path).parent)
        return sorted(d for d in dirs if d.is_dir())

    def _remove_temporaries(self) -> None:
        for leftover in stale_temporaries(self._temporary_dirs()):  # under the lock: no writer is mid-write
            leftover.unlink(missing_ok=True)
            self.log.info("removed the stale temporary file %s", leftover)

    def _remove_everywhere(self, memory_id: str, fallback: Fallback | None) -> int:
        self._remove_temporaries()  # a temporary file is a full copy of a workspace file, with the lines
        removed = 0
        for path in [*self.daily_paths(), self.curated_path]:
            removed += self._remove_lines(path, memory_id)
        self._forget_monologue(memory_id, fallback)
        return removed

    @staticmethod
    def _remove_lines(path: Path, memory_id: str) -> int:
        tag = marker(memory_id).encode("ascii")
        removed = 0

        def change(current: bytes | None) -> bytes | None:
            nonlocal removed
            removed = 0
            if current is None or tag not in current:
                return None
            lines = current.split(b"\n")
            kept = [line for line in lines if not carries_marker(line, memory_id)]
            removed = len(lines) - len(kept)
            return b"\n".join(kept) if removed else None

        rewrite(path, change)
        return removed

    def _forget_monologue(self, memory_id: str, fallback: Fallback | None) -> None:
        remove = False

        def change(current: bytes | None) -> bytes | None:
            nonlocal remove
            remove = False
            head = _monologue_head(current)
            if current is None or head is None:
                return None  # no inner monologue, or not ego's
            if head.memory_id == memory_id:
                earlier = [i for i in head.previous if i != memory_id]
                replacement = fallback(earlier) if fallback is not None and earlier else None
                if replacement is None or replacement.is_private or replacement.category != INTROSPECTION:
                    remove = True
                    return None
                rest = [i for i in earlier if i != replacement.id]
                return monologue_text(replacement, tz=self.tz, redact=self.redact, previous=rest).encode("utf-8")
            if memory_id in head.previous:
                body = current.partition(b"\n")[2]
                kept = MonologueHead(head.memory_id, tuple(i for i in head.previous if i != memory_id)[:MAX_PREVIOUS])
                return kept.render().encode("utf-8") + b"\n" + body
            return None

        rewrite(self.monologue_path, change)
        if remove:
            atomic_remove(real_path(self.monologue_path))  # the content goes; a link to it stays (dangling)

    # ------------------------------------------------------------------------------------------
    # Health

    def probe(self) -> str | None:
        """``None`` if the workspace (and its ``memory/`` directory) can be written, or created at the first
        write; else the reason. Creates nothing (in an existing directory a probe file is created and removed)."""
        for directory in (self.root, self.memory_dir):
            try:
                if directory.is_dir():
                    _probe_directory(directory)
                    continue
                if directory.exists() or directory.is_symlink():
                    return f"{directory} is not a directory"
                return _creatable(directory)
            except OSError as exc:
                return f"{directory}: {_reason(exc)}"
        return None


def _monologue_head(data: bytes | None) -> MonologueHead | None:
    if not data:
        return None
    return MonologueHead.parse(data.partition(b"\n")[0].decode("utf-8", errors="replace"))


def _probe_directory(directory: Path) -> None:
    probe = directory / f"{PROBE_NAME}-{secrets.token_hex(6)}"
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, b"ok")
    finally:
        os.close(fd)
        probe.unlink(missing_ok=True)


def _creatable(directory: Path) -> str | None:
    """``None`` if ``directory`` (which does not exist) can be created, else why not."""
    ancestor = directory.parent
    while not ancestor.exists() and not ancestor.is_symlink() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{directory} cannot be created: {ancestor} is not a directory"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"{directory} cannot be created: {ancestor} is not writable"
    return None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{type(exc).__name__}: {exc.strerror}"
    return type(exc).__name__
