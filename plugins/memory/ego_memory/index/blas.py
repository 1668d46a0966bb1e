"""One BLAS thread while a single remember or recall runs.

A call's products are small (one query against 10,000 vectors, a few hundred candidates), and OpenBLAS's
worker threads cost more than they give there: measured on two cores with other work running, recall at
10,000 memories took p50 59 ms with OpenBLAS's default threads against 28 ms with one
(docs/benchmarks.md). Bulk work (reindex, import) keeps its threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Any, ParamSpec, TypeVar

from threadpoolctl import ThreadpoolController

P = ParamSpec("P")
R = TypeVar("R")


class _OneThread:
    """Nested and concurrent users share one limit; the last to leave restores the original thread count."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._controller: ThreadpoolController | None = None
        self._limiter: Any = None

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._lock:
            if self._users == 0:
                if self._controller is None:
                    self._controller = ThreadpoolController()
                self._limiter = self._controller.limit(limits=1, user_api="blas")
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0 and self._limiter is not None:
                    self._limiter.restore_original_limits()
                    self._limiter = None


_ONE_THREAD = _OneThread()


def one_blas_thread(function: Callable[P, R]) -> Callable[P, R]:
    """Run ``function`` with BLAS limited to one thread (see the module docstring)."""

    @wraps(function)
    def limited(*args: P.args, **kwargs: P.kwargs) -> R:
        with _ONE_THREAD.held():
            return function(*args, **kwargs)

    return limited
