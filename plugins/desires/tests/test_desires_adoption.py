"""A state file written by the releases before ``user_version`` is adopted: every row kept, read by the plugin."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from desires_support import AFTERNOON, NINE, DesireHostFactory

from ego_desires import DesireStore
from ego_desires.store import FILE_NAME, LEGACY_VERSION, MIGRATIONS, open_file

# The schema exactly as the last of those releases (meta.schema_version 5) created it.
OLD_SCHEMA = """
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
INSERT INTO meta (key, value) VALUES ('schema_version', '5');
"""
T = AFTERNOON.timestamp()
TABLES = ("desires", "emergent", "baseline", "impulse", "history", "said")


def old_file(folder: Path) -> dict[str, list[tuple[object, ...]]]:
    """A file as the previous release left it (WAL, ``synchronous=FULL``, version in ``meta``); its rows."""
    folder.mkdir(parents=True)
    db = sqlite3.connect(folder / FILE_NAME, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")
    db.execute("BEGIN IMMEDIATE")
    for statement in filter(str.strip, OLD_SCHEMA.split(";")):
        db.execute(statement)
    for number, name in enumerate(NINE):
        source = "explicit" if name == "curiosity" else "initial"
        db.execute("INSERT INTO desires VALUES (?, ?, ?, ?, ?)", (name, T - 60 * number, 0.1, 0.8, source))
    db.execute("INSERT INTO emergent VALUES ('be_with_someone', ?, ?, 0.2, NULL, NULL)", (T - 7200, T - 3600))
    db.execute("INSERT INTO baseline VALUES ('curiosity', 0.42, ?)", (T - 86400,))
    db.execute(
        "INSERT INTO impulse (memory_id, emotion, desire, amount, at) VALUES ('mem_1', 'sad', 'resonance', 0.1, ?)",
        (T - 30,),
    )
    db.execute("INSERT INTO history VALUES (1, 'curiosity', ?, 0.3)", (T - 86400,))
    db.execute("INSERT INTO said VALUES ('wake_up', 1, ?, 'abc123')", (T - 100,))
    db.execute("COMMIT")
    rows = {table: db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall() for table in TABLES}
    db.close()
    return rows


def test_a_file_of_the_previous_release_is_adopted_with_every_row(desire_host: DesireHostFactory) -> None:
    dh = desire_host(start=False)
    folder = dh.data_dir / "desires"
    before = old_file(folder)
    dh.host.start()
    assert not dh.host.failures
    assert dh.levels()["curiosity"] < 0.5  # the explicit satisfaction of a minute before is felt
    dh.host.stop()
    with sqlite3.connect(folder / FILE_NAME) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(LEGACY_VERSION),)
        after = {table: db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall() for table in TABLES}
    for table in ("desires", "emergent", "baseline", "history"):
        assert set(before[table]) <= set(after[table]), table
    store = DesireStore(open_file(folder))
    try:
        anchors = store.anchors()
        assert anchors["curiosity"].source == "explicit"
        assert anchors["curiosity"].anchored_at == T - 60 * NINE.index("curiosity")
        assert [row.name for row in store.emergent()] == ["be_with_someone"]
        assert store.baselines()["curiosity"] == (0.42, T - 86400)
        assert store.history(T - 86400, T - 86400) == [(T - 86400, {"curiosity": 0.3})]
        assert "abc123" in store.said("wake_up", 20)
    finally:
        store.close()


def test_adopting_twice_changes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "desires"
    old_file(folder)
    open_file(folder).close()
    with sqlite3.connect(folder / FILE_NAME) as db:
        first = {table: db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall() for table in TABLES}
    open_file(folder).close()
    with sqlite3.connect(folder / FILE_NAME) as db:
        assert {table: db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall() for table in TABLES} == first
        assert db.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
