"""Storage: Chroma (vectors + metadata) and a SQLite sidecar (WAL) as the transactional record.

Layout under ``<data dir>/memory/``:

- ``chroma/``: a Chroma ``PersistentClient`` (or a Chroma server via ``chroma_url``). One collection per
  embedding model, cosine distance; every vector's metadata records its model, timestamps are numbers
  (``ts``, epoch seconds UTC), lists stay lists.
- ``memory.sqlite3``: the memories (the commit point of every write), bidirectional links, access
  statistics, episodes, FTS5 indexes (``porter unicode61`` for words, ``trigram`` for CJK and substrings),
  a write journal and the store's metadata (embedding model, active collection, generation).
- ``.lock``: the inter-process writer lock.

Crash safety: a remember writes a journal row, then Chroma, then commits the SQLite row (deleting the
journal row) — the commit is the point after which the memory exists. A forget commits the SQLite deletion
(with a journal row), then deletes from Chroma, then clears the journal. Opening the store rolls every
journal row to a consistent state, and reconciles Chroma with SQLite when their counts disagree.

Several processes: every write takes the exclusive file lock and bumps ``generation``; a process that sees
a generation it did not write reopens its Chroma client, whose in-memory index would otherwise be stale.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import attrs
import numpy as np

from ego_core import EmotionalTrace, LinkType, Memory, MemoryLink, Vectors
from ego_memory.locking import FileLock

_log = logging.getLogger("ego.plugin.memory.store")

SCHEMA_VERSION = 1
REINDEX_COMMAND = "ego memory reindex"


class StoreError(RuntimeError):
    """The store cannot do what was asked (not open, re-indexed by another process, a memory vanished)."""


class ModelMismatchError(StoreError):
    def __init__(self, stored: str, configured: str) -> None:
        super().__init__(
            f"the memory store was built with embedding model {stored!r}, but {configured!r} is configured. "
            f"Switch back to {stored!r}, or re-embed every memory with the new model: `{REINDEX_COMMAND}`"
        )
        self.stored = stored
        self.configured = configured


def content_hash(content: str) -> str:
    return hashlib.sha256(content.strip().encode("utf-8")).hexdigest()


def to_epoch(moment: datetime) -> float:
    """Seconds since the epoch at millisecond precision (exact through float and ISO 8601 round trips)."""
    if moment.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return round(moment.timestamp(), 3)


def from_epoch(value: float) -> datetime:
    return datetime.fromtimestamp(round(value, 3), UTC)


def to_millis(moment: datetime) -> datetime:
    """``moment`` truncated to whole milliseconds (what the store keeps)."""
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def collection_name(model_id: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model_id).strip("-._") or "model"
    return f"memories-{slug}"[:480]


SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memories (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    ts REAL NOT NULL,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
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
    last_accessed REAL
);
CREATE INDEX IF NOT EXISTS memories_ts ON memories(ts);
CREATE INDEX IF NOT EXISTS memories_hash ON memories(content_hash);
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
CREATE VIRTUAL TABLE IF NOT EXISTS fts_words USING fts5(
    content, content='memories', content_rowid='rid', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS fts_trigram USING fts5(
    content, content='memories', content_rowid='rid', tokenize='trigram'
);
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO fts_words(rowid, content) VALUES (new.rid, new.content);
    INSERT INTO fts_trigram(rowid, content) VALUES (new.rid, new.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO fts_words(fts_words, rowid, content) VALUES ('delete', old.rid, old.content);
    INSERT INTO fts_trigram(fts_trigram, rowid, content) VALUES ('delete', old.rid, old.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO fts_words(fts_words, rowid, content) VALUES ('delete', old.rid, old.content);
    INSERT INTO fts_trigram(fts_trigram, rowid, content) VALUES ('delete', old.rid, old.content);
    INSERT INTO fts_words(rowid, content) VALUES (new.rid, new.content);
    INSERT INTO fts_trigram(rowid, content) VALUES (new.rid, new.content);
END;
"""

FTS_TABLES = ("fts_words", "fts_trigram")
_MEMORY_COLUMNS = (
    "id, ts, content, emotion, secondary, intensity, valence, arousal, body_state, importance, category, tags, "
    "is_private, access_count, last_accessed"
)


@attrs.frozen
class Episode:
    """Memories grouped into one episode: members in time order, importance = max."""

    id: str
    summary: str
    memory_ids: tuple[str, ...]
    start: datetime
    end: datetime
    importance: int
    created: datetime


