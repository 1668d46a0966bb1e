"""Crash safety: ``kill -9`` of ``ego serve`` in the middle of writes, and journal recovery.

A server is driven over stdio with raw JSON-RPC (so the test knows its pid and exactly which calls returned), killed
with SIGKILL while a call is in flight, and restarted. The store must open, pass ``ego doctor`` and hold every memory
whose remember returned. The journal recovery of an interrupted remember and forget is also tested directly.
"""

from __future__ import annotations

import json
import os
import random
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from memory_support import saved_id

from ego_core import EmotionalTrace, Memory, MemoryLink
from ego_memory.embedding import UseEmbedder
from ego_memory.service import new_memory_id
from ego_memory.store.memory_store import MemoryStore
from ego_memory.store.vector_index import chroma_metadata

if TYPE_CHECKING:
    from conftest import EgoChild

StoreOpener = Callable[..., MemoryStore]

WORDS = (
    "harbour",
    "lantern",
    "violin",
    "glacier",
    "compiler",
    "orchard",
    "typhoon",
    "library",
    "sourdough",
    "telescope",
    "marathon",
    "origami",
)


class ServerProcess:
    """``ego serve --plugins memory`` on raw stdio pipes: the test sees its pid and every reply."""

    def __init__(self, child: EgoChild, stderr_path: Path) -> None:
        with stderr_path.open("ab") as stderr:
            self.proc = subprocess.Popen(
                child.command("serve", "--plugins", "memory"),
                env=child.env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
            )
        self.buffer = b""
        self.next_id = 1
        client_info = {"name": "crash-test", "version": "1"}
        first = self.send(
            "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client_info}
        )
        assert self.reply(first)["result"]["serverInfo"]["name"] == "ego"
        self.notify("notifications/initialized")

    def notify(self, method: str) -> None:
        self._write({"jsonrpc": "2.0", "method": method})

    def send(self, method: str, params: dict[str, Any]) -> int:
        request_id = self.next_id
        self.next_id += 1
        self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    def _write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def reply(self, request_id: int) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            while b"\n" not in self.buffer:
                with selectors.DefaultSelector() as selector:  # epoll: no limit on the fd number, unlike select()
                    selector.register(fd, selectors.EVENT_READ)
                    ready = selector.select(120)
                assert ready, "ego serve did not answer"
                chunk = os.read(fd, 65536)
                assert chunk, "ego serve closed stdout"
                self.buffer += chunk
            line, _, self.buffer = self.buffer.partition(b"\n")
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == request_id:
                return message

    def call(self, tool: str, arguments: dict[str, Any]) -> str:
        answer = self.reply(self.send("tools/call", {"name": tool, "arguments": arguments}))
        result = answer["result"]
        text = "".join(block.get("text", "") for block in result["content"])
        assert not result.get("isError"), text
        return text

    def start_call(self, tool: str, arguments: dict[str, Any]) -> int:
        """Send a call without waiting for its reply (it is in flight)."""
        return self.send("tools/call", {"name": tool, "arguments": arguments})

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        assert self.proc.wait(timeout=60) == -signal.SIGKILL
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture
def servers(ego_child: EgoChild) -> Iterator[Callable[[], ServerProcess]]:
    started: list[ServerProcess] = []

    def start() -> ServerProcess:
        server = ServerProcess(ego_child, ego_child.root / "serve-stderr.txt")
        started.append(server)
        return server

    yield start
    for server in started:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait(timeout=60)
        for pipe in (server.proc.stdin, server.proc.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()


def doctor(child: EgoChild) -> str:
    done = subprocess.run(
        child.command("doctor", "--plugins", "memory"),
        env=child.env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[ok] memory: store: " in done.stdout, done.stdout
    return done.stdout


def stderr_of(child: EgoChild) -> str:
    path = child.root / "serve-stderr.txt"
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


ROUNDS = 5
IN_FLIGHT = 3


def content_for(rng: random.Random, label: str) -> str:
    a, b, c = rng.sample(WORDS, 3)
    return f"{label}: the {a} and the {b} reminded me of a {c}."


def assert_links_consistent(store: MemoryStore) -> None:
    rows = store.db.execute("SELECT source, target, link_type FROM links").fetchall()
    keys = {(s, t, k) for s, t, k in rows}
    assert all((t, s, k) in keys for s, t, k in keys)
    alive = set(store.all_ids())
    assert all(s in alive and t in alive for s, t, _ in keys)


# ----------------------------------------------------------------------------------------------
# kill -9 of a real server


@pytest.mark.slow
def test_sigkill_during_a_stream_of_remembers_loses_no_returned_memory(
    ego_child: EgoChild, servers: Callable[[], ServerProcess], open_store: StoreOpener
) -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    returned: dict[str, str] = {}
    for round_number in range(ROUNDS):
        server = servers()
        for i in range(rng.randint(4, 12)):
            content = content_for(rng, f"round {round_number} call {i}")
            returned[saved_id(server.call("remember", {"content": content, "force": True}))] = content
        # the next remembers are in flight (handled concurrently) when the process dies, at a random moment
        for i in range(IN_FLIGHT):
            content = content_for(rng, f"round {round_number} in flight {i}")
            server.start_call("remember", {"content": content, "force": True})
        time.sleep(rng.uniform(0.0, 0.08))
        server.kill()

    # a restarted server recovers and serves every memory whose remember returned
    server = servers()
    last_id, last_content = list(returned.items())[-1]
    assert last_id in server.call("search_memories", {"context": last_content, "n_results": 10})
    server.kill()  # and once more, right after a recovery, with nothing in flight

    report = doctor(ego_child)
    store = open_store(ego_child.data_dir / "memory")
    present = set(store.all_ids())
    assert set(returned) <= present, f"seed {seed}: lost {sorted(set(returned) - present)}"
    assert len(present) - len(returned) <= ROUNDS * IN_FLIGHT, f"seed {seed}"  # at most the calls in flight
    for memory in store.get(list(returned)):
        assert memory.content == returned[memory.id]
    assert store.integrity_problems() == [], f"seed {seed}"
    assert_links_consistent(store)
    assert f"{len(present)} memories" in report


@pytest.mark.slow
def test_sigkill_during_forget_and_consolidate_leaves_a_healthy_store(
    ego_child: EgoChild, servers: Callable[[], ServerProcess], open_store: StoreOpener
) -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    server = servers()
    ids = [
        saved_id(server.call("remember", {"content": content_for(rng, f"memory {i}"), "force": True}))
        for i in range(10)
    ]
    for a, b in ((0, 5), (1, 6), (2, 7), (0, 9)):
        server.call("link_memories", {"source_id": ids[a], "target_id": ids[b], "link_type": "caused_by"})
    for word in WORDS[:4]:
        server.call("recall", {"context": f"the {word}", "n_results": 5})  # co-activation for consolidate
    victims = [ids[0], ids[5]]

    # kill during forget (the first at once, the second at a random moment)
    server.start_call("forget", {"memory_id": victims[0]})
    server.kill()
    server = servers()
    server.start_call("forget", {"memory_id": victims[1]})
    time.sleep(rng.uniform(0.0, 0.05))
    server.kill()

    # kill during consolidate, twice
    for delay in (0.0, rng.uniform(0.0, 0.05)):
        server = servers()
        server.start_call("consolidate", {})
        time.sleep(delay)
        server.kill()

    doctor(ego_child)
    store = open_store(ego_child.data_dir / "memory")
    present = set(store.all_ids())
    assert set(ids) - set(victims) <= present, f"seed {seed}"
    for victim in victims:
        if victim not in present:  # forgotten completely: nothing names it
            named = store.db.execute(
                "SELECT count(*) FROM links WHERE source = ? OR target = ?", (victim, victim)
            ).fetchone()[0]
            assert named == 0, f"seed {seed}"
            assert victim not in store.chroma.all_ids()
    assert store.integrity_problems() == [], f"seed {seed}"
    assert_links_consistent(store)

    # the server starts on it and works
    server = servers()
    assert "Consolidation complete." in server.call("consolidate", {})
    for victim in victims:
        answer = server.reply(server.start_call("forget", {"memory_id": victim}))
        text = answer["result"]["content"][0]["text"]
        assert text.startswith((f"Forgot (id: {victim}", f"Memory not found: {victim}")), text
    server.close()
    assert "Traceback" not in stderr_of(ego_child)


# ----------------------------------------------------------------------------------------------
# journal recovery, step by step


def _memory(content: str, links: tuple[MemoryLink, ...] = ()) -> Memory:
    from datetime import UTC, datetime

    return Memory(
        id=new_memory_id(),
        content=content,
        timestamp=datetime.now(UTC),
        emotional_trace=EmotionalTrace(primary="curious"),
        links=links,
    )


def _seed_store(store: MemoryStore, embedder: UseEmbedder) -> list[Memory]:
    first = _memory("The harbour lantern blinked all night.")
    second = _memory("A violin played in the library.", (MemoryLink(first.id, "related", 0.9),))
    third = _memory("The orchard smelled of rain.", (MemoryLink(first.id, "similar", 0.8),))
    for memory in (first, second, third):
        store.add(memory, embedder.embed([memory.content])[0], memory.links)
    return [first, second, third]


def _reopen(store: MemoryStore, open_store: StoreOpener) -> MemoryStore:
    directory = store.directory
    store.close()
    return open_store(directory)


@pytest.mark.parametrize("chroma_written", [True, False], ids=["after-chroma", "before-chroma"])
def test_an_interrupted_remember_is_rolled_back_at_the_next_open(
    open_store: StoreOpener, embedder: UseEmbedder, tmp_path: Path, chroma_written: bool
) -> None:
    store = open_store(tmp_path / "store")
    kept = _seed_store(store, embedder)
    lost = _memory("A telescope on the roof, never used.")
    # what remember does before its SQLite commit: the journal row, then (maybe) the vector
    with store._transaction() as db:
        db.execute("INSERT INTO journal(id, op, created) VALUES (?, 'add', ?)", (lost.id, time.time()))
    if chroma_written:
        store.chroma.add(
            [lost.id],
            embedder.embed([lost.content]),
            [chroma_metadata(lost, store.model_id)],
        )
        assert lost.id in store.chroma.all_ids()
    assert store.integrity_problems() != []  # the journal row is pending

    store = _reopen(store, open_store)
    assert store.integrity_problems() == []
    assert lost.id not in store.chroma.all_ids()
    assert set(store.all_ids()) == {m.id for m in kept}
    assert store.db.execute("SELECT count(*) FROM journal").fetchone()[0] == 0


@pytest.mark.parametrize("stage", ["journal-only", "sqlite-committed"])
def test_an_interrupted_forget_is_completed_at_the_next_open(
    open_store: StoreOpener, embedder: UseEmbedder, tmp_path: Path, stage: str
) -> None:
    store = open_store(tmp_path / "store")
    first, second, third = _seed_store(store, embedder)
    # what forget does before deleting the vector: the journal row (and the SQLite deletion in the same commit)
    with store._transaction() as db:
        db.execute("INSERT INTO journal(id, op, created) VALUES (?, 'delete', ?)", (first.id, time.time()))
        if stage == "sqlite-committed":
            store._delete_rows(first.id)
    assert first.id in store.chroma.all_ids()

    store = _reopen(store, open_store)
    assert store.integrity_problems() == []
    assert set(store.all_ids()) == {second.id, third.id}
    assert first.id not in store.chroma.all_ids()
    named = store.db.execute("SELECT count(*) FROM links WHERE source = ? OR target = ?", (first.id, first.id))
    assert named.fetchone()[0] == 0
    assert store.lexical('"harbour"', 5) == []
    assert store.db.execute("SELECT count(*) FROM journal").fetchone()[0] == 0


def test_opening_repairs_a_vector_index_that_disagrees_with_sqlite(
    open_store: StoreOpener, embedder: UseEmbedder, tmp_path: Path
) -> None:
    store = open_store(tmp_path / "store")
    first, second, _third = _seed_store(store, embedder)
    orphan = _memory("An orphan vector nobody remembers.")
    store.chroma.add([orphan.id], embedder.embed([orphan.content]), [chroma_metadata(orphan, store.model_id)])
    store.chroma.delete([second.id])  # and a memory whose vector is missing: the counts agree
    assert store.chroma.count() == store.count()
    assert store.integrity_problems() != []

    store = _reopen(store, open_store)
    assert store.integrity_problems() == []
    assert store.chroma.all_ids() == set(store.all_ids())
    vector = store.embeddings([second.id])[second.id]
    assert np.allclose(vector, embedder.embed([second.content])[0], atol=1e-5)
    assert first.id in store.chroma.all_ids()


def test_opening_rebuilds_an_fts_index_that_disagrees(
    open_store: StoreOpener, embedder: UseEmbedder, tmp_path: Path
) -> None:
    store = open_store(tmp_path / "store")
    first, _second, _third = _seed_store(store, embedder)
    with store._transaction() as db:
        db.execute("INSERT INTO fts_words(fts_words) VALUES ('delete-all')")
        db.execute("INSERT INTO fts_trigram(fts_trigram) VALUES ('delete-all')")
    assert store.lexical('"harbour"', 5) == []

    store = _reopen(store, open_store)
    assert store.integrity_problems() == []
    assert [hit for hit, _ in store.lexical('"harbour"', 5)] == [first.id]
    assert [hit for hit, _ in store.lexical('"rbou"', 5, table="fts_trigram")] == [first.id]
