"""The recall pipeline.

dense top-N + FTS5 BM25 top-N (the context's words; a proper noun's reading too, and Japanese synonyms at half
weight) + BM25 top-N of the context's words in the other language (:mod:`ego_memory.text.equivalents`); in a store
holding both languages, the memories in the other language from the context scored on its words on the same BM25
scale (``across_languages``: the weight of the words they hold through a translation, or their calibrated
similarity times the weight of all) → fusion (by
default a weighted sum of the z-normalised BM25 and cosine scores, with the count of the context's words a memory
holds in the other language at ``translation_weight``; reciprocal rank fusion with ``fusion_method = "rrf"``) →
Hopfield pattern completion over the candidates' real embeddings → time decay (half-life grows with access and
links; age measured against the store's own present so an old corpus is not buried; full strength until an
anticipated moment; a precious memory's strength counted as at least 0.25; retroactive interference between
near-identical memories) → emotion and importance boosts → label-aware matching and temporal cues → spreading
activation over links (one hop, and optionally a second) → top n.

Each stage is a module of :mod:`ego_memory.recall` (:mod:`~ego_memory.recall.candidates`,
:mod:`~ego_memory.recall.fusion`, :mod:`~ego_memory.recall.completion`, :mod:`~ego_memory.recall.reweigh`,
:mod:`~ego_memory.recall.cues`, :mod:`~ego_memory.recall.spread`, :mod:`~ego_memory.recall.final`), taking the
candidate set and the :class:`~ego_memory.recall.ranking.Ranking` so far and returning the next; this module runs
them in order. Every stage can be switched off through :class:`~ego_memory.config.RecallConfig`, which is how
``ego bench locomo --ablate`` measures what each one earns.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from datetime import datetime

from ego_core import SimilarityProfile, Vectors
from ego_memory.config import RecallConfig
from ego_memory.recall import candidates, cues, final, lexical
from ego_memory.recall.candidates import Candidates, PreciousCheck
from ego_memory.recall.completion import complete
from ego_memory.recall.fusion import fuse
from ego_memory.recall.ranking import Matches, Scored, SearchResult
from ego_memory.recall.reweigh import reweigh
from ego_memory.recall.spread import spread
from ego_memory.store.filters import Filters
from ego_memory.store.memory_store import MemoryStore


class RecallEngine:
    def __init__(self, store: MemoryStore, config: RecallConfig, profile: SimilarityProfile | None = None) -> None:
        self.store = store
        self.config = config
        self.profile = profile
        """The embedding model's similarity profile: its ``floor`` and ``duplicate`` similarities scale relevance."""
        self.precious: PreciousCheck | None = None
        """Which candidates (by their scoring rows) are precious; None: none is."""

    def search(
        self,
        context: str,
        query_vector: Vectors,
        n: int,
        now: datetime,
        filters: Filters | None = None,
        *,
        english: Vectors | Future[Vectors] | None = None,
    ) -> SearchResult:
        return self.rank(self.gather(context, query_vector, now, filters, english=english), n, filters)

    def gather(
        self,
        context: str,
        query_vector: Vectors,
        now: datetime,
        filters: Filters | None = None,
        config: RecallConfig | None = None,
        *,
        english: Vectors | Future[Vectors] | None = None,
    ) -> Candidates:
        """The first stages (:func:`ego_memory.recall.candidates.gather`): dense and lexical candidates, with what
        ranking them reads from the store; with ``config`` (default: the engine's own). ``english``: the context's
        English-channel vector, if any, or its embedding still under way (awaited once the multilingual and lexical
        searches are done)."""
        return candidates.gather(
            self.store,
            candidates.Query(context, query_vector, now, filters),
            config or self.config,
            english=english,
            profile=self.profile,
            precious=self.precious,
        )

    def rank(
        self, found: Candidates, n: int, filters: Filters | None = None, config: RecallConfig | None = None
    ) -> SearchResult:
        """Score and order gathered candidates with ``config`` (default: the engine's own): the stages in order,
        each passing the one :class:`~ego_memory.recall.ranking.Ranking` on."""
        cfg = config or self.config
        if not found.ids:
            return SearchResult(hits=(), pool=0)
        ranking = fuse(found, cfg, self.profile)
        ranking = complete(ranking, found, cfg)
        ranking = reweigh(ranking, found, cfg, self.store)
        ranking = cues.fields(ranking, found, cfg, self.store)
        ranking = cues.dated(ranking, found, cfg)
        ranking = spread(ranking, found, cfg, self.store, filters)
        return final.final(ranking, found, cfg, self.store, n=n, profile=self.profile)

    def matches(self, found: Candidates, hits: Sequence[Scored]) -> Matches | None:
        """How many memories match the context (:func:`ego_memory.recall.final.matches`); None when relevance is
        not measured."""
        return final.matches(found, hits, self.config, self.store, self.profile)

    def present(self, now: datetime) -> float:
        """The store's own present: now, unless the newest memory is long before it (a dormant or old store)."""
        return candidates.present(self.store, now)

    def lexical_ranking(
        self, context: str, n: int, filters: Filters | None, config: RecallConfig | None = None
    ) -> list[tuple[str, float]]:
        """The lexical channel's BM25 ranking of ``context`` (:func:`ego_memory.recall.lexical.lexical_ranking`)."""
        return lexical.lexical_ranking(self.store, context, n, filters, config or self.config)

    def translation_ranking(
        self, context: str, n: int, filters: Filters | None, config: RecallConfig | None = None
    ) -> list[tuple[str, float]]:
        """The memories holding the context's words in the other language, the ``n`` best by BM25, each with how
        many of the context's words it holds only that way (:func:`ego_memory.recall.lexical.translation_ranking`);
        empty when the context's words have none."""
        found = lexical.translated_memories(self.store, context, n, filters, config or self.config)
        return lexical.translation_ranking(found)
