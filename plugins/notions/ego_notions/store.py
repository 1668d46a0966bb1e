"""The notions plugin's state: one SQLite database (WAL) in its data directory (``ctx.database``).

Every change is one ``BEGIN IMMEDIATE`` transaction, so a crash leaves the previous state. The database's lock
serialises the single connection within a process. Only ids of memories are kept, never their text.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from ego_core import Database, DatabaseVersionError, open_database
from ego_notions.labels import drawn_shape, legacy_label
from ego_notions.lexicon import LEXICON_VERSION, lexicon_key, normalize_tag, theme_key
from ego_notions.model import Notion

DB_NAME: Final = "notions.sqlite3"
LEGACY_VERSION: Final = 5
"""The last version the releases before ``user_version`` kept in ``meta.schema``. 2 added ``contradicted`` (when
a contradiction last weakened the notion); 3 the confidences the last wake_up saw (``confidence_seen``); 4 themes
across languages: the theme key of every tag seen (``themes``), the tags of public memories (``memory_tags``),
notions indexed by theme key, and generated labels rewritten as thoughts; 5 whether the agent chose the label
(``chosen``) and the sources that were private when it was drawn (``private_sources``)."""
DRAWN_FLAG: Final = "labels_drawn"
"""Set once every notion's label and tags were checked against its memories' privacy (after the upgrade to 5)."""
KEYS_KEPT: Final = 50_000
"""Learned theme keys kept in memory."""
SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notions (
    id TEXT PRIMARY KEY, label TEXT NOT NULL, tone TEXT NOT NULL, valence REAL NOT NULL,
    confidence REAL NOT NULL, anchored REAL NOT NULL, created REAL NOT NULL, reinforced REAL NOT NULL,
    sources TEXT NOT NULL, tags TEXT NOT NULL, related TEXT NOT NULL, reinforcement_count INTEGER NOT NULL,
    person TEXT, meta TEXT NOT NULL, contradicted REAL, chosen INTEGER NOT NULL DEFAULT 0,
    private_sources TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE IF NOT EXISTS notion_sources (
    memory_id TEXT NOT NULL, notion_id TEXT NOT NULL, PRIMARY KEY (memory_id, notion_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS notion_tags (
    tag TEXT NOT NULL, notion_id TEXT NOT NULL, PRIMARY KEY (tag, notion_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS notion_sources_by_notion ON notion_sources (notion_id);
CREATE INDEX IF NOT EXISTS notion_tags_by_notion ON notion_tags (notion_id);
CREATE TABLE IF NOT EXISTS confidence_seen (notion_id TEXT PRIMARY KEY, confidence REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS themes (
    tag TEXT PRIMARY KEY, key TEXT NOT NULL, japanese INTEGER NOT NULL, bridged INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS themes_by_key ON themes (key);
CREATE TABLE IF NOT EXISTS memory_tags (
    memory_id TEXT NOT NULL, tag TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (memory_id, tag)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memory_tags_by_tag ON memory_tags (tag, at);
CREATE INDEX IF NOT EXISTS memory_tags_by_time ON memory_tags (at);
"""
Theme = tuple[str, str, bool, bool]
"""A tag as the store knows it: normalised tag, theme key, written in Japanese, bridged by the embedding model."""
COLUMNS: Final = (
    "id, label, tone, valence, confidence, anchored, created, reinforced, sources, tags, related, "
    "reinforcement_count, person, meta, contradicted, chosen, private_sources"
)


class StateError(RuntimeError):
    """The notions database cannot be used (written by a newer version, or not a database)."""


def new_id() -> str:
    return "notion_" + secrets.token_hex(6)


def _epoch(moment: datetime) -> float:
    return moment.timestamp()


