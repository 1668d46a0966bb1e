"""Crash-safe file rewrites and the workspace lock.

- :func:`rewrite` reads a file, computes its new content, writes it to a temporary file in the directory of the
  file's *real* path (a symbolic link stays a link), fsyncs it, checks that nobody changed the file meanwhile
  (same inode, size and modification time, else it starts over), and ``os.replace``-s it over the real file,
  then fsyncs the directory. A failure at any step leaves the original file as it was and removes the
  temporary file. Bytes that another program appended to the old file in the instant between the check and the
  replace are carried over to the new one.
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
            data = change(before.data)
            if data is None:
                return False
            if _replace_if_unchanged(real, data, before):
                fsync_directory(real.parent)
                late = before.appended_since()
                if late:  # appended to the old file between our check and the replace: keep those bytes
                    _carry_over(real, late, attempts)
                return True
        time.sleep(min(RETRY_PAUSE_S * 2**attempt, MAX_RETRY_PAUSE_S))  # let the other writer finish
    raise FileChangedError(path)


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


def fsync_directory(directory: Path) -> None:
    """Make a rename or removal in ``directory`` durable (best effort where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


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
