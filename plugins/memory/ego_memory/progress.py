"""Progress: bars on a terminal (tqdm, on stderr so stdout stays clean for JSON and the MCP protocol), and the
MCP client's progress notifications through ``ctx.progress`` (:func:`reporting` does both)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from ego_core import PluginContext

T = TypeVar("T")


def progress(items: Iterable[T], *, total: int | None = None, desc: str = "", enabled: bool = True) -> Iterator[T]:
    """A tqdm progress bar on stderr (stdout stays clean for JSON)."""
    if not enabled:
        yield from items
        return
    from tqdm import tqdm

    yield from tqdm(items, total=total, desc=desc, file=sys.stderr, leave=False, dynamic_ncols=True)


@contextmanager
def progress_bar(*, total: int, desc: str, enabled: bool = True) -> Iterator[Callable[[int], None]]:
    """A tqdm bar on stderr advanced by the callback it yields (a no-op callback when disabled).

    Drawn only on a terminal, and cleared when done: in a pipe or a log file every redraw would be a line of
    its own, and the closing redraw would repeat the last one. The caller says what was done.
    """
    if not (enabled and sys.stderr.isatty()):
        yield lambda _n: None
        return
    from tqdm import tqdm

    with tqdm(total=total, desc=desc, file=sys.stderr, dynamic_ncols=True, leave=False) as bar:
        yield bar.update


@contextmanager
def reporting(ctx: PluginContext, *, total: int, desc: str, bar: bool) -> Iterator[Callable[[int], None]]:
    """A step callback that moves both a terminal bar (when ``bar``; see :func:`progress_bar`) and
    ``ctx.progress`` (notifications to an MCP client that asked for them, during a tool call)."""
    with ctx.progress(total, desc) as reported, progress_bar(total=total, desc=desc, enabled=bar) as drawn:

        def advance(amount: int) -> None:
            drawn(amount)
            reported.advance(amount)

        yield advance
