"""A state file written by the releases before ``user_version`` is adopted: every row kept, read by the plugin."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from self_model_support import NOON

from ego_core import PluginHost, Settings
from ego_self_model.store import DB_NAME, LEGACY_VERSION, MIGRATIONS, StateStore, open_file

# The schema exactly as the last of those releases (meta.schema_version 8) left it: version 1, then each change.
OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS self_fields (field TEXT PRIMARY KEY, value TEXT NOT NULL, updated REAL NOT NULL);
CREATE TABLE IF NOT EXISTS growth (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, text TEXT NOT NULL, UNIQUE (at, text)
);
CREATE TABLE IF NOT EXISTS questions (
    id TEXT PRIMARY KEY, text TEXT NOT NULL, importance INTEGER NOT NULL,
    created REAL NOT NULL, surfaced REAL NOT NULL, resolved REAL, answer TEXT,
    resurfaced INTEGER NOT NULL DEFAULT 0, triggered REAL, vector BLOB, vector_model TEXT
);
CREATE TABLE IF NOT EXISTS people (
    key TEXT PRIMARY KEY, name TEXT NOT NULL, trust REAL NOT NULL,
    preferred_topics TEXT NOT NULL, sensitive_topics TEXT NOT NULL, aliases TEXT NOT NULL, notes TEXT NOT NULL,
    communication_style TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS shared (
    person TEXT NOT NULL, memory_id TEXT NOT NULL, at REAL NOT NULL, private INTEGER NOT NULL,
    PRIMARY KEY (person, memory_id)
);
CREATE INDEX IF NOT EXISTS shared_by_memory ON shared (memory_id);
ALTER TABLE questions ADD COLUMN person TEXT;
ALTER TABLE questions ADD COLUMN lineage TEXT NOT NULL DEFAULT '[]';
ALTER TABLE questions ADD COLUMN last_fed REAL;
CREATE TABLE IF NOT EXISTS companions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, question TEXT NOT NULL, kind TEXT NOT NULL, first TEXT NOT NULL,
    second TEXT, similarity REAL, added REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS companions_by_question ON companions (question);
CREATE INDEX IF NOT EXISTS companions_by_first ON companions (first);
CREATE INDEX IF NOT EXISTS companions_by_second ON companions (second);
CREATE TABLE IF NOT EXISTS reunions (
    person TEXT PRIMARY KEY, memory_id TEXT NOT NULL, gap REAL NOT NULL, noted REAL NOT NULL,
    shown INTEGER NOT NULL DEFAULT 0
);
ALTER TABLE companions ADD COLUMN private INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS trust_history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, person TEXT NOT NULL, at REAL NOT NULL, trust REAL NOT NULL,
    UNIQUE (person, at)
);
CREATE INDEX IF NOT EXISTS trust_history_by_person ON trust_history (person, at);
CREATE TABLE IF NOT EXISTS away_marks (
    person TEXT NOT NULL, memory_id TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (person, memory_id)
);
CREATE INDEX IF NOT EXISTS away_marks_by_memory ON away_marks (memory_id);
CREATE TABLE IF NOT EXISTS name_candidates (
    key TEXT PRIMARY KEY, name TEXT NOT NULL, memories INTEGER NOT NULL, last REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS name_sightings (
    key TEXT NOT NULL, memory_id TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (key, memory_id)
);
CREATE INDEX IF NOT EXISTS name_sightings_by_memory ON name_sightings (memory_id);
INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', '8');
"""
T = NOON.timestamp()
ROWS = {
    "self_fields": [("current_interest", '"お茶の淹れ方"', T)],
    "growth": [(1, T - 86400, "人の話を最後まで聞けるようになった")],
    "questions": [
        (
            "q_0123456789ab",
            "家とは何だろう",
            4,
            T - 7200,
            T - 3600,
            None,
            None,
            1,
            T - 3600,
            None,
            None,
            "あいこ",
            '["q_00000000000a"]',
            T - 600,
        ),
    ],
    "people": [("aiko", "あいこ", 0.7, '["お茶"]', "[]", '["アイちゃん"]', "[]", "丁寧", T - 99999, T - 100)],
    "shared": [("aiko", "mem_000000000001", T - 5000, 0), ("aiko", "mem_000000000002", T - 4000, 1)],
    "companions": [(1, "q_0123456789ab", "companion", "mem_000000000001", None, 0.41, T - 500, 0)],
    "reunions": [("aiko", "mem_000000000001", 864000.0, T - 5000, 0)],
    "trust_history": [(1, "aiko", T - 100, 0.7)],
    "away_marks": [("aiko", "mem_000000000003", T - 3000)],
    "name_candidates": [("kenta", "けんた", 1, T - 2000)],
    "name_sightings": [("kenta", "mem_000000000004", T - 2000)],
}


def old_file(folder: Path) -> None:
    """A file as the previous release left it (WAL, ``synchronous=FULL``, version in ``meta``), with a row in
    every table."""
    folder.mkdir(parents=True)
    db = sqlite3.connect(folder / DB_NAME, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("BEGIN IMMEDIATE")
    for statement in OLD_SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    for table, rows in ROWS.items():
        for row in rows:
            db.execute(f"INSERT INTO {table} VALUES ({','.join('?' * len(row))})", row)
    db.execute("COMMIT")
    db.close()


def test_a_file_of_the_previous_release_is_adopted_with_every_row(
    self_host: Callable[..., PluginHost], ego_settings: Settings
) -> None:
    folder = ego_settings.data_dir / "self_model"
    old_file(folder)
    host = self_host()
    host.start()
    assert host.is_active("self_model")
    host.stop()
    with sqlite3.connect(folder / DB_NAME) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(LEGACY_VERSION),)
        for table, rows in ROWS.items():
            assert db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall() == rows, table
    store = StateStore(open_file(folder))
    try:
        with store.reading() as db:
            assert store.fields(db) == {"current_interest": "お茶の淹れ方"}
            assert [g.text for g in store.growth(db)] == ["人の話を最後まで聞けるようになった"]
            (question,) = store.questions(db)
            assert (question.person, question.lineage) == ("あいこ", ("q_00000000000a",))
            (person,) = store.people(db)
            assert (person.name, person.aliases, person.trust) == ("あいこ", ("アイちゃん",), 0.7)
            assert [c.first for c in store.companions(db, "q_0123456789ab")] == ["mem_000000000001"]
            assert [t for _p, _at, t in store.trust_history(db, "aiko")] == [0.7]
            assert store.sightings(db, "kenta") == ["mem_000000000004"]
        assert store.public_counts() == {"aiko": 1}
    finally:
        store.close()


def test_adopting_twice_changes_nothing(tmp_path: Path) -> None:
    old_file(tmp_path / "self_model")
    for _ in range(2):
        open_file(tmp_path / "self_model").close()
        with sqlite3.connect(tmp_path / "self_model" / DB_NAME) as db:
            assert db.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
            for table, rows in ROWS.items():
                assert db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall() == rows, table
