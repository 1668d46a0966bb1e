"""``ego memory reindex``: a model change is refused until every memory is re-embedded; resumable; ``--force``.

A local model (the default, onnx, sentence-transformers) re-embeds a store made with another model by itself when
it opens; a provider that is not local (a remote service, a plugin's) is never sent every memory unasked: the
store is refused until ``ego memory reindex``. The "other model" of the end-to-end test is MiniLM (ONNX) served by
a plugin's provider (model id ``test:minilm``); the store tests move a store from the default model to MiniLM.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from mcp import Client

from ego_core import EmotionalTrace, Memory, Vectors
from ego_core.testing import tool_text
from ego_memory.embedding import OnnxEmbedder, UseEmbedder
from ego_memory.embedding.use import USE_MODEL_ID
from ego_memory.errors import ModelMismatchError
from ego_memory.service import new_memory_id
from ego_memory.store.memory_store import MemoryStore
from ego_memory.store.vector_index import chroma_metadata, collection_name

if TYPE_CHECKING:
    from conftest import EgoChild, MemoryHosts

StoreOpener = Callable[..., MemoryStore]

STANDARD = USE_MODEL_ID
OTHER = "test:minilm"
CONTENTS = (
    "Fixed the flaky CI job by pinning the PostgreSQL container version.",
    "Baked sourdough bread with rye flour; the crust cracked nicely.",
    "Watched a documentary about volcanoes in Iceland.",
    "A quiet chess game in the park ended in a draw.",
    "Repaired the bicycle chain before the rain started.",
    "Learned the Japanese word for persimmon: kaki.",
    "Walked the dog along the river at dawn.",
)
OTHER_PROVIDER = """
from ego_core import hookimpl
from ego_memory.embedding import OnnxEmbedder


class MiniLMElsewhere:
    \"\"\"MiniLM as a provider that is not local (like a remote service): ego never re-embeds with it unasked.\"\"\"

    model_id = "test:minilm"

    def __init__(self, settings):
        self.inner = OnnxEmbedder(settings)
        self.dimension = self.inner.dimension

    def embed(self, texts, role="document"):
        return self.inner.embed(texts, role)


@hookimpl
def register_embedders(register):
    register("minilm-elsewhere", MiniLMElsewhere)
