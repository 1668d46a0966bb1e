"""End to end over stdio: ``ego serve --plugins memory`` driven by the MCP SDK client.

The store left behind by the servers is then opened directly in the test process to check every field.
"""

from __future__ import annotations

import json
import re
import subprocess
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest
from mcp import Client
from memory_support import recall_block, recalled_contents

from ego_core.testing import tool_text
from ego_memory.embedding import UseEmbedder
from ego_memory.store.memory_store import MemoryStore

if TYPE_CHECKING:
    from conftest import EgoChild

SAVED = re.compile(r"^Saved \(id: (mem_[0-9a-f]{12})\)\. Linked to (\d+) existing memor(?:y|ies)\.$", re.MULTILINE)

DISTRACTORS = [
    "Fixed a flaky unit test in the payment service by pinning the random seed.",
    "Cooked a spicy lentil curry for dinner and burned the rice a little.",
    "Read an article about the history of mechanical watches.",
    "The laptop fan was loud all afternoon during the long compile.",
    "昨日は駅前の本屋で新しい辞書を買った。",
]
TARGET = "Master and I walked along the river at sunset and talked about the stars."
PARAPHRASE = "strolling by the water at dusk, chatting about constellations"  # not one word of TARGET's
RARE = "The invoice for the cabin roof repair carries the reference XQZ-4471."
JAPANESE = "今日は夕焼けを一緒に見た"
PRIVATE = "I felt a quiet fear that Master might leave one day."


def saved_id(result: Any) -> str:
    assert not result.is_error, tool_text(result)
    match = SAVED.search(tool_text(result))
    assert match, tool_text(result)
    assert tool_text(result).startswith(match.group(0))
    return match.group(1)


def result_contents(result: Any) -> list[str]:
    assert not result.is_error, tool_text(result)
    return recalled_contents(tool_text(result))


@pytest.mark.anyio
async def test_remember_recall_and_restart_over_stdio(ego_child: EgoChild, embedder: UseEmbedder) -> None:
    before = datetime.now(UTC)
    async with Client(ego_child.stdio("--plugins", "memory")) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert {"remember", "recall", "search_memories"} <= tools

        for text in DISTRACTORS:
            saved_id(await client.call_tool("remember", {"content": text}))
        target = saved_id(
            await client.call_tool(
                "remember",
                {
                    "content": TARGET,
                    "emotion": "moved",
                    "secondary": ["nostalgic"],
                    "intensity": 0.9,
                    "importance": 5,
                    "category": "relationship",
                    "tags": ["river", "sunset"],
                },
            )
        )
        saved_id(await client.call_tool("remember", {"content": RARE, "category": "observation"}))
        saved_id(await client.call_tool("remember", {"content": JAPANESE, "emotion": "contentment"}))
        private = saved_id(
            await client.call_tool(
                "remember", {"content": PRIVATE, "emotion": "anxious", "private": True, "tags": ["fear"]}
            )
        )

        assert result_contents(await client.call_tool("recall", {"context": PARAPHRASE}))[0] == TARGET
        assert result_contents(await client.call_tool("recall", {"context": "XQZ-4471"}))[0] == RARE
        assert result_contents(await client.call_tool("recall", {"context": "夕焼けを見た日"}))[0] == JAPANESE

        bad = await client.call_tool("remember", {"content": ""})
        assert bad.is_error
        assert "`content`" in tool_text(bad)
    after = datetime.now(UTC)

    # a new server process on the same data directory
    async with Client(ego_child.stdio("--plugins", "memory")) as client:
        recalled = await client.call_tool("recall", {"context": PARAPHRASE})
        assert result_contents(recalled)[0] == TARGET
        block = recall_block(tool_text(recalled), TARGET)
        assert re.match(rf"1\. \[(just now|\d+m ago)\] {re.escape(TARGET)}\n", block), block
        assert re.search(
            r"^   moved\(0\.9\), undercurrent nostalgic · importance 5 · score [01]\.\d\d · private: false$",
            block,
            re.MULTILINE,
        ), block

        assert result_contents(await client.call_tool("recall", {"context": "XQZ-4471"}))[0] == RARE
        found = await client.call_tool("search_memories", {"context": PARAPHRASE, "n_results": 1})
        assert re.search(rf"^{target} \| (just now|\d+m ago) \| moved \| relationship \|", tool_text(found), re.M)
        assert "private: false" in tool_text(found)

        secret = await client.call_tool("recall", {"context": "fear that Master might leave"})
        assert result_contents(secret)[0] == PRIVATE
        assert recall_block(tool_text(secret), PRIVATE).endswith("· private: true")

    # the store the servers left behind, opened directly
    store = MemoryStore(ego_child.data_dir / "memory", embedder.model_id)
    store.open(embedder.embed)
    try:
        assert store.count() == len(DISTRACTORS) + 4  # the invalid remember stored nothing
        assert store.integrity_problems() == []
        memory = store.get_one(target)
        assert memory is not None
        assert memory.content == TARGET
        trace = memory.emotional_trace
        assert (trace.primary, trace.secondary, trace.intensity) == ("moved", ("nostalgic",), 0.9)
        assert (trace.valence, trace.arousal) == (0.7, 0.5)  # moved's defaults
        assert (memory.importance, memory.category, memory.tags) == (5, "relationship", ("river", "sunset"))
        assert memory.is_private is False
        assert memory.timestamp.utcoffset() is not None
        assert memory.timestamp.utcoffset().total_seconds() == 0
        assert before <= memory.timestamp <= after
        assert memory.access_count >= 2
        assert memory.last_accessed is not None
        assert memory.last_accessed >= memory.timestamp
        secret_memory = store.get_one(private)
        assert secret_memory is not None
        assert (secret_memory.is_private, secret_memory.tags) == (True, ("fear",))
        assert secret_memory.emotional_trace.primary == "anxious"
    finally:
        store.close()


