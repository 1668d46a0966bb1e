"""Emotional history in bulk, read straight from the SQLite record for the memory service (``tally``,
``faded_emotions``; emotion_trend reads them). Nothing here reads a memory's text.

Both are bounded by time through the ``ts`` index: a month of a 100,000-memory store is counted in a few
SQL aggregates, never loaded into Python objects.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from datetime import UTC, datetime

from ego_core import EmotionTally
from ego_memory.recall.decay import DAY, half_life, link_strength, recall_strength
from ego_memory.store.memory_store import MemoryStore

FETCH = 64
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


def carriers(names: Sequence[str]) -> tuple[str, list[object]]:
    """SQL for "the memory carries one of ``names``", as primary or secondary emotion, with its parameters.

    The secondary list is JSON text, searched for the quoted label; rows found are checked exactly with
    :func:`labels`.
    """
    marks = ",".join("?" * len(names))
    clause = " OR ".join([f"emotion IN ({marks})", *(["instr(secondary, ?) > 0"] * len(names))])
    return f"({clause})", [*names, *(json.dumps(name, ensure_ascii=False) for name in names)]


def unrecalled_floor(at: float, strength: float, half_life_days: float) -> float:
    """Before this moment a memory never recalled has at most ``strength`` left, however well linked.

    Links at most double the half-life, so the strength is at most ``strength`` once the age reaches
    ``2 · half_life_days · log2(1 / strength)`` days.
    """
    return at - 2.0 * half_life_days * math.log2(1.0 / strength) * DAY


def _rows(cursor: sqlite3.Cursor) -> Iterator[tuple[str, float, str, str, int, float]]:
    """Each row with the moment its fading starts: when it was stored, or the moment it anticipated if later."""
    while rows := cursor.fetchmany(FETCH):
        for memory_id, ts, emotion, secondary, access_count, anticipated in rows:
            start = float(ts) if anticipated is None else max(float(ts), float(anticipated))
            yield str(memory_id), float(ts), str(emotion), str(secondary), int(access_count), start


def _carried(emotion: str, secondary: str, names: set[str]) -> set[str]:
    return {emotion, *labels(secondary)} & names if secondary != "[]" else {emotion} & names


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
    every memory keeps a strength of 1). The memories carrying the emotions are read newest first, and an
    emotion is settled as soon as one of them is still strong, so the scan stops early for emotions felt in
    recent months. A memory anticipating a moment fades from that moment, as in recall. Below
    :func:`unrecalled_floor` only recalled memories and those anticipating a later moment can still be strong:
    once every unsettled emotion has been seen there, the rest of the scan reads only those. A memory's links
    are looked up only when its age and access count leave it a chance of being strong.
    """
    wanted = {emotion for emotion in emotions if emotion}
    if not wanted or strength <= 0.0 or (half_life_days is None and strength < 1.0):
        return {}  # every memory is stronger than that
    # At strength ≥ 1 (or without decay, then at 1) no memory is stronger: every emotion seen has faded.
    decaying = half_life_days is not None and strength < 1.0
    floor = unrecalled_floor(at, strength, half_life_days) if half_life_days is not None and decaying else at
    window, bounds = ("ts < ? AND ts >= ?", [before, since]) if since is not None else ("ts < ?", [before])
    columns = "id, ts, emotion, secondary, access_count, anticipated"
    last_felt: dict[str, float] = {}
    strong: set[str] = set()
    cutoff: float | None = None

    def settle(memory_id: str, start: float, access_count: int, carried: set[str]) -> None:
        """Mark ``carried`` strong when this memory's recall strength is above ``strength`` (``start``: when
        its fading began, as the recall pipeline counts it)."""
        if half_life_days is None or not decaying:
            return
        age_days = (at - start) / DAY
        # Links can at most double the half-life: below the threshold even then, the links need not be read.
        if recall_strength(age_days, half_life(half_life_days, access_count, 1.0)) <= strength:
            return
        total = store.db.execute("SELECT total(confidence) FROM links WHERE source = ?", (memory_id,)).fetchone()[0]
        if recall_strength(age_days, half_life(half_life_days, access_count, link_strength(float(total)))) > strength:
            strong.update(carried)

    with store.reading():
        clause, params = carriers(sorted(wanted))
        cursor = store.db.execute(
            f"SELECT {columns} FROM memories WHERE {window} AND {clause} ORDER BY ts DESC", [*bounds, *params]
        )
        for memory_id, ts, emotion, secondary, access_count, start in _rows(cursor):
            unsettled = wanted - strong
            if not unsettled:
                break
            if ts <= floor and unsettled <= last_felt.keys():
                cutoff = ts  # from here on, only recalled memories can change the answer
                break
            carried = _carried(emotion, secondary, unsettled)
            for name in carried:
                last_felt.setdefault(name, ts)
            if carried and (start > floor or access_count > 0):
                settle(memory_id, start, access_count, carried)
        cursor.close()
        unsettled = wanted - strong
        if cutoff is not None and unsettled and decaying:
            clause, params = carriers(sorted(unsettled))
            lower = " AND ts >= ?" if since is not None else ""
            cursor = store.db.execute(
                f"SELECT {columns} FROM memories WHERE ts <= ?{lower} "
                f"AND (access_count > 0 OR anticipated > ?) AND {clause}",
                [cutoff, *([since] if since is not None else []), floor, *params],
            )
            for memory_id, _ts, emotion, secondary, access_count, start in _rows(cursor):
                carried = _carried(emotion, secondary, wanted - strong)
                if carried:
                    settle(memory_id, start, access_count, carried)
                if strong >= unsettled:
                    break
            cursor.close()
    return {name: datetime.fromtimestamp(ts, UTC) for name, ts in last_felt.items() if name not in strong}
