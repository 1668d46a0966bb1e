"""The memory plugin's behaviour: remember, recall, search, and the ``memory.store`` service."""

from __future__ import annotations

import logging
import math
import secrets
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import date, datetime, time, timedelta
from typing import Any

import attrs
import numpy as np

from ego_core import (
    BODY_SENSE,
    EMOTIONS,
    PRIVATE_MARK,
    BodySense,
    Claim,
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
    Response,
    ScaffoldItem,
    Section,
    SimilarityProfile,
    ToolError,
    Vectors,
    is_blank,
    relative_age,
    truncate,
)
from ego_memory import emotion_queries
from ego_memory.anticipation import parse_anticipated, when_words
from ego_memory.blas import one_blas_thread
from ego_memory.config import MemoryConfig
from ego_memory.contrast import contrast
from ego_memory.echoes import ECHO_POOL, resurface
from ego_memory.embedding.english import EnglishEncoder, reads_as_english
from ego_memory.embedding.profiles import profile_for
from ego_memory.emotions import CATEGORIES, EMOTION_PROFILES, VIVID_INTENSITY
from ego_memory.filters import Filters
from ego_memory.fuzzy import recall_texts
from ego_memory.involuntary import explicit_filter, proust
from ego_memory.limits import (
    MAX_LABEL_CHARS,
    MAX_SECONDARY,
    MAX_TAG_CHARS,
    MAX_TAGS,
    body_state_problem,
    label_problem,
    list_problem,
)
from ego_memory.model import (
    normal_category,
    normal_emotion,
    normal_importance,
    normal_secondary,
    normal_tags,
    signed_unit,
    unit,
)
from ego_memory.privacy import PrivateContentRedactor
from ego_memory.recall import Matches, RecallEngine, SearchResult
from ego_memory.rows import content_hash, to_millis
from ego_memory.store import MemoryStore
from ego_memory.strength import Strengths, people_of, precious_rows
from ego_memory.thought import INTROSPECTION_SCAFFOLD
from ego_memory.wording import count_of

_log = logging.getLogger("ego.plugin.memory")

REMEMBER_SCAFFOLD = "Do any of these connections surprise you? Is there a pattern forming?"
UNLINKED_SCAFFOLD = "Is this the beginning of something new? What might it connect to later?"
RECALL_SCAFFOLD = "How do these memories connect to the current moment?"
PRIVATE_SAVED_NOTE = "Kept private: it stays internal (never synced to workspace files or logs)."
SHOWN_LINKS = 3
PRIVATE_RELATED = "(private) "
"""Marks a private memory on remember's ``Most related:`` lines: ``- [2h ago] (private) … (similarity: 0.82)``."""
RECALL_ROOM = 2400
"""Columns (a CJK character counting 2) the contents recall shows share: one hit may take them all."""
RECALL_LEAST = 160
"""Columns a content recall shows always has, however many hits share the room."""
SEARCH_WIDTH = 160
"""Columns of a memory's text on a search_memories line (a compact line per memory, for finding ids)."""


def new_memory_id() -> str:
    return "mem_" + secrets.token_hex(6)


def relevance(hit: RecallHit) -> float:
    """The hit's calibrated relevance (0-1, comparable across queries), or, when the ranking did not measure
    one, its ranking score squashed into 0-1."""
    if hit.relevance is not None:
        return hit.relevance
    return 1.0 / (1.0 + math.exp(-hit.score))


def shown_scores(hits: Sequence[RecallHit]) -> list[float | None]:
    """The score recall and search_memories show beside each hit, in the order shown: non-increasing down the list.

    A memory a link brought (``linked``) or one that came back unbidden shows no score (None): neither holds its
    place by it. The others show their relevance where the ranking agrees with it; where the ranking puts a less
    related memory above a more related one (for its recency, emotion, importance or links), the memories between
    show their mean relevance (an isotonic fit, pool adjacent violators), so the score is a non-decreasing
    function of the ranking score: memories tied in the ranking show one score."""
    scored = [i for i, hit in enumerate(hits) if not (hit.linked or hit.unbidden)]
    blocks: list[tuple[float, int, float]] = []  # (sum of relevance, count, ranking score of the block's last)
    for i in scored:
        hit = hits[i]
        if blocks and blocks[-1][2] == hit.score:  # a tie in the ranking: one score
            total, count, _ = blocks.pop()
            blocks.append((total + relevance(hit), count + 1, hit.score))
        else:
            blocks.append((relevance(hit), 1, hit.score))
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] < blocks[-1][0] / blocks[-1][1]:
            total, count, score = blocks.pop()
            before_total, before_count, _ = blocks.pop()
            blocks.append((before_total + total, before_count + count, score))
    values = [total / count for total, count, _ in blocks for _ in range(count)]
    shown: list[float | None] = [None] * len(hits)
    for i, value in zip(scored, values, strict=True):
        shown[i] = value
    return shown


