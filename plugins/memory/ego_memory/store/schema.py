"""The SQLite schema of ``memory.sqlite3`` and its migrations (the core's convention: ``user_version``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ego_core import Database, DatabaseVersionError, open_database

if TYPE_CHECKING:
    from ego_core import PluginContext

FILE_NAME = "memory.sqlite3"

LEGACY_VERSION = 2
"""The version the releases before ``user_version`` kept in ``meta.schema_version`` (1: the word index read the
raw text; 2: it reads ``memories.terms``, Japanese segmented into words). The adoption step leaves it at 2 for
a downgrade to the previous release; nothing reads it any more."""

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS memories (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    ts REAL NOT NULL,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    terms TEXT NOT NULL DEFAULT '',
    emotion TEXT NOT NULL,
    secondary TEXT NOT NULL DEFAULT '[]',
    intensity REAL NOT NULL,
    valence REAL NOT NULL,
    arousal REAL NOT NULL,
    body_state TEXT NOT NULL DEFAULT '{}',
    importance INTEGER NOT NULL,
    category TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    is_private INTEGER NOT NULL DEFAULT 0,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed REAL,
    anticipated REAL,
    anticipation_surfaced INTEGER NOT NULL DEFAULT 0
)""",
    "CREATE INDEX IF NOT EXISTS memories_ts ON memories(ts)",
    "CREATE INDEX IF NOT EXISTS memories_hash ON memories(content_hash)",
    "CREATE INDEX IF NOT EXISTS memories_intensity ON memories(intensity, ts)",
    """CREATE TABLE IF NOT EXISTS links (
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    link_type TEXT NOT NULL,
    confidence REAL NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    PRIMARY KEY (source, target, link_type)
) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS links_target ON links(target)",
    """CREATE TABLE IF NOT EXISTS episodes (
    id TEXT PRIMARY KEY,
    summary TEXT NOT NULL,
    memory_ids TEXT NOT NULL,
    start_ts REAL NOT NULL,
    end_ts REAL NOT NULL,
    importance INTEGER NOT NULL,
    created REAL NOT NULL
)""",
    "CREATE TABLE IF NOT EXISTS journal (id TEXT NOT NULL, op TEXT NOT NULL, created REAL NOT NULL, "
    "PRIMARY KEY (id, op))",
    """CREATE TABLE IF NOT EXISTS english_vectors (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, vector BLOB NOT NULL
)""",
    """CREATE TRIGGER IF NOT EXISTS memories_english_ad AFTER DELETE ON memories BEGIN
    DELETE FROM english_vectors WHERE id = old.id;
END""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS fts_trigram USING fts5(
    content, content='memories', content_rowid='rid', tokenize='trigram'
)""",
)
"""``english_vectors``: the English channel's embedding of each memory (float16; empty for a memory not in
Latin script; no row: not embedded yet, see :meth:`ego_memory.service.Memories.fill_english`); ``seq`` grows
with every write, so a process reads only the rows it has not seen (:class:`ego_memory.index.english.EnglishIndex`).

Every table but the word index and the triggers that keep both FTS indexes in step with ``memories``: those
belong to :data:`LEXICAL_SCHEMA`, which :func:`ego_memory.store.maintenance.migrate_lexicon` creates (a store of
legacy version 1 has them in their old form until it has migrated). One statement each, run inside the
adoption step's transaction."""

TERMS_COLUMN = "ALTER TABLE memories ADD COLUMN terms TEXT NOT NULL DEFAULT ''"
"""What a store of legacy version 1 lacks: the segmented text (:func:`ego_memory.text.language.segmented`)."""

ANTICIPATION_COLUMNS = {
    "anticipated": "ALTER TABLE memories ADD COLUMN anticipated REAL",
    "anticipation_surfaced": "ALTER TABLE memories ADD COLUMN anticipation_surfaced INTEGER NOT NULL DEFAULT 0",
}
"""What a store from before anticipation lacks: the moment a memory looks forward to (epoch seconds, NULL:
none) and whether its arrival was acknowledged (added by the adoption step)."""
ANTICIPATION_INDEX = (
    "CREATE INDEX IF NOT EXISTS memories_anticipated ON memories(anticipated) WHERE anticipated IS NOT NULL"
)

