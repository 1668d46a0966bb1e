"""Crash-safe file rewrites and the workspace lock.

- :func:`rewrite` reads a file, computes its new content, writes it to a temporary file in the directory of the
  file's *real* path (a symbolic link stays a link), fsyncs it, checks that nobody changed the file meanwhile
  (same inode, size and modification time, else it starts over), and ``os.replace``-s it over the real file,
  then fsyncs the directory. A failure at any step leaves the original file as it was and removes the
  temporary file. Bytes that another program appended to the old file in the instant between the check and the
  replace are carried over to the new one. A program that opened the old file just before the replace may write
  to it a moment later still: the old version stays open (the last ``LINGERING`` of each file) and what reaches
  it is carried over by the next rewrite of that file, or by :func:`carry_over_late_appends` (at shutdown).
- New files get ``0o666`` minus the umask (the kernel applies it); a rewritten file keeps its permission bits.
- :class:`WorkspaceLock` serialises ego's writers: a thread lock within a process, then an exclusive ``flock``
  on ``<workspace>/.ego-workspace.lock`` across processes (two ``ego serve`` processes on one workspace).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import logging
import os
import re
import secrets
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ego_core import fsync_directory

_log = logging.getLogger("ego.plugin.workspace_sync")

LOCK_NAME = ".ego-workspace.lock"
TEMP_SUFFIX = ".ego-tmp"
NEW_FILE_MODE = 0o666
"""Passed to ``open(2)`` for a new file: the kernel takes the process umask off (``0o644`` under umask 022)."""
ATTEMPTS = 10
"""How often :func:`rewrite` starts over when the file keeps changing under it before giving up."""
RETRY_PAUSE_S = 0.002
MAX_RETRY_PAUSE_S = 0.1
"""Pause before each new attempt, doubling from ``RETRY_PAUSE_S`` up to this: lets the other writer finish."""

LINGERING = 4
"""Replaced versions of each file kept open, to catch what another program still appends to them ..."""
TOTAL = 32
"""... and of all files together (the oldest is read one last time and closed)."""

# Ours: ".<file name>.<12 hex digits>.ego-tmp" (and ".<name>.<8 chars>.ego-tmp" of earlier versions).
_TEMPORARY = re.compile(r"^\..+\.(?:[0-9a-f]{12}|[a-z0-9_]{8})" + re.escape(TEMP_SUFFIX) + r"$")

Change = Callable[[bytes | None], bytes | None]
"""Given a file's current content (``None``: no such file), its new content, or ``None`` to leave it as it is."""


class FileChangedError(OSError):
    """The file kept changing while ego was rewriting it; it was left as the other program wrote it."""

    def __init__(self, path: Path) -> None:
        super().__init__(errno.EAGAIN, "the file kept changing while it was being rewritten", str(path))


def real_path(path: Path) -> Path:
    """``path`` with every symbolic link resolved (also a dangling one: its target is what gets written)."""
    return Path(os.path.realpath(path))


def rewrite(path: Path, change: Change, *, attempts: int = ATTEMPTS) -> bool:
    """Apply ``change`` to ``path``'s content, atomically; whether the file was written.

    ``change`` may be called more than once (when another program changed the file meanwhile, it is called
    again with the new content). Raises :class:`FileChangedError` if the file changed every time.
    """
    real = real_path(path)
    for attempt in range(attempts):
        with _Snapshot.take(real) as before:
            earlier = _REPLACED.appended(real)  # written to versions replaced before: part of the file too
            data = change(_with_tail(before.data, earlier) if earlier else before.data)
            if data is None:
                _REPLACED.give_back(real, earlier)
                return False
            if _replace_if_unchanged(real, data, before):
                fsync_directory(real.parent)
                late = before.appended_since()
                _REPLACED.keep(real, before, len(before.data or b"") + len(late))
                if late:  # appended to the old file between our check and the replace: keep those bytes
                    _carry_over(real, late, attempts)
                return True
            _REPLACED.give_back(real, earlier)
        time.sleep(min(RETRY_PAUSE_S * 2**attempt, MAX_RETRY_PAUSE_S))  # let the other writer finish
    raise FileChangedError(path)


