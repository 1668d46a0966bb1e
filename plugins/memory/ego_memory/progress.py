"""Progress bars (tqdm, on stderr so stdout stays clean for JSON and the MCP protocol)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

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
