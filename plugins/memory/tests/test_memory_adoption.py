"""A memory store written by the releases before ``user_version``: adopted by a real host with every row kept,
its memories read and recalled back; a file from a newer release is refused and left as it was."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from memory_support import recalled_contents

from ego_core.testing import call_ok, mcp_client
from ego_memory.embedding import UseEmbedder
from ego_memory.errors import StoreError
from ego_memory.store.memory_store import MemoryStore
from ego_memory.store.schema import FILE_NAME, LEGACY_VERSION, MIGRATIONS, open_file
from ego_memory.store.vector_index import collection_name
from ego_memory.text.language import LEXICON, segmented

if TYPE_CHECKING:
    from conftest import MemoryHosts

# The schema exactly as the last of those releases left it after an open (meta.schema_version 2): SCHEMA, the
# anticipation index, then the word index and the FTS triggers of the lexicon it recorded.
OLD_SCHEMA = """
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
CREATE INDEX IF NOT EXISTS memories_anticipated ON memories(anticipated) WHERE anticipated IS NOT NULL;
CREATE VIEW IF NOT EXISTS memory_terms AS SELECT rid, terms AS content FROM memories;
CREATE VIRTUAL TABLE IF NOT EXISTS fts_words USING fts5(
    content, content='memory_terms', content_rowid='rid', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO fts_words(rowid, content) VALUES (new.rid, new.terms);
    INSERT INTO fts_trigram(rowid, content) VALUES (new.rid, new.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO fts_words(fts_words, rowid, content) VALUES ('delete', old.rid, old.terms);
    INSERT INTO fts_trigram(fts_trigram, rowid, content) VALUES ('delete', old.rid, old.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE OF content, terms ON memories BEGIN
    INSERT INTO fts_words(fts_words, rowid, content) VALUES ('delete', old.rid, old.terms);
    INSERT INTO fts_trigram(fts_trigram, rowid, content) VALUES ('delete', old.rid, old.content);
    INSERT INTO fts_words(rowid, content) VALUES (new.rid, new.terms);
    INSERT INTO fts_trigram(rowid, content) VALUES (new.rid, new.content);
END;
INSERT INTO meta(key, value) VALUES ('schema_version', '2');
INSERT INTO meta(key, value) VALUES ('generation', '3');
INSERT INTO meta(key, value) VALUES ('created', '2026-03-01T09:00:00+00:00');
"""
AT = 1_772_600_000.0
KYOTO = "マスターと京都で桜を見た。花びらが川に流れていった。"
CANAL = "Walked the dog along the canal at dusk; the herons were back."
MEMORIES = [
    # id, ts, content, content_hash, terms, emotion, secondary, intensity, valence, arousal, body_state,
    # importance, category, tags, is_private, access_count, last_accessed, anticipated, anticipation_surfaced
    (
        "mem_0123456789ab",
        AT,
        KYOTO,
        "hash-kyoto",
        segmented(KYOTO),
        "joy",
        '["nostalgia"]',
        0.8,
        0.7,
        0.5,
        '{"warmth": 0.6}',
        4,
        "memory",
        '["京都", "桜"]',
        0,
        2,
        AT + 60,
        None,
        0,
    ),
    (
        "mem_ba9876543210",
        AT + 3600,
        CANAL,
        "hash-canal",
        segmented(CANAL),
        "calm",
        "[]",
        0.4,
        0.3,
        0.2,
        "{}",
        3,
        "daily",
        '["walk"]',
        0,
        0,
        None,
        AT + 86_400,
        0,
    ),
]
LINKS = [  # two rows per link, one per direction
    ("mem_0123456789ab", "mem_ba9876543210", "related", 0.8, "the same evening", AT + 3700),
    ("mem_ba9876543210", "mem_0123456789ab", "related", 0.8, "the same evening", AT + 3700),
]
EPISODES = [("ep_0123456789ab", "An evening walk", '["mem_0123456789ab", "mem_ba9876543210"]', AT, AT + 3600, 4, AT)]
KEPT = {
    "memories": "SELECT * FROM memories ORDER BY rid",
    "links": "SELECT * FROM links ORDER BY source, target",
    "episodes": "SELECT * FROM episodes",
}


def old_store(directory: Path, model: str) -> dict[str, list[Any]]:
    """A store as the previous release left it (WAL, the version in ``meta``); returns its rows by table."""
    directory.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(directory / FILE_NAME, isolation_level=None)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(OLD_SCHEMA)
        db.execute("BEGIN IMMEDIATE")
        for key, value in (("embedding_model", model), ("collection", collection_name(model)), ("lexicon", LEXICON)):
            db.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (key, value))
        db.executemany(
            "INSERT INTO memories(id, ts, content, content_hash, terms, emotion, secondary, intensity, valence, "
            "arousal, body_state, importance, category, tags, is_private, access_count, last_accessed, anticipated, "
            f"anticipation_surfaced) VALUES ({','.join('?' * 19)})",
            MEMORIES,
        )
        db.executemany("INSERT INTO links VALUES (?, ?, ?, ?, ?, ?)", LINKS)
        db.executemany("INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?)", EPISODES)
        db.execute("COMMIT")
        return {table: db.execute(query).fetchall() for table, query in KEPT.items()}


def raw(directory: Path, query: str, *params: Any) -> list[Any]:
    with closing(sqlite3.connect(directory / FILE_NAME)) as db:
        return db.execute(query, params).fetchall()


@pytest.mark.anyio
async def test_a_store_of_the_previous_release_is_adopted_and_its_memories_read_back(
    memory_hosts: MemoryHosts, embedder: UseEmbedder, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    rows = old_store(data_dir / "memory", embedder.model_id)
    host, plugin = memory_hosts(data_dir)
    assert plugin.memories is not None
    directory = data_dir / "memory"
    assert raw(directory, "PRAGMA user_version") == [(len(MIGRATIONS),)]
    assert raw(directory, "SELECT value FROM meta WHERE key = 'schema_version'") == [(str(LEGACY_VERSION),)]
    for table, query in KEPT.items():
        assert raw(directory, query) == rows[table], table

    kyoto, canal = plugin.memories.get(["mem_0123456789ab", "mem_ba9876543210"])
    assert (kyoto.content, kyoto.emotional_trace.primary, kyoto.importance, kyoto.tags) == (
        KYOTO,
        "joy",
        4,
        ("京都", "桜"),
    )
    assert (kyoto.access_count, canal.anticipated is not None) == (2, True)
    assert [(link.target_id, link.link_type, link.note) for link in kyoto.links] == [
        ("mem_ba9876543210", "related", "the same evening")
    ]
    async with mcp_client(host) as client:
        assert recalled_contents(await call_ok(client, "recall", {"context": "桜", "n_results": 1})) == [KYOTO]
        assert recalled_contents(await call_ok(client, "recall", {"context": "herons", "n_results": 1})) == [CANAL]
        episode = await call_ok(client, "get_episode", {"episode_id": "ep_0123456789ab"})
    assert "An evening walk" in episode


def test_adopting_twice_changes_nothing(embedder: UseEmbedder, tmp_path: Path) -> None:
    rows = old_store(tmp_path, embedder.model_id)
    for _ in range(2):
        open_file(tmp_path).close()
        assert raw(tmp_path, "PRAGMA user_version") == [(len(MIGRATIONS),)]
        for table, query in KEPT.items():
            assert raw(tmp_path, query) == rows[table], table


@pytest.mark.parametrize(
    "newer",
    ["PRAGMA user_version = 9", "UPDATE meta SET value = '3' WHERE key = 'schema_version'"],
    ids=["user_version", "legacy marker"],
)
def test_a_store_of_a_newer_release_is_refused_and_left_unchanged(
    memory_hosts: MemoryHosts, embedder: UseEmbedder, tmp_path: Path, newer: str
) -> None:
    data_dir = tmp_path / "data"
    directory = data_dir / "memory"
    old_store(directory, embedder.model_id)
    with closing(sqlite3.connect(directory / FILE_NAME)) as db:
        db.execute(newer)
        db.commit()
    before = (directory / FILE_NAME).read_bytes()
    host, plugin = memory_hosts(data_dir, start=False)
    host.start()
    assert plugin.memories is None
    assert any("was written by a newer version of ego-memory" in f.reason for f in host.failures), host.failures
    assert (directory / FILE_NAME).read_bytes() == before
    with pytest.raises(StoreError, match="newer version of ego-memory"):
        MemoryStore(directory, embedder.model_id).open(embedder.embed)
    assert (directory / FILE_NAME).read_bytes() == before
