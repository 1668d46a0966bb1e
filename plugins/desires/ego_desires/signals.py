"""Satisfaction signals: a memory that sounds like a desire's signal ("feeling heard by someone") satisfies it.

Only a pleasant, felt memory counts (valence above 0.2, intensity above 0.3). Its stored vector is compared with
the signals' vectors; each desire whose best signal is at least as similar as the model's ``related`` threshold
is satisfied with quality similarity × 0.5. The signals' vectors are kept per model and set of signals, so a
``remember`` costs no embedding once they are known. Nothing of the memory's text is kept or logged.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np

from ego_core import Memory, MemoryService
from ego_desires.wording import Catalog

MIN_VALENCE: Final = 0.2
MIN_INTENSITY: Final = 0.3
QUALITY_SCALE: Final = 0.5
LINE: Final = "Something quieted — a little lighter now."


def wanted(memory: Memory) -> bool:
    trace = memory.emotional_trace
    return trace.valence > MIN_VALENCE and trace.intensity > MIN_INTENSITY


def fingerprint(model: str, signals: Mapping[str, Sequence[str]]) -> str:
    lines = sorted(f"{name}:{signal}" for name, texts in signals.items() for signal in texts)
    return hashlib.sha256("\n".join([model, *lines]).encode("utf-8")).hexdigest()


class SignalMatcher:
    """Thread-safe; the vectors of the last set of signals are kept in the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: tuple[str, list[str], np.ndarray] | None = None

    def _vectors(self, service: MemoryService, signals: Mapping[str, Sequence[str]]) -> tuple[list[str], np.ndarray]:
        key = fingerprint(service.embedding_model, signals)
        with self._lock:
            if self._kept is not None and self._kept[0] == key:
                return self._kept[1], self._kept[2]
        owners = [name for name, texts in signals.items() for _ in texts]
        texts = [text for texts in signals.values() for text in texts]
        vectors = np.asarray(service.embed(texts, "document"), dtype=np.float32) if texts else np.zeros((0, 1))
        with self._lock:
            self._kept = (key, owners, vectors)
        return owners, vectors

    def matches(self, memory: Memory, service: MemoryService, catalog: Catalog) -> list[tuple[str, float]]:
        """The desires ``memory`` satisfies, with their quality, strongest first."""
        if not wanted(memory):
            return []
        signals = {name: entry.signals for name, entry in catalog.desires.items() if entry.signals}
        if not signals:
            return []
        stored = service.embeddings([memory.id]).get(memory.id)
        if stored is None:
            return []
        owners, vectors = self._vectors(service, signals)
        if not owners:
            return []
        similarities = vectors @ np.asarray(stored, dtype=np.float32).reshape(-1)
        best: dict[str, float] = {}
        for owner, similarity in zip(owners, similarities.tolist(), strict=True):
            best[owner] = max(best.get(owner, -1.0), float(similarity))
        threshold = service.similarity_profile.related
        found = [(name, round(sim * QUALITY_SCALE, 4)) for name, sim in best.items() if sim >= threshold]
        return sorted(found, key=lambda pair: (-pair[1], pair[0]))
