"""Involuntary surfacing: a dormant memory nobody asked for comes back in ``recall`` (a Proust memory) or in
``wake_up`` (an unbidden recollection), by chance (``involuntary_probability``, drawn from ``ctx.random``).

- **recall**: only without an explicit filter (emotion, category, dates; valence and arousal ranges keep it).
  Among the :data:`~ego_memory.recall.strength.DORMANT_POOL` candidates the pipeline found most similar to the context,
  those whose recall strength is below :data:`~ego_memory.recall.decay.DORMANT` (the first :data:`DORMANT_KEEP`) are
  dormant; the most similar one not already shown takes the last place of the answer, so recall never shows more
  than ``n_results``. Its line shows ``unbidden`` where a score would be (its place is not the ranking's), and it
  is counted as recalled like every hit.
- **wake_up**: the newest memory is the cue; among the memories stored thirty local days or more before today
  and recalled at most twice, the closest is quoted in one line. Nothing is marked as recalled.

Either way ``on_memory_surfaced(how="involuntary")`` tells the other plugins (the desires plugin feels a pull);
in wake_up, only once the budget has kept the line (``Section.on_shown``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime, time, timedelta, tzinfo

import numpy as np

from ego_core import Claim, Memory, PluginContext, RecallHit, SimilarityProfile, calendar_days, when_words
from ego_memory.recall.candidates import Candidates
from ego_memory.recall.decay import DORMANT
from ego_memory.recall.strength import DORMANT_POOL, Strengths
from ego_memory.store.filters import Filters
from ego_memory.store.memory_store import MemoryStore
from ego_memory.text.thought import clip

DORMANT_KEEP = 5
"""How many dormant candidates a recall considers (the most similar ones)."""
UNBIDDEN_AGE_DAYS = 30
"""wake_up's unbidden memory is from at least this many local days before today."""
UNBIDDEN_MAX_RECALLS = 2
"""... and was recalled at most this many times."""
UNBIDDEN_POOL = 15
"""How many memories near the cue wake_up looks at."""
UNBIDDEN_TOKENS = 16
"""Tokens of wake_up's unbidden quote (a Japanese character is about one, an English word about one): wake_up stays
in its budget, and a Japanese quote keeps ten characters or more, cut at a word."""
UNBIDDEN_QUOTE = 40
"""Columns of the unbidden quote, a loose outer bound (a CJK character counts two): about seven English words."""


def chance(ctx: PluginContext, probability: float) -> bool:
    """One draw from the plugin's random source (none at all when the probability is 0)."""
    return probability > 0.0 and ctx.random.random() < probability


def explicit_filter(filters: Filters) -> bool:
    """An emotion, category or date filter: the agent asked for something precise (ranges do not count)."""
    return any(value is not None for value in (filters.emotion, filters.category, filters.ts_from, filters.ts_to))


def relevance_of(similarity: float, profile: SimilarityProfile) -> float:
    """The 0-1 relevance recall shows for a similarity (0 at the model's floor, 1 at its duplicate similarity)."""
    span = max(1e-6, profile.duplicate - profile.floor)
    return round(min(1.0, max(0.0, (similarity - profile.floor) / span)), 4)


def dormant_candidates(found: Candidates, strengths: Strengths, at: float) -> list[tuple[str, float]]:
    """The dormant memories among the candidates most similar to the context, most similar first, with their
    similarity (the pipeline's own candidates and vectors: no search is repeated)."""
    if not found.ids:
        return []
    cosine = found.patterns @ found.query_vector
    position = {memory_id: index for index, memory_id in enumerate(found.ids)}
    dense = [memory_id for memory_id in dict.fromkeys(found.dense_ids) if memory_id in position]
    nearest = sorted(dense, key=lambda memory_id: -float(cosine[position[memory_id]]))[:DORMANT_POOL]
    strength = strengths.of(nearest, at)
    dormant = [m for m in nearest if strength.get(m, 1.0) < DORMANT][:DORMANT_KEEP]
    return [(m, float(cosine[position[m]])) for m in dormant]