def matches_header(hits: Sequence[RecallHit], matches: Matches | None) -> str:
    """``3 of 7 matches:`` — how many of the memories shown match the context, of how many match it in all (the
    candidates related to the context that the filters admit; ``60+``: at least that many). Memories shown that
    do not match are counted after it (``2 of 7 matches, 1 linked:``). Without a relevance measure (the stage
    off): ``3 memories:``."""
    if matches is None:
        return f"{count_of(len(hits), 'memory', 'memories')}:"
    linked = sum(1 for hit in hits if hit.linked)
    stray = sum(1 for hit in hits if hit.unbidden and not hit.linked and not relevance(hit))
    shown = len(hits) - linked - stray
    total = max(matches.count, shown)
    header = f"{shown} of {total}{'+' if matches.capped else ''} {'match' if total == 1 else 'matches'}"
    if linked:
        header += f", {linked} linked"
    if stray:
        header += f", {stray} unbidden"
    return header + ":"


def score_words(score: float | None, hit: RecallHit, *, label: str = "score ") -> str:
    """What a result line shows for its score: ``score 0.81``, or what the memory is when it has none
    (``linked``: a link brought it; ``unbidden``: it came back on its own)."""
    if score is not None:
        return f"{label}{score:.2f}"
    return "linked" if hit.linked else "unbidden"


def argument_error(tool: str, parameter: str, expected: str) -> ToolError:
    """An argument the schema let through but the tool refuses, in the form of the schema's own errors."""
    return ToolError(f"Invalid arguments for {tool}: `{parameter}` {expected}. Fix the call and try again.")


def _finite(args: Mapping[str, Any], name: str, default: float) -> float:
    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise argument_error("remember", name, "must be a finite number")
    if isinstance(value, int):  # any size: clamped like other values out of range, never made a float first
        return float(max(-1_000_000, min(1_000_000, value)))
    if not math.isfinite(value):
        raise argument_error("remember", name, "must be a finite number")
    return value


def _labels(args: Mapping[str, Any], name: str, max_items: int, max_chars: int) -> list[object]:
    values = args.get(name) or []
    if not isinstance(values, list | tuple):
        raise argument_error("remember", name, f"must be a list of at most {max_items} items, each a string")
    problem = list_problem(values, max_items, max_chars)
    if problem:
        raise argument_error("remember", name, problem)
    return list(values)


def render_emotion(trace: EmotionalTrace) -> str:
    if trace.intensity >= VIVID_INTENSITY:
        return f"{trace.primary}({trace.intensity:.1f})"
    return trace.primary


RANGE_LEAST: Mapping[str, float] = {"valence_range": -1.0, "arousal_range": 0.0}
"""The lower bound of each range filter (the upper is 1)."""