"""
WITH_OTHER = ("--plugins", "memory,t_minilm")


def ego(child: EgoChild, *args: str, other: bool = False, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``ego <args>`` with the default model, or (``other``) with the other provider selected."""
    extra = {"EGO_EMBEDDER": "minilm-elsewhere"} if other else {}
    return subprocess.run(
        child.command(*args, *(WITH_OTHER if other else ("--plugins", "memory"))),
        env=child.env(**extra),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def memory_status(child: EgoChild, *, other: bool = False) -> dict[str, object]:
    done = ego(child, "plugins", "--json", other=other)
    assert done.returncode == 0, done.stderr
    [status] = [p for p in json.loads(done.stdout)["plugins"] if p["id"] == "memory"]
    return dict(status)


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_model_change_is_refused_until_reindex_then_the_server_serves(
    ego_child: EgoChild, memory_hosts: MemoryHosts
) -> None:
    host, plugin = memory_hosts(ego_child.data_dir)
    ctx = host.context("memory")
    assert plugin.memories is not None
    ids = [plugin._tools().remember({"content": c, "force": True}, ctx).data.split("(id: ")[1][:16] for c in CONTENTS]
    assert plugin.memories.embedding_model == STANDARD
    host.stop()
    ego_child.dist("egotest-minilm", "egotest_minilm", OTHER_PROVIDER, ep_name="t_minilm")

    # the memory plugin refuses to start on the other model, naming both models and the command
    status = memory_status(ego_child, other=True)
    assert status["state"] == "failed"
    reason = str(status["reason"])
    assert STANDARD in reason
    assert OTHER in reason
    assert "ego memory reindex" in reason
    served = ego(ego_child, "serve", other=True)  # stdin at EOF: serves, then exits
    assert served.returncode == 0, served.stderr
    # said once on stderr (the plugin_failure line, with the whole reason); the traceback is in the log file
    assert served.stderr.count("plugin=memory stage=startup") == 1
    assert "failed to start" not in served.stderr
    assert "ego memory reindex" in served.stderr
    assert STANDARD in served.stderr
    assert OTHER in served.stderr

    # reindex re-embeds everything with the configured model
    done = ego(ego_child, "memory", "reindex", "--quiet", other=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"re-embedded {len(CONTENTS)} memories: {STANDARD} -> {OTHER}"
    assert memory_status(ego_child, other=True)["state"] == "enabled"

    # the server starts and recall works
    params = ego_child.stdio(*WITH_OTHER, EGO_EMBEDDER="minilm-elsewhere")
    async with Client(params) as client:
        result = await client.call_tool("search_memories", {"context": "sourdough bread crust", "n_results": 3})
        assert not result.is_error, tool_text(result)
        assert tool_text(result).splitlines()[1].startswith(ids[1])
        saved = await client.call_tool("remember", {"content": "A new memory after the switch of models."})
        assert not saved.is_error, tool_text(saved)

    # nothing left to do; --force re-embeds with the same model
    again = ego(ego_child, "memory", "reindex", "--quiet", other=True)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == f"the store already uses {OTHER}; nothing to do (use --force to re-embed anyway)"
    forced = ego(ego_child, "memory", "reindex", "--quiet", "--force", other=True)
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.strip() == f"re-embedded {len(CONTENTS) + 1} memories: {OTHER} -> {OTHER}"
    doctor = ego(ego_child, "doctor", other=True)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert f"{len(CONTENTS) + 1} memories, indexes consistent" in doctor.stdout

    # back on the default (a local model): the store is re-embedded when it opens, no command needed
    assert memory_status(ego_child)["state"] == "enabled"
    store = MemoryStore(ego_child.data_dir / "memory", STANDARD)
    store.open(lambda texts: pytest.fail("the store was re-embedded already"))
    try:
        assert store.model_id == STANDARD
        assert store.count() == len(CONTENTS) + 1
        assert store.integrity_problems() == []
    finally:
        store.close()


def _memories(contents: Sequence[str]) -> list[Memory]:
    from datetime import UTC, datetime, timedelta

    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    return [
        Memory(
            id=new_memory_id(),
            content=content,
            timestamp=start + timedelta(minutes=i),
            emotional_trace=EmotionalTrace(primary="neutral"),
        )
        for i, content in enumerate(contents)
    ]


def test_an_interrupted_reindex_leaves_a_usable_store_and_resumes_where_it_stopped(
    open_store: StoreOpener, embedder: UseEmbedder, onnx_embedder: OnnxEmbedder, tmp_path: Path
) -> None:
    """From the default model to MiniLM (other vectors, another dimension), interrupted and resumed."""
    directory = tmp_path / "store"
    store = open_store(directory)
    memories = _memories(CONTENTS)
    store.add_many(memories, embedder.embed(CONTENTS))
    ids = [m.id for m in memories]
    store.close()

    batches: list[list[str]] = []

    def fails_after_one_batch(texts: Sequence[str]) -> Vectors:
        if batches:
            raise RuntimeError("the embedding provider went away")
        batches.append(list(texts))
        return onnx_embedder.embed(texts)

    moving = MemoryStore(directory, OTHER)
    with pytest.raises(ModelMismatchError, match="ego memory reindex"):
        moving.open(onnx_embedder.embed)
    moving = MemoryStore(directory, OTHER)
    moving.open(onnx_embedder.embed, allow_model_change=True)
    assert moving.model_mismatch
    with pytest.raises(RuntimeError, match="went away"):
        moving.reindex(fails_after_one_batch, batch=3)
    moving.close()
    assert batches == [list(CONTENTS[:3])]

    # the store still works with the old model meanwhile; the world changes before the resume
    store = open_store(directory)
    assert store.model_id == STANDARD
    assert store.integrity_problems() == []
    assert store.delete(ids[0]) is not None  # already re-embedded in the interrupted run
    late = _memories(["Remembered while the reindex was interrupted."])[0]
    store.add(late, embedder.embed([late.content])[0])
    store.close()

    embedded: list[str] = []

    def records(texts: Sequence[str]) -> Vectors:
        embedded.extend(texts)
        return onnx_embedder.embed(texts)

    moving = MemoryStore(directory, OTHER)
    moving.open(onnx_embedder.embed, allow_model_change=True)
    assert moving.reindex(records, batch=3) == len(CONTENTS) - 3 + 1  # only what the first run had not done
    assert set(embedded) == {*CONTENTS[3:], late.content}
    assert moving.model_id == OTHER
    assert not moving.model_mismatch
    assert moving.chroma.name == collection_name(OTHER)
    assert moving.integrity_problems() == []
    assert moving.chroma.all_ids() == {*ids[1:], late.id}
    moving.close()

    reopened = MemoryStore(directory, OTHER)
    reopened.open(onnx_embedder.embed)
    try:
        assert reopened.integrity_problems() == []
        hits = reopened.dense(onnx_embedder.embed(["volcanoes in Iceland"])[0], 1)
        assert hits[0][0] == ids[2]
        names = {c.name for c in reopened.chroma._client.list_collections()}
        assert names == {collection_name(OTHER)}  # the old model's collection was dropped
    finally:
        reopened.close()
    with pytest.raises(ModelMismatchError, match=re.escape(OTHER)):
        MemoryStore(directory, STANDARD).open(embedder.embed)


def test_a_forced_reindex_with_the_same_model_repairs_the_vector_index(
    open_store: StoreOpener, embedder: UseEmbedder, tmp_path: Path
) -> None:
    store = open_store(tmp_path / "store")
    memories = _memories(CONTENTS[:4])
    store.add_many(memories, embedder.embed(CONTENTS[:4]))
    orphan = _memories(["An orphan vector nobody remembers."])[0]
    store.chroma.add([orphan.id], embedder.embed([orphan.content]), [chroma_metadata(orphan, STANDARD)])
    store.chroma.delete([memories[1].id])
    assert store.integrity_problems() != []

    assert store.reindex(embedder.embed) == 4
    assert store.model_id == STANDARD
    assert store.integrity_problems() == []
    assert store.chroma.all_ids() == {m.id for m in memories}