@attrs.frozen
class Filters:
    """Recall filters, applied inside Chroma (``where``) and SQLite alike."""

    emotion: str | None = None
    category: str | None = None
    ts_from: float | None = None
    ts_to: float | None = None
    valence: tuple[float, float] | None = None
    arousal: tuple[float, float] | None = None

    @property
    def active(self) -> bool:
        return any(v is not None for v in attrs.astuple(self, recurse=False))

    def chroma_where(self) -> dict[str, Any] | None:
        clauses: list[dict[str, Any]] = []
        if self.emotion is not None:
            clauses.append({"emotion": self.emotion})
        if self.category is not None:
            clauses.append({"category": self.category})
        if self.ts_from is not None:
            clauses.append({"ts": {"$gte": self.ts_from}})
        if self.ts_to is not None:
            clauses.append({"ts": {"$lte": self.ts_to}})
        for key, bounds in (("valence", self.valence), ("arousal", self.arousal)):
            if bounds is not None:
                clauses.append({key: {"$gte": bounds[0]}})
                clauses.append({key: {"$lte": bounds[1]}})
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}

    def sql(self, alias: str = "m") -> tuple[str, list[Any]]:
        parts: list[str] = []
        params: list[Any] = []
        if self.emotion is not None:
            parts.append(f"{alias}.emotion = ?")
            params.append(self.emotion)
        if self.category is not None:
            parts.append(f"{alias}.category = ?")
            params.append(self.category)
        if self.ts_from is not None:
            parts.append(f"{alias}.ts >= ?")
            params.append(self.ts_from)
        if self.ts_to is not None:
            parts.append(f"{alias}.ts <= ?")
            params.append(self.ts_to)
        for key, bounds in (("valence", self.valence), ("arousal", self.arousal)):
            if bounds is not None:
                parts.append(f"{alias}.{key} BETWEEN ? AND ?")
                params.extend(bounds)
        return (" AND ".join(parts), params)

    def matches(self, memory: Memory) -> bool:
        trace = memory.emotional_trace
        ts = memory.timestamp.timestamp()
        return (
            (self.emotion is None or trace.primary == self.emotion)
            and (self.category is None or memory.category == self.category)
            and (self.ts_from is None or ts >= self.ts_from)
            and (self.ts_to is None or ts <= self.ts_to)
            and (self.valence is None or self.valence[0] <= trace.valence <= self.valence[1])
            and (self.arousal is None or self.arousal[0] <= trace.arousal <= self.arousal[1])
        )


HNSW = {"space": "cosine", "batch_size": 50, "sync_threshold": 100}
"""Cosine distance. Chroma's single-record add slows down with the number of records not yet applied to its
index; applying every 50 and persisting every 100 keeps an add at ~8 ms instead of 14 ms on average (and up to
30 ms just before a sync with the defaults of 100/1000), at 10,000 and 100,000 vectors alike (docs/benchmarks.md)."""


class ChromaIndex:
    """The vector index: one Chroma collection, embedded (PersistentClient) or remote (HttpClient)."""

    def __init__(self, directory: Path, name: str, model_id: str, url: str | None = None) -> None:
        self.directory = directory
        self.name = name
        self.model_id = model_id
        self.url = url
        self._client: Any = None
        self._collection: Any = None

    def open(self) -> None:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        settings = ChromaSettings(anonymized_telemetry=False)
        if self.url:
            parsed = urlparse(self.url)
            if parsed.scheme not in ("http", "https") or not parsed.hostname:
                raise StoreError(f"chroma_url must look like http://host:port, not {self.url!r}")
            self._client = chromadb.HttpClient(
                host=parsed.hostname,
                port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                ssl=parsed.scheme == "https",
                settings=settings,
            )
        else:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._client = chromadb.PersistentClient(path=str(self.directory), settings=settings)
        self._collection = self._client.get_or_create_collection(
            self.name,
            configuration={"hnsw": dict(HNSW)},
            metadata={"embedding_model": self.model_id},
            embedding_function=None,
        )

    def reopen(self) -> None:
        """Drop this process's cached client (its index may be stale) and open again."""
        self._collection = None
        self._client = None
        if not self.url:
            from chromadb.api.shared_system_client import SharedSystemClient

            SharedSystemClient.clear_system_cache()
        self.open()

    @property
    def collection(self) -> Any:
        if self._collection is None:
            self.open()
        return self._collection

    @property
    def max_batch(self) -> int:
        if self._client is None:
            self.open()
        return max(1, min(5000, int(self._client.get_max_batch_size())))

    def count(self) -> int:
        return int(self.collection.count())

    def add(
        self,
        ids: Sequence[str],
        embeddings: Vectors,
        metadatas: Sequence[Mapping[str, Any]],
        documents: Sequence[str],
        *,
        replace: bool = False,
    ) -> None:
        """Add vectors (``replace=True`` overwrites existing ids, for repairs and re-indexing)."""
        write = self.collection.upsert if replace else self.collection.add
        write(ids=list(ids), embeddings=embeddings, metadatas=[dict(m) for m in metadatas], documents=list(documents))

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self.collection.delete(ids=list(ids))

    def query(self, embedding: Vectors, n: int, where: Mapping[str, Any] | None) -> list[tuple[str, float, Vectors]]:
        if n <= 0:
            return []
        result = self.collection.query(
            query_embeddings=embedding.reshape(1, -1),
            n_results=n,
            where=dict(where) if where else None,
            include=["distances", "embeddings"],
        )
        ids = result["ids"][0]
        distances = result["distances"][0]
        vectors = result["embeddings"][0]
        return [(ids[i], 1.0 - float(distances[i]), np.asarray(vectors[i], dtype=np.float32)) for i in range(len(ids))]

    def embeddings(self, ids: Sequence[str]) -> dict[str, Vectors]:
        if not ids:
            return {}
        result = self.collection.get(ids=list(ids), include=["embeddings"])
        return {
            result["ids"][i]: np.asarray(result["embeddings"][i], dtype=np.float32) for i in range(len(result["ids"]))
        }

    def all_ids(self, batch: int = 5000) -> set[str]:
        found: set[str] = set()
        offset = 0
        while True:
            chunk = self.collection.get(include=[], limit=batch, offset=offset)["ids"]
            found.update(chunk)
            if len(chunk) < batch:
                return found
            offset += batch

    def drop(self) -> None:
        self._client.delete_collection(self.name)
        self._collection = None


