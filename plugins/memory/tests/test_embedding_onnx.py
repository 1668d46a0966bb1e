"""Local embedders: ONNX all-MiniLM-L6-v2 on the shared model, and the optional sentence-transformers."""

from __future__ import annotations

import json
import os
import sys
import types
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from memory_support import recalled_contents
from tokenizers import Tokenizer

from ego_core import Embedder, EmbedderSettings, EmbeddingError
from ego_memory.embedding import BUILTIN_EMBEDDERS, OnnxEmbedder, default_onnx_model_dir
from ego_memory.embedding import onnx as onnx_module

REPO_ROOT = Path(__file__).resolve().parents[3]
MODEL_DIR = Path(os.environ.get("EGO_EMBEDDING_MODEL_DIR") or REPO_ROOT.parent / "shared/models/all-MiniLM-L6-v2/onnx")
MODEL_FILES = (
    "config.json",
    "model.onnx",
    "special_tokens_map.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
)

needs_model = pytest.mark.skipif(
    not (MODEL_DIR / "model.onnx").is_file(), reason=f"ONNX model not found in {MODEL_DIR}"
)


@pytest.fixture(scope="module")
def embedder() -> OnnxEmbedder:
    if not (MODEL_DIR / "model.onnx").is_file():
        pytest.skip(f"ONNX model not found in {MODEL_DIR}")
    return OnnxEmbedder(EmbedderSettings(model_dir=MODEL_DIR))


def link_model(target: Path, files: Sequence[str] = MODEL_FILES) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    for name in files:
        (target / name).symlink_to(MODEL_DIR / name)
    return target