class _ReplacedVersions:
    """The last versions of files that rewrites replaced, still open, with how much of each has been read."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: list[tuple[Path, int, list[int]]] = []  # (real path, fd, [offset read]), oldest first
        self._pending: dict[Path, bytes] = {}

    def keep(self, real: Path, snapshot: _Snapshot, offset: int) -> None:
        """Keep the replaced version open; its first ``offset`` bytes are accounted for."""
        if snapshot.fd is None:
            return
        try:
            fd = os.dup(snapshot.fd)
        except OSError:
            return
        with self._lock:
            self._open.append((real, fd, [offset]))
            mine = [entry for entry in self._open if entry[0] == real]
            for entry in [*mine[: max(0, len(mine) - LINGERING)], *self._open[: max(0, len(self._open) - TOTAL)]]:
                if entry in self._open:
                    self._close(entry)

    def _close(self, entry: tuple[Path, int, list[int]]) -> None:
        real, fd, offset = entry
        late = _read_from(fd, offset[0])
        if late:
            self._pending[real] = self._pending.get(real, b"") + late
        os.close(fd)
        self._open.remove(entry)

    def appended(self, real: Path) -> bytes:
        """What was appended to replaced versions of ``real`` since they were last looked at."""
        with self._lock:
            found = [self._pending.pop(real, b"")]
            for path, fd, offset in self._open:
                if path == real:
                    late = _read_from(fd, offset[0])
                    offset[0] += len(late)
                    found.append(late)
        return b"".join(found)

    def give_back(self, real: Path, late: bytes) -> None:
        """``late`` was not written after all (the rewrite changed nothing or starts over): keep it for later."""
        if late:
            with self._lock:
                self._pending[real] = late + self._pending.get(real, b"")

    def release(self, real: Path) -> None:
        """Close the kept versions of ``real`` (what reached them since the last look is kept for later)."""
        with self._lock:
            for entry in [entry for entry in self._open if entry[0] == real]:
                self._close(entry)

    def paths(self) -> list[Path]:
        with self._lock:
            return sorted({*(entry[0] for entry in self._open), *self._pending})


def _read_from(fd: int, offset: int) -> bytes:
    try:
        size = os.fstat(fd).st_size
        return os.pread(fd, size - offset, offset) if size > offset else b""
    except OSError:
        return b""


_REPLACED = _ReplacedVersions()


def carry_over_late_appends(under: Path) -> None:
    """Write into each file below ``under`` that ego rewrote what other programs appended to its replaced
    versions since, then close those versions (at shutdown, under the workspace lock)."""
    root = real_path(under)
    for real in _REPLACED.paths():
        if real.is_relative_to(root):
            late = _REPLACED.appended(real)
            if late:
                _carry_over(real, late, ATTEMPTS)
            _REPLACED.release(real)


def _carry_over(real: Path, late: bytes, attempts: int) -> None:
    """Put bytes appended to the replaced file back at the end of the new one: by a rewrite (which keeps the
    line structure), or, while the file keeps changing, by appending them as the other program did."""
    try:
        rewrite(real, functools.partial(_with_tail, tail=late), attempts=attempts)
        return
    except OSError:
        pass
    try:
        fd = os.open(real, os.O_WRONLY | os.O_APPEND)
        try:
            view = memoryview(late)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        _log.warning("%s: bytes another program appended during a rewrite were lost (%s)", real, exc)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path``'s content with ``data`` all at once (the original stays until the replace)."""
    rewrite(path, lambda _current: data)


def atomic_remove(path: Path) -> bool:
    """Remove ``path`` if it exists (and make the removal durable); whether there was a file."""
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    fsync_directory(path.parent)
    return True


def is_temporary_name(name: str) -> bool:
    """Whether ``name`` is one of ego's temporary files (never a user's file)."""
    return _TEMPORARY.match(name) is not None


