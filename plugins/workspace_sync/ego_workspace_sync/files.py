"""Crash-safe file writes and the workspace lock.

- :func:`atomic_write` writes a temporary file in the target's directory, fsyncs it, and ``os.replace``-s it
  over the target (then fsyncs the directory). A failure at any step leaves the original file as it was and
  removes the temporary file.
- :class:`WorkspaceLock` serialises writers: a thread lock within a process, then an exclusive ``flock`` on
  ``<workspace>/.ego-workspace.lock`` across processes (two ``ego serve`` processes on one workspace).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

LOCK_NAME = ".ego-workspace.lock"
TEMP_SUFFIX = ".ego-tmp"
NEW_FILE_MODE = 0o644


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path``'s content with ``data`` all at once (the original stays until the replace)."""
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = NEW_FILE_MODE
    fd, name = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    temporary = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        temporary.chmod(mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    fsync_directory(directory)


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


def stale_temporaries(directory: Path) -> list[Path]:
    """Temporary files left by a writer that died before its replace (only meaningful under the lock)."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.glob(f".*{TEMP_SUFFIX}") if p.is_file())


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