def _memory_row(memory: Memory) -> tuple[Any, ...]:
    trace = memory.emotional_trace
    return (
        memory.id,
        to_epoch(memory.timestamp),
        memory.content,
        content_hash(memory.content),
        trace.primary,
        json.dumps(list(trace.secondary), ensure_ascii=False),
        float(trace.intensity),
        float(trace.valence),
        float(trace.arousal),
        json.dumps(dict(trace.body_state), ensure_ascii=False, default=str),
        int(memory.importance),
        memory.category,
        json.dumps(list(memory.tags), ensure_ascii=False),
        int(memory.is_private),
        int(memory.access_count),
        to_epoch(memory.last_accessed) if memory.last_accessed else None,
    )


def chroma_metadata(memory: Memory, model_id: str) -> dict[str, Any]:
    trace = memory.emotional_trace
    meta: dict[str, Any] = {
        "ts": to_epoch(memory.timestamp),
        "emotion": trace.primary,
        "intensity": float(trace.intensity),
        "valence": float(trace.valence),
        "arousal": float(trace.arousal),
        "importance": int(memory.importance),
        "category": memory.category,
        "is_private": bool(memory.is_private),
        "embedding_model": model_id,
    }
    if trace.secondary:
        meta["secondary"] = list(trace.secondary)
    if memory.tags:
        meta["tags"] = list(memory.tags)
    return meta


EmbedFn = Callable[[Sequence[str]], Vectors]