LEXICAL_SCHEMA = (
    "CREATE VIEW IF NOT EXISTS memory_terms AS SELECT rid, terms AS content FROM memories",
    """CREATE VIRTUAL TABLE IF NOT EXISTS fts_words USING fts5(
    content, content='memory_terms', content_rowid='rid', tokenize='porter unicode61 remove_diacritics 2'
)""",
    """CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO fts_words(rowid, content) VALUES (new.rid, new.terms);
    INSERT INTO fts_trigram(rowid, content) VALUES (new.rid, new.content);
END""",
    """CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO fts_words(fts_words, rowid, content) VALUES ('delete', old.rid, old.terms);
    INSERT INTO fts_trigram(fts_trigram, rowid, content) VALUES ('delete', old.rid, old.content);
END""",
    """CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE OF content, terms ON memories BEGIN
    INSERT INTO fts_words(fts_words, rowid, content) VALUES ('delete', old.rid, old.terms);
    INSERT INTO fts_trigram(fts_trigram, rowid, content) VALUES ('delete', old.rid, old.content);
    INSERT INTO fts_words(rowid, content) VALUES (new.rid, new.terms);
    INSERT INTO fts_trigram(rowid, content) VALUES (new.rid, new.content);
END""",
)
"""The word index over ``memories.terms`` (through the view ``memory_terms``, so its column keeps the name
``content``) and the triggers of both FTS indexes, one statement each (run inside a transaction)."""

LEXICAL_DROP = (
    "DROP TRIGGER IF EXISTS memories_ai",
    "DROP TRIGGER IF EXISTS memories_ad",
    "DROP TRIGGER IF EXISTS memories_au",
    "DROP TABLE IF EXISTS fts_words",
    "DROP VIEW IF EXISTS memory_terms",
)

FTS_TABLES = ("fts_words", "fts_trigram")


def _adopt(db: sqlite3.Connection) -> None:
    """Version 0 to 1: today's tables for a new file, or for one a release before ``user_version`` wrote (every
    row kept). What those releases did at every open, once: :data:`SCHEMA`, then the columns an older file lacks
    (found with ``PRAGMA table_info``) and the anticipation index, and ``meta.schema_version`` left at
    :data:`LEGACY_VERSION`. The word index follows the lexicon, not the schema: ``migrate_lexicon`` builds it."""
    row = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
    marker = None if row is None else db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if marker is not None and int(marker[0]) > LEGACY_VERSION:
        raise DatabaseVersionError(f"meta.schema_version is {marker[0]}, newer than {LEGACY_VERSION}")
    for statement in SCHEMA:
        db.execute(statement)
    present = {column[1] for column in db.execute("PRAGMA table_info(memories)")}
    for column, statement in {"terms": TERMS_COLUMN, **ANTICIPATION_COLUMNS}.items():
        if column not in present:
            db.execute(statement)
    db.execute(ANTICIPATION_INDEX)
    db.execute(
        "INSERT INTO meta(key, value) VALUES ('schema_version', ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (str(LEGACY_VERSION),),
    )


MIGRATIONS: Final[tuple[Callable[[sqlite3.Connection], None], ...]] = (_adopt,)
"""``MIGRATIONS[i]`` takes the file from ``user_version`` ``i`` to ``i + 1``; append, never edit."""


def open_in(ctx: PluginContext) -> Database:
    """The plugin's store: ``<data dir>/memory/memory.sqlite3``, with ``secure_delete`` (a forgotten memory's
    row is overwritten, not left in a free page). WAL, ``synchronous=NORMAL`` and the 60 s busy timeout are the
    core's defaults; foreign keys stay off (SQLite's default; the schema declares none)."""
    return ctx.database(MIGRATIONS, FILE_NAME, secure_delete=True)


def open_file(directory: Path) -> Database:
    """The store in ``directory`` opened as :func:`open_in` opens it, for a store made without a plugin context
    (tests and tools name the directory): so ``open_database``, not ``ctx.database``."""
    return open_database(directory / FILE_NAME, MIGRATIONS, secure_delete=True)
