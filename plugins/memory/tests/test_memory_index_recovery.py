"""SQLite is the source of truth: a vector index that cannot be opened or applied is rebuilt from it.

Broken index files on disk, and Chroma's compaction failure (written directly with chromadb: a 6,000-item
metadata list), are each repaired by the next start with no manual step — an ``ego serve`` child over stdio and
an in-process host alike — with a progress line on stderr and a structured log record. A write that meets a
failing index leaves SQLite consistent. ``ego memory reindex --force`` rebuilds, or fails in one line.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from mcp import Client
from mcp.client.stdio import stdio_client

from ego_core import EmotionalTrace, Memory
from ego_core.testing import call_error, call_ok, mcp_client
from ego_memory.embedding import UseEmbedder
from ego_memory.errors import VectorIndexError
from ego_memory.store.maintenance import INDEX_CHECK, INDEX_DAMAGED
from ego_memory.store.memory_store import MemoryStore
from ego_memory.store.vector_index import collection_name

if TYPE_CHECKING:
    from conftest import EgoChild, MemoryHosts

TOPICS = (
    "the harbour lantern",
    "a violin lesson",
    "the glacier hike",
    "a compiler bug",
    "the orchard in spring",
    "a typhoon warning",
    "the night library",
    "sourdough starter",
    "the old telescope",
    "a marathon finish",
    "origami cranes",
    "the tram depot",
)


def contents(count: int) -> list[str]:
    return [f"Memory {n}: {TOPICS[n % len(TOPICS)]}, on day {n // len(TOPICS)} of the journey." for n in range(count)]


def seed(directory: Path, embedder: UseEmbedder, count: int) -> dict[str, str]:
    """A store of ``count`` memories written directly (fast); their contents by id."""
    start = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
    memories = [
        Memory(
            id=f"mem_{n:012x}",
            content=text,
            timestamp=start + timedelta(minutes=n),
            emotional_trace=EmotionalTrace(primary="curious"),
            tags=("journey",),
        )
        for n, text in enumerate(contents(count))
    ]
    store = MemoryStore(directory, embedder.model_id)
    store.open(embedder.embed)
    try:
        store.add_many(memories, embedder.embed([m.content for m in memories]))
    finally:
        store.close()
    return {m.id: m.content for m in memories}


def garble(path: Path) -> None:
    size = path.stat().st_size
    with path.open("r+b") as file:
        file.write((b"garbage!" * (size // 8 + 1))[: min(size, 4096)])


def break_files(chroma: Path, part: str) -> None:
    if part == "chroma.sqlite3":
        garble(chroma / "chroma.sqlite3")
    else:  # the HNSW segment of the collection
        headers = list(chroma.glob("*/header.bin"))
        assert headers, sorted(str(p) for p in chroma.rglob("*"))
        for header in headers:
            garble(header)


def poison(chroma: Path, embedder: UseEmbedder) -> None:
    """What one remember with ~6,000 tags did: Chroma's compaction fails, now and at every later use."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    client = chromadb.PersistentClient(path=str(chroma), settings=ChromaSettings(anonymized_telemetry=False))
    try:
        collection = client.get_collection(collection_name(embedder.model_id))
        with pytest.raises(Exception, match="compaction"):
            collection.add(
                ids=["mem_00000000dead"],
                embeddings=[[0.1] * embedder.dimension],
                metadatas=[{"tags": [f"tag-{i}" for i in range(6000)]}],
                documents=["poison"],
            )
    finally:
        client.close()


def damage(kind: str, memory_dir: Path, embedder: UseEmbedder) -> None:
    if kind == "compaction":
        poison(memory_dir / "chroma", embedder)
    else:
        break_files(memory_dir / "chroma", kind)


def log_events(data_dir: Path) -> list[dict[str, Any]]:
    records = []
    for path in sorted((data_dir / "logs").glob("ego-*.jsonl")):
        records += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in records if str(r.get("event", "")).startswith("memory_index")]


