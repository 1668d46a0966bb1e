"""Themes across languages as the notions plugin keeps them: the key of every tag it has seen, a bridge from a tag
to its translation found by the embedding model, and the tags of public memories (to find a theme's memories).

A tag's key comes from :mod:`ego_notions.lexicon` (normalised spelling and the bilingual lexicon). A tag outside the
lexicon, written in one script (Japanese, or not), is bridged to a theme known only in the other script when the
embedding model places the two words together (cosine at least :data:`BRIDGE`, ahead of every other candidate by
:data:`BRIDGE_MARGIN`), or when one is a katakana loanword of the other (:mod:`ego_notions.loanwords`: チェス and
chess) and the model finds them related (the model's calibrated ``related`` threshold). A tag keeps the key it was
first given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Final

import numpy as np

from ego_core import Memory, MemoryService
from ego_notions.labels import is_japanese
from ego_notions.lexicon import LEXICON_KEYS, lexicon_key, normalize_tag
from ego_notions.loanwords import sounds_alike
from ego_notions.store import NotionDB, Theme

BRIDGE: Final = 0.8
"""Cosine of two words, one Japanese and one not, that name one theme. Measured on 103 everyday translation pairs
against the 10,506 other pairings of the same words (docs/plugins/notions.md): the default model (USE
multilingual) puts 73 translations at 0.8 or more and no other pair above 0.78 (baby / 子供); all-MiniLM-L6-v2
places no other pair above 0.72 and bridges almost nothing (the lexicon does)."""
BRIDGE_MARGIN: Final = 0.05
"""The bridged theme leads the next candidate by at least this much."""
VECTOR_CACHE: Final = 4096
"""Words whose vectors are kept in memory (per model)."""


class Themes:
    """The keys of tags, learned as tags are met; the public memories of each theme."""

    def __init__(self, db: NotionDB, memories: Callable[[], MemoryService | None]) -> None:
        self.db = db
        self.memories = memories
        self._vectors: dict[tuple[str, str], np.ndarray] = {}

    def keys(self, tags: Iterable[str]) -> dict[str, str]:
        return self.db.keys(tags)

    def key_set(self, tags: Iterable[str]) -> frozenset[str]:
        return frozenset(self.db.keys(tags).values())

    def learn(self, tags: Iterable[str]) -> None:
        """Give each tag not seen before its key: the lexicon's, a bridge to its translation, or itself."""
        fresh = [n for n in dict.fromkeys(normalize_tag(t) for t in tags) if n]
        if not fresh:
            return
        seen = self.db.known(set(fresh))
        unseen = [n for n in fresh if n not in seen]
        if not unseen:
            return
        written: dict[str, set[bool]] = {}  # key → the scripts its tags are written in (Japanese or not)
        words: dict[str, list[str]] = {}
        read = False
        learned: list[Theme] = []
        for tag in unseen:
            japanese = is_japanese(tag)
            key = lexicon_key(tag)
            bridged = False
            if key is None:
                if not read:
                    for known, known_key, is_ja, _bridged in self.db.themes():
                        written.setdefault(known_key, set()).add(is_ja)
                        words.setdefault(known_key, []).append(known)
                    read = True
                lonely = [k for k, scripts in written.items() if scripts == {not japanese} and k not in LEXICON_KEYS]
                key, bridged = self._bridge(tag, [(w, k) for k in lonely for w in words[k]])
            learned.append((tag, key or tag, japanese, bridged))
            written.setdefault(key or tag, set()).add(japanese)
            words.setdefault(key or tag, []).append(tag)
        self.db.learn(learned)

    def _bridge(self, tag: str, candidates: Sequence[tuple[str, str]]) -> tuple[str | None, bool]:
        """The key of the theme, among ``candidates`` (word, key) known only in the other script, whose word
        ``tag`` translates (or is a loanword of), or (None, False)."""
        service = self.memories() if candidates else None
        if service is None:
            return None, False
        try:
            vectors = self._embed(service, [tag, *(t for t, _ in candidates)])
        except Exception:  # the model's problem: the tag stays its own theme
            return None, False
        best: dict[str, float] = {}
        heard: dict[str, float] = {}
        related = service.similarity_profile.related
        for (word, key), vector in zip(candidates, vectors[1:], strict=True):
            similarity = float(np.dot(vectors[0], vector))
            best[key] = max(best.get(key, -1.0), similarity)
            if similarity >= related and sounds_alike(tag, word):
                heard[key] = max(heard.get(key, -1.0), similarity)
        ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
        top, score = ranked[0]
        runner_up = ranked[1][1] if len(ranked) > 1 else -1.0
        if score >= BRIDGE and score - runner_up >= BRIDGE_MARGIN:
            return top, True
        if heard:  # a loanword and its source word (チェス ← chess), related in meaning
            return min(heard, key=lambda key: (-heard[key], key)), True
        return None, False

    def _embed(self, service: MemoryService, words: Sequence[str]) -> list[np.ndarray]:
        model = service.embedding_model
        missing = [w for w in dict.fromkeys(words) if (model, w) not in self._vectors]
        if missing:
            if len(self._vectors) + len(missing) > VECTOR_CACHE:
                self._vectors.clear()
            rows = np.asarray(service.embed(missing), dtype=np.float64)
            for word, row in zip(missing, rows, strict=True):
                norm = float(np.linalg.norm(row))
                self._vectors[(model, word)] = row / norm if norm else row
        return [self._vectors[(model, w)] for w in words]

    def index(self, memories: Sequence[Memory], *, only_new: bool = False) -> None:
        """Learn the tags of the public ``memories`` and record them (a private memory's tags are never kept)."""
        public = [m for m in memories if not m.is_private and m.tags]
        if only_new and public:
            done = self.db.indexed(m.id for m in public)
            public = [m for m in public if m.id not in done]
        if not public:
            return
        self.learn(t for m in public for t in m.tags)
        rows = []
        for memory in public:
            tags = [n for n in dict.fromkeys(normalize_tag(t) for t in memory.tags) if n]
            rows.append((memory.id, tags, memory.timestamp.timestamp()))
        self.db.index_memories(rows)
