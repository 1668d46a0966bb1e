"""A notions file written by the releases before ``user_version`` is adopted: every row kept, read back."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ego_notions import NotionDB
from ego_notions.lexicon import LEXICON_VERSION
from ego_notions.store import DB_NAME, LEGACY_VERSION, MIGRATIONS, StateError, open_file

# The schema exactly as the last of those releases (meta.schema 5) created it.
OLD_SCHEMA = """
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
INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', '5');
"""
AT = 1_772_600_000.0
ROWS = {
    "notions": [
        (
            "notion_0123456789ab",
            "お茶を飲むと落ち着く",
            "calm",
            0.6,
            0.7,
            AT,
            AT - 500,
            AT,
            '["mem_1", "mem_2"]',
            '["お茶"]',
            "[]",
            3,
            "Master",
            '{"why": {"type": "text", "value": "静けさ"}}',
            AT - 100,
            1,
            '["mem_2"]',
        ),
    ],
    "notion_sources": [("mem_1", "notion_0123456789ab"), ("mem_2", "notion_0123456789ab")],
    "confidence_seen": [("notion_0123456789ab", 0.75)],
    "memory_tags": [("mem_1", "お茶", AT - 500)],
}


def old_file(folder: Path) -> None:
    """A file as the previous release left it (WAL, ``synchronous=NORMAL``, version in ``meta``)."""
    folder.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(folder / DB_NAME, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("BEGIN IMMEDIATE")
    for statement in OLD_SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    for table, rows in ROWS.items():
        for row in rows:
            db.execute(f"INSERT INTO {table} VALUES ({','.join('?' * len(row))})", row)
    db.execute("INSERT INTO themes VALUES ('お茶', 'tea', 1, 0)")
    db.execute("INSERT INTO notion_tags VALUES ('tea', 'notion_0123456789ab')")
    db.execute("INSERT INTO meta VALUES ('lexicon', ?)", (str(LEXICON_VERSION),))
    db.execute("INSERT INTO meta VALUES ('labels_drawn', '2026-03-04T00:00:00+00:00')")
    db.execute("COMMIT")
    db.close()


def test_a_file_of_the_previous_release_is_adopted_with_every_row(tmp_path: Path) -> None:
    old_file(tmp_path)
    db = NotionDB(open_file(tmp_path))
    try:
        (notion,) = db.all()
        assert (notion.label, notion.person, notion.chosen) == ("お茶を飲むと落ち着く", "Master", True)
        assert (notion.sources, notion.private_sources, notion.tags) == (("mem_1", "mem_2"), ("mem_2",), ("お茶",))
        assert notion.meta == {"why": {"type": "text", "value": "静けさ"}}
        assert [n.id for n in db.holding(["mem_2"])] == [n.id for n in db.tagged(["tea"])] == [notion.id]
        assert db.themed(db.keys(["お茶"])["お茶"], 5) == ["mem_1"]
        assert db.flag("labels_drawn") == "2026-03-04T00:00:00+00:00"
    finally:
        db.close()
    with sqlite3.connect(tmp_path / DB_NAME) as check:
        assert check.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
        assert check.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (str(LEGACY_VERSION),)
        for table, rows in ROWS.items():
            assert check.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall() == rows, table


def test_adopting_twice_changes_nothing(tmp_path: Path) -> None:
    old_file(tmp_path)
    for _ in range(2):
        open_file(tmp_path).close()
        with sqlite3.connect(tmp_path / DB_NAME) as check:
            assert check.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
            for table, rows in ROWS.items():
                assert check.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall() == rows, table


def test_a_file_of_a_newer_release_is_refused_and_left_alone(tmp_path: Path) -> None:
    old_file(tmp_path)
    open_file(tmp_path).close()
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        db.execute("PRAGMA user_version = 9")
    before = (tmp_path / DB_NAME).read_bytes()
    with pytest.raises(StateError, match="newer version of ego-notions"):
        open_file(tmp_path)
    assert (tmp_path / DB_NAME).read_bytes() == before
