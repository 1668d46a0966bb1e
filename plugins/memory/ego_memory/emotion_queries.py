"""Emotional history in bulk, read straight from the SQLite record for the memory service (``tally``,
``faded_emotions``; emotion_trend reads them). Nothing here reads a memory's text.

Both are bounded by time through the ``ts`` index: a month of a 100,000-memory store is counted in a few
SQL aggregates, never loaded into Python objects.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection
from datetime import UTC, datetime

from ego_core import EmotionTally
from ego_memory.decay import DAY, half_life, link_strength, recall_strength
from ego_memory.store import MemoryStore

FETCH = 256
"""Rows fetched at a time while looking for faded emotions (the scan usually stops early)."""


def labels(secondary: str) -> tuple[str, ...]:
    """The secondary emotions of a stored JSON list (anything else reads as none)."""
    try:
        value = json.loads(secondary)
    except ValueError:
        return ()
    return tuple(dict.fromkeys(v for v in value if isinstance(v, str))) if isinstance(value, list) else ()


def tally(store: MemoryStore, since: float, until: float) -> EmotionTally:
    """The memories with ``since <= ts < until``, counted by emotion, with the ids of the peak and the last."""
    window = "ts >= ? AND ts < ?"
    bounds = (since, until)
    with store.reading():
        db = store.db
        primary = db.execute(
            f"SELECT emotion, count(*), total(valence), total(arousal) FROM memories WHERE {window} GROUP BY emotion",
            bounds,
        ).fetchall()
        if not primary:
            return EmotionTally()
        combinations = db.execute(
            f"SELECT secondary, count(*) FROM memories WHERE {window} AND secondary != '[]' GROUP BY secondary",
            bounds,
        ).fetchall()
        peak = db.execute(
            f"SELECT id FROM memories WHERE {window} ORDER BY intensity DESC, ts DESC, rid DESC LIMIT 1", bounds
        ).fetchone()
        last = db.execute(
            f"SELECT id FROM memories WHERE {window} ORDER BY ts DESC, rid DESC LIMIT 1", bounds
        ).fetchone()
    count = sum(int(row[1]) for row in primary)
    secondary: dict[str, int] = {}
    for text, times in combinations:
        for label in labels(text):
            secondary[label] = secondary.get(label, 0) + int(times)
    return EmotionTally(
        count=count,
        valence=sum(float(row[2]) for row in primary) / count,
        arousal=sum(float(row[3]) for row in primary) / count,
        primary={str(row[0]): int(row[1]) for row in primary},
        secondary=secondary,
        peak_id=str(peak[0]),
        last_id=str(last[0]),
    )


def _like(label: str) -> str:
    escaped = label.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f'%"{escaped}"%'


def faded_emotions(
    store: MemoryStore,
    emotions: Collection[str],
    *,
    before: float,
    at: float,
    since: float | None,
    strength: float,
    half_life_days: float | None,
) -> dict[str, datetime]:
    """Of ``emotions``, those carried only by memories (``since <= ts < before``) whose recall strength at
    ``at`` is at most ``strength``, with the time of the newest such memory.

    ``half_life_days`` is the recall pipeline's base half-life (None when its time decay is switched off: then
    every memory keeps a strength of 1). Memories are read newest first, and an emotion is settled as soon as
    one memory carrying it is still strong, so the scan stops early for emotions felt in recent months. A
    memory's links are looked up only when its age and access count leave it a chance of being strong.
    """
    wanted = {emotion for emotion in emotions if emotion}
    if not wanted:
        return {}
    names = sorted(wanted)
    clauses = ["ts < ?"]
    params: list[object] = [before]
    if since is not None:
        clauses.append("ts >= ?")
        params.append(since)
    carries = " OR ".join(
        [f"emotion IN ({','.join('?' * len(names))})", *(["secondary LIKE ? ESCAPE '\\'"] * len(names))]
    )
    params += [*names, *(_like(name) for name in names)]
    query = (
        f"SELECT id, ts, emotion, secondary, access_count FROM memories WHERE {' AND '.join(clauses)} "
        f"AND ({carries}) ORDER BY ts DESC"
    )
    last_felt: dict[str, float] = {}
    strong: set[str] = set()
    with store.reading():
        db = store.db
        cursor = db.execute(query, params)
        while strong != wanted and (rows := cursor.fetchmany(FETCH)):
            for memory_id, ts, emotion, secondary, access_count in rows:
                carried = ({emotion, *labels(secondary)} & wanted) - strong
                if not carried:
                    continue
                for name in carried:
                    last_felt.setdefault(name, float(ts))
                if _still_strong(
                    db,
                    memory_id,
                    age_days=(at - float(ts)) / DAY,
                    access_count=int(access_count),
                    threshold=strength,
                    half_life_days=half_life_days,
                ):
                    strong |= carried
        cursor.close()
    return {name: datetime.fromtimestamp(ts, UTC) for name, ts in last_felt.items() if name not in strong}


def _still_strong(
    db: sqlite3.Connection,
    memory_id: str,
    *,
    age_days: float,
    access_count: int,
    threshold: float,
    half_life_days: float | None,
) -> bool:
    """Whether the memory's recall strength is above ``threshold``."""
    if half_life_days is None:
        return threshold < 1.0
    # Links can at most double the half-life: below the threshold even then, the links need not be read.
    if recall_strength(age_days, half_life(half_life_days, access_count, 1.0)) <= threshold:
        return False
    total = db.execute("SELECT total(confidence) FROM links WHERE source = ?", (memory_id,)).fetchone()[0]
    links = link_strength(float(total))
    return recall_strength(age_days, half_life(half_life_days, access_count, links)) > threshold
