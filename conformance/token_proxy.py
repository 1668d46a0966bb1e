"""A small HTTP proxy that adds a bearer token to every request: the conformance suite cannot send one.

Each request is read whole (its head and a ``Content-Length`` or chunked body), sent to the upstream server on
a connection of its own with ``Authorization: Bearer <token>`` added (any ``Authorization`` the client sent is
dropped) and ``Connection: close``, and the upstream answer is streamed back as it comes (server-sent events
included) until the upstream closes; then the client's connection is closed too. Every other header, the
``Host`` included, passes unchanged, so the server's own checks (DNS-rebinding protection) still apply.

    python conformance/token_proxy.py LISTEN_PORT UPSTREAM_PORT TOKEN     (for a manual run)
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Iterator

DROPPED = (b"authorization:", b"connection:", b"keep-alive:", b"proxy-connection:")
MAX_HEAD = 64 * 1024


async def _read_body(reader: asyncio.StreamReader, head_lines: list[bytes]) -> bytes:
    length = 0
    chunked = False
    for line in head_lines:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip() or b"0")
        elif name.strip().lower() == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    if not chunked:
        return await reader.readexactly(length) if length else b""
    body = bytearray()
    while True:
        size_line = await reader.readuntil(b"\r\n")
        body += size_line
        size = int(size_line.split(b";")[0].strip() or b"0", 16)
        chunk = await reader.readexactly(size + 2)
        body += chunk
        if size == 0:
            return bytes(body)


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
        while chunk := await source.read(65536):
            sink.write(chunk)
            await sink.drain()


async def _handle(
    client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter, upstream: int, token: str
) -> None:
    upstream_writer: asyncio.StreamWriter | None = None
    try:
        head = await client_reader.readuntil(b"\r\n\r\n")
        if len(head) > MAX_HEAD:
            return
        request_line, *header_lines = head[:-4].split(b"\r\n")
        kept = [line for line in header_lines if not line.lower().startswith(DROPPED)]
        body = await _read_body(client_reader, kept)
        added = [b"Authorization: Bearer " + token.encode("ascii"), b"Connection: close"]
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", upstream)
        upstream_writer.write(b"\r\n".join([request_line, *kept, *added]) + b"\r\n\r\n" + body)
        await upstream_writer.drain()
        await _pipe(upstream_reader, client_writer)
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
        pass
    finally:
        for writer in (upstream_writer, client_writer):
            if writer is not None:
                with contextlib.suppress(Exception):
                    writer.close()


async def serve(listen: int, upstream: int, token: str, ready: threading.Event | None = None) -> None:
    server = await asyncio.start_server(lambda r, w: _handle(r, w, upstream, token), "127.0.0.1", listen)
    async with server:
        if ready is not None:
            ready.set()
        await server.serve_forever()


@contextlib.contextmanager
def running(listen: int, upstream: int, token: str) -> Iterator[None]:
    """The proxy in a background thread (its own event loop) for the duration of the block."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    task: list[asyncio.Task[None]] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        task.append(loop.create_task(serve(listen, upstream, token, ready)))
        with contextlib.suppress(asyncio.CancelledError):
            loop.run_until_complete(task[0])

    thread = threading.Thread(target=run, name="token-proxy", daemon=True)
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("the token proxy did not start")
    try:
        yield
    finally:
        loop.call_soon_threadsafe(task[0].cancel)
        thread.join(10)
        loop.close()


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    asyncio.run(serve(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]))
