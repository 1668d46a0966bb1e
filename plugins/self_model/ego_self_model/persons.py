"""People who come to mind: those of the memories a recall found (resonant), one a dormant memory near the recall
brings up unbidden (involuntary, by chance), and those most recently shared with (close lately).

Private memories count for persons like any other; only names are said, never a memory's words.
"""

from __future__ import annotations

import logging
import random
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Final

from ego_core import MemoryService, RecallHit, RecallQuery
from ego_self_model.relations import close_line, involuntary_line, resonant_line
from ego_self_model.store import StateStore

_log = logging.getLogger("ego.plugin.self_model")

RESONANT_SHOWN: Final = 3
CLOSE_SHOWN: Final = 2
DORMANT_CANDIDATES: Final = 5
NEVER: Final = datetime.min.replace(tzinfo=UTC)


def _filtered(query: RecallQuery) -> bool:
    """An explicit filter (emotion, category, dates) keeps involuntary recollection out."""
    return any(
        value is not None for value in (query.emotion_filter, query.category_filter, query.date_from, query.date_to)
    )


def _names(store: StateStore, db: sqlite3.Connection) -> dict[str, str]:
    return {person.key: person.name for person in store.people(db)}


def resonant(store: StateStore, db: sqlite3.Connection, hits: Sequence[RecallHit]) -> list[str]:
    """The keys of the people of ``hits``: the most hits first, then the newest such memory; at most three."""
    times = {hit.memory.id: hit.memory.timestamp for hit in hits}
    counts: dict[str, int] = {}
    newest: dict[str, datetime] = {}
    for moment in store.sharers(db, list(times)):
        counts[moment.person] = counts.get(moment.person, 0) + 1
        newest[moment.person] = max(newest.get(moment.person, NEVER), times[moment.memory_id])
    ranked = sorted(counts, key=lambda key: (-counts[key], -newest[key].timestamp(), key))
    return ranked[:RESONANT_SHOWN]


def involuntary(store: StateStore, db: sqlite3.Connection, dormant: Sequence[str], taken: Sequence[str]) -> str | None:
    """The key of the person of the ``dormant`` memories (ids) not among ``taken`` who was shared with longest
    ago, or None."""
    candidates = {moment.person for moment in store.sharers(db, list(dormant))} - set(taken)
    if not candidates:
        return None
    last = store.last_shared(db)
    return min(candidates, key=lambda key: (last.get(key, NEVER), key))


def in_mind(
    store: StateStore,
    query: RecallQuery,
    hits: Sequence[RecallHit],
    *,
    memory: MemoryService | None,
    chance: random.Random,
    probability: float,
    now: datetime,
) -> list[str]:
    """recall's lines about the people who come to mind (none when nobody does); an unbidden hit (the memory
    plugin's involuntary recollection, ``RecallHit.unbidden``) does not count as found."""
    with store.reading() as db:
        names = _names(store, db)
        found = resonant(store, db, [hit for hit in hits if not hit.unbidden])
    lines = [resonant_line([names.get(key, key) for key in found])] if found else []
    if memory is None or _filtered(query) or not names or chance.random() >= probability:
        return lines
    try:
        dormant = [m.id for m, _similarity in memory.dormant_near(query.context, DORMANT_CANDIDATES, at=now)]
    except Exception as exc:  # the memory plugin's problem: the recall still answers
        _log.warning("reading dormant memories failed (%s)", type(exc).__name__)
        return lines
    shown = {hit.memory.id for hit in hits}
    with store.reading() as db:
        person = involuntary(store, db, [i for i in dormant if i not in shown], found)
    if person is not None:
        lines.append(involuntary_line(names.get(person, person)))
    return lines


def close_lately(store: StateStore, db: sqlite3.Connection, since: datetime, *, leave_out: str) -> str | None:
    """The line naming the two people most recently shared with (since ``since``; not ``leave_out``, the
    companion, whose own line says as much), or None."""
    last = {key: at for key, at in store.last_shared(db).items() if at >= since and key != leave_out}
    if not last:
        return None
    names = _names(store, db)
    ranked = sorted(last, key=lambda key: (-last[key].timestamp(), key))[:CLOSE_SHOWN]
    return close_line([names.get(key, key) for key in ranked])