def _moment(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


def _row(notion: Notion) -> tuple[Any, ...]:
    return (
        notion.id,
        notion.label,
        notion.tone,
        notion.valence,
        notion.confidence,
        _epoch(notion.anchored),
        _epoch(notion.created),
        _epoch(notion.reinforced),
        json.dumps(list(notion.sources)),
        json.dumps(list(notion.tags), ensure_ascii=False),
        json.dumps(list(notion.related)),
        notion.reinforcement_count,
        notion.person,
        json.dumps(dict(notion.meta), ensure_ascii=False, sort_keys=True),
        None if notion.contradicted is None else _epoch(notion.contradicted),
        int(notion.chosen),
        json.dumps(list(notion.private_sources)),
    )


def _notion(row: Sequence[Any]) -> Notion:
    return Notion(
        id=row[0],
        label=row[1],
        tone=row[2],
        valence=row[3],
        confidence=row[4],
        anchored=_moment(row[5]),
        created=_moment(row[6]),
        reinforced=_moment(row[7]),
        sources=tuple(json.loads(row[8])),
        tags=tuple(json.loads(row[9])),
        related=tuple(json.loads(row[10])),
        reinforcement_count=row[11],
        person=row[12],
        meta=json.loads(row[13]),
        contradicted=None if row[14] is None else _moment(row[14]),
        chosen=bool(row[15]),
        private_sources=tuple(json.loads(row[16])),
    )


def _migrate(db: sqlite3.Connection, version: int) -> None:
    """Bring a database of an earlier legacy schema up to :data:`LEGACY_VERSION`."""
    columns = {r[1] for r in db.execute("PRAGMA table_info(notions)")}
    if "contradicted" not in columns:
        db.execute("ALTER TABLE notions ADD COLUMN contradicted REAL")
    if "chosen" not in columns:
        db.execute("ALTER TABLE notions ADD COLUMN chosen INTEGER NOT NULL DEFAULT 0")
        db.execute("ALTER TABLE notions ADD COLUMN private_sources TEXT NOT NULL DEFAULT '[]'")
    if version < 4:
        # the labels the first versions generated ("tea & morning (happy)") become thoughts
        for notion_id, label, tags, tone, person in db.execute(
            "SELECT id, label, tags, tone, person FROM notions"
        ).fetchall():
            relabelled = legacy_label(label, json.loads(tags), tone, person)
            if relabelled is not None and relabelled != label:
                db.execute("UPDATE notions SET label = ? WHERE id = ?", (relabelled, notion_id))
    if version < 5:
        # a label that does not read as drawn may be the agent's: kept unless it quotes a private memory
        for notion_id, label in db.execute("SELECT id, label FROM notions").fetchall():
            db.execute("UPDATE notions SET chosen = ? WHERE id = ?", (int(not drawn_shape(label)), notion_id))
        db.execute("DELETE FROM meta WHERE key = ?", (DRAWN_FLAG,))


def _adopt(db: sqlite3.Connection) -> None:
    """Version 0 to 1: the schema of :data:`LEGACY_VERSION`, for a new file or one of an earlier release (brought
    up from the ``meta.schema`` it had, every notion kept). The old marker is left at :data:`LEGACY_VERSION`, so
    that the previous release can still open the file."""
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    version = LEGACY_VERSION if row is None else int(row[0])
    if version > LEGACY_VERSION:
        raise DatabaseVersionError(f"meta.schema is {version}, newer than {LEGACY_VERSION}")
    _migrate(db, version)
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (str(LEGACY_VERSION),))


MIGRATIONS: Final[tuple[Callable[[sqlite3.Connection], None], ...]] = (_adopt,)
"""``MIGRATIONS[i]`` takes the file from ``user_version`` ``i`` to ``i + 1``; append, never edit."""


def _lexicon(db: sqlite3.Connection) -> int | None:
    row = db.execute("SELECT value FROM meta WHERE key = 'lexicon'").fetchone()
    return None if row is None else int(row[0])


