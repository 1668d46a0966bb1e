"""The same store code against a Chroma server (``chroma_url``) instead of the embedded PersistentClient."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from ego_core import RecallQuery
from ego_memory.store.filters import Filters

if TYPE_CHECKING:
    from conftest import MemoryHosts


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    executable = shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which("chroma")
    assert executable, "chromadb's `chroma` command must be installed with ego-memory"
    port = free_port()
    path = tmp_path_factory.mktemp("chroma-server")
    log = (path / "server.log").open("wb")
    process = subprocess.Popen(
        [executable, "run", "--path", str(path / "data"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, (path / "server.log").read_text(errors="replace")
            try:
                if httpx.get(f"{url}/api/v2/heartbeat", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the Chroma server did not start"
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def test_remember_recall_forget_through_a_chroma_server(
    memory_hosts: MemoryHosts, chroma_server: str, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    host, plugin = memory_hosts(data, memory={"chroma_url": chroma_server})
    ctx = host.context("memory")
    memories = plugin.memories
    tools = plugin._tools()
    assert memories is not None
    assert memories.store.chroma.url == chroma_server
    assert not (data / "memory" / "chroma").exists()  # no embedded store beside the server
    texts = [
        "Master showed me the violet sunset from the balcony.",
        "We fixed the heartbeat interval: seconds, not minutes.",
        "The server room code is XQZ-4471.",
    ]
    ids = [tools.remember({"content": text, "force": True}, ctx).data.split("(id: ")[1].split(")")[0] for text in texts]
    hits, _pool, _lines = memories.search(RecallQuery(context="XQZ-4471", n_results=3), Filters())
    assert hits[0].memory.id == ids[2]
    assert memories.store.integrity_problems() == []

    # A second process-like host on the same data dir and server sees the writes at once.
    other, other_plugin = memory_hosts(data, memory={"chroma_url": chroma_server})
    assert other_plugin.memories is not None
    hits, _pool, _lines = other_plugin.memories.search(
        RecallQuery(context="a purple evening sky", n_results=1), Filters()
    )
    assert hits[0].memory.id == ids[0]

    assert memories.store.delete(ids[1]) is not None
    assert memories.store.chroma.count() == 2
    assert other_plugin.memories.store.integrity_problems() == []
    other.stop()
    host.stop()