def proust(
    ctx: PluginContext,
    probability: float,
    found: Candidates,
    hits: Sequence[RecallHit],
    n_results: int,
    *,
    store: MemoryStore,
    strengths: Strengths,
    profile: SimilarityProfile,
    at: float,
) -> tuple[list[RecallHit], Memory | None]:
    """``hits`` with a Proust memory in the last place (replacing the last hit when the answer is full), and that
    memory; or ``hits`` unchanged and None. With ``n_results`` 1 the single best match is never displaced."""
    if len(hits) >= n_results and n_results < 2:
        return list(hits), None
    if not chance(ctx, probability):
        return list(hits), None
    shown = {hit.memory.id for hit in hits}
    dormant = [(m, s) for m, s in dormant_candidates(found, strengths, at) if m not in shown and s >= profile.floor]
    if not dormant:
        return list(hits), None
    loaded = {memory.id: memory for memory in store.get([m for m, _ in dormant])}
    chosen = next(((loaded[m], s) for m, s in dormant if m in loaded), None)
    if chosen is None:
        return list(hits), None
    memory, similarity = chosen
    kept = list(hits) if len(hits) < n_results else list(hits[: n_results - 1])
    score = min((hit.score for hit in hits), default=0.0)
    unbidden = RecallHit(memory=memory, score=score, relevance=relevance_of(similarity, profile), unbidden=True)
    return [*kept, unbidden], memory


def unbidden_cutoff(now: datetime, tz: tzinfo) -> float:
    """The start (epoch seconds) of the local day after the one :data:`UNBIDDEN_AGE_DAYS` days before today:
    memories stored before it are from that day or earlier, in local dates."""
    day = now.astimezone(tz).date() - timedelta(days=UNBIDDEN_AGE_DAYS - 1)
    return datetime.combine(day, time.min, tzinfo=tz).timestamp()


def unbidden(
    ctx: PluginContext,
    probability: float,
    store: MemoryStore,
    profile: SimilarityProfile,
    now: datetime,
    *,
    exclude: Collection[str] = (),
) -> Memory | None:
    """By chance, an old, seldom recalled memory near the newest memory's content (at least as similar as the
    model's floor), or None. Nothing is marked as recalled."""
    newest = store.latest(1)
    if not newest or not chance(ctx, probability):
        return None
    cue = newest[0]
    vector = store.embeddings([cue.id]).get(cue.id)
    if vector is None:
        return None
    before = unbidden_cutoff(now, ctx.settings.tz) - 1e-6
    near = store.dense(np.asarray(vector, dtype=np.float32).reshape(-1), UNBIDDEN_POOL, Filters(ts_to=before))
    pairs = [(m, s) for m, s, _ in near if m != cue.id and m not in exclude and s >= profile.floor]
    loaded = {memory.id: memory for memory in store.get([m for m, _ in pairs], with_links=False)}
    moment = now.timestamp()
    for memory_id, _similarity in pairs:
        memory = loaded.get(memory_id)
        if memory is None or memory.access_count > UNBIDDEN_MAX_RECALLS:
            continue
        if memory.anticipated is not None and memory.anticipated.timestamp() > moment:
            continue  # still looked forward to: not dormant
        return memory
    return None


def unbidden_line(memory: Memory, now: datetime, tz: tzinfo) -> str:
    """``Unbidden: "…" (about two months ago)`` (when, by the local days of ``tz``: :func:`ego_core.when_words`);
    a private memory is marked, as recall marks it."""
    private = " (private)" if memory.is_private else ""
    return f'Unbidden{private}: "{unbidden_quote(memory)}" ({when_words(memory.timestamp, now, tz)})'


def unbidden_quote(memory: Memory) -> str:
    return clip(memory.content, UNBIDDEN_QUOTE, tokens=UNBIDDEN_TOKENS)


def unbidden_claims(memory: Memory, now: datetime, tz: tzinfo) -> tuple[Claim, ...]:
    """What the unbidden line states: the words quoted and when they are from."""
    return (
        Claim(kind="quote", memory_id=memory.id, words=unbidden_quote(memory), whole=memory.content),
        Claim(
            kind="time",
            memory_id=memory.id,
            at=memory.timestamp,
            words=when_words(memory.timestamp, now, tz),
            value=calendar_days(memory.timestamp, now, tz),
        ),
    )
