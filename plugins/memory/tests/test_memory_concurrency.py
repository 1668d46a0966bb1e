"""Two ``ego serve`` processes writing one data directory at the same time (issue 3, acceptance 6; SPEC §5.2)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import anyio
import pytest
from mcp import Client

from ego_core.testing import tool_text
from ego_memory.embedding import OnnxEmbedder
from ego_memory.store import MemoryStore

if TYPE_CHECKING:
    from conftest import EgoChild

PER_PROCESS = 200
IN_FLIGHT = 2
"""Calls each client keeps in flight, so each server also writes from several threads at once."""

TOPICS = ["garden", "harbour", "library", "kitchen", "mountain", "station", "workshop", "orchard"]
SAVED = re.compile(r"^Saved \(id: (mem_[0-9a-f]{12})\)")


def content(process: str, index: int) -> str:
    return f"Note {process}-{index:03d}: a moment at the {TOPICS[index % len(TOPICS)]}, token Q{process}{index:03d}Z."


@pytest.mark.slow
@pytest.mark.anyio
async def test_two_servers_on_one_data_dir_lose_nothing(ego_child: EgoChild, onnx_embedder: OnnxEmbedder) -> None:
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

    # ... and directly: 400 readable memories, every index consistent
    store = MemoryStore(ego_child.data_dir / "memory", onnx_embedder.model_id)
    store.open(onnx_embedder.embed)
    try:
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
        db = store.db
        for table in ("fts_words", "fts_trigram"):
            assert db.execute(f"SELECT count(*) FROM {table}_docsize").fetchone()[0] == 2 * PER_PROCESS
        assert db.execute("SELECT count(*) FROM journal").fetchone()[0] == 0
    finally:
        store.close()