def unusable(path: Path, exc: Exception) -> StateError:
    """The error for a file that cannot be opened; it is left as it is."""
    if isinstance(exc, DatabaseVersionError):
        return StateError(f"{path} was written by a newer version of ego-notions ({exc})")
    return StateError(f"{path} cannot be used: {exc}")


def open_file(directory: Path) -> Database:
    """The database in ``directory`` opened as the plugin opens it (for tools and tests)."""
    try:
        return open_database(directory / DB_NAME, MIGRATIONS)
    except (sqlite3.DatabaseError, DatabaseVersionError) as exc:
        raise unusable(directory / DB_NAME, exc) from None


def _rekey(db: sqlite3.Connection) -> None:
    """Theme keys again by this lexicon: a tag it knows takes its key (a bridge to another key gives way); the
    notions' tag index is rebuilt from the keys."""
    for tag, key in db.execute("SELECT tag, key FROM themes").fetchall():
        known = lexicon_key(tag)
        if known is not None and known != key:
            db.execute("UPDATE themes SET key = ?, bridged = 0 WHERE tag = ?", (known, tag))
    keys = dict(db.execute("SELECT tag, key FROM themes").fetchall())
    db.execute("DELETE FROM notion_tags")
    for notion_id, tags in db.execute("SELECT id, tags FROM notions").fetchall():
        db.executemany(
            "INSERT OR IGNORE INTO notion_tags (tag, notion_id) VALUES (?, ?)",
            [(_key(t, keys), notion_id) for t in json.loads(tags)],
        )


def _key(tag: str, known: Mapping[str, str]) -> str:
    normal = normalize_tag(tag)
    return known.get(normal) or theme_key(normal)