def reference_embedding(sentence: str) -> np.ndarray[Any, np.dtype[np.float32]]:
    """all-MiniLM-L6-v2 computed from scratch: tokenise, run, mean-pool under the mask, normalise."""
    tokenizer = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    encoding = tokenizer.encode(sentence)
    ids = np.array([encoding.ids], dtype=np.int64)
    mask = np.ones_like(ids)
    session = ort.InferenceSession(str(MODEL_DIR / "model.onnx"), providers=["CPUExecutionProvider"])
    (hidden,) = session.run(
        ["last_hidden_state"],
        {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
    )
    pooled = np.asarray(hidden, dtype=np.float32)[0].mean(axis=0)
    reference: np.ndarray[Any, np.dtype[np.float32]] = (pooled / np.linalg.norm(pooled)).astype(np.float32)
    return reference


def cosine(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> float:
    return float(np.dot(a, b))


@needs_model
def test_shape_dtype_and_unit_norm(embedder: OnnxEmbedder) -> None:
    vectors = embedder.embed(["The cat sat on the mat.", "Hello", "A much longer sentence about the weather."])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert vectors.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.dimension == 384
    assert embedder.model_id == "onnx:all-MiniLM-L6-v2"
    assert isinstance(embedder, Embedder)


@needs_model
def test_empty_input_gives_empty_matrix(embedder: OnnxEmbedder) -> None:
    vectors = embedder.embed([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


@needs_model
def test_paraphrase_is_closer_than_unrelated_sentence(embedder: OnnxEmbedder) -> None:
    anchor, paraphrase, unrelated = embedder.embed(
        [
            "I feel really happy about finishing the project today.",
            "Completing the project today made me very glad.",
            "The stock exchange closed lower after interest rates rose.",
        ]
    )
    assert cosine(anchor, paraphrase) > cosine(anchor, unrelated) + 0.3


@needs_model
def test_matches_independent_reference(embedder: OnnxEmbedder) -> None:
    sentence = "Memories with strong emotions are recalled more easily."
    np.testing.assert_allclose(embedder.embed([sentence])[0], reference_embedding(sentence), atol=1e-5)


@needs_model
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


@needs_model
def test_small_batches_match_one_big_batch(embedder: OnnxEmbedder) -> None:
    texts = [f"sentence number {i} about topic {i % 3}" for i in range(7)]
    small_batches = OnnxEmbedder(EmbedderSettings(model_dir=MODEL_DIR, batch_size=2))
    np.testing.assert_allclose(small_batches.embed(texts), embedder.embed(texts), atol=1e-5)


@needs_model
def test_japanese_text(embedder: OnnxEmbedder) -> None:
    vectors = embedder.embed(["今日はとても嬉しい一日だった。", "明日の天気は雨になるでしょう。"])
    assert vectors.shape == (2, 384)
    assert np.all(np.isfinite(vectors))
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(vectors[0], vectors[1], atol=1e-3)


@needs_model
def test_truncates_at_256_tokens(embedder: OnnxEmbedder) -> None:
    assert embedder.max_seq_length == 256
    long_text = " ".join(["memory"] * 300)
    longer_text = long_text + " completely different ending about volcanoes"
    middle_text = " ".join(["memory"] * 150) + " completely different ending about volcanoes"
    long_vector, longer_vector, middle_vector = embedder.embed([long_text, longer_text, middle_text])
    np.testing.assert_allclose(long_vector, longer_vector, atol=1e-5)
    assert not np.allclose(middle_vector, embedder.embed([" ".join(["memory"] * 150)])[0], atol=1e-3)


@needs_model
def test_concurrent_embeds_agree_with_serial(embedder: OnnxEmbedder) -> None:
    texts = [f"thread test sentence {i} " + "word " * (i % 11) for i in range(24)]
    expected = [embedder.embed([text])[0] for text in texts]
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda text: embedder.embed([text])[0], texts))
    for got, want in zip(results, expected, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)


@needs_model
def test_builtin_factory_builds_onnx_embedder() -> None:
    assert set(BUILTIN_EMBEDDERS) == {"use", "onnx", "sentence-transformers", "openai", "gemini"}
    built = BUILTIN_EMBEDDERS["onnx"](EmbedderSettings(model_dir=MODEL_DIR))
    assert isinstance(built, OnnxEmbedder)
    assert built.model_id == "onnx:all-MiniLM-L6-v2"


@needs_model
@pytest.mark.parametrize(
    ("relative_dir", "expected_id"),
    [
        ("my-encoder", "onnx:my-encoder"),
        ("custom-model/onnx", "onnx:custom-model"),
        ("all-MiniLM-L6-v2", "onnx:all-MiniLM-L6-v2"),
    ],
)
def test_model_id_follows_directory_name(tmp_path: Path, relative_dir: str, expected_id: str) -> None:
    files = tuple(name for name in MODEL_FILES if name != "config.json")
    model_dir = link_model(tmp_path / relative_dir, files)
    assert OnnxEmbedder(EmbedderSettings(model_dir=model_dir)).model_id == expected_id


@needs_model
def test_model_id_from_config_name_or_path(tmp_path: Path) -> None:
    files = tuple(name for name in MODEL_FILES if name != "config.json")
    model_dir = link_model(tmp_path / "renamed", files)
    config = json.loads((MODEL_DIR / "config.json").read_text())
    config["_name_or_path"] = "sentence-transformers/all-MiniLM-L6-v2"
    (model_dir / "config.json").write_text(json.dumps(config))
    assert OnnxEmbedder(EmbedderSettings(model_dir=model_dir)).model_id == "onnx:all-MiniLM-L6-v2"


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


def test_missing_tokenizer_is_named(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"not really a model")
    with pytest.raises(EmbeddingError, match=r"missing tokenizer\.json") as excinfo:
        OnnxEmbedder(EmbedderSettings(model_dir=tmp_path))
    assert "model.onnx" not in str(excinfo.value).split("missing", 1)[1]


def test_explicit_dir_is_never_downloaded_into(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[Path] = []
    monkeypatch.setattr(onnx_module, "download_model", attempts.append)
    with pytest.raises(EmbeddingError, match=r"model\.onnx"):
        OnnxEmbedder(EmbedderSettings(model_dir=tmp_path))
    assert attempts == []


def test_default_model_dir_is_chroma_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_onnx_model_dir() == tmp_path / ".cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx"


def test_offline_download_failure_explains_how_to_configure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    def offline(self: ONNXMiniLM_L6_V2, url: str, fname: str, chunk_size: int = 1024) -> None:
        raise OSError("network is unreachable")

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "_download", offline)
    with pytest.raises(EmbeddingError) as excinfo:
        OnnxEmbedder(EmbedderSettings())
    message = str(excinfo.value)
    assert str(tmp_path / ".cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx") in message
    assert "EGO_EMBEDDING_MODEL_DIR" in message
    assert "[plugins.memory] model_dir" in message
    assert "network is unreachable" in message


@needs_model
def test_downloads_once_into_chroma_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    downloads: list[Path] = []

    def fake_download(self: ONNXMiniLM_L6_V2) -> None:
        target = Path(self.DOWNLOAD_PATH) / self.EXTRACTED_FOLDER_NAME
        downloads.append(target)
        link_model(target)

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "_download_model_if_not_exists", fake_download)
    first = OnnxEmbedder(EmbedderSettings())
    second = OnnxEmbedder(EmbedderSettings())
    assert downloads == [default_onnx_model_dir()]
    assert first.model_dir == second.model_dir == default_onnx_model_dir()
    assert first.model_id == "onnx:all-MiniLM-L6-v2"
    assert first.embed(["downloaded"]).shape == (1, 384)


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


@needs_model
def test_a_host_configured_with_onnx_remembers_and_recalls_with_minilm(memory_hosts: Any) -> None:
    """The onnx provider end to end: configured by name (the default is the multilingual model), with its profile."""
    _host, plugin = memory_hosts(memory={"embedder": "onnx", "model_dir": str(MODEL_DIR)})
    memories = plugin._require()
    assert memories.embedding_model == "onnx:all-MiniLM-L6-v2"
    assert memories.store.model_id == "onnx:all-MiniLM-L6-v2"
    profile = memories.similarity_profile
    assert profile.calibrated
    assert (profile.duplicate, profile.link, profile.floor) == (0.95, 0.70, 0.30)
    for text in (
        "Baked sourdough bread with rye flour; the crust cracked nicely.",
        "Watched a documentary about volcanoes in Iceland.",
        "Repaired the bicycle chain before the rain started.",
    ):
        assert "Saved (id: " in memories.remember({"content": text}).data
    recalled = recalled_contents(memories.recall({"context": "a loaf fresh from the oven", "n_results": 3}).data)
    assert recalled[0] == "Baked sourdough bread with rye flour; the crust cracked nicely."
    assert "Watched a documentary about volcanoes in Iceland." not in recalled  # below MiniLM's recall floor