class Memories:
    """Everything the memory tools do, over one store and one (cached) embedder."""

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
        self._neighbors_lock = threading.Lock()
        self._neighbors: tuple[str, int, int, list[tuple[str, float]]] | None = None
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
        pairs = self._nearest_ids(text, max(k, self.config.max_links))[:k]
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
        return emotion_queries.tally(self.store, since.timestamp(), until.timestamp())

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
        return emotion_queries.faded_emotions(
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

    def _nearest_ids(self, text: str, k: int) -> list[tuple[str, float]]:
        """Nearest memories by cosine similarity; the last answer is reused while the store is unchanged.

        The duplicate guard, auto-linking and the echoes ask the same question about the same text within one
        remember; the index is searched once, for as many as the largest of them needs.
        """
        key = content_hash(text)
        generation = self.store.generation()
        with self._neighbors_lock:
            cached = self._neighbors
        if cached is not None and cached[0] == key and cached[1] == generation and cached[2] >= k:
            return cached[3][:k]
        asked = max(k, self.config.max_links + 1, ECHO_POOL)
        vector = self.embedder.embed([text])[0]
        pairs = [(memory_id, sim) for memory_id, sim, _ in self.store.dense(vector, asked)]
        with self._neighbors_lock:
            self._neighbors = (key, generation, asked, pairs)
        return pairs[:k]

    # ------------------------------------------------------------------------------------------
    # remember

    def draft(self, args: Mapping[str, Any]) -> tuple[RememberDraft, list[str]]:
        """Normalise remember's arguments into a draft, with notes about anything substituted."""
        notes: list[str] = []
        limit = self.config.max_content_chars
        content = str(args["content"]).strip()
        if is_blank(content):
            raise argument_error(
                "remember", "content", f"must contain text: a non-empty string of at most {limit} characters"
            )
        if len(content) > limit:
            raise argument_error("remember", "content", f"must be a non-empty string of at most {limit} characters")
        for name in ("emotion", "category"):
            problem = label_problem(str(args.get(name) or ""))
            if problem:
                raise argument_error("remember", name, problem)
        emotion, known = normal_emotion(args.get("emotion"))
        if not known:
            notes.append(f"Unknown emotion, stored as neutral. Known: {', '.join(EMOTIONS)}.")
        profile = EMOTION_PROFILES[emotion]
        secondary, dropped = normal_secondary(_labels(args, "secondary", MAX_SECONDARY, MAX_LABEL_CHARS))
        if dropped:
            notes.append(f"Unknown secondary emotion(s) dropped. Known: {', '.join(EMOTIONS)}.")
        tags = normal_tags(_labels(args, "tags", MAX_TAGS, MAX_TAG_CHARS))
        category, known = normal_category(args.get("category"))
        if not known:
            notes.append(f"Unknown category, stored as daily. Known: {', '.join(CATEGORIES)}.")
        given = args.get("body_state") or {}
        if not isinstance(given, Mapping):
            raise argument_error("remember", "body_state", "must be an object")
        problem = body_state_problem(given)
        if problem:
            raise argument_error("remember", "body_state", problem)
        body_state = dict(given)
        if not body_state:
            body = self.ctx.services.get(BODY_SENSE, BodySense)
            if body is not None:
                body_state = dict(body.body_state())
        anticipated: datetime | None = None
        if "anticipated_at" in args:
            now = self.ctx.now()
            anticipated, note = parse_anticipated(args["anticipated_at"], self.ctx.settings.tz, now)
            if note:
                notes.append(note)
            elif anticipated is not None:
                notes.append(f"Looking forward to it: {when_words(anticipated, now, self.ctx.settings.tz)}.")
        draft = RememberDraft(
            content=content,
            emotion=emotion,
            secondary=secondary,
            intensity=unit(_finite(args, "intensity", profile.intensity)),
            valence=signed_unit(_finite(args, "valence", profile.valence)),
            arousal=unit(_finite(args, "arousal", profile.arousal)),
            importance=normal_importance(_finite(args, "importance", 3)),
            category=category,
            tags=tags,
            is_private=bool(args.get("private", False)),
            force=bool(args.get("force", False)),
            body_state=body_state,
            anticipated=anticipated,
            together=tuple(dict.fromkeys(name.strip() for name in args.get("with", ()) if name.strip())),
        )
        return draft, notes

    @one_blas_thread
    def remember(self, args: Mapping[str, Any]) -> Response:
        draft, notes = self.draft(args)
        # The check and the save are one step: a concurrent remember (another thread or process) cannot
        # slip a near-duplicate in between.
        with self.store.writing():
            veto = self.ctx.hooks.before_remember(draft=draft)
            if veto is not None:
                _plugin, response = veto
                return response if isinstance(response, Response) else Response(data=str(response))
            near = self._nearest_ids(draft.content, ECHO_POOL)  # before the store: the guard's search, reused
            memory, linked = self.store_draft(draft)
        lines = [f"Saved (id: {memory.id}). Linked to {count_of(len(linked), 'existing memory', 'existing memories')}."]
        if linked:
            lines.append("Most related:")
            now = self.ctx.now()
            for other, similarity in linked[:SHOWN_LINKS]:
                age = relative_age(other.timestamp, now)
                # A private memory is marked, like recall's `private: true`: the agent decides what it says aloud.
                private = PRIVATE_RELATED if other.is_private else ""
                lines.append(f"- [{age}] {private}{truncate(other.content, 70)} (similarity: {similarity:.2f})")
        else:
            lines.append("No similar memories found yet.")
        lines.extend(self._echoes(memory, near, shown=[other.id for other, _ in linked[:SHOWN_LINKS]]))
        lines.extend(notes)
        if memory.is_private:
            lines.append(PRIVATE_SAVED_NOTE)
        claims: list[Claim] = []
        lines.extend(extra_lines(self.ctx.hooks.on_remember(memory=memory, together=draft.together), claims))
        if memory.category == "introspection":  # asks the monologue for its open end
            return Response(data="\n".join(lines), scaffold=INTROSPECTION_SCAFFOLD, claims=tuple(claims))
        scaffold = (REMEMBER_SCAFFOLD if linked else UNLINKED_SCAFFOLD,)
        return Response(data="\n".join(lines), scaffold=scaffold, claims=tuple(claims))

    def _echoes(self, memory: Memory, near: Sequence[tuple[str, float]], *, shown: Sequence[str]) -> list[str]:
        """The dormant memories a new one echoes (:mod:`ego_memory.echoes`): touched, announced, one quoted."""
        return resurface(self.ctx, self.store, self.strengths, self.similarity_profile, memory, near=near, shown=shown)

    def store_draft(
        self, draft: RememberDraft, *, timestamp: datetime | None = None
    ) -> tuple[Memory, list[tuple[Memory, float]]]:
        """Store a draft with auto-links; returns the memory and the linked memories with similarities."""
        vector = self.embedder.embed([draft.content])[0]
        neighbors = self._nearest_ids(draft.content, self.config.max_links)
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

    def _date(self, tool: str, args: Mapping[str, Any], name: str, *, end: bool) -> float | None:
        value = args.get(name)
        if value is None:
            return None
        try:
            day = date.fromisoformat(str(value))
        except ValueError:
            raise argument_error(tool, name, "must be a date YYYY-MM-DD, e.g. 2026-11-22") from None
        moment = datetime.combine(day, time.min, tzinfo=self.ctx.settings.tz)
        if end:
            moment += timedelta(days=1)
            return moment.timestamp() - 1e-6
        return moment.timestamp()

    @staticmethod
    def _range(tool: str, args: Mapping[str, Any], name: str) -> tuple[float, float] | None:
        value = args.get(name)
        if value is None:
            return None
        low, high = float(value[0]), float(value[1])
        if not (math.isfinite(low) and math.isfinite(high)):
            raise argument_error(tool, name, "must be [min, max] of finite numbers")
        least = RANGE_LEAST[name]
        if not (least <= low <= 1 and least <= high <= 1):
            raise argument_error(tool, name, f"must be exactly 2 numbers [min, max], each from {least:g} to 1")
        if low > high:
            raise argument_error(tool, name, "must be [min, max] with min ≤ max")
        return (low, high)

    def query(self, args: Mapping[str, Any], tool: str = "recall") -> tuple[RecallQuery, Filters]:
        """The query and filters of a recall (or ``search_memories``: ``tool`` names it in errors)."""
        context = str(args["context"]).strip()
        if is_blank(context):
            raise argument_error(tool, "context", "must contain text, not only whitespace")
        emotion = args.get("emotion_filter")
        if emotion is not None and str(emotion).lower() not in EMOTIONS:
            raise argument_error(tool, "emotion_filter", f"must be one of: {', '.join(EMOTIONS)}")
        category = args.get("category_filter")
        if category is not None and str(category).lower() not in CATEGORIES:
            raise argument_error(tool, "category_filter", f"must be one of: {', '.join(CATEGORIES)}")
        ts_from = self._date(tool, args, "date_from", end=False)
        ts_to = self._date(tool, args, "date_to", end=True)
        if ts_from is not None and ts_to is not None and ts_from > ts_to:
            raise argument_error(tool, "date_to", "must not be before date_from")
        filters = Filters(
            emotion=str(emotion).lower() if emotion is not None else None,
            category=str(category).lower() if category is not None else None,
            ts_from=ts_from,
            ts_to=ts_to,
            valence=self._range(tool, args, "valence_range"),
            arousal=self._range(tool, args, "arousal_range"),
        )
        query = RecallQuery(
            context=context,
            n_results=int(args.get("n_results", 3)),
            emotion_filter=filters.emotion,
            category_filter=filters.category,
            date_from=datetime.fromtimestamp(ts_from, self.ctx.settings.tz) if ts_from is not None else None,
            date_to=datetime.fromtimestamp(ts_to, self.ctx.settings.tz) if ts_to is not None else None,
            valence_range=filters.valence,
            arousal_range=filters.arousal,
        )
        return query, filters

    @one_blas_thread
    def search(
        self, query: RecallQuery, filters: Filters, *, touch: bool = True, involuntary: bool = False
    ) -> tuple[list[RecallHit], Matches | None, list[str]]:
        """Ranked hits, how many memories match (:meth:`RecallEngine.matches`), and extra lines from
        ``on_recall_result``; ``involuntary``: a dormant memory may take the last place
        (:func:`ego_memory.involuntary.proust`)."""
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
            self.ctx.hooks.on_memory_surfaced(memory=surfaced, how="involuntary")
        lines: list[str] = []
        boosts: dict[str, float] = {}
        for _plugin, note in self.ctx.hooks.on_recall_result(query=query, results=tuple(hits)):
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

    def recall(self, args: Mapping[str, Any]) -> Response:
        query, filters = self.query(args)
        hits, matches, lines = self.search(query, filters, involuntary=True)
        if not hits:
            return Response(data="No related memories found.", scaffold=self._recall_scaffold(0))
        now = self.ctx.now()
        texts = recall_texts(
            [hit.memory for hit in hits],
            self.strengths,
            people_of(self.ctx),
            present=self.engine.present(now),
            now=now,
            tz=self.ctx.settings.tz,
            room=RECALL_ROOM,
            least=RECALL_LEAST,
        )
        out = [matches_header(hits, matches)]
        claims = [Claim(kind="recalled", memory_ids=tuple(hit.memory.id for hit in hits))]
        claims.extend(
            Claim(kind="quote", memory_id=hit.memory.id, words=texts[hit.memory.id], whole=hit.memory.content)
            for hit in hits
        )
        scores = shown_scores(hits)
        for number, (hit, score) in enumerate(zip(hits, scores, strict=True), start=1):
            memory = hit.memory
            trace = memory.emotional_trace
            feeling = render_emotion(trace)
            if trace.secondary:
                feeling += f", undercurrent {', '.join(trace.secondary)}"
            meta = [
                feeling,
                f"importance {memory.importance}",
                score_words(score, hit),
                f"private: {'true' if memory.is_private else 'false'}",
            ]
            out.append(f"{number}. [{relative_age(memory.timestamp, now)}] {texts[memory.id]}")
            out.append("   " + " · ".join(meta))
        out.extend(lines)
        return Response(data="\n".join(out), scaffold=self._recall_scaffold(len(hits)), claims=tuple(claims))

    @staticmethod
    def _recall_scaffold(shown: int) -> tuple[ScaffoldItem, ...]:
        """Only the question: the header already says how many of how many, the filters are in the tool's schema,
        and the ids (for forget or link_memories) are in search_memories' lines."""
        return (RECALL_SCAFFOLD,) if shown else ("Try other words, or fewer filters.",)

    def search_memories(self, args: Mapping[str, Any]) -> Response:
        query, filters = self.query(args, "search_memories")
        hits, matches, lines = self.search(query, filters)
        if not hits:
            return Response(data="No related memories found.")
        now = self.ctx.now()
        out = [matches_header(hits, matches)]
        recalled = Claim(kind="recalled", memory_ids=tuple(hit.memory.id for hit in hits))
        for hit, score in zip(hits, shown_scores(hits), strict=True):
            m = hit.memory
            out.append(
                f"{m.id} | {relative_age(m.timestamp, now)} | {m.emotional_trace.primary} | {m.category} | "
                f"{score_words(score, hit, label='')} | private: {'true' if m.is_private else 'false'} | "
                f"{truncate(m.content, SEARCH_WIDTH)}"
            )
        out.extend(lines)
        return Response(data="\n".join(out), claims=(recalled,))


def extra_lines(results: Sequence[tuple[str, Any]], claims: list[Claim] | None = None) -> list[str]:
    """The response lines plugins returned from a notification (a single string counts as one line; a
    :class:`~ego_core.Section` gives its text, and its claims to ``claims`` when given)."""
    lines: list[str] = []
    for _plugin, extra in results:
        for item in [extra] if isinstance(extra, str | Section) else extra:
            if isinstance(item, Section):
                lines.extend(item.text.splitlines())
                if claims is not None:
                    claims.extend(item.claims)
            else:
                lines.append(str(item))
    return lines


def remember_log_view(args: Mapping[str, Any]) -> Mapping[str, Any]:
    """What of a remember call may be logged: nothing free-text when ``private`` is true."""
    view = dict(args)
    if args.get("private"):
        for key in ("content", "secondary", "tags", "body_state", "anticipated_at", "with"):
            if key in view:
                view[key] = PRIVATE_MARK
        view["content_length"] = len(str(args.get("content", "")))
    return view
