"""A remember or recall runs with one BLAS thread; the original count comes back however calls overlap."""

from __future__ import annotations

import contextlib
import threading

import numpy as np
from threadpoolctl import ThreadpoolController, threadpool_limits

from ego_memory.index.blas import one_blas_thread

np.ones(2) @ np.ones(2)  # OpenBLAS is loaded


def blas_threads() -> int:
    return int(ThreadpoolController().select(user_api="blas").info()[0]["num_threads"])


@one_blas_thread
def inside() -> int:
    return blas_threads()


@one_blas_thread
def nested() -> tuple[int, int]:
    return inside(), blas_threads()


def test_one_thread_inside_and_the_original_count_after() -> None:
    with threadpool_limits(limits=2, user_api="blas"):
        assert inside() == 1
        assert nested() == (1, 1)
        assert blas_threads() == 2


def test_overlapping_calls_keep_the_limit_until_the_last_leaves() -> None:
    with threadpool_limits(limits=2, user_api="blas"):
        first_in, release_first = threading.Event(), threading.Event()
        seen: list[tuple[str, int]] = []

        @one_blas_thread
        def long_call() -> None:
            seen.append(("long, before", blas_threads()))
            first_in.set()
            release_first.wait(10)
            seen.append(("long, after the short call left", blas_threads()))

        @one_blas_thread
        def short_call() -> None:
            seen.append(("short", blas_threads()))

        worker = threading.Thread(target=long_call)
        worker.start()
        assert first_in.wait(10)
        short_call()
        release_first.set()
        worker.join(10)
        assert [count for _, count in seen] == [seen[0][1]] * 3
        assert blas_threads() == 2


def test_an_exception_still_restores() -> None:
    @one_blas_thread
    def failing() -> None:
        raise RuntimeError("boom")

    with threadpool_limits(limits=2, user_api="blas"):
        with contextlib.suppress(RuntimeError):
            failing()
        assert blas_threads() == 2
