"""The ``memory.store`` service: what other plugins and the memory tools ask of the memories."""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Any

import attrs
import numpy as np

from ego_core import (
    Embedder,
    EmbedRole,
    EmotionalTrace,
    EmotionTally,
    Memory,
    MemoryLink,
    PluginContext,
    RecallHit,
    RecallNote,
    RecallQuery,
    RememberDraft,
    SimilarityProfile,
    Vectors,
)
from ego_memory.api import MemoryHooks
from ego_memory.arguments import recall_query
from ego_memory.config import MemoryConfig
from ego_memory.contrast import contrast
from ego_memory.embedding.english import EnglishEncoder, reads_as_english
from ego_memory.embedding.profiles import profile_for
from ego_memory.index.blas import one_blas_thread
from ego_memory.recall import emotion_history
from ego_memory.recall.engine import RecallEngine
from ego_memory.recall.neighbours import NearestMemo
from ego_memory.recall.ranking import Matches, SearchResult
from ego_memory.recall.strength import Strengths, people_of, precious_rows
from ego_memory.store.filters import Filters
from ego_memory.store.memory_store import MemoryStore
from ego_memory.store.rows import to_millis
from ego_memory.surfacing.echoes import ECHO_POOL
from ego_memory.surfacing.involuntary import explicit_filter, proust
from ego_memory.text.privacy import PrivateContentRedactor

_log = logging.getLogger("ego.plugin.memory")


def new_memory_id() -> str:
    return "mem_" + secrets.token_hex(6)


@attrs.frozen
class Remembered:
    """A memory remember stored, the memories it linked to (with their similarity), and the memories nearest it
    before it was stored (the echoes read them)."""

    memory: Memory
    linked: list[tuple[Memory, float]]
    near: Sequence[tuple[str, float]]


@attrs.frozen
class Vetoed:
    """A plugin's ``before_remember`` refused the draft: its answer stands for remember's."""

    response: object