OTHER_EMBEDDER = """
import numpy as np
from ego_core import hookimpl


class OtherEmbedder:
    model_id = "test:other-model"
    dimension = 384

    def embed(self, texts):
        vectors = np.ones((len(texts), 384), dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@hookimpl
def register_embedders(register):
    register("other-test", lambda settings: OtherEmbedder())
"""


@pytest.mark.anyio
async def test_serve_refuses_a_store_built_with_another_model(ego_child: EgoChild, embedder: UseEmbedder) -> None:
    from ego_core import Memory

    store = MemoryStore(ego_child.data_dir / "memory", embedder.model_id)
    store.open(embedder.embed)
    memory = Memory(id="mem_00000000beef", content="Built with the default model.", timestamp=datetime.now(UTC))
    store.add(memory, embedder.embed([memory.content])[0])
    store.close()

    ego_child.dist("egotest-other-embedder", "egotest_other_embedder", OTHER_EMBEDDER, ep_name="t_other_embedder")
    selection = ("--plugins", "memory,t_other_embedder")
    async with Client(ego_child.stdio(*selection, EGO_EMBEDDER="other-test")) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert not tools & {"remember", "recall", "search_memories"}

    done = subprocess.run(
        ego_child.command("plugins", "--json", *selection),
        env=ego_child.env(EGO_EMBEDDER="other-test"),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    status = {p["id"]: p for p in json.loads(done.stdout)["plugins"]}["memory"]
    assert status["state"] == "failed"
    for part in ("ModelMismatchError", embedder.model_id, "test:other-model", "ego memory reindex"):
        assert part in status["reason"], status["reason"]

    # refused, not altered: the original model still opens it with its memory
    again = MemoryStore(ego_child.data_dir / "memory", embedder.model_id)
    again.open(embedder.embed)
    try:
        assert again.all_ids() == ["mem_00000000beef"]
        assert again.integrity_problems() == []
    finally:
        again.close()


def test_memory_stats_command_counts_the_memories(ego_child: EgoChild, embedder: UseEmbedder) -> None:
    from ego_core import Memory

    store = MemoryStore(ego_child.data_dir / "memory", embedder.model_id)
    store.open(embedder.embed)
    for index, text in enumerate(["First memory.", "Second memory."]):
        memory = Memory(id=f"mem_00000000000{index}", content=text, timestamp=datetime.now(UTC))
        store.add(memory, embedder.embed([text])[0])
    store.close()

    done = subprocess.run(
        ego_child.command("memory", "stats", "--json", "--plugins", "memory"),
        env=ego_child.env(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"memories": 2, "embedding_model": "use:multilingual-v3"}