def stale_temporaries(directories: Iterable[Path]) -> list[Path]:
    """Temporary files of ours left by a writer that died before its replace (only meaningful under the lock):
    regular files (not links) whose names follow our pattern, in the given directories."""
    found: set[Path] = set()
    for directory in directories:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            with contextlib.suppress(OSError):
                if is_temporary_name(entry.name) and entry.is_file(follow_symlinks=False):
                    found.add(Path(entry.path))
    return sorted(found)


# --------------------------------------------------------------------------------------------------
# One read-modify-replace


class _Snapshot:
    """A file's content as read, its identity (device, inode, size, mtime_ns), and the open descriptor (kept
    open to see what is appended to the old file after the replace)."""

    def __init__(self, data: bytes | None, identity: tuple[int, int, int, int] | None, mode: int | None) -> None:
        self.data = data
        self.identity = identity
        self.mode = mode
        self.fd: int | None = None

    @classmethod
    @contextlib.contextmanager
    def take(cls, real: Path) -> Iterator[_Snapshot]:
        try:
            fd: int | None = os.open(real, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            fd = None
        if fd is None:
            yield cls(None, None, None)
            return
        try:
            yield cls._read(fd)
        finally:
            os.close(fd)

    @classmethod
    def _read(cls, fd: int) -> _Snapshot:
        for _attempt in range(ATTEMPTS):
            os.lseek(fd, 0, os.SEEK_SET)
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            data = b"".join(chunks)
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise OSError(errno.EINVAL, "not a regular file")
            if info.st_size == len(data):  # nothing was appended between the read and the fstat
                snapshot = cls(data, _identity(info), stat.S_IMODE(info.st_mode))
                snapshot.fd = fd
                return snapshot
        raise OSError(errno.EAGAIN, "the file kept changing while it was being read")

    def appended_since(self) -> bytes:
        """What was appended to the (now replaced) file after it was read."""
        if self.fd is None or self.data is None:
            return b""
        try:
            if os.fstat(self.fd).st_size <= len(self.data):
                return b""
            os.lseek(self.fd, len(self.data), os.SEEK_SET)
            chunks = []
            while chunk := os.read(self.fd, 1 << 20):
                chunks.append(chunk)
        except OSError:
            return b""
        return b"".join(chunks)


def _identity(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def _current_identity(real: Path) -> tuple[int, int, int, int] | None:
    try:
        return _identity(os.stat(real))
    except FileNotFoundError:
        return None


def _replace_if_unchanged(real: Path, data: bytes, before: _Snapshot) -> bool:
    """Write ``data`` to a temporary file beside ``real`` and replace ``real`` with it, unless ``real`` changed
    since ``before`` was read (then nothing is replaced and ``False`` is returned)."""
    if before.mode is None:
        real.parent.mkdir(parents=True, exist_ok=True)
    temporary = real.parent / f".{real.name}.{secrets.token_hex(6)}{TEMP_SUFFIX}"
    # A new file: 0o666 minus the umask, applied by the kernel. An existing one: created private, then given the
    # file's own bits (never briefly more open than the file it replaces).
    fd = os.open(
        temporary,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
        NEW_FILE_MODE if before.mode is None else 0o600,
    )
    replaced = False
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if before.mode is not None:
                os.fchmod(fd, before.mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        # The window in which another program's write can still be overwritten is from here to the replace.
        if _current_identity(real) == before.identity:
            os.replace(temporary, real)
            replaced = True
    finally:
        if not replaced:
            with contextlib.suppress(OSError):
                temporary.unlink()
    return replaced


def _with_tail(current: bytes | None, tail: bytes) -> bytes:
    data = current or b""
    if data and not data.endswith(b"\n"):
        data += b"\n"
    return data + tail


# --------------------------------------------------------------------------------------------------
# The workspace lock


class WorkspaceLock:
    """Exclusive access to one workspace, within and across processes. Not re-entrant."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread_lock = threading.Lock()

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        with self._thread_lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # closing the only descriptor releases the flock
