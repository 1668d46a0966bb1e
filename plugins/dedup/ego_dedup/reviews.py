"""The pairs the owner (or the agent, when offered ``keep_both``) kept both of: never proposed again as merge
candidates, by ``consolidate`` or by the dashboard. Kept in the plugin's own SQLite file."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from ego_core import Database

REVIEWS = "dedup.reviews"
"""The service name: :class:`Reviews` (read by the dashboard's merge review)."""
MIGRATIONS = (
    "CREATE TABLE kept (a TEXT NOT NULL, b TEXT NOT NULL, kept_at REAL NOT NULL, PRIMARY KEY (a, b)) WITHOUT ROWID;\n"
    "CREATE INDEX kept_b ON kept(b);\n",
)


def pair_key(first: str, second: str) -> tuple[str, str]:
    """A pair in one order, whichever order it is named in."""
    return (first, second) if first <= second else (second, first)


class Reviews:
    """Kept pairs over the plugin's database (every process on the data directory sees the others' writes)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def keep(self, first: str, second: str, at: datetime) -> bool:
        """Keep both of a pair; False when it was kept already."""
        a, b = pair_key(first, second)
        with self.database.write() as db:
            cursor = db.execute("INSERT OR IGNORE INTO kept(a, b, kept_at) VALUES (?, ?, ?)", (a, b, at.timestamp()))
            return cursor.rowcount > 0

    def release(self, first: str, second: str) -> bool:
        """Undo a keep both; False when the pair was not kept."""
        with self.database.write() as db:
            return db.execute("DELETE FROM kept WHERE a = ? AND b = ?", pair_key(first, second)).rowcount > 0

    def kept_among(self, pairs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
        """Which of ``pairs`` (in either order) are kept, as :func:`pair_key` pairs."""
        wanted = {pair_key(a, b) for a, b in pairs}
        if not wanted:
            return set()
        firsts = sorted({a for a, _b in wanted})
        found: set[tuple[str, str]] = set()
        for start in range(0, len(firsts), 500):
            chunk = firsts[start : start + 500]
            rows = self.database.db.execute(f"SELECT a, b FROM kept WHERE a IN ({','.join('?' * len(chunk))})", chunk)
            found.update((str(a), str(b)) for a, b in rows)
        return found & wanted

    def newest(self, limit: int) -> list[tuple[str, str, datetime]]:
        """The newest kept pairs, newest first."""
        rows = self.database.db.execute("SELECT a, b, kept_at FROM kept ORDER BY kept_at DESC, a, b LIMIT ?", (limit,))
        return [(str(a), str(b), datetime.fromtimestamp(float(at), UTC)) for a, b, at in rows]

    def count(self) -> int:
        return int(self.database.db.execute("SELECT count(*) FROM kept").fetchone()[0])

    def forget(self, memory_id: str) -> None:
        """A forgotten memory leaves every pair it was in."""
        with self.database.write() as db:
            db.execute("DELETE FROM kept WHERE a = ? OR b = ?", (memory_id, memory_id))


RECORD = "kept_pair"


def export_records(reviews: Reviews, shown: set[str] | None) -> Iterator[Mapping[str, Any]]:
    """Every kept pair as a record, oldest first; with ``shown``, only pairs of those memories (the public ones,
    when private memories are left out of the export)."""
    rows = reviews.database.db.execute("SELECT a, b, kept_at FROM kept ORDER BY kept_at, a, b")
    for a, b, at in rows:
        if shown is None or (a in shown and b in shown):
            yield {"type": RECORD, "a": a, "b": b, "kept_at": datetime.fromtimestamp(float(at), UTC).isoformat()}


def check_records(records: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    for number, record in enumerate(records, start=1):
        if record.get("type") != RECORD:
            yield f"dedup record {number}: unknown type {str(record.get('type'))[:40]!r}"
            continue
        a, b, at = record.get("a"), record.get("b"), record.get("kept_at")
        if not (isinstance(a, str) and isinstance(b, str) and a and b and a != b and len(a) <= 200 and len(b) <= 200):
            yield f"dedup record {number}: a and b must be two different memory ids"
            continue
        try:
            datetime.fromisoformat(str(at))
        except ValueError:
            yield f"dedup record {number}: kept_at must be an ISO date-time"


def import_records(reviews: Reviews, records: Sequence[Mapping[str, Any]]) -> int:
    """Keep the pairs of checked records (a pair kept already stays as it is); how many were new."""
    added = 0
    for record in records:
        at = datetime.fromisoformat(str(record["kept_at"]))
        added += reviews.keep(str(record["a"]), str(record["b"]), at if at.tzinfo else at.replace(tzinfo=UTC))
    return added
