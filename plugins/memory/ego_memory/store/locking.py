"""An inter-process reader/writer lock on a file, re-entrant within a process.

Writers hold an exclusive ``flock`` for the whole of a write (Chroma and SQLite); readers a shared one.
Within one process a re-entrant thread lock serialises access first, so nested use is safe.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class FileLock:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._mode = 0

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._hold(fcntl.LOCK_EX):
            yield

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._hold(fcntl.LOCK_SH):
            yield

    @contextmanager
    def _hold(self, mode: int) -> Iterator[None]:
        with self._thread_lock:
            outer = self._depth == 0
            if outer:
                fcntl.flock(self._fd, mode)
                self._mode = mode
            elif mode == fcntl.LOCK_EX and self._mode != fcntl.LOCK_EX:
                raise RuntimeError("cannot upgrade a shared store lock to exclusive; take the exclusive lock first")
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if outer:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
                    self._mode = 0

    def close(self) -> None:
        with self._thread_lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
