"""Progress of a long tool call, sent to the MCP client as ``notifications/progress``.

A handler (or a hook it triggers) says how far it has come through ``ctx.progress(total, message)``::

    with ctx.progress(len(batches), "reindex") as progress:
        for batch in batches:
            work(batch)
            progress.advance()          # or progress(1): a Progress is also a plain callback

During a tool call whose client asked for progress (a ``progressToken`` in the request's ``_meta``) each step
becomes a progress notification; anywhere else (a CLI command, a hook outside a call, a client that did not
ask) the same code reports to nobody and costs next to nothing. Notifications are coalesced: the client gets
the latest position at most every :data:`MIN_INTERVAL` seconds and always the final one, and the position
only ever grows (the protocol requires it).

Progress nests. Inside ``progress.part(amount)`` a nested ``ctx.progress(total, ...)`` (another plugin's hook,
say) fills that share of the outer total: ``consolidate`` gives the plugins' ``on_consolidate`` work a part of
its own progress, and whatever they report moves the one bar the client shows. A nested ``ctx.progress``
outside a part reports nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import anyio
import anyio.from_thread
import anyio.lowlevel

_log = logging.getLogger("ego.server")

MIN_INTERVAL = 0.1
"""Seconds between two progress notifications of one call (the latest position is sent, the ones between
are skipped)."""

Send = Callable[[float, float | None, str | None], Awaitable[None]]


class ProgressChannel:
    """One tool call's way to the client: positions from any thread, sent in order from the event loop."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._lock = threading.Lock()
        self._latest: tuple[float, float | None, str | None] | None = None
        self._sent = -1.0
        self._poked = False
        self._closed = False
        self._wake = anyio.Event()
        self._closing = anyio.Event()
        self._token = anyio.lowlevel.current_token()
        self._loop_thread = threading.get_ident()
        self.total: float | None = None

    def report(self, position: float, total: float | None, message: str | None) -> None:
        """Queue ``position`` (of ``total``); a position not beyond the last one queued is dropped."""
        with self._lock:
            if self._closed:
                return
            floor = self._latest[0] if self._latest is not None else self._sent
            if position <= floor:
                return
            self._latest = (position, total, message)
            if self._poked:  # the sender will take this one with the others: no trip to the event loop
                return
            self._poked = True
        try:
            if threading.get_ident() == self._loop_thread:
                self._poke()
            else:
                anyio.from_thread.run_sync(self._poke, token=self._token)
        except Exception:  # the call is over or the loop is gone: nobody is listening any more
            _log.debug("a progress report came after its call ended")

    def _poke(self) -> None:
        """Wake :meth:`run` (on the event loop's thread, where the event is replaced)."""
        self._wake.set()

    def _take(self) -> tuple[float, float | None, str | None] | None:
        with self._lock:
            latest, self._latest = self._latest, None
            self._poked = False
            if latest is not None:
                self._sent = latest[0]
            return latest

    async def run(self) -> None:
        """Send what is reported until :meth:`close`; the last position is always sent."""
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            latest = self._take()
            if latest is not None:
                await self._deliver(latest)
            with self._lock:
                closed, pending = self._closed, self._latest is not None
            if closed and not pending:
                return
            if not closed:  # coalesce what comes next, unless the call ends meanwhile
                with anyio.move_on_after(MIN_INTERVAL):
                    await self._closing.wait()

    async def _deliver(self, latest: tuple[float, float | None, str | None]) -> None:
        try:
            await self._send(*latest)
        except Exception as exc:  # a client that went away; the call itself goes on
            _log.debug("sending progress failed: %s", type(exc).__name__)

    def close(self) -> None:
        """No more reports; :meth:`run` sends what is left and returns (call from the event loop)."""
        with self._lock:
            self._closed = True
        self._closing.set()
        self._wake.set()


_channel: ContextVar[ProgressChannel | None] = ContextVar("ego_progress_channel", default=None)
_active: ContextVar[Progress | _Slot | None] = ContextVar("ego_progress_active", default=None)


@contextmanager
def reporting_to(channel: ProgressChannel) -> Iterator[None]:
    """Within this block (and the worker threads it starts with ``anyio.to_thread``), ``ctx.progress`` reports
    to ``channel``."""
    token = _channel.set(channel)
    active = _active.set(None)
    try:
        yield
    finally:
        _active.reset(active)
        _channel.reset(token)


class Progress:
    """How far a long piece of work has come (from ``ctx.progress``); a no-op when nobody listens.

    ``advance(amount, message)`` moves it on; calling it (``progress(n)``) is the same, so it can be passed
    wherever a ``Callable[[int], None]`` step callback is expected.
    """

    def __init__(
        self,
        channel: ProgressChannel | None,
        total: float | None,
        message: str | None,
        span: tuple[float, float | None] = (0.0, None),
    ) -> None:
        self._channel = channel
        self.total = total if total is not None and total > 0 else None
        self.message = message
        self.done = 0.0
        self._start, self._width = span
        """Where this progress sits in the call's own units: from ``_start``, ``_width`` wide (``None``: the
        outermost progress, whose units are its own)."""

    @property
    def reporting(self) -> bool:
        """Whether anybody listens (a client asked for progress); skip costly bookkeeping when not."""
        return self._channel is not None

    def _position(self, done: float) -> float:
        if self._width is None:
            return done
        if self.total is None:
            return self._start
        return self._start + self._width * min(done, self.total) / self.total

    def _send(self, message: str | None) -> None:
        if self._channel is not None:
            self._channel.report(self._position(self.done), self._channel.total, message or self.message)

    def advance(self, amount: float = 1, message: str | None = None) -> None:
        """``amount`` more of ``total`` is done (``message``: what is being done now)."""
        if amount < 0:
            raise ValueError("progress only moves forward")
        self.done += amount
        self._send(message)

    def __call__(self, amount: float = 1) -> None:
        self.advance(amount)

    @contextmanager
    def part(self, amount: float, message: str | None = None) -> Iterator[None]:
        """The next ``amount`` of this progress is whatever a nested ``ctx.progress`` reports within the block
        (another plugin's work, reached through a hook); afterwards this progress has advanced by ``amount``."""
        start = self._position(self.done)
        end = self._position(self.done + amount)
        slot = _Slot(self._channel, start, end - start)
        token = _active.set(slot)
        try:
            if message:
                self._send(message)
            yield
        finally:
            _active.reset(token)
            self.advance(amount)

    def finish(self) -> None:
        if self.total is not None and self.done < self.total:
            self.done = self.total
            self._send(None)


class _Slot:
    """What a nested ``ctx.progress`` fills: a part of an outer progress (see :meth:`Progress.part`)."""

    def __init__(self, channel: ProgressChannel | None, start: float, width: float) -> None:
        self.channel = channel
        self.start = start
        self.width = width


@contextmanager
def open_progress(total: float | None, message: str | None = None) -> Iterator[Progress]:
    """A :class:`Progress` for the current tool call (see the module), finished when the block ends."""
    channel = _channel.get()
    outer = _active.get()
    if channel is None:
        progress = Progress(None, total, message)
    elif outer is None:  # the call's own progress: its units are the ones the client sees
        progress = Progress(channel, total, message)
        channel.total = progress.total
    elif isinstance(outer, _Slot) and outer.channel is not None and outer.width > 0:
        progress = Progress(outer.channel, total, message, span=(outer.start, outer.width))
    else:  # nested outside a part: the outer progress speaks for the call
        progress = Progress(None, total, message)
    token = _active.set(progress)
    try:
        yield progress
    finally:
        _active.reset(token)
    progress.finish()