class NotionDB:
    """Notions by id, with indexes from memory id and from tag to the notions that hold them."""

    def __init__(self, database: Database) -> None:
        self.path = database.path
        self._database: Database | None = database
        self._keys: dict[str, str] = {}
        if not database.read_only and _lexicon(database.db) != LEXICON_VERSION:
            with database.write() as db:
                if _lexicon(db) != LEXICON_VERSION:  # another process may have rekeyed meanwhile
                    _rekey(db)
                    db.execute(
                        "INSERT OR REPLACE INTO meta (key, value) VALUES ('lexicon', ?)", (str(LEXICON_VERSION),)
                    )

    def _opened(self) -> Database:
        if self._database is None:
            raise StateError("the notions store is closed")
        return self._database

    def close(self) -> None:
        if self._database is not None:
            self._database.close()
            self._database = None

    def all(self) -> list[Notion]:
        with self._opened().read() as db:
            rows = db.execute(f"SELECT {COLUMNS} FROM notions ORDER BY created DESC, id").fetchall()
        return [_notion(r) for r in rows]

    def count(self) -> int:
        with self._opened().read() as db:
            return int(db.execute("SELECT count(*) FROM notions").fetchone()[0])

    def get(self, notion_id: str) -> Notion | None:
        with self._opened().read() as db:
            row = db.execute(f"SELECT {COLUMNS} FROM notions WHERE id = ?", (notion_id,)).fetchone()
        return _notion(row) if row else None

    def many(self, ids: Iterable[str]) -> list[Notion]:
        wanted = list(dict.fromkeys(ids))
        found: list[Notion] = []
        with self._opened().read() as db:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                found.extend(
                    _notion(r) for r in db.execute(f"SELECT {COLUMNS} FROM notions WHERE id IN ({marks})", chunk)
                )
        return sorted(found, key=lambda n: wanted.index(n.id)) if len(found) < 200 else found

    def holding(self, memory_ids: Iterable[str]) -> list[Notion]:
        """The notions that have any of ``memory_ids`` among their sources."""
        ids = list(dict.fromkeys(memory_ids))
        with self._opened().read() as db:
            notion_ids: list[str] = []
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                notion_ids.extend(
                    r[0]
                    for r in db.execute(f"SELECT notion_id FROM notion_sources WHERE memory_id IN ({marks})", chunk)
                )
        return self.many(notion_ids)

    def tagged(self, tags: Iterable[str]) -> list[Notion]:
        """The notions that share a theme with ``tags`` (``tea`` finds a notion tagged ``お茶``)."""
        keys = list(dict.fromkeys(self.keys(tags).values()))
        if not keys:
            return []
        marks = ",".join("?" * len(keys))
        with self._opened().read() as db:
            rows = db.execute(f"SELECT DISTINCT notion_id FROM notion_tags WHERE tag IN ({marks})", keys).fetchall()
        return self.many(r[0] for r in rows)

    # ----------------------------------------------------------------------------------------------
    # themes: the key of every tag seen, and the tags of public memories

    def keys(self, tags: Iterable[str]) -> dict[str, str]:
        """The theme key of each of ``tags`` (as given; blank ones left out): learned, else :func:`theme_key`."""
        normal = {t: normalize_tag(t) for t in dict.fromkeys(tags)}
        normal = {t: n for t, n in normal.items() if n}
        known = self.known(set(normal.values()))
        return {t: known.get(n) or theme_key(n) for t, n in normal.items()}

    def known(self, normal: set[str]) -> dict[str, str]:
        """The learned key of each of the normalised tags ``normal`` seen before (a tag's key never changes while
        the store is open, so what was read is remembered)."""
        found = {t: self._keys[t] for t in normal if t in self._keys}
        wanted = sorted(normal - set(found))
        if not wanted:
            return found
        with self._opened().read() as db:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                found.update(db.execute(f"SELECT tag, key FROM themes WHERE tag IN ({marks})", chunk).fetchall())
            if len(self._keys) > KEYS_KEPT:
                self._keys.clear()
            self._keys.update((t, found[t]) for t in wanted if t in found)
        return found

    def themes(self) -> list[Theme]:
        """Every tag seen, with its key."""
        with self._opened().read() as db:
            rows = db.execute("SELECT tag, key, japanese, bridged FROM themes ORDER BY tag").fetchall()
        return [(str(t), str(k), bool(j), bool(b)) for t, k, j, b in rows]

    def learn(self, themes: Sequence[Theme]) -> None:
        """Keep the key of tags not seen before (a tag keeps the key it was first given)."""
        if not themes:
            return
        with self._opened().write() as db:
            db.executemany(
                "INSERT OR IGNORE INTO themes (tag, key, japanese, bridged) VALUES (?, ?, ?, ?)",
                [(t, k, int(j), int(b)) for t, k, j, b in themes],
            )

    def index_memories(self, rows: Sequence[tuple[str, Sequence[str], float]]) -> None:
        """Record the normalised tags of public memories (id, tags, epoch seconds), replacing what was kept."""
        if not rows:
            return
        with self._opened().write() as db:
            db.executemany("DELETE FROM memory_tags WHERE memory_id = ?", [(memory_id,) for memory_id, _, _ in rows])
            db.executemany(
                "INSERT OR IGNORE INTO memory_tags (memory_id, tag, at) VALUES (?, ?, ?)",
                [(memory_id, t, at) for memory_id, tags, at in rows for t in tags],
            )

    def indexed(self, memory_ids: Iterable[str]) -> set[str]:
        """Which of ``memory_ids`` have their tags recorded."""
        ids = list(dict.fromkeys(memory_ids))
        found: set[str] = set()
        with self._opened().read() as db:
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                query = f"SELECT DISTINCT memory_id FROM memory_tags WHERE memory_id IN ({marks})"
                found.update(r[0] for r in db.execute(query, chunk))
        return found

    def themed(self, key: str, limit: int) -> list[str]:
        """The newest ``limit`` public memories with a tag of the theme ``key`` (any language), newest first."""
        with self._opened().read() as db:
            rows = db.execute(
                "SELECT m.memory_id, max(m.at) AS at FROM themes t JOIN memory_tags m ON m.tag = t.tag "
                "WHERE t.key = ? GROUP BY m.memory_id ORDER BY at DESC, m.memory_id LIMIT ?",
                (key, limit),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def tagged_since(self, since: float, limit: int) -> list[str]:
        """The newest ``limit`` public tagged memories stored at or after ``since`` (epoch seconds), newest first."""
        with self._opened().read() as db:
            rows = db.execute(
                "SELECT memory_id, max(at) AS at FROM memory_tags WHERE at >= ? GROUP BY memory_id "
                "ORDER BY at DESC, memory_id LIMIT ?",
                (since, limit),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def unindex_memory(self, memory_id: str) -> None:
        """Forget the tags of a memory (forgotten, or private now), and every tag no memory or notion holds any
        more."""
        with self._opened().write() as db:
            tags = [r[0] for r in db.execute("SELECT tag FROM memory_tags WHERE memory_id = ?", (memory_id,))]
            db.execute("DELETE FROM memory_tags WHERE memory_id = ?", (memory_id,))
            if not tags:
                return
            self._keys.clear()
            held = {normalize_tag(t) for (raw,) in db.execute("SELECT tags FROM notions") for t in json.loads(raw)}
            for tag in tags:
                used = db.execute("SELECT 1 FROM memory_tags WHERE tag = ? LIMIT 1", (tag,)).fetchone()
                if used is None and tag not in held:
                    db.execute("DELETE FROM themes WHERE tag = ?", (tag,))

    def flag(self, name: str) -> str | None:
        with self._opened().read() as db:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (name,)).fetchone()
        return None if row is None else str(row[0])

    def set_flag(self, name: str, value: str) -> None:
        with self._opened().write() as db:
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (name, value))

    def apply(self, save: Sequence[Notion] = (), delete: Sequence[str] = ()) -> None:
        """Write ``save`` (insert or replace) and delete ``delete`` in one transaction."""
        if not save and not delete:
            return
        keys = self.keys(t for n in save for t in n.tags)
        with self._opened().write() as db:
            for notion_id in [*delete, *(n.id for n in save)]:
                db.execute("DELETE FROM notions WHERE id = ?", (notion_id,))
                db.execute("DELETE FROM notion_sources WHERE notion_id = ?", (notion_id,))
                db.execute("DELETE FROM notion_tags WHERE notion_id = ?", (notion_id,))
            for notion in save:
                db.execute(f"INSERT INTO notions ({COLUMNS}) VALUES ({','.join('?' * 17)})", _row(notion))
                db.executemany(
                    "INSERT OR IGNORE INTO notion_sources (memory_id, notion_id) VALUES (?, ?)",
                    [(m, notion.id) for m in notion.sources],
                )
                db.executemany(
                    "INSERT OR IGNORE INTO notion_tags (tag, notion_id) VALUES (?, ?)",
                    [(keys[t], notion.id) for t in notion.tags if t in keys],
                )

    def look_back(self, confidences: Mapping[str, float], drop: float, now: datetime) -> list[str] | None:
        """The notions whose confidence fell by at least ``drop`` since the previous look, then ``confidences`` kept
        in place of what that look saw, in one transaction (a crash keeps one or the other, and two processes never
        both report a drop). None at the first look; notions gone since are not reported."""
        with self._opened().write() as db:
            looked = db.execute("SELECT value FROM meta WHERE key = 'confidence_seen_at'").fetchone()
            before = {str(i): float(c) for i, c in db.execute("SELECT notion_id, confidence FROM confidence_seen")}
            db.execute("DELETE FROM confidence_seen")
            db.executemany("INSERT INTO confidence_seen (notion_id, confidence) VALUES (?, ?)", confidences.items())
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('confidence_seen_at', ?)", (now.isoformat(),))
        if looked is None:
            return None
        return [i for i, c in confidences.items() if i in before and before[i] - c >= drop - 1e-9]