def assert_index_holds(store: MemoryStore, seeded: dict[str, str], embedder: UseEmbedder) -> None:
    assert store.chroma.all_ids() == set(seeded)
    assert store.integrity_problems() == []
    for memory_id in list(seeded)[:: max(1, len(seeded) // 4)]:
        nearest = store.dense(embedder.embed([seeded[memory_id]])[0], 1)
        assert nearest[0][0] == memory_id


KINDS = ["chroma.sqlite3", "hnsw-segment", "compaction"]


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("kind", KINDS)
async def test_the_next_start_rebuilds_a_broken_index_from_sqlite(
    kind: str, ego_child: EgoChild, memory_hosts: MemoryHosts, embedder: UseEmbedder
) -> None:
    memory_dir = ego_child.data_dir / "memory"
    seeded = seed(memory_dir, embedder, 150)
    damage(kind, memory_dir, embedder)

    # `ego serve` over stdio starts, rebuilds and serves every memory
    stderr_path = ego_child.root / "serve-stderr.txt"
    with stderr_path.open("w", encoding="utf-8") as errlog:
        async with Client(stdio_client(ego_child.stdio("--plugins", "memory"), errlog=errlog)) as client:
            for memory_id in list(seeded)[::37]:
                found = await call_ok(client, "search_memories", {"context": seeded[memory_id], "n_results": 1})
                assert found.splitlines()[1].startswith(memory_id), found
            await call_ok(client, "remember", {"content": "Written after the repair.", "force": True})
    stderr = stderr_path.read_text(encoding="utf-8")
    assert "rebuilding the vector index from the memory database (150 memories)" in stderr
    assert "rebuilt the vector index: 150 memories re-embedded" in stderr
    assert "Traceback" not in stderr
    events = log_events(ego_child.data_dir)
    assert [e["event"] for e in events] == ["memory_index_rebuild", "memory_index_rebuilt"]
    assert events[0]["memories"] == 150
    assert events[1]["memories"] == 150
    served = MemoryStore(memory_dir, embedder.model_id)
    served.open(embedder.embed)
    try:  # the server's rebuild holds every memory (nothing left to repair at this open)
        assert served.rebuilt is None
        assert set(seeded) < served.chroma.all_ids() == set(served.all_ids())
        assert served.integrity_problems() == []
    finally:
        served.close()

    # broken again: an in-process host starts on it just the same
    damage(kind, memory_dir, embedder)
    _host, plugin = memory_hosts(ego_child.data_dir)
    store = plugin._require().store
    assert store.rebuilt == 151
    seeded_now = {m.id: m.content for m in store.iter_memories()}
    assert set(seeded) < set(seeded_now)
    assert_index_holds(store, seeded_now, embedder)


def test_a_write_that_meets_a_failing_index_leaves_sqlite_consistent(
    memory_hosts: MemoryHosts, embedder: UseEmbedder, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    host, plugin = memory_hosts(data_dir)
    ctx = host.context("memory")
    memories = plugin._require()
    tools = plugin._tools()
    ids = [
        tools.remember({"content": text, "force": True}, ctx).data.split("(id: ")[1][:16]
        for text in ("The bakery opened at six.", "Rain on the tin roof all night.", "A kite stuck in the oak.")
    ]
    poison(data_dir / "memory" / "chroma", embedder)

    store = memories.store
    with pytest.raises(Exception, match="Nothing was lost") as refused:
        tools.remember({"content": "A memory the broken index cannot take.", "force": True}, ctx)
    assert "rebuilds the index from it at its next start" in str(refused.value)
    assert store.count() == 3
    assert store.db.execute("SELECT count(*) FROM journal").fetchone()[0] == 0
    assert store.db.execute(f"SELECT count(*) FROM meta WHERE key = '{INDEX_DAMAGED}'").fetchone()[0] == 1
    assert any("must be rebuilt" in problem for problem in store.integrity_problems())

    # what needs only SQLite still works; a forget is kept even though its vector cannot be deleted yet
    assert plugin._lifecycle().forget({"memory_id": ids[0]}, ctx).data.startswith(f"Forgot (id: {ids[0]}")
    assert plugin._lifecycle().link({"source_id": ids[1], "target_id": ids[2]}, ctx).data.startswith("Linked")
    assert store.get_one(ids[0]) is None
    host.stop()

    _host, plugin = memory_hosts(data_dir)
    store = plugin._require().store
    assert store.rebuilt == 2
    assert store.integrity_problems() == []
    assert store.chroma.all_ids() == {ids[1], ids[2]}
    linked = store.get_one(ids[1])
    assert linked is not None
    assert ids[2] in {link.target_id for link in linked.links}
    assert "Saved (id: " in plugin._tools().remember({"content": "Stored again after the rebuild."}, ctx).data


@pytest.mark.anyio
async def test_a_remember_refused_by_a_failing_index_is_an_error_result_over_mcp(
    memory_hosts: MemoryHosts, embedder: UseEmbedder, tmp_path: Path
) -> None:
    host, plugin = memory_hosts(tmp_path / "data")
    async with mcp_client(host) as client:
        await call_ok(client, "remember", {"content": "The first snow of the year."})
        poison(tmp_path / "data" / "memory" / "chroma", embedder)
        text = await call_error(client, "remember", {"content": "The second snow came a week later."})
    assert text.startswith("The memory store cannot serve this call: the vector index failed while adding vectors")
    assert "Nothing was lost" in text
    assert plugin._require().count() == 1


def test_a_chroma_server_that_fails_is_never_rebuilt_by_itself(embedder: UseEmbedder, tmp_path: Path) -> None:
    """A server may only be unreachable for a while: its collection is not deleted behind the user's back."""
    directory = tmp_path / "store"
    seed(directory, embedder, 3)
    remote = MemoryStore(directory, embedder.model_id, chroma_url="http://127.0.0.1:9")
    with pytest.raises(VectorIndexError, match="ego memory reindex --force") as refused:
        remote.open(embedder.embed)
    assert "the Chroma server at http://127.0.0.1:9 failed while opening" in str(refused.value)
    assert remote.rebuilt is None
    local = MemoryStore(directory, embedder.model_id)
    local.open(embedder.embed)
    try:
        assert local.rebuilt is None
        assert len(local.all_ids()) == 3
        assert local.tables.meta(INDEX_DAMAGED) is None
    finally:
        local.close()


def test_a_start_that_died_while_checking_the_index_rebuilds_it(
    embedder: UseEmbedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Chroma can crash the whole process on corrupt HNSW files; the mark left behind makes the next start
    rebuild instead of crashing again."""
    directory = tmp_path / "store"
    seeded = seed(directory, embedder, 5)
    store = MemoryStore(directory, embedder.model_id)
    store.open(embedder.embed)
    with store._transaction() as db:
        db.execute("INSERT INTO meta(key, value) VALUES (?, '1')", (INDEX_CHECK,))
    store.close()

    store = MemoryStore(directory, embedder.model_id)
    store.open(embedder.embed)
    try:
        assert store.rebuilt == 5
        assert store.tables.meta(INDEX_CHECK) is None
        assert_index_holds(store, seeded, embedder)
    finally:
        store.close()
    rebuilds = [r for r in caplog.records if getattr(r, "ego", {}).get("event") == "memory_index_rebuild"]
    assert len(rebuilds) == 1
    assert "stopped while checking the vector index" in rebuilds[0].getMessage()


# ---------------------------------------------------------------------------------------------------
# ego memory reindex --force


def ego(child: EgoChild, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        child.command(*args), env=child.env(), capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.slow
def test_reindex_force_rebuilds_a_broken_store(ego_child: EgoChild, embedder: UseEmbedder) -> None:
    memory_dir = ego_child.data_dir / "memory"
    seeded = seed(memory_dir, embedder, 20)
    poison(memory_dir / "chroma", embedder)
    done = ego(ego_child, "memory", "reindex", "--plugins", "memory", "--force")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"rebuilt the vector index from the memory database: re-embedded 20 memories ({embedder.model_id})"
    )
    assert "Traceback" not in done.stderr
    assert "%|" not in done.stderr  # no progress bar outside a terminal
    store = MemoryStore(memory_dir, embedder.model_id)
    store.open(embedder.embed)
    try:
        assert store.rebuilt is None
        assert_index_holds(store, seeded, embedder)
    finally:
        store.close()


@pytest.mark.slow
def test_reindex_on_an_unreadable_store_fails_in_one_line(ego_child: EgoChild, embedder: UseEmbedder) -> None:
    memory_dir = ego_child.data_dir / "memory"
    seed(memory_dir, embedder, 3)
    garble(memory_dir / "memory.sqlite3")
    for stale in memory_dir.glob("memory.sqlite3-*"):
        stale.unlink()
    failed = ego(ego_child, "memory", "reindex", "--plugins", "memory", "--force")
    assert failed.returncode == 1
    lines = [line for line in failed.stderr.splitlines() if line.strip()]
    assert lines == ["ego: error: memory reindex: DatabaseError: file is not a database"], failed.stderr
    assert failed.stdout == ""


def on_a_terminal(command: list[str], env: dict[str, str]) -> str:
    """Everything ``command`` writes to a pseudo-terminal (stdout and stderr)."""
    import fcntl
    import struct
    import termios

    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal of 100 columns, then the command (never back into pytest)
        try:
            fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
            os.execve(command[0], command, env)
        finally:
            os._exit(127)
    output = b""
    try:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            output += chunk
    finally:
        os.close(fd)
        os.waitpid(pid, 0)
    return output.decode("utf-8", errors="replace")


@pytest.mark.slow
def test_reindex_draws_its_progress_bar_once(ego_child: EgoChild, embedder: UseEmbedder) -> None:
    seed(ego_child.data_dir / "memory", embedder, 300)
    shown = on_a_terminal(
        ego_child.command("memory", "reindex", "--plugins", "memory", "--force"), ego_child.env(TERM="xterm")
    )
    done = f"re-embedded 300 memories: {embedder.model_id} -> {embedder.model_id}"
    assert shown.count(done) == 1, shown
    assert "reindex:" in shown  # the bar was drawn
    final_states = [frame for frame in re.split(r"[\r\n]", shown) if "reindex:" in frame and "300/300" in frame]
    assert len(final_states) <= 1, shown  # and its final state not drawn a second time
    piped = ego(ego_child, "memory", "reindex", "--plugins", "memory", "--force")
    assert piped.stdout.strip() == done
    assert "reindex:" not in piped.stderr
