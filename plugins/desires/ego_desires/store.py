"""The desires' state: one row per desire in ``<data dir>/desires/desires.sqlite3`` (``ctx.database``).

Every change is one ``BEGIN IMMEDIATE`` transaction that reads the rows it changes, so two processes on one
data directory never lose each other's satisfactions, and a crash leaves the last committed state
(``synchronous=FULL``: a satisfaction that was answered is on disk).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from ego_core import Database, DatabaseVersionError, open_database
from ego_desires.catalog import DESIRES
from ego_desires.curve import EARLIEST, INITIAL, LATEST, Anchor
from ego_desires.emergent import EMERGENT, EmergentRow

FILE_NAME: Final = "desires.sqlite3"
SYNCHRONOUS: Final = "FULL"
LEGACY_VERSION: Final = 5
"""The last version the releases before ``user_version`` kept in ``meta.schema_version`` (1: the nine desires;
2: emergent desires and the usual levels; 3: impulses; 4: the history of the felt levels; 5: what was said
lately). Each only added tables."""
SAID_KEPT: Final = 20
"""What was said is kept for the last this many answers of each surface (wake_up, attune)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS desires (
    name TEXT PRIMARY KEY,
    anchored_at REAL NOT NULL,
    start REAL NOT NULL,
    quality REAL,
    source TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS emergent (
    name TEXT PRIMARY KEY,
    created REAL NOT NULL,
    anchored_at REAL NOT NULL,
    start REAL NOT NULL,
    quality REAL,
    satisfied_at REAL
);
CREATE TABLE IF NOT EXISTS baseline (name TEXT PRIMARY KEY, level REAL NOT NULL, sampled_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS impulse (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT NOT NULL,
    emotion TEXT NOT NULL,
    desire TEXT NOT NULL,
    amount REAL NOT NULL,
    at REAL NOT NULL,
    felt_at REAL
);
CREATE INDEX IF NOT EXISTS impulse_by_memory ON impulse (memory_id, at);
CREATE TABLE IF NOT EXISTS history (
    bucket INTEGER NOT NULL,
    name TEXT NOT NULL,
    at REAL NOT NULL,
    level REAL NOT NULL,
    PRIMARY KEY (bucket, name)
);
CREATE INDEX IF NOT EXISTS history_by_time ON history (at);
CREATE TABLE IF NOT EXISTS said (
    surface TEXT NOT NULL,
    answer INTEGER NOT NULL,
    at REAL NOT NULL,
    digest TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS said_by_answer ON said (surface, answer);
"""

MIGRATIONS: Final[tuple[str, ...]] = (
    # 0 -> 1: the schema of LEGACY_VERSION. Every statement is idempotent, so it also adopts a file of any earlier
    # release (its rows kept, the tables it lacked added); the old marker stays at LEGACY_VERSION so that the
    # previous release can still open the file.
    _SCHEMA + f"INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', '{LEGACY_VERSION}');",
)
"""``migrations[i]`` takes the file from version ``i`` to ``i + 1`` (``user_version``); append, never edit."""


class DesireStoreError(Exception):
    """The state file cannot be used (damaged, or written by a newer version); it is left as it is."""


def _anchor(row: tuple[object, ...]) -> Anchor | None:
    """The row as an anchor, or ``None`` when a hand-edited value makes no sense (the desire then starts anew)."""
    _name, anchored_at, start, quality, source = row
    if not isinstance(anchored_at, int | float) or not isinstance(start, int | float):
        return None
    if not (math.isfinite(anchored_at) and math.isfinite(start) and EARLIEST <= anchored_at <= LATEST):
        return None
    if quality is not None and not (isinstance(quality, int | float) and math.isfinite(quality)):
        return None
    return Anchor(
        anchored_at=float(anchored_at),
        start=max(0.0, float(start)),
        quality=None if quality is None else min(1.0, max(0.0, float(quality))),
        source=str(source),
    )


def open_file(directory: Path) -> Database:
    """The store's database in ``directory`` opened as the plugin opens it (for tools and tests)."""
    return open_database(directory / FILE_NAME, MIGRATIONS, synchronous=SYNCHRONOUS)


def unusable(path: Path, exc: Exception) -> DesireStoreError:
    """The error for a file that cannot be opened (damaged, or from a newer release); it is left as it is."""
    if isinstance(exc, DatabaseVersionError):
        return DesireStoreError(str(exc))
    return DesireStoreError(f"{path} is not a usable desires store ({exc}); it was left as it is")


class DesireStore:
    """Thread-safe: the database's one connection is shared by the plugin's worker threads under its lock."""

    def __init__(self, database: Database) -> None:
        self.database: Database | None = database
        self.path = database.path

    def open(self, now: float, initial: Callable[[str], Anchor]) -> list[str]:
        """Give every desire that has no usable row its ``initial`` anchor (the database is already migrated).

        Returns the desires whose row was there but unusable (a hand-edited value) and was started anew.
        """
        renewed: list[str] = []
        try:
            with self._transaction() as tx:
                for name in DESIRES:
                    row = tx.execute(
                        "SELECT name, anchored_at, start, quality, source FROM desires WHERE name = ?", (name,)
                    ).fetchone()
                    if row is None or _anchor(row) is None:
                        self._write(tx, name, initial(name))
                        if row is not None:
                            renewed.append(name)
                self._bring_back(tx, now)
        except sqlite3.DatabaseError as exc:
            self.close()
            raise unusable(self.path, exc) from None
        return renewed

    def close(self) -> None:
        if self.database is not None:
            self.database.close()
            self.database = None

    def _database(self) -> Database:
        if self.database is None:
            raise DesireStoreError("the desires store is closed")
        return self.database

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._database().write() as db:
            yield db

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        with self._database().read() as db:
            yield db

    @staticmethod
    def _bring_back(db: sqlite3.Connection, now: float) -> None:
        """Satisfaction times in the future (a clock that was ahead, or set back) are moved to now.

        The levels do not change by it (a future time already counts as now); the desires just start rising
        again instead of waiting for the clock to catch up.
        """
        db.execute("UPDATE desires SET anchored_at = ? WHERE anchored_at > ?", (now, now))

    def anchors(self) -> dict[str, Anchor]:
        """The stored state of every desire that has a usable row."""
        with self._reading() as db:
            rows = db.execute("SELECT name, anchored_at, start, quality, source FROM desires").fetchall()
        found = {str(row[0]): _anchor(row) for row in rows if row[0] in DESIRES}
        return {name: anchor for name, anchor in found.items() if anchor is not None}

    def update(
        self,
        names: Sequence[str],
        change: Callable[[str, Anchor | None], Anchor],
        now: float,
        *,
        cascade: Callable[[str, Anchor], Mapping[str, float]] | None = None,
        ease: Callable[[EmergentRow, float], EmergentRow] | None = None,
        alive: Callable[[EmergentRow], bool] | None = None,
    ) -> dict[str, tuple[Anchor | None, Anchor]]:
        """Replace the state of ``names`` with ``change(name, current)`` in one transaction; before and after.

        The cascade: each emergent desire ``cascade(name, after)`` maps to, when it is stored and ``alive``, is
        replaced by ``ease(row, quality)`` in the same transaction (it is never created, and never cascades on).
        """
        changed: dict[str, tuple[Anchor | None, Anchor]] = {}
        with self._transaction() as db:
            self._bring_back(db, now)
            rows = {row.name: row for row in self._emergent_rows(db)}
            for name in dict.fromkeys(names):
                row = db.execute(
                    "SELECT name, anchored_at, start, quality, source FROM desires WHERE name = ?", (name,)
                ).fetchone()
                before = _anchor(row) if row is not None else None
                after = change(name, before)
                self._write(db, name, after)
                changed[name] = (before, after)
                if cascade is None or ease is None:
                    continue
                for emergent, quality in cascade(name, after).items():
                    found = rows.get(emergent)
                    if found is not None and (alive is None or alive(found)):
                        rows[emergent] = ease(found, quality)
                        self._write_emergent(db, rows[emergent])
        return changed

    # -- emergent desires and baselines ------------------------------------------------------------

    @staticmethod
    def _emergent_rows(db: sqlite3.Connection) -> list[EmergentRow]:
        found = []
        for name, created, anchored_at, start, quality, satisfied_at in db.execute(
            "SELECT name, created, anchored_at, start, quality, satisfied_at FROM emergent ORDER BY name"
        ):
            numbers = (created, anchored_at, start)
            if name not in EMERGENT or not all(isinstance(n, int | float) and math.isfinite(n) for n in numbers):
                continue
            found.append(
                EmergentRow(
                    name=str(name),
                    created=float(created),
                    anchored_at=float(anchored_at),
                    start=max(0.0, float(start)),
                    quality=float(quality) if isinstance(quality, int | float) else None,
                    satisfied_at=float(satisfied_at) if isinstance(satisfied_at, int | float) else None,
                )
            )
        return found

    def emergent(self) -> list[EmergentRow]:
        """Every stored emergent desire (alive or not: that is for the reader to decide at its moment)."""
        with self._reading() as db:
            return self._emergent_rows(db)

    def arise(self, rows: Sequence[EmergentRow], alive: Callable[[EmergentRow], bool]) -> list[str]:
        """Delete the emergent desires no longer ``alive``, then store each of ``rows`` whose desire is not known
        (alive) already. Returns the names that arose."""
        arisen: list[str] = []
        with self._transaction() as db:
            for row in self._emergent_rows(db):
                if not alive(row):
                    db.execute("DELETE FROM emergent WHERE name = ?", (row.name,))
            known = {row.name for row in self._emergent_rows(db)}
            for row in rows:
                if row.name not in known:
                    self._write_emergent(db, row)
                    known.add(row.name)
                    arisen.append(row.name)
        return arisen

    @staticmethod
    def _write_emergent(db: sqlite3.Connection, row: EmergentRow) -> None:
        db.execute(
            "INSERT OR REPLACE INTO emergent (name, created, anchored_at, start, quality, satisfied_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (row.name, row.created, row.anchored_at, row.start, row.quality, row.satisfied_at),
        )

    def baselines(self) -> dict[str, tuple[float, float]]:
        """Each desire's usual level and when it was last sampled (UTC seconds)."""
        with self._reading() as db:
            rows = db.execute("SELECT name, level, sampled_at FROM baseline").fetchall()
        return {
            str(name): (min(1.0, max(0.0, float(level))), float(at))
            for name, level, at in rows
            if name in DESIRES
            and isinstance(level, int | float)
            and math.isfinite(level)
            and isinstance(at, int | float)
            and math.isfinite(at)
        }

    def sample(self, levels: Mapping[str, float], weight: float, now: float, every: float) -> int:
        """Move each desire's usual level toward ``levels`` (by ``weight``), at most once per ``every`` seconds."""
        count = 0
        with self._transaction() as db:
            for name, level in levels.items():
                row = db.execute("SELECT level, sampled_at FROM baseline WHERE name = ?", (name,)).fetchone()
                if row is not None and isinstance(row[1], int | float) and 0 <= now - float(row[1]) < every:
                    continue
                usual = float(row[0]) if row is not None and isinstance(row[0], int | float) else level
                value = weight * level + (1.0 - weight) * usual if row is not None else level
                db.execute(
                    "INSERT OR REPLACE INTO baseline (name, level, sampled_at) VALUES (?, ?, ?)", (name, value, now)
                )
                count += 1
        return count

    # -- history -----------------------------------------------------------------------------------

    def record(self, levels: Mapping[str, float], now: float, every: float, keep: float) -> bool:
        """Keep ``levels`` as felt at ``now``: the first levels of each ``every``-second bucket stay, later ones of
        the same bucket are not written; samples older than ``keep`` seconds are deleted. True when written."""
        bucket = math.floor(now / every)
        with self._reading() as db:
            found = db.execute("SELECT count(*) FROM history WHERE bucket = ?", (bucket,)).fetchone()
        if int(found[0]) >= len(levels):
            return False
        with self._transaction() as db:
            for name, level in levels.items():
                if name in DESIRES and math.isfinite(level):
                    db.execute(
                        "INSERT OR IGNORE INTO history (bucket, name, at, level) VALUES (?, ?, ?, ?)",
                        (bucket, name, now, min(1.0, max(0.0, level))),
                    )
            db.execute("DELETE FROM history WHERE at < ?", (now - keep,))
        return True

    def history(self, since: float, until: float) -> list[tuple[float, dict[str, float]]]:
        """The recorded samples from ``since`` to ``until`` (UTC seconds, both included), oldest first: each
        bucket's time (its earliest write) and its levels by desire."""
        with self._reading() as db:
            rows = db.execute(
                "SELECT bucket, name, at, level FROM history WHERE at >= ? AND at <= ? ORDER BY bucket, name",
                (since, until),
            ).fetchall()
        samples: dict[int, tuple[float, dict[str, float]]] = {}
        for bucket, name, at, level in rows:
            if name not in DESIRES or not isinstance(level, int | float) or not isinstance(at, int | float):
                continue
            first, levels = samples.setdefault(int(bucket), (float(at), {}))
            samples[int(bucket)] = (min(first, float(at)), levels)
            levels[str(name)] = min(1.0, max(0.0, float(level)))
        return list(samples.values())

    # -- what was said lately ----------------------------------------------------------------------

    def said(self, surface: str, answers: int) -> frozenset[str]:
        """The digests of the sentences said in the last ``answers`` answers of ``surface`` (none for 0)."""
        if answers <= 0:
            return frozenset()
        with self._reading() as db:
            rows = db.execute(
                "SELECT digest FROM said WHERE surface = ? AND digest != '' AND answer > "
                "(SELECT coalesce(max(answer), 0) FROM said WHERE surface = ?) - ?",
                (surface, surface, answers),
            ).fetchall()
        return frozenset(str(row[0]) for row in rows)

    def say(self, surface: str, at: float, digests: Sequence[str]) -> None:
        """Keep the digests of the sentences of one answer of ``surface`` (an answer that said nothing counts too);
        only the last :data:`SAID_KEPT` answers are kept."""
        with self._transaction() as db:
            (last,) = db.execute("SELECT coalesce(max(answer), 0) FROM said WHERE surface = ?", (surface,)).fetchone()
            answer = int(last) + 1
            for digest in [*dict.fromkeys(digests), ""]:
                db.execute(
                    "INSERT INTO said (surface, answer, at, digest) VALUES (?, ?, ?, ?)", (surface, answer, at, digest)
                )
            db.execute("DELETE FROM said WHERE surface = ? AND answer <= ?", (surface, answer - SAID_KEPT))

    # -- impulses ----------------------------------------------------------------------------------

    def add_impulse(
        self, memory_id: str, emotion: str, desire: str, amount: float, now: float, *, cap: float, cooldown: float
    ) -> float | None:
        """Keep an impulse from ``memory_id`` toward ``desire``, so that the desire's pending impulses stay within
        ``cap``. Returns what it added (0 when the desire was at the cap), or None when the memory gave an impulse
        less than ``cooldown`` seconds ago. Felt impulses past the cooldown are deleted here."""
        with self._transaction() as db:
            db.execute("DELETE FROM impulse WHERE felt_at IS NOT NULL AND at <= ?", (now - cooldown,))
            recent = db.execute(
                "SELECT 1 FROM impulse WHERE memory_id = ? AND at > ? LIMIT 1", (memory_id, now - cooldown)
            ).fetchone()
            if recent is not None:
                return None
            (pending,) = db.execute(
                "SELECT coalesce(sum(amount), 0) FROM impulse WHERE desire = ? AND felt_at IS NULL", (desire,)
            ).fetchone()
            added = max(0.0, min(amount, cap - float(pending)))
            db.execute(
                "INSERT INTO impulse (memory_id, emotion, desire, amount, at) VALUES (?, ?, ?, ?, ?)",
                (memory_id, emotion, desire, added, now),
            )
        return added

    @staticmethod
    def _pending(db: sqlite3.Connection) -> dict[str, float]:
        rows = db.execute("SELECT desire, sum(amount) FROM impulse WHERE felt_at IS NULL GROUP BY desire").fetchall()
        return {
            str(desire): float(amount)
            for desire, amount in rows
            if desire in DESIRES and isinstance(amount, int | float) and math.isfinite(amount) and amount > 0
        }

    def pending_impulses(self) -> dict[str, float]:
        """The impulses not felt yet, summed by desire (reading changes nothing)."""
        with self._reading() as db:
            return self._pending(db)

    def feel_impulses(self, now: float) -> dict[str, float]:
        """The impulses not felt yet, summed by desire, marked felt in the same transaction (so only one reader
        feels each). With nothing pending, nothing is written."""
        if not self.pending_impulses():
            return {}
        with self._transaction() as db:
            pending = self._pending(db)
            db.execute("UPDATE impulse SET felt_at = ? WHERE felt_at IS NULL", (now,))
        return pending

    def forget_impulses(self, memory_id: str) -> int:
        """Delete every impulse of ``memory_id`` (a forgotten memory leaves no trace here)."""
        with self._transaction() as db:
            return db.execute("DELETE FROM impulse WHERE memory_id = ?", (memory_id,)).rowcount

    def merge(self, incoming: Mapping[str, Anchor]) -> int:
        """Import: a desire takes the incoming state when it differs and is newer, or when the local one was never
        satisfied. Returns how many desires changed (0 when the same file is imported again)."""
        count = 0
        with self._transaction() as db:
            for name, anchor in incoming.items():
                row = db.execute(
                    "SELECT name, anchored_at, start, quality, source FROM desires WHERE name = ?", (name,)
                ).fetchone()
                local = _anchor(row) if row is not None else None
                if local == anchor:
                    continue
                if local is None or local.source == INITIAL or anchor.anchored_at > local.anchored_at:
                    self._write(db, name, anchor)
                    count += 1
        return count

    @staticmethod
    def _write(db: sqlite3.Connection, name: str, anchor: Anchor) -> None:
        db.execute(
            "INSERT INTO desires (name, anchored_at, start, quality, source) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(name) DO UPDATE SET anchored_at = excluded.anchored_at, start = excluded.start, "
            "quality = excluded.quality, source = excluded.source",
            (name, anchor.anchored_at, anchor.start, anchor.quality, anchor.source),
        )
