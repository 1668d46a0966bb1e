"""The English channel: a second, English-only embedding for memories in Latin script, blended into recall for
an English context (the real int8 all-MiniLM-L6-v2 that ego installs)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from ego_core import Memory
from ego_memory.embedding.english import NOT_ENGLISH, EnglishEncoder, from_blob, reads_as_english, to_blob
from ego_memory.embedding.onnx import OnnxEmbedder
from ego_memory.index.english import EnglishIndex
from ego_memory.service import new_memory_id
from ego_memory.store.schema import open_file

if TYPE_CHECKING:
    from conftest import MemoryHosts

FLOAT32_REFERENCE = Path(__file__).parent / "data" / "minilm_float32_reference.json"


def english_rows(data_dir: Path) -> dict[str, bytes]:
    db = sqlite3.connect(data_dir / "memory" / "memory.sqlite3")
    try:
        return dict(db.execute("SELECT id, vector FROM english_vectors"))
    finally:
        db.close()


@pytest.mark.parametrize(
    ("text", "english"),
    [
        ("What did Melanie paint last week?", True),
        ("café au lait at the station", True),
        ("今日は夕焼けがきれいだった", False),
        ("Masterと京都に行った", False),
        ("I love 京都", False),
        ("서울에 갔다", False),
        ("Привет, мир", False),
        ("12345 !!!", False),
        ("", False),
    ],
)
def test_which_texts_the_english_channel_reads(text: str, english: bool) -> None:
    assert reads_as_english(text) is english


def test_the_bundled_model_agrees_with_the_float32_model() -> None:
    """The float32 vectors were computed once with the float32 model's files (data/minilm_float32_reference.json
    says which); the int8 model agrees with them to 0.9981-0.9997 on these texts."""
    reference = json.loads(FLOAT32_REFERENCE.read_text(encoding="utf-8"))
    texts = reference["texts"]
    int8 = EnglishEncoder().embed(texts)
    float32 = np.array(reference["vectors"], dtype=np.float32)
    assert int8.shape == float32.shape == (3, 384)
    assert np.all(np.sum(int8 * float32, axis=1) > 0.99)


def test_the_onnx_embedder_without_a_directory_is_the_english_channels_model(onnx_embedder: OnnxEmbedder) -> None:
    texts = ["Caroline went to the support group yesterday.", "今日は夕焼けを見た"]
    assert onnx_embedder.model_id == EnglishEncoder.model_id
    np.testing.assert_allclose(onnx_embedder.embed(texts), EnglishEncoder().embed(texts), atol=1e-5)


def test_a_blob_round_trips_and_a_japanese_memory_keeps_none() -> None:
    encoder = EnglishEncoder()
    english, japanese = encoder.blobs(["We walked along the river at dusk.", "夕方に川沿いを散歩した。"])
    assert japanese == NOT_ENGLISH
    assert from_blob(japanese) is None
    vector = from_blob(english)
    assert vector is not None
    assert float(vector @ encoder.embed(["We walked along the river at dusk."])[0]) > 0.999
    assert from_blob(to_blob(np.zeros(3, dtype=np.float32))) is None  # another size is not a vector


def test_remember_stores_the_english_vector_and_forget_removes_it(memory_hosts: MemoryHosts) -> None:
    host, plugin = memory_hosts()
    ctx = host.context("memory")
    memories = plugin._require()
    tools = plugin._tools()
    tools.remember({"content": "Master taught me how to bake sourdough bread.", "force": True}, ctx)
    tools.remember({"content": "マスターにパンの焼き方を教わった。", "force": True}, ctx)
    memories.settle_english()  # written right after remember returns
    rows = english_rows(host.settings.data_dir)
    blobs = sorted(rows.values(), key=len)
    assert len(rows) == 2
    assert blobs[0] == NOT_ENGLISH
    assert len(blobs[1]) == 384 * 2
    bread = next(m for m in memories.store.latest(5) if m.content.startswith("Master taught"))
    memories.store.delete(bread.id)
    assert bread.id not in english_rows(host.settings.data_dir)


def test_a_store_from_before_the_channel_is_read_when_it_opens(memory_hosts: MemoryHosts, embedder: object) -> None:
    data_dir = memory_hosts.root / "before"
    host, plugin = memory_hosts(data_dir, memory={"english_channel": False})
    memories = plugin._require()
    plugin._tools()
    texts = ["Jon opened a dance studio downtown.", "Gina lost her job at the bank.", "ジョンはダンス教室を開いた。"]
    for text in texts:
        memories.store.add(
            Memory(id=new_memory_id(), content=text, timestamp=host.clock.now()),
            memories.embed([text])[0],
        )
    assert memories.english is None
    assert english_rows(data_dir) == {}
    host.stop()
    _host, reopened = memory_hosts(data_dir)
    rows = english_rows(data_dir)
    assert len(rows) == 3
    assert sorted(len(blob) for blob in rows.values()) == [0, 768, 768]
    assert reopened._require().store.count_without_english() == 0


def test_an_english_context_blends_the_channel_and_a_japanese_one_does_not(memory_hosts: MemoryHosts) -> None:
    host, plugin = memory_hosts()
    ctx = host.context("memory")
    memories = plugin._require()
    tools = plugin._tools()
    for text in (
        "Melanie painted a lake at sunrise last week.",
        "Caroline joined a support group for transgender people.",
        "Jon decided to open his own dance studio.",
        "今日はマスターと一緒に夕焼けを見た。",
    ):
        tools.remember({"content": text, "force": True}, ctx)
    found = tools.recall({"context": "What did Melanie paint?"}, ctx)  # waits for the English vectors queued
    assert "Melanie painted a lake" in str(found.data).splitlines()[1]
    assert memories.last_search is not None
    assert "english" in memories.last_search.stages
    tools.recall({"context": "夕焼け"}, ctx)
    assert memories.last_search is not None
    assert "english" not in memories.last_search.stages


def test_switched_off_the_channel_stores_and_blends_nothing(memory_hosts: MemoryHosts) -> None:
    host, plugin = memory_hosts(memory={"english_channel": False})
    ctx = host.context("memory")
    memories = plugin._require()
    tools = plugin._tools()
    tools.remember({"content": "Melanie painted a lake at sunrise.", "force": True}, ctx)
    tools.remember({"content": "Jon opened a dance studio.", "force": True}, ctx)
    tools.recall({"context": "What did Melanie paint?"}, ctx)
    assert english_rows(host.settings.data_dir) == {}
    assert memories.last_search is not None
    assert "english" not in memories.last_search.stages


def test_the_english_index_reads_new_rows_of_any_writer_and_drops_forgotten_ones(tmp_path: Path) -> None:
    encoder = EnglishEncoder()
    texts = [
        "Melanie painted a lake at sunrise.",
        "Jon opened a dance studio downtown.",
        "Gina lost her job at the bank.",
        "Caroline joined a support group.",
    ]
    writer = open_file(tmp_path)
    reader = writer.connect()
    index = EnglishIndex()

    def write(pairs: list[tuple[str, bytes]]) -> None:
        with writer.write() as db:
            db.executemany("INSERT OR REPLACE INTO english_vectors(id, vector) VALUES (?, ?)", pairs)

    def nearest(text: str, n: int = 4) -> list[str]:
        return [memory_id for memory_id, _ in index.nearest(reader, encoder.embed([text])[0], n)]

    blobs = encoder.blobs(texts)
    write([("m0", blobs[0]), ("m1", blobs[1]), ("ja", NOT_ENGLISH)])
    assert nearest("What did Melanie paint?") == ["m0", "m1"]  # a memory without an English vector is not a hit
    write([("m2", blobs[2]), ("m3", blobs[3])])  # another connection wrote: the next search reads only these
    assert nearest("Who lost a job at a bank?")[0] == "m2"
    write([("m0", blobs[1])])  # rewritten: the old vector no longer counts
    assert nearest("What did Melanie paint?", 4).count("m0") == 1
    with writer.write() as db:
        db.execute("DELETE FROM english_vectors WHERE id IN ('m0', 'm1', 'm2')")
    assert nearest("What did Melanie paint?") == ["m3"]  # most rows forgotten: read again from the start
    writer.close()
    reader.close()
