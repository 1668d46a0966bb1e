"""The SQLite schema of ``memory.sqlite3`` and how a connection to it is opened."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

SCHEMA_VERSION = 2
"""1: the word index read the raw text; 2: it reads ``memories.terms`` (Japanese segmented into words)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memories (
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
);
CREATE INDEX IF NOT EXISTS memories_ts ON memories(ts);
CREATE INDEX IF NOT EXISTS memories_hash ON memories(content_hash);
CREATE INDEX IF NOT EXISTS memories_intensity ON memories(intensity, ts);
CREATE TABLE IF NOT EXISTS links (
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    link_type TEXT NOT NULL,
    confidence REAL NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    PRIMARY KEY (source, target, link_type)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS links_target ON links(target);
CREATE TABLE IF NOT EXISTS episodes (
    id TEXT PRIMARY KEY,
    summary TEXT NOT NULL,
    memory_ids TEXT NOT NULL,
    start_ts REAL NOT NULL,
    end_ts REAL NOT NULL,
    importance INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS journal (id TEXT NOT NULL, op TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (id, op));
CREATE TABLE IF NOT EXISTS english_vectors (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, vector BLOB NOT NULL
);
CREATE TRIGGER IF NOT EXISTS memories_english_ad AFTER DELETE ON memories BEGIN
    DELETE FROM english_vectors WHERE id = old.id;
END;
CREATE VIRTUAL TABLE IF NOT EXISTS fts_trigram USING fts5(
    content, content='memories', content_rowid='rid', tokenize='trigram'
);
"""
"""``english_vectors``: the English channel's embedding of each memory (float16; empty for a memory not in
Latin script; no row: not embedded yet, see :meth:`ego_memory.memories.Memories.fill_english`); ``seq`` grows
with every write, so a process reads only the rows it has not seen (:class:`ego_memory.english_index.EnglishIndex`).

Every table but the word index and the triggers that keep both FTS indexes in step with ``memories``: those
belong to :data:`LEXICAL_SCHEMA`, which :func:`ego_memory.maintenance.migrate_lexicon` creates (a store of
schema version 1 has them in their old form until it has migrated)."""

TERMS_COLUMN = "ALTER TABLE memories ADD COLUMN terms TEXT NOT NULL DEFAULT ''"
"""What a store of schema version 1 lacks: the segmented text (:func:`ego_memory.language.segmented`)."""

ANTICIPATION_COLUMNS = {
    "anticipated": "ALTER TABLE memories ADD COLUMN anticipated REAL",
    "anticipation_surfaced": "ALTER TABLE memories ADD COLUMN anticipation_surfaced INTEGER NOT NULL DEFAULT 0",
}
"""What a store from before anticipation lacks: the moment a memory looks forward to (epoch seconds, NULL:
none) and whether its arrival was acknowledged (added on open by ``maintenance.migrate_anticipation``)."""
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


def connect(path: Path) -> sqlite3.Connection:
    """A connection in WAL mode with a long busy timeout (other processes may hold the database briefly);
    transactions are explicit (``isolation_level=None``). A new file is its owner's only (mode 0600)."""
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))  # before SQLite creates it with the umask's mode
    db = sqlite3.connect(path, timeout=60.0, isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=OFF")
        db.execute("PRAGMA busy_timeout=60000")
        db.execute("PRAGMA secure_delete=ON")  # a forgotten memory's row is overwritten, not left in a free page
    except BaseException:
        db.close()
        raise
    return db
