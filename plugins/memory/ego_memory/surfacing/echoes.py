"""Echoes on ``remember``: a new memory stirs dormant ones that are related to it.

Among the :data:`ECHO_POOL` memories nearest to the new one, up to :data:`ECHO_MAX` whose similarity is above the
model's ``related`` threshold and whose recall strength is below :data:`~ego_memory.recall.decay.DORMANT` are echoed:
they count as recalled (so they fade more slowly from now on), ``on_memory_surfaced(how="echo")`` fires for each,
and the first one that remember's ``Most related:`` lines do not show already is quoted in one line.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime, tzinfo

from ego_core import Memory, PluginContext, SimilarityProfile, truncate, when_words
from ego_memory.api import MemoryHooks
from ego_memory.recall.decay import DORMANT
from ego_memory.recall.strength import Strengths
from ego_memory.store.memory_store import MemoryStore

ECHO_POOL = 20
"""How many memories nearest to the new one are looked at."""
ECHO_MAX = 2
"""At most this many dormant memories are echoed by one remember."""
ECHO_QUOTE = 70
"""Characters of the echo's quote (as long as a ``Most related:`` line's)."""


def echoes(
    store: MemoryStore,
    strengths: Strengths,
    profile: SimilarityProfile,
    memory: Memory,
    *,
    near: Sequence[tuple[str, float]],
    now: datetime,
) -> list[Memory]:
    """The dormant memories ``memory`` echoes among ``near`` (its nearest memories with their similarity, as the
    search before it was stored found them), most similar first (not yet touched)."""
    related = [(m, s) for m, s in near[:ECHO_POOL] if m != memory.id and s > profile.related]
    if not related:
        return []
    strength = strengths.of([m for m, _ in related], now.timestamp())
    dormant = [m for m, _ in related if strength.get(m, 1.0) < DORMANT][:ECHO_MAX]
    loaded = {other.id: other for other in store.get(dormant, with_links=False)}
    return [loaded[m] for m in dormant if m in loaded]


def echo_line(memory: Memory, now: datetime, tz: tzinfo) -> str:
    """``This echoes something from about two months ago: "…"`` (when, by the local days of ``tz``); a private
    memory is marked."""
    private = " (private)" if memory.is_private else ""
    quote = truncate(memory.content, ECHO_QUOTE)
    return f'This echoes something from {when_words(memory.timestamp, now, tz)}{private}: "{quote}"'


def resurface(
    ctx: PluginContext,
    store: MemoryStore,
    strengths: Strengths,
    profile: SimilarityProfile,
    memory: Memory,
    *,
    near: Sequence[tuple[str, float]],
    shown: Collection[str],
) -> list[str]:
    """Echo the dormant memories ``memory`` stirs: touch them, tell the other plugins, and return the line that
    quotes the first one not in ``shown`` (none when every echo is shown already, or there is none)."""
    now = ctx.now()
    echoed = echoes(store, strengths, profile, memory, near=near, now=now)
    if not echoed:
        return []
    store.touch([other.id for other in echoed], now.timestamp())
    for other in echoed:
        MemoryHooks(ctx).on_memory_surfaced(memory=other, how="echo")
    fresh = next((other for other in echoed if other.id not in shown), None)
    return [echo_line(fresh, now, ctx.settings.tz)] if fresh is not None else []