class Memories:
    """The ``memory.store`` service (:class:`ego_core.MemoryService`, what other plugins get from
    ``ctx.services``) over one store and one (cached) embedder: reading memories, the similarity questions,
    storing a draft, and the recall search the tools word (:mod:`ego_memory.tools`)."""

    def __init__(
        self,
        ctx: PluginContext,
        config: MemoryConfig,
        store: MemoryStore,
        embedder: Embedder,
        redactor: PrivateContentRedactor,
        *,
        english: EnglishEncoder | None = None,
    ) -> None:
        self.ctx = ctx
        self.config = config
        self.store = store
        self.embedder = embedder
        self.redactor = redactor
        self.english = english
        """The English channel (None: off)."""
        self._english_worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ego-english")
        self._english_writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ego-english-index")
        self._english_lock = threading.Lock()
        self._english_pending = 0
        self.engine = RecallEngine(store, config.recall, profile_for(embedder.model_id))
        self.strengths = Strengths(store, config.recall, lambda: people_of(ctx))
        self.engine.precious = lambda rows: precious_rows(rows, people_of(ctx))
        self.neighbours = NearestMemo(
            store, lambda text: self.embedder.embed([text])[0], depth=max(config.max_links + 1, ECHO_POOL)
        )
        """The nearest memories of the text being remembered: the guard's ``nearest``, the echoes and the links
        share one search (:class:`~ego_memory.recall.neighbours.NearestMemo`)."""
        self.last_search: SearchResult | None = None
        """The engine's answer to the latest recall (stages run, pool size), for diagnostics and tests."""

    # ------------------------------------------------------------------------------------------
    # MemoryService (what other plugins see)

    @property
    def embedding_model(self) -> str:
        return self.embedder.model_id

    @property
    def similarity_profile(self) -> SimilarityProfile:
        return profile_for(self.embedder.model_id)

    @property
    def link_threshold(self) -> float:
        configured = self.config.link_threshold
        return self.similarity_profile.link if configured is None else configured

    def embed(self, texts: Sequence[str], role: EmbedRole = "document") -> Vectors:
        return self.embedder.embed(list(texts), role)

    def contrast(self, first: str, second: str) -> str | None:
        return contrast(first, second)

    def count(self) -> int:
        return self.store.count()

    def get(self, memory_ids: Sequence[str]) -> list[Memory]:
        return self.store.get(list(memory_ids))

    def find_exact(self, content: str) -> Memory | None:
        return self.store.find_by_content(content)

    def nearest(self, text: str, k: int = 1) -> list[tuple[Memory, float]]:
        pairs = self.neighbours.nearest_ids(text, max(k, self.config.max_links))[:k]
        found = {m.id: m for m in self.store.get([i for i, _ in pairs])}
        return [(found[i], sim) for i, sim in pairs if i in found]

    def recent(self, since: datetime, limit: int = 500) -> list[Memory]:
        return self.store.recent(since.timestamp(), limit)

    def strongest(
        self, since: datetime, limit: int = 10, *, min_intensity: float = 0.0, until: datetime | None = None
    ) -> list[Memory]:
        end = until.timestamp() if until is not None else None
        return self.store.strongest(since.timestamp(), end, limit, min_intensity)

    def embeddings(self, memory_ids: Sequence[str]) -> dict[str, Vectors]:
        return self.store.embeddings(list(memory_ids))

    def tally(self, since: datetime, until: datetime) -> EmotionTally:
        return emotion_history.tally(self.store, since.timestamp(), until.timestamp())

    def faded_emotions(
        self,
        emotions: Collection[str],
        before: datetime,
        at: datetime,
        *,
        since: datetime | None = None,
        strength: float = 0.5,
    ) -> dict[str, datetime]:
        recall = self.config.recall
        return emotion_history.faded_emotions(
            self.store,
            emotions,
            before=before.timestamp(),
            at=at.timestamp(),
            since=since.timestamp() if since is not None else None,
            strength=strength,
            half_life_days=recall.half_life_days if recall.decay else None,
        )

    def protected(self, memory_ids: Sequence[str], at: datetime) -> set[str]:
        return self.strengths.protected(memory_ids, at)

    @one_blas_thread
    def similar_pairs(
        self, memory_ids: Sequence[str], threshold: float, limit: int | None = None
    ) -> list[tuple[str, str, float]]:
        vectors = self.store.embeddings(list(memory_ids))
        present = [memory_id for memory_id in dict.fromkeys(memory_ids) if memory_id in vectors]
        if len(present) < 2:
            return []
        matrix = np.stack([np.asarray(vectors[memory_id], dtype=np.float64).reshape(-1) for memory_id in present])
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = matrix / np.where(norms > 0, norms, 1.0)
        rows, cols = np.triu_indices(len(present), k=1)
        values = (matrix @ matrix.T)[rows, cols]
        hits = np.flatnonzero(values >= threshold)
        hits = hits[np.argsort(-values[hits], kind="stable")]
        if limit is not None:
            hits = hits[:limit]
        return [(present[int(rows[i])], present[int(cols[i])], min(1.0, float(values[i]))) for i in hits]

    @one_blas_thread
    def dormant_near(self, text: str, k: int = 5, *, at: datetime) -> list[tuple[Memory, float]]:
        return self.strengths.dormant_near(self.embedder.embed([text], "query")[0], k, at)

    # ------------------------------------------------------------------------------------------
    # remember

    def remember(self, draft: RememberDraft) -> Remembered | Vetoed:
        """Store a draft unless a plugin vetoes it (``before_remember``: the duplicate guard). The check and the
        save are one step: a concurrent remember (another thread or process) cannot slip a near-duplicate in
        between."""
        with self.store.writing():
            veto = MemoryHooks(self.ctx).before_remember(draft=draft)
            if veto is not None:
                return Vetoed(veto[1])
            near = self.neighbours.nearest_ids(draft.content)  # before the store: the guard's search, reused
            memory, linked = self.store_draft(draft, neighbours=near)
        return Remembered(memory, linked, near[:ECHO_POOL])

    def store_draft(
        self,
        draft: RememberDraft,
        *,
        timestamp: datetime | None = None,
        neighbours: Sequence[tuple[str, float]] | None = None,
    ) -> tuple[Memory, list[tuple[Memory, float]]]:
        """Store a draft with auto-links; returns the memory and the linked memories with similarities.
        ``neighbours``: the memories nearest its text, best first (default: searched now)."""
        vector = self.embedder.embed([draft.content])[0]
        if neighbours is None:
            neighbours = self.neighbours.nearest_ids(draft.content)
        neighbors = neighbours[: self.config.max_links]
        threshold = self.link_threshold
        chosen = [(memory_id, sim) for memory_id, sim in neighbors if sim >= threshold]
        chosen = chosen[: self.config.max_links]
        moment = to_millis(timestamp or self.ctx.now())
        links = [MemoryLink(target_id=i, link_type="similar", confidence=round(s, 4)) for i, s in chosen]
        if self.config.sequence_links:
            window = self.config.sequence_window_minutes * 60.0
            for previous in self.store.previous(moment.timestamp(), window, self.config.sequence_links):
                links.append(MemoryLink(target_id=previous, link_type="leads_to", confidence=1.0, note="sequence"))
        memory = Memory(
            id=new_memory_id(),
            content=draft.content,
            timestamp=moment,
            emotional_trace=EmotionalTrace(
                primary=draft.emotion,
                secondary=draft.secondary,
                intensity=draft.intensity,
                valence=draft.valence,
                arousal=draft.arousal,
                body_state=draft.body_state,
            ),
            importance=draft.importance,
            category=draft.category,
            tags=draft.tags,
            links=tuple(links),
            is_private=draft.is_private,
            anticipated=draft.anticipated,
        )
        if memory.is_private:
            self.redactor.add(memory.id, memory.content, memory.timestamp.timestamp())
        self.store.add(memory, vector, memory.links)
        if self.english is not None:  # the English channel's index follows right after, off the caller's time
            with self._english_lock:
                self._english_pending += 1
            self._english_writer.submit(self._write_english, memory.id, memory.content)
        others = {m.id: m for m in self.store.get([i for i, _ in chosen], with_links=False)}
        return memory, [(others[i], s) for i, s in chosen if i in others]

    # ------------------------------------------------------------------------------------------
    # recall / search_memories

    def query(self, args: Mapping[str, Any], tool: str = "recall") -> tuple[RecallQuery, Filters]:
        """The query and filters ``recall`` (or ``search_memories``: ``tool`` names it in errors) makes of
        ``args``, for :meth:`search`: the dashboard's search runs the very path the tools do."""
        return recall_query(args, self.ctx, tool)

    def search(
        self, query: RecallQuery, filters: Filters, *, touch: bool = True, involuntary: bool = False
    ) -> tuple[list[RecallHit], Matches | None, list[str]]:
        """Ranked hits, how many memories match (:meth:`RecallEngine.matches`), and extra lines from
        ``on_recall_result``; ``involuntary``: a dormant memory may take the last place
        (:func:`ego_memory.surfacing.involuntary.proust`)."""
        self.settle_english()  # read your writes: the English vectors of every memory remembered before
        vector, english = self._query_vectors(query.context)
        now = self.ctx.now().astimezone(self.ctx.settings.tz)  # a period the context names is in local days
        active = filters if filters.active else None
        found = self.engine.gather(query.context, vector, now, active, english=english)
        result = self.engine.rank(found, query.n_results, active)
        self.last_search = result
        ids = [h.id for h in result.hits]
        memories = {m.id: m for m in self.store.get(ids)}
        hits = [
            RecallHit(memory=memories[h.id], score=h.score, relevance=h.relevance, linked=h.linked)
            for h in result.hits
            if h.id in memories
        ]
        matches = self.engine.matches(found, result.hits)
        surfaced: Memory | None = None
        if involuntary and not explicit_filter(filters):
            hits, surfaced = proust(
                self.ctx,
                self.config.involuntary_probability,
                found,
                hits,
                query.n_results,
                store=self.store,
                strengths=self.strengths,
                profile=self.similarity_profile,
                at=now.timestamp(),
            )
        if touch and hits:
            self.store.touch([h.memory.id for h in hits], now.timestamp())
        if surfaced is not None:
            MemoryHooks(self.ctx).on_memory_surfaced(memory=surfaced, how="involuntary")
        lines: list[str] = []
        boosts: dict[str, float] = {}
        for _plugin, note in MemoryHooks(self.ctx).on_recall_result(query=query, results=tuple(hits)):
            if isinstance(note, RecallNote):
                lines.extend(note.lines)
                for memory_id, delta in note.boosts.items():
                    boosts[memory_id] = boosts.get(memory_id, 0.0) + float(delta)
        if boosts:
            hits = sorted(
                (attrs.evolve(h, score=h.score + boosts.get(h.memory.id, 0.0)) for h in hits),
                key=lambda h: -h.score,
            )
        return hits, matches, lines

    def close(self) -> None:
        self._english_writer.shutdown(wait=True)
        self._english_worker.shutdown(wait=True)

    def _write_english(self, memory_id: str, content: str) -> None:
        """Store a new memory's English-channel blob (a failure only leaves it for the next open to fill)."""
        try:
            if self.english is not None:
                self.store.put_english([(memory_id, self.english.blobs([content])[0])])
        except Exception as exc:
            _log.warning("the English channel could not read a new memory (filled at the next start): %s", exc)
        finally:
            with self._english_lock:
                self._english_pending -= 1

    def settle_english(self) -> None:
        """Wait until every English-channel write queued so far is done (at once when none is)."""
        with self._english_lock:
            pending = self._english_pending
        if pending:
            self._english_writer.submit(lambda: None).result()

    def query_vectors(self, context: str) -> tuple[Vectors, Vectors | None]:
        """The context's multilingual query vector, and its English-channel vector when it reads as English."""
        vector, english = self._query_vectors(context)
        return vector, english.result() if english is not None else None

    def _query_vectors(self, context: str) -> tuple[Vectors, Future[Vectors] | None]:
        """The multilingual query vector, and the English-channel one still being embedded on the English
        worker (recall awaits it only after its multilingual and lexical searches)."""
        encoder = self.english
        if encoder is None or not reads_as_english(context):
            return self.embedder.embed([context], "query")[0], None
        english: Future[Vectors] = self._english_worker.submit(lambda: encoder.embed([context])[0])
        return self.embedder.embed([context], "query")[0], english

    def fill_english(self, progress: Callable[[int], None] | None = None, batch: int = 128) -> int:
        """Give every memory the English channel has not read yet its English blob (a store from before the
        channel, memories another process or an import added without it); returns how many were read."""
        if self.english is None:
            return 0
        done = 0
        while rows := self.store.without_english(batch):
            self.store.put_english(
                list(zip((i for i, _ in rows), self.english.blobs([c for _, c in rows]), strict=True))
            )
            done += len(rows)
            if progress is not None:
                progress(len(rows))
        return done
