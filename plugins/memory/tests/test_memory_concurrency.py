"""Two ``ego serve`` processes writing one data directory at the same time."""

from __future__ import annotations

import logging
import re
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import chromadb
import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from chromadb.config import Settings as ChromaSettings
from mcp import Client

from ego_core.testing import tool_text
from ego_memory.embedding import UseEmbedder
from ego_memory.store.memory_store import MemoryStore

if TYPE_CHECKING:
    from conftest import EgoChild, MemoryHosts

PER_PROCESS = 200
IN_FLIGHT = 2
"""Calls each client keeps in flight, so each server also writes from several threads at once."""

TOPICS = ["garden", "harbour", "library", "kitchen", "mountain", "station", "workshop", "orchard"]
SAVED = re.compile(r"^Saved \(id: (mem_[0-9a-f]{12})\)")


def content(process: str, index: int) -> str:
    return f"Note {process}-{index:03d}: a moment at the {TOPICS[index % len(TOPICS)]}, token Q{process}{index:03d}Z."


@pytest.mark.slow
@pytest.mark.anyio
async def test_two_servers_on_one_data_dir_lose_nothing(
    ego_child: EgoChild, embedder: UseEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    saved: dict[str, list[str]] = {"A": [], "B": []}
    errors: list[str] = []

    async def writer(process: str) -> None:
        async with Client(ego_child.stdio("--plugins", "memory")) as client:
            queue = list(range(PER_PROCESS))

            async def worker() -> None:
                while queue:
                    index = queue.pop(0)
                    result = await client.call_tool("remember", {"content": content(process, index), "force": True})
                    match = SAVED.match(tool_text(result))
                    if result.is_error or match is None:
                        errors.append(tool_text(result))
                    else:
                        saved[process].append(match.group(1))

            async with anyio.create_task_group() as group:
                for _ in range(IN_FLIGHT):
                    group.start_soon(worker)

    async with anyio.create_task_group() as group:
        group.start_soon(writer, "A")
        group.start_soon(writer, "B")

    assert errors == []
    assert len(saved["A"]) == len(saved["B"]) == PER_PROCESS
    ids = saved["A"] + saved["B"]
    assert len(set(ids)) == 2 * PER_PROCESS

    # a fresh process sees all 400 through the tools
    async with Client(ego_child.stdio("--plugins", "memory")) as client:
        for process, index in (("A", 0), ("A", 137), ("B", 5), ("B", 199)):
            result = await client.call_tool("search_memories", {"context": f"Q{process}{index:03d}Z", "n_results": 1})
            assert not result.is_error
            assert f"Note {process}-{index:03d}:" in tool_text(result), tool_text(result)

    # The raw files first: MemoryStore.open repairs a missing vector or FTS row, so checking only through it
    # would hide a lost write. Every memory row has its vector and both FTS entries, and nothing is pending.
    assert raw_indexes(ego_child.data_dir / "memory") == {
        "memories": set(ids),
        "vectors": set(ids),
        "fts_words": 2 * PER_PROCESS,
        "fts_trigram": 2 * PER_PROCESS,
        "journal": 0,
    }

    # ... and through the store: opening it finds nothing to repair; 400 readable memories, indexes consistent
    caplog.set_level(logging.INFO, logger="ego.plugin.memory.store")
    store = MemoryStore(ego_child.data_dir / "memory", embedder.model_id)
    store.open(embedder.embed)
    try:
        assert repairs(caplog) == []
        assert store.count() == 2 * PER_PROCESS
        memories = store.get(ids)
        assert len(memories) == 2 * PER_PROCESS
        expected = {content(p, i) for p in "AB" for i in range(PER_PROCESS)}
        assert {m.content for m in memories} == expected
        # the two servers really wrote at the same time: their memories interleave in time
        stamps = {p: sorted(m.timestamp for m in memories if m.content.startswith(f"Note {p}-")) for p in "AB"}
        assert stamps["A"][0] < stamps["B"][-1]
        assert stamps["B"][0] < stamps["A"][-1]
        assert store.integrity_problems() == []
        assert set(store.chroma.all_ids()) == set(ids)
        vectors = store.embeddings(ids)
        assert len(vectors) == 2 * PER_PROCESS
    finally:
        store.close()


def raw_indexes(memory_dir: Path) -> dict[str, Any]:
    """What the store holds on disk, read without MemoryStore (whose ``open`` would repair what is missing)."""
    db = sqlite3.connect(memory_dir / "memory.sqlite3")
    try:
        collection = db.execute("SELECT value FROM meta WHERE key = 'collection'").fetchone()[0]
        found: dict[str, Any] = {"memories": {row[0] for row in db.execute("SELECT id FROM memories")}}
        for table in ("fts_words", "fts_trigram"):
            found[table] = db.execute(f"SELECT count(*) FROM {table}_docsize").fetchone()[0]
        found["journal"] = db.execute("SELECT count(*) FROM journal").fetchone()[0]
    finally:
        db.close()
    client = chromadb.PersistentClient(
        path=str(memory_dir / "chroma"), settings=ChromaSettings(anonymized_telemetry=False)
    )
    found["vectors"] = set(client.get_collection(collection).get(include=[])["ids"])
    SharedSystemClient.clear_system_cache()
    return found


def repairs(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Warnings the store logged while opening: recovered journal rows, rebuilt FTS, reconciled vectors."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("ego.plugin.memory") and r.levelno >= logging.WARNING
    ]


def test_the_raw_check_sees_a_lost_vector_or_fts_row_that_opening_the_store_would_repair(
    memory_hosts: MemoryHosts, embedder: UseEmbedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The check above is able to fail: a vector and an FTS entry lost on disk are seen before any repair."""
    host, plugin = memory_hosts(tmp_path / "data")
    ctx = host.context("memory")
    plugin._require()
    tools = plugin._tools()
    ids = [
        SAVED.match(tools.remember({"content": content("A", i), "force": True}, ctx).data).group(1)  # type: ignore[union-attr]
        for i in range(3)
    ]
    host.stop()
    memory_dir = tmp_path / "data" / "memory"
    assert raw_indexes(memory_dir)["vectors"] == set(ids)

    db = sqlite3.connect(memory_dir / "memory.sqlite3")
    collection = db.execute("SELECT value FROM meta WHERE key = 'collection'").fetchone()[0]
    rid, text = db.execute("SELECT rid, content FROM memories WHERE id = ?", (ids[1],)).fetchone()
    with db:
        db.execute("INSERT INTO fts_words(fts_words, rowid, content) VALUES ('delete', ?, ?)", (rid, text))
    db.close()
    client = chromadb.PersistentClient(
        path=str(memory_dir / "chroma"), settings=ChromaSettings(anonymized_telemetry=False)
    )
    client.get_collection(collection).delete(ids=[ids[0]])
    SharedSystemClient.clear_system_cache()

    damaged = raw_indexes(memory_dir)
    assert damaged["memories"] == set(ids)
    assert damaged["vectors"] == {ids[1], ids[2]}
    assert (damaged["fts_words"], damaged["fts_trigram"]) == (2, 3)

    # opening the store repairs both (so assertions made only after opening could not have seen the loss),
    # and says so in the log, which the two-process test requires to stay silent
    caplog.set_level(logging.INFO, logger="ego.plugin.memory.store")
    store = MemoryStore(memory_dir, embedder.model_id)
    store.open(embedder.embed)
    try:
        assert set(store.chroma.all_ids()) == set(ids)
        assert store.integrity_problems() == []
    finally:
        store.close()
    logged = repairs(caplog)
    assert any("rebuilding fts_words" in line for line in logged), logged
    assert any("re-embedded 1" in line for line in logged), logged
    assert raw_indexes(memory_dir) == {**damaged, "vectors": set(ids), "fts_words": 3}