class MemoryStore:
    """Transactional memory storage shared safely by several processes on one data directory."""

    def __init__(self, directory: Path, model_id: str, *, chroma_url: str | None = None) -> None:
        self.directory = directory
        self.model_id = model_id
        """The model the store's vectors come from (after ``open``: the one recorded in the store)."""
        self.configured_model = model_id
        self.chroma_url = chroma_url
        self.lock = FileLock(directory / ".lock")
        self._db: sqlite3.Connection | None = None
        self._chroma: ChromaIndex | None = None
        self._seen_generation = -1
        self._frequencies: dict[tuple[str, str], tuple[int, int]] = {}
        self._count_cache: tuple[int, int] | None = None
        self.on_foreign_write: Callable[[], None] | None = None
        """Called when another process has written to the store since this one last looked."""

    # ------------------------------------------------------------------------------------------
    # Opening

    def open(self, embed: EmbedFn, *, allow_model_change: bool = False) -> None:
        """Open (creating if needed), check the embedding model, recover journal rows, verify indexes.

        ``embed`` re-embeds memories whose vectors are missing from Chroma (repair after a crash).
        """
        self.directory.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(
            self.directory / "memory.sqlite3", timeout=60.0, isolation_level=None, check_same_thread=False
        )
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=OFF")
        db.execute("PRAGMA busy_timeout=60000")
        self._db = db
        try:
            with self.lock.exclusive():
                db.executescript(SCHEMA)
                with self._transaction():
                    stored_model = self._meta("embedding_model")
                    if stored_model is None:
                        self._set_meta("embedding_model", self.model_id)
                        self._set_meta("collection", collection_name(self.model_id))
                        self._set_meta("schema_version", str(SCHEMA_VERSION))
                        self._set_meta("generation", "0")
                        self._set_meta("created", datetime.now(UTC).isoformat())
                        stored_model = self.model_id
                    elif stored_model != self.model_id and not allow_model_change:
                        raise ModelMismatchError(stored_model, self.model_id)
                self.model_id = stored_model
                name = self._meta("collection") or collection_name(stored_model)
                self._chroma = ChromaIndex(self.directory / "chroma", name, stored_model, self.chroma_url)
                self._chroma.open()
                self._seen_generation = self._generation()
                self._recover()
                self._verify(embed if stored_model == self.configured_model else None)
        except BaseException:
            self.close()
            raise

    @property
    def model_mismatch(self) -> bool:
        """True when the store was built with another model than the configured one (only reindex opens it)."""
        return self.model_id != self.configured_model

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError("the memory store is not open")
        return self._db

    @property
    def chroma(self) -> ChromaIndex:
        if self._chroma is None:
            raise StoreError("the memory store is not open")
        return self._chroma

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        self._chroma = None
        self.lock.close()

    # ------------------------------------------------------------------------------------------
    # Re-indexing with another model

    def reindex(self, embed: EmbedFn, *, batch: int = 128, progress: Callable[[int], None] | None = None) -> int:
        """Re-embed every memory with the configured model into that model's collection, then switch to it.

        Resumable: vectors already in the target collection are kept, so an interrupted run continues where it
        stopped. Returns how many memories were embedded in this run.
        """
        target_model = self.configured_model
        target_name = collection_name(target_model)
        if target_name == self.chroma.name and not self.model_mismatch:
            target = self.chroma
        else:
            target = ChromaIndex(self.directory / "chroma", target_name, target_model, self.chroma_url)
            target.open()
        with self.writing(), self._transaction():
            self._set_meta("reindex_target", target_model)
        embedded = 0
        while True:
            with self.reading():
                ids = [row[0] for row in self.db.execute("SELECT id FROM memories ORDER BY rid")]
            done = target.all_ids() if target is not self.chroma else set()
            todo = [i for i in ids if i not in done]
            if not todo:
                break
            for start in range(0, len(todo), batch):
                with self.writing():
                    chunk = self._load(todo[start : start + batch], with_links=False)
                    vectors = embed([m.content for m in chunk])
                    target.add(
                        [m.id for m in chunk],
                        vectors,
                        [chroma_metadata(m, target_model) for m in chunk],
                        [m.content for m in chunk],
                        replace=True,
                    )
                embedded += len(chunk)
                if progress is not None:
                    progress(len(chunk))
            if target is self.chroma:
                break
        with self.writing():
            with self._transaction():
                in_db = {row[0] for row in self.db.execute("SELECT id FROM memories")}
                target.delete(sorted(target.all_ids() - in_db))
                old = self.chroma
                self._set_meta("embedding_model", target_model)
                self._set_meta("collection", target_name)
                self.db.execute("DELETE FROM meta WHERE key = 'reindex_target'")
                self._seen_generation = self._bump_generation()
            if old is not target:
                old.drop()
            self._chroma = target
            self.model_id = target_model
        return embedded

    # ------------------------------------------------------------------------------------------
    # Locking, transactions, freshness

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def _generation(self) -> int:
        value = self._meta("generation")
        return int(value) if value is not None else 0

    def _bump_generation(self) -> int:
        self.db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
        return self._generation()

    def _refresh_if_stale(self) -> None:
        generation = self._generation()
        if generation != self._seen_generation:
            stored_model = self._meta("embedding_model") or self.model_id
            if stored_model != self.model_id:
                raise ModelMismatchError(stored_model, self.model_id)
            if self.chroma_url is None:
                self.chroma.reopen()
            self._seen_generation = generation
            if self.on_foreign_write is not None:
                self.on_foreign_write()

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self.lock.shared():
            self._refresh_if_stale()
            yield

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self.lock.exclusive():
            self._refresh_if_stale()
            yield

    # ------------------------------------------------------------------------------------------
    # Recovery and verification

    def _recover(self) -> None:
        rows = self.db.execute("SELECT id, op FROM journal").fetchall()
        for memory_id, op in rows:
            exists = self.db.execute("SELECT 1 FROM memories WHERE id = ?", (memory_id,)).fetchone() is not None
            if op == "add" and not exists:
                self.chroma.delete([memory_id])
            elif op == "delete":
                if exists:
                    with self._transaction():
                        self._delete_rows(memory_id)
                self.chroma.delete([memory_id])
            with self._transaction():
                self.db.execute("DELETE FROM journal WHERE id = ? AND op = ?", (memory_id, op))
        if rows:
            _log.warning("recovered %d interrupted write(s) in the memory store", len(rows))

    def _verify(self, embed: EmbedFn | None) -> None:
        count = self.count_unlocked()
        for table in FTS_TABLES:
            indexed = self.db.execute(f"SELECT count(*) FROM {table}_docsize").fetchone()[0]
            if indexed != count:
                _log.warning("rebuilding %s: it indexes %d memories, the store holds %d", table, indexed, count)
                with self._transaction():
                    self.db.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
        if embed is not None:
            self.reconcile(embed)

    def reconcile(self, embed: EmbedFn) -> tuple[int, int]:
        """Make Chroma hold exactly the memories in SQLite. Returns (removed, re-embedded)."""
        in_chroma = self.chroma.all_ids()
        in_db = {row[0] for row in self.db.execute("SELECT id FROM memories")}
        extra = sorted(in_chroma - in_db)
        missing = sorted(in_db - in_chroma)
        self.chroma.delete(extra)
        for start in range(0, len(missing), 256):
            chunk = self._load(missing[start : start + 256])
            vectors = embed([m.content for m in chunk])
            self.chroma.add(
                [m.id for m in chunk],
                vectors,
                [chroma_metadata(m, self.model_id) for m in chunk],
                [m.content for m in chunk],
            )
        if extra or missing:
            _log.warning("reconciled the vector index: removed %d orphan(s), re-embedded %d", len(extra), len(missing))
        return len(extra), len(missing)

    def integrity_problems(self) -> list[str]:
        """Full check for ``ego doctor``: FTS integrity, Chroma/SQLite agreement, the link invariant."""
        problems: list[str] = []
        with self.reading():
            for table in FTS_TABLES:
                try:
                    self.db.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
                except sqlite3.DatabaseError as exc:
                    problems.append(f"{table}: {exc}")
            in_chroma = self.chroma.all_ids()
            in_db = {row[0] for row in self.db.execute("SELECT id FROM memories")}
            if in_chroma != in_db:
                problems.append(
                    f"vector index disagrees with the store: {len(in_chroma - in_db)} orphan vector(s), "
                    f"{len(in_db - in_chroma)} memory(ies) without a vector"
                )
            asymmetric = self.db.execute(
                "SELECT count(*) FROM links a WHERE NOT EXISTS (SELECT 1 FROM links b WHERE b.source = a.target "
                "AND b.target = a.source AND b.link_type = a.link_type)"
            ).fetchone()[0]
            if asymmetric:
                problems.append(f"{asymmetric} link(s) without their reverse link")
            dangling = self.db.execute(
                "SELECT count(*) FROM links l WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = l.target) "
                "OR NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = l.source)"
            ).fetchone()[0]
            if dangling:
                problems.append(f"{dangling} link(s) to memories that no longer exist")
            pending = self.db.execute("SELECT count(*) FROM journal").fetchone()[0]
            if pending:
                problems.append(f"{pending} interrupted write(s) not yet recovered")
        return problems

    # ------------------------------------------------------------------------------------------
    # Reads

    def count_unlocked(self) -> int:
        """The number of memories (counted once per generation: every add and delete bumps it)."""
        generation = self._generation()
        if self._count_cache is None or self._count_cache[0] != generation:
            self._count_cache = (generation, int(self.db.execute("SELECT count(*) FROM memories").fetchone()[0]))
        return self._count_cache[1]

    def count(self) -> int:
        with self.reading():
            return self.count_unlocked()

    def _rows_to_memories(self, rows: Iterable[Sequence[Any]], with_links: bool = True) -> list[Memory]:
        rows = list(rows)
        links = self._links_for([r[0] for r in rows]) if with_links else {}
        return [self._row_to_memory(row, links.get(row[0], ())) for row in rows]

    @staticmethod
    def _row_to_memory(row: Sequence[Any], links: Sequence[MemoryLink]) -> Memory:
        (
            mid,
            ts,
            content,
            emotion,
            secondary,
            intensity,
            valence,
            arousal,
            body_state,
            importance,
            category,
            tags,
            is_private,
            access_count,
            last_accessed,
        ) = row
        return Memory(
            id=mid,
            content=content,
            timestamp=from_epoch(ts),
            emotional_trace=EmotionalTrace(
                primary=emotion,
                secondary=tuple(json.loads(secondary)),
                intensity=intensity,
                valence=valence,
                arousal=arousal,
                body_state=json.loads(body_state),
            ),
            importance=importance,
            category=category,
            tags=tuple(json.loads(tags)),
            links=tuple(links),
            is_private=bool(is_private),
            access_count=access_count,
            last_accessed=from_epoch(last_accessed) if last_accessed is not None else None,
        )

    def _links_for(self, ids: Sequence[str]) -> dict[str, list[MemoryLink]]:
        found: dict[str, list[MemoryLink]] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for source, target, link_type, confidence, note in self.db.execute(
                f"SELECT source, target, link_type, confidence, note FROM links WHERE source IN ({marks}) "
                "ORDER BY confidence DESC, target",
                chunk,
            ):
                found.setdefault(source, []).append(
                    MemoryLink(target_id=target, link_type=link_type, confidence=confidence, note=note)
                )
        return found

    def _load(self, ids: Sequence[str], with_links: bool = True) -> list[Memory]:
        if not ids:
            return []
        by_id: dict[str, Memory] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self.db.execute(f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE id IN ({marks})", chunk).fetchall()
            for memory in self._rows_to_memories(rows, with_links):
                by_id[memory.id] = memory
        return [by_id[i] for i in ids if i in by_id]

    def get(self, ids: Sequence[str], *, with_links: bool = True) -> list[Memory]:
        with self.reading():
            return self._load(ids, with_links)

    def get_one(self, memory_id: str) -> Memory | None:
        found = self.get([memory_id])
        return found[0] if found else None

    def find_by_content(self, content: str) -> Memory | None:
        with self.reading():
            row = self.db.execute(
                "SELECT id FROM memories WHERE content_hash = ? ORDER BY ts LIMIT 1", (content_hash(content),)
            ).fetchone()
            return self._load([row[0]])[0] if row else None

    def recent(self, since: float, limit: int = 500) -> list[Memory]:
        """Memories stored at or after ``since``: the newest ``limit`` of them, oldest first."""
        with self.reading():
            rows = self.db.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE ts >= ? ORDER BY ts DESC, rid DESC LIMIT ?",
                (since, limit),
            ).fetchall()
            return self._rows_to_memories(reversed(rows))

    def latest(self, limit: int, *, category: str | None = None) -> list[Memory]:
        """The newest memories, newest first."""
        with self.reading():
            where, params = ("WHERE category = ?", [category]) if category else ("", [])
            rows = self.db.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories {where} ORDER BY ts DESC, rid DESC LIMIT ?", [*params, limit]
            ).fetchall()
            return self._rows_to_memories(rows)

    def generation(self) -> int:
        with self.reading():
            return self._generation()

    def private_contents(self) -> list[tuple[str, str, float]]:
        """(id, content, timestamp) of every private memory."""
        with self.reading():
            rows = self.db.execute("SELECT id, content, ts FROM memories WHERE is_private = 1")
            return [(row[0], row[1], float(row[2])) for row in rows]

    def newest_ts(self) -> float | None:
        with self.reading():
            value = self.db.execute("SELECT max(ts) FROM memories").fetchone()[0]
            return None if value is None else float(value)

    def scoring_rows(self, ids: Sequence[str]) -> dict[str, tuple[float, str, float, int, int, float | None]]:
        """(ts, emotion, intensity, importance, access_count, last_accessed) by id, for ranking."""
        found: dict[str, tuple[float, str, float, int, int, float | None]] = {}
        with self.reading():
            for start in range(0, len(ids), 500):
                chunk = list(ids[start : start + 500])
                marks = ",".join("?" * len(chunk))
                for row in self.db.execute(
                    "SELECT id, ts, emotion, intensity, importance, access_count, last_accessed FROM memories "
                    f"WHERE id IN ({marks})",
                    chunk,
                ):
                    found[row[0]] = (row[1], row[2], row[3], row[4], row[5], row[6])
        return found

    def link_rows(self, ids: Sequence[str]) -> dict[str, list[tuple[str, str, float]]]:
        """Outgoing links (target, link type, confidence) by source id."""
        with self.reading():
            return {
                k: [(link.target_id, link.link_type, link.confidence) for link in v]
                for k, v in self._links_for(list(ids)).items()
            }

    def previous(self, before: float, window: float, limit: int) -> list[str]:
        """Ids of the memories stored last at or before ``before`` and after ``before - window``, newest first."""
        with self.reading():
            rows = self.db.execute(
                "SELECT id FROM memories WHERE ts <= ? AND ts >= ? ORDER BY ts DESC, rid DESC LIMIT ?",
                (before, before - window, limit),
            ).fetchall()
            return [row[0] for row in rows]

    def dense(self, embedding: Vectors, n: int, filters: Filters | None = None) -> list[tuple[str, float, Vectors]]:
        with self.reading():
            count = self.count_unlocked()
            if count == 0:
                return []
            where = filters.chroma_where() if filters else None
            return self.chroma.query(embedding, min(n, count), where)

    def lexical(
        self, match: str, n: int, filters: Filters | None = None, table: str = "fts_words"
    ) -> list[tuple[str, float]]:
        """FTS5 BM25 ranking for an FTS5 query expression (see :mod:`ego_memory.text`); best first."""
        if table not in FTS_TABLES:
            raise ValueError(f"unknown FTS table {table}")
        if not match:
            return []
        where, params = filters.sql("m") if filters else ("", [])
        sql = (
            f"SELECT m.id, bm25({table}) AS score FROM {table} JOIN memories m ON m.rid = {table}.rowid "
            f"WHERE {table} MATCH ? {'AND ' + where if where else ''} ORDER BY score LIMIT ?"
        )
        with self.reading():
            try:
                rows = self.db.execute(sql, [match, *params, n]).fetchall()
            except sqlite3.OperationalError as exc:
                _log.warning("FTS query failed (%s); lexical results skipped", exc)
                return []
        return [(row[0], -float(row[1])) for row in rows]

    def embeddings(self, ids: Sequence[str]) -> dict[str, Vectors]:
        with self.reading():
            return self.chroma.embeddings(ids)

    def document_frequencies(self, table: str, terms: Sequence[str]) -> dict[str, int]:
        """How many memories each term matches in an FTS index (cached until the store grows by a tenth)."""
        if table not in FTS_TABLES:
            raise ValueError(f"unknown FTS table {table}")
        found: dict[str, int] = {}
        with self.reading():
            total = self.count_unlocked()
            for term in terms:
                cached = self._frequencies.get((table, term))
                if cached is not None and abs(total - cached[1]) <= total // 10:
                    found[term] = cached[0]
                    continue
                try:
                    row = self.db.execute(
                        f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", ('"' + term.replace('"', '""') + '"',)
                    ).fetchone()
                except sqlite3.OperationalError:
                    continue
                found[term] = int(row[0])
                if len(self._frequencies) > 50_000:
                    self._frequencies.clear()
                self._frequencies[(table, term)] = (found[term], total)
        return found

    def all_ids(self) -> list[str]:
        with self.reading():
            return [row[0] for row in self.db.execute("SELECT id FROM memories ORDER BY ts, rid")]

    def private_ids(self) -> set[str]:
        with self.reading():
            return {row[0] for row in self.db.execute("SELECT id FROM memories WHERE is_private = 1")}

    def iter_memories(self, batch: int = 500) -> Iterator[Memory]:
        """Every memory (with its links), oldest first, read in batches."""
        ids = self.all_ids()
        for start in range(0, len(ids), batch):
            yield from self.get(ids[start : start + batch])

    # ------------------------------------------------------------------------------------------
    # Writes

    def add(self, memory: Memory, embedding: Vectors, links: Sequence[MemoryLink] = ()) -> None:
        """Store ``memory`` with bidirectional ``links`` (to existing memories). Atomic across both stores."""
        self.add_many([attrs.evolve(memory, links=tuple(links))], embedding.reshape(1, -1))

    def add_many(self, memories: Sequence[Memory], vectors: Vectors) -> None:
        """Store memories (each with its ``links``) in one journaled batch: all of them, or none."""
        if not memories:
            return
        if len(vectors) != len(memories):
            raise ValueError("one vector per memory")
        ids = [m.id for m in memories]
        with self.writing():
            now = time.time()
            with self._transaction() as db:
                db.executemany(
                    "INSERT OR REPLACE INTO journal(id, op, created) VALUES (?, 'add', ?)", [(i, now) for i in ids]
                )
            try:
                batch = self.chroma.max_batch
                for start in range(0, len(memories), batch):
                    chunk = memories[start : start + batch]
                    self.chroma.add(
                        [m.id for m in chunk],
                        vectors[start : start + batch],
                        [chroma_metadata(m, self.model_id) for m in chunk],
                        [m.content for m in chunk],
                    )
                with self._transaction() as db:
                    db.executemany(
                        "INSERT INTO memories(id, ts, content, content_hash, emotion, secondary, intensity, valence, "
                        "arousal, body_state, importance, category, tags, is_private, access_count, last_accessed) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [_memory_row(m) for m in memories],
                    )
                    for memory in memories:
                        for link in memory.links:
                            self._insert_link_pair(memory.id, link, now)
                    db.executemany("DELETE FROM journal WHERE id = ? AND op = 'add'", [(i,) for i in ids])
                    self._seen_generation = self._bump_generation()
            except BaseException:
                self._rollback_add(ids)
                raise

    def _rollback_add(self, ids: Sequence[str]) -> None:
        try:
            self.chroma.delete(ids)
            with self._transaction() as db:
                db.executemany("DELETE FROM journal WHERE id = ? AND op = 'add'", [(i,) for i in ids])
        except Exception:
            _log.error("could not roll back a failed store of %d memories; repaired at next start", len(ids))

    def _insert_link_pair(self, source: str, link: MemoryLink, now: float) -> bool:
        """Both rows of a link, only if both memories exist at commit time (a concurrent forget may have won)."""
        created = False
        for a, b in ((source, link.target_id), (link.target_id, source)):
            cursor = self.db.execute(
                "INSERT INTO links(source, target, link_type, confidence, note, created) "
                "SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?) "
                "AND EXISTS (SELECT 1 FROM memories WHERE id = ?) "
                "ON CONFLICT(source, target, link_type) DO NOTHING",
                (a, b, link.link_type, float(link.confidence), link.note, now, a, b),
            )
            created = created or cursor.rowcount > 0
        return created

    def link(self, source: str, target: str, link_type: LinkType, confidence: float, note: str = "") -> bool:
        """Create a bidirectional link; False when it already existed (both directions)."""
        with self.writing(), self._transaction() as db:
            exists = db.execute("SELECT count(*) FROM memories WHERE id IN (?, ?)", (source, target)).fetchone()[0]
            if exists != (1 if source == target else 2):
                raise StoreError("both memories must exist")
            return self._insert_link_pair(source, MemoryLink(target, link_type, confidence, note), time.time())

    def touch(self, ids: Sequence[str], when: float) -> None:
        """Access statistics for a recall, in one statement."""
        if not ids:
            return
        marks = ",".join("?" * len(ids))
        with self.lock.shared(), self._transaction() as db:
            db.execute(
                f"UPDATE memories SET access_count = access_count + 1, last_accessed = ? WHERE id IN ({marks})",
                [round(when, 3), *ids],
            )

    # ------------------------------------------------------------------------------------------
    # Episodes

    def add_episode(self, episode: Episode) -> None:
        with self.writing(), self._transaction() as db:
            db.execute(
                "INSERT INTO episodes(id, summary, memory_ids, start_ts, end_ts, importance, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    episode.id,
                    episode.summary,
                    json.dumps(list(episode.memory_ids)),
                    to_epoch(episode.start),
                    to_epoch(episode.end),
                    episode.importance,
                    to_epoch(episode.created),
                ),
            )

    @staticmethod
    def _episode(row: Sequence[Any]) -> Episode:
        return Episode(
            id=row[0],
            summary=row[1],
            memory_ids=tuple(json.loads(row[2])),
            start=from_epoch(row[3]),
            end=from_epoch(row[4]),
            importance=row[5],
            created=from_epoch(row[6]),
        )

    def get_episode(self, episode_id: str) -> Episode | None:
        with self.reading():
            row = self.db.execute(
                "SELECT id, summary, memory_ids, start_ts, end_ts, importance, created FROM episodes WHERE id = ?",
                (episode_id,),
            ).fetchone()
            return None if row is None else self._episode(row)

    def episodes(self) -> list[Episode]:
        with self.reading():
            rows = self.db.execute(
                "SELECT id, summary, memory_ids, start_ts, end_ts, importance, created FROM episodes "
                "ORDER BY start_ts, id"
            ).fetchall()
            return [self._episode(row) for row in rows]

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        with self.reading():
            for start in range(0, len(ids), 500):
                chunk = list(ids[start : start + 500])
                marks = ",".join("?" * len(chunk))
                found.update(row[0] for row in self.db.execute(f"SELECT id FROM memories WHERE id IN ({marks})", chunk))
        return found

    # ------------------------------------------------------------------------------------------
    # Consolidation

    def links_among(self, ids: Sequence[str]) -> list[tuple[str, str, str, float]]:
        """Links (source, target, type, confidence) whose source is among ``ids`` (both directions appear)."""
        rows: list[tuple[str, str, str, float]] = []
        with self.reading():
            for start in range(0, len(ids), 500):
                chunk = list(ids[start : start + 500])
                marks = ",".join("?" * len(chunk))
                rows.extend(
                    self.db.execute(
                        f"SELECT source, target, link_type, confidence FROM links WHERE source IN ({marks})", chunk
                    ).fetchall()
                )
        return rows

    def apply_consolidation(
        self,
        create: Sequence[tuple[str, MemoryLink]],
        strengthen: Sequence[tuple[str, str, str, float]],
        prune: Sequence[tuple[str, str, str]],
    ) -> None:
        """One transaction: new link pairs, new confidences (both directions), pruned pairs (both directions)."""
        now = time.time()
        with self.writing(), self._transaction() as db:
            for source, link in create:
                self._insert_link_pair(source, link, now)
            for source, target, link_type, confidence in strengthen:
                db.executemany(
                    "UPDATE links SET confidence = ? WHERE source = ? AND target = ? AND link_type = ?",
                    [(confidence, source, target, link_type), (confidence, target, source, link_type)],
                )
            for source, target, link_type in prune:
                db.executemany(
                    "DELETE FROM links WHERE source = ? AND target = ? AND link_type = ?",
                    [(source, target, link_type), (target, source, link_type)],
                )

    def _delete_rows(self, memory_id: str) -> None:
        self.db.execute("DELETE FROM links WHERE source = ? OR target = ?", (memory_id, memory_id))
        self.db.execute("DELETE FROM memories WHERE id = ?", (memory_id,))

    def delete(self, memory_id: str) -> Memory | None:
        """Delete one memory and every link to or from it. Returns the deleted memory, or None."""
        with self.writing():
            found = self._load([memory_id])
            if not found:
                return None
            with self._transaction() as db:
                db.execute(
                    "INSERT OR REPLACE INTO journal(id, op, created) VALUES (?, 'delete', ?)", (memory_id, time.time())
                )
                # The invariant A->B <=> B->A lets the reverse links be found from the memory's own links;
                # the statement also removes any row naming it, so nothing dangling can survive.
                self._delete_rows(memory_id)
                self._seen_generation = self._bump_generation()
            self.chroma.delete([memory_id])
            with self._transaction() as db:
                db.execute("DELETE FROM journal WHERE id = ? AND op = 'delete'", (memory_id,))
            return found[0]
