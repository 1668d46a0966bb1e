"""The memory store: SQLite (WAL) as the transactional record and source of truth, Chroma as the vector
index, both under one inter-process lock.

Layout under ``<data dir>/memory/``:

- ``memory.sqlite3``: the memories (the commit point of every write), bidirectional links, access
  statistics, episodes, FTS5 indexes, a write journal and the store's metadata (:mod:`ego_memory.store.schema`).
- ``chroma/``: the vector index (:mod:`ego_memory.store.vector_index`), rebuilt from SQLite whenever it cannot
  serve (:mod:`ego_memory.store.maintenance`).
- ``.lock``: the inter-process writer lock.

This module keeps the invariants:

- Crash safety: a remember writes a journal row, then the vector, then commits the SQLite row (deleting the
  journal row); the commit is the point after which the memory exists. A forget commits the SQLite deletion
  (with a journal row), then deletes the vector, then clears the journal. Opening the store rolls every
  journal row to a consistent state and reconciles the vector index with SQLite.
- A vector index that fails leaves SQLite consistent (a failed remember is rolled back, a forget is kept) and
  is marked for a rebuild from SQLite at the next open; an index that cannot be opened is rebuilt then.
- Several processes: every write takes the exclusive file lock and bumps ``generation``; a process that sees a
  generation it did not write reopens its Chroma client, whose in-memory index would otherwise be stale.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs

from ego_core import Database, DatabaseVersionError, LinkType, Memory, MemoryLink, Vectors
from ego_memory.errors import REINDEX_COMMAND, ModelMismatchError, StoreError, VectorIndexError
from ego_memory.index.dense import DenseIndex
from ego_memory.index.english import EnglishIndex
from ego_memory.index.vector_cache import VectorCache
from ego_memory.store import maintenance
from ego_memory.store.filters import Filters
from ego_memory.store.locking import FileLock
from ego_memory.store.maintenance import INDEX_CHECK, INDEX_DAMAGED, EmbedFn, Progress, no_progress
from ego_memory.store.rows import (
    EPISODE_COLUMNS,
    INSERT_MEMORY,
    MEMORY_COLUMNS,
    Episode,
    content_hash,
    episode_row,
    memory_row,
    row_to_episode,
)
from ego_memory.store.schema import FILE_NAME, FTS_TABLES, open_file
from ego_memory.store.tables import Tables, chunks
from ego_memory.store.vector_index import ChromaIndex, chroma_metadata, collection_name

_log = logging.getLogger("ego.plugin.memory.store")

INTERRUPTED_CHECK = "a previous start stopped while checking the vector index (Chroma may have crashed it)"


EXACT_SEARCH_LIMIT = 50_000
"""The default largest store whose unfiltered dense search runs on a matrix in this process (2 KB a memory)."""

NARROW_WINDOW = 2000
"""``strongest`` sorts a window of fewer memories than this itself; a wider one is read in intensity order."""


class MemoryStore:
    """Transactional memory storage shared safely by several processes on one data directory."""

    def __init__(
        self,
        directory: Path,
        model_id: str,
        *,
        chroma_url: str | None = None,
        exact_search_limit: int = EXACT_SEARCH_LIMIT,
        database: Callable[[], Database] | None = None,
    ) -> None:
        self.directory = directory
        self._database = database or (lambda: open_file(directory))
        """Opens ``<directory>/memory.sqlite3`` and migrates it (the plugin passes ``schema.open_in``)."""
        self.model_id = model_id
        """The model the store's vectors come from (after ``open``: the one recorded in the store)."""
        self.configured_model = model_id
        self.chroma_url = chroma_url
        self.lock = FileLock(directory / ".lock")
        self._tables: Tables | None = None
        self._chroma: ChromaIndex | None = None
        self._seen_generation = -1
        self._frequencies: dict[tuple[str, str], tuple[int, int]] = {}
        self._count_cache: tuple[int, int] | None = None
        self._english_index = EnglishIndex()
        self._vector_cache = VectorCache()
        self._dense_index = DenseIndex()
        self.exact_search_limit = exact_search_limit
        """Stores of at most this many memories are searched exactly in this process (dense_index.py)."""
        self.rebuilt: int | None = None
        """How many memories ``open`` re-embedded into a rebuilt vector index (None: no rebuild was needed)."""
        self.on_private_contents: Callable[[list[tuple[str, str, float]]], None] | None = None
        """Given (id, content, timestamp) of every private memory when the store opens (before anything else can log)
        and whenever another process has written to it."""
        self.on_foreign_write: Callable[[], None] | None = None
        """Called when another process has written to the store since this one last looked."""

    # ------------------------------------------------------------------------------------------
    # Opening and closing

    def open(
        self,
        embed: EmbedFn,
        *,
        allow_model_change: bool = False,
        progress: Progress = no_progress,
        rebuild_broken_index: bool | None = None,
    ) -> None:
        """Open (creating if needed), check the embedding model, recover journal rows, verify the indexes.

        ``embed`` re-embeds memories whose vectors are missing (repair after a crash), and every memory when
        the vector index cannot serve: it is then rebuilt from SQLite (``progress`` shows it). A broken index on
        a Chroma server is only rebuilt with ``rebuild_broken_index=True`` (otherwise: VectorIndexError).
        """
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            with self.lock.exclusive():  # the migrations run under the writers' lock too
                self._tables = Tables(self._open_database())
                tables = self.tables
                with tables.transaction():
                    stored_model = tables.meta("embedding_model")
                    if stored_model is None:
                        tables.set_meta("embedding_model", self.model_id)
                        tables.set_meta("collection", collection_name(self.model_id))
                        tables.set_meta("generation", "0")
                        tables.set_meta("created", datetime.now(UTC).isoformat())
                        stored_model = self.model_id
                    elif stored_model != self.model_id and not allow_model_change:
                        raise ModelMismatchError(stored_model, self.model_id)
                self.model_id = stored_model
                maintenance.migrate_lexicon(tables, progress=progress)
                name = tables.meta("collection") or collection_name(stored_model)
                self._chroma = ChromaIndex(self.directory / "chroma", name, stored_model, self.chroma_url)
                self._private_contents_changed()
                usable = embed if stored_model == self.configured_model else None
                allowed = self._chroma.embedded if rebuild_broken_index is None else rebuild_broken_index
                self._open_index(usable, progress, rebuild=allowed)
                maintenance.rebuild_fts(tables)
                self._seen_generation = tables.generation()
        except BaseException:
            self.close()
            raise

    def _open_database(self) -> Database:
        try:
            return self._database()
        except DatabaseVersionError as exc:
            raise StoreError(
                f"{self.directory / FILE_NAME} was written by a newer version of ego-memory ({exc})"
            ) from None

    def _open_index(self, embed: EmbedFn | None, progress: Progress, *, rebuild: bool) -> None:
        """Open and check the vector index, recover the journal, reconcile; rebuild it when it cannot serve."""
        tables, index = self.tables, self.chroma
        reason = tables.meta(INDEX_DAMAGED)
        if reason is None and tables.meta(INDEX_CHECK) is not None:
            reason = INTERRUPTED_CHECK
        if reason is None:
            try:
                with maintenance.checking_index(tables):
                    index.open()
                    index.probe()
                    maintenance.recover_journal(tables, index)
                    if embed is not None:
                        maintenance.reconcile(tables, index, embed)
                return
            except VectorIndexError as exc:
                reason = str(exc)
        if embed is None:  # another model is configured: only a reindex opens the store so, and it rebuilds
            self._mark_damaged(reason)
            maintenance.recover_journal(tables, None)
            return
        if not rebuild:
            raise VectorIndexError(
                f"{reason}. The memories are safe in the memory database: `{REINDEX_COMMAND} --force` "
                "rebuilds the index from it"
            )
        self.rebuilt = maintenance.rebuild_index(tables, index, embed, reason=reason, progress=progress)

    @property
    def model_mismatch(self) -> bool:
        """True when the store was built with another model than the configured one (only reindex opens it)."""
        return self.model_id != self.configured_model

    @property
    def index_damaged(self) -> bool:
        """True when the vector index failed and waits for a rebuild (at the next open, or by reindex)."""
        return self.tables.meta(INDEX_DAMAGED) is not None

    @property
    def tables(self) -> Tables:
        if self._tables is None:
            raise StoreError("the memory store is not open")
        return self._tables

    @property
    def db(self) -> sqlite3.Connection:
        return self.tables.db

    @property
    def chroma(self) -> ChromaIndex:
        if self._chroma is None:
            raise StoreError("the memory store is not open")
        return self._chroma

    def close(self) -> None:
        if self._chroma is not None:
            self._chroma.close()
            self._chroma = None
        if self._tables is not None:
            self._tables.database.close()
            self._tables = None
        self.lock.close()

    # ------------------------------------------------------------------------------------------
    # Locking, transactions, freshness

    def _transaction(self) -> Any:
        return self.tables.transaction()

    def _delete_rows(self, memory_id: str) -> None:
        self.tables.delete_rows(memory_id)
        self._vector_cache.discard(memory_id)

    def _private_contents_unlocked(self) -> list[tuple[str, str, float]]:
        rows = self.db.execute("SELECT id, content, ts FROM memories WHERE is_private = 1")
        return [(row[0], row[1], float(row[2])) for row in rows]

    def _private_contents_changed(self) -> None:
        if self.on_private_contents is not None:
            self.on_private_contents(self._private_contents_unlocked())

    def _refresh_if_stale(self) -> None:
        generation = self.tables.generation()
        if generation != self._seen_generation:
            stored_model = self.tables.meta("embedding_model") or self.model_id
            if stored_model != self.model_id:
                raise ModelMismatchError(stored_model, self.model_id)
            if self.chroma.embedded:
                with self._index_failures():
                    self.chroma.reopen()
            self._seen_generation = generation
            self._vector_cache.clear()  # another process may have forgotten some
            self._private_contents_changed()
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

    def _mark_damaged(self, reason: str) -> None:
        with self.tables.transaction():
            if self.tables.meta(INDEX_DAMAGED) is None:
                self.tables.set_meta(INDEX_DAMAGED, reason)

    @contextmanager
    def _index_failures(self) -> Iterator[None]:
        """A failing embedded index is marked for a rebuild at the next open (SQLite stays the truth)."""
        try:
            yield
        except VectorIndexError as exc:
            if self.chroma.embedded:
                self._mark_damaged(str(exc))
                raise VectorIndexError(
                    f"{exc}. Nothing was lost: the memories are kept in the memory database, and ego rebuilds "
                    "the index from it at its next start"
                ) from exc
            raise

    # ------------------------------------------------------------------------------------------
    # Maintenance

    def reconcile(self, embed: EmbedFn) -> tuple[int, int]:
        """Make the vector index hold exactly the memories in SQLite. Returns (removed, re-embedded)."""
        with self.writing(), self._index_failures():
            return maintenance.reconcile(self.tables, self.chroma, embed)

    def integrity_problems(self) -> list[str]:
        """Full check for ``ego doctor``: FTS integrity, vector index/SQLite agreement, the link invariant."""
        with self.reading():
            try:
                return maintenance.integrity_problems(self.tables, self.chroma)
            except VectorIndexError as exc:
                return [str(exc)]

    def rebuild_index(self, embed: EmbedFn, *, reason: str, progress: Progress = no_progress) -> int:
        """Delete the vector index and embed every memory into a new one, for the configured model."""
        target_model = self.configured_model
        # no freshness check: reopening a broken index would fail before it could be rebuilt
        with self.lock.exclusive():
            old = self.chroma
            if target_model != self.model_id:
                self._chroma = ChromaIndex(
                    self.directory / "chroma", collection_name(target_model), target_model, self.chroma_url
                )
                old.close(evict=True)
            embedded = maintenance.rebuild_index(self.tables, self.chroma, embed, reason=reason, progress=progress)
            with self.tables.transaction():
                self.tables.set_meta("embedding_model", target_model)
                self.tables.set_meta("collection", self.chroma.name)
                self.tables.delete_meta("reindex_target")
                self._seen_generation = self.tables.bump_generation()
            self.model_id = target_model
            if old is not self.chroma and not old.embedded:
                try:  # the old model's collection on a server (an embedded one went with the directory)
                    old.drop()
                except VectorIndexError as exc:
                    _log.warning("could not delete the old collection %s: %s", old.name, exc)
        return embedded

    def reindex(self, embed: EmbedFn, *, batch: int = 128, progress: Callable[[int], None] | None = None) -> int:
        """Re-embed every memory with the configured model into that model's collection, then switch to it.

        Resumable: vectors already in the target collection are kept, so an interrupted run continues where it
        stopped. A vector index that cannot serve is rebuilt from scratch instead. Returns how many memories
        were embedded in this run.
        """
        advance = progress or (lambda _n: None)
        if self.index_damaged:
            reason = self.tables.meta(INDEX_DAMAGED) or "it failed"
            return self.rebuild_index(embed, reason=reason, progress=lambda _total, _what: nullcontext(advance))
        target_model = self.configured_model
        target_name = collection_name(target_model)
        same = target_name == self.chroma.name and not self.model_mismatch
        target = (
            self.chroma if same else ChromaIndex(self.directory / "chroma", target_name, target_model, self.chroma_url)
        )
        with self._index_failures():
            if not same:
                target.open()
            with self.writing(), self._transaction():
                self.tables.set_meta("reindex_target", target_model)
            embedded = maintenance.embed_all(self, target, embed, resume=not same, batch=batch, advance=advance)
            with self.writing():
                with self._transaction():
                    target.delete(sorted(target.all_ids() - self.tables.ids()))
                    old = self.chroma
                    self.tables.set_meta("embedding_model", target_model)
                    self.tables.set_meta("collection", target_name)
                    self.tables.delete_meta("reindex_target")
                    self._seen_generation = self.tables.bump_generation()
                if old is not target:
                    old.drop()
                self._chroma = target
                self.model_id = target_model
        return embedded

    # ------------------------------------------------------------------------------------------
    # Reads

    def count_unlocked(self) -> int:
        """The number of memories (counted once per generation: every add and delete bumps it)."""
        generation = self.tables.generation()
        if self._count_cache is None or self._count_cache[0] != generation:
            self._count_cache = (generation, self.tables.count())
        return self._count_cache[1]

    def count(self) -> int:
        with self.reading():
            return self.count_unlocked()

    def _load(self, ids: Sequence[str], with_links: bool = True) -> list[Memory]:
        return self.tables.load(ids, with_links)

    def _rows_to_memories(self, rows: Iterable[Sequence[Any]], with_links: bool = True) -> list[Memory]:
        return self.tables.memories(rows, with_links)

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
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE ts >= ? ORDER BY ts DESC, rid DESC LIMIT ?",
                (since, limit),
            ).fetchall()
            return self._rows_to_memories(reversed(rows))

    def strongest(self, since: float, until: float | None, limit: int, min_intensity: float) -> list[Memory]:
        """Memories with ``since <= ts`` (``< until``) and ``intensity >= min_intensity``: the ``limit`` most
        intense, the newest first among equals. A window of fewer than :data:`NARROW_WINDOW` memories is read
        through the time index and sorted; a wider one through the intensity index, from its top, stopping at
        ``limit``. Only the memories returned are loaded."""
        if limit <= 0:
            return []
        window, params = ("ts >= ? AND ts < ?", [since, until]) if until is not None else ("ts >= ?", [since])
        with self.reading():
            (size,) = self.db.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM memories WHERE {window} LIMIT ?)", [*params, NARROW_WINDOW]
            ).fetchone()
            index = "memories_ts" if size < NARROW_WINDOW else "memories_intensity"
            rows = self.db.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories INDEXED BY {index} WHERE intensity >= ? AND {window} "
                "ORDER BY intensity DESC, ts DESC, rid DESC LIMIT ?",
                [min_intensity, *params, limit],
            ).fetchall()
            return self._rows_to_memories(rows)

    def latest(self, limit: int, *, category: str | None = None) -> list[Memory]:
        """The newest memories, newest first."""
        with self.reading():
            where, params = ("WHERE category = ?", [category]) if category else ("", [])
            rows = self.db.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories {where} ORDER BY ts DESC, rid DESC LIMIT ?", [*params, limit]
            ).fetchall()
            return self._rows_to_memories(rows)

    def generation(self) -> int:
        with self.reading():
            return self.tables.generation()

    def private_contents(self) -> list[tuple[str, str, float]]:
        """(id, content, timestamp) of every private memory."""
        with self.reading():
            return self._private_contents_unlocked()

    def newest_ts(self) -> float | None:
        with self.reading():
            value = self.db.execute("SELECT max(ts) FROM memories").fetchone()[0]
            return None if value is None else float(value)

    def scoring_rows(self, ids: Sequence[str]) -> dict[str, tuple[float, str, float, int, int, float | None]]:
        """(ts, emotion, intensity, importance, access_count, last_accessed) by id, for ranking."""
        found: dict[str, tuple[float, str, float, int, int, float | None]] = {}
        with self.reading():
            for chunk in chunks(ids):
                marks = ",".join("?" * len(chunk))
                for row in self.db.execute(
                    "SELECT id, ts, emotion, intensity, importance, access_count, last_accessed FROM memories "
                    f"WHERE id IN ({marks})",
                    chunk,
                ):
                    found[row[0]] = (row[1], row[2], row[3], row[4], row[5], row[6])
        return found

    def contents(self, ids: Sequence[str]) -> dict[str, str]:
        """The text of each memory by id (ids that do not exist are absent)."""
        found: dict[str, str] = {}
        with self.reading():
            for chunk in chunks(ids):
                marks = ",".join("?" * len(chunk))
                found.update(self.db.execute(f"SELECT id, content FROM memories WHERE id IN ({marks})", chunk))
        return found

    def link_strengths(self, ids: Sequence[str]) -> dict[str, float]:
        """The summed confidence of each memory's outgoing links, by id (none: absent)."""
        with self.reading():
            return self.tables.link_strengths(list(ids))

    def anticipations(self, ids: Sequence[str]) -> dict[str, float]:
        """The anticipated moment (epoch seconds) of each of ``ids`` that looks forward to one."""
        found: dict[str, float] = {}
        with self.reading():
            for chunk in chunks(list(ids)):
                marks = ",".join("?" * len(chunk))
                found.update(
                    self.db.execute(
                        f"SELECT id, anticipated FROM memories WHERE id IN ({marks}) AND anticipated IS NOT NULL",
                        chunk,
                    )
                )
        return found

    def unsurfaced_anticipations(self, until: float) -> list[Memory]:
        """Memories whose anticipated moment is at or before ``until`` and whose arrival was not acknowledged yet,
        earliest moment first (through the partial index on ``anticipated``)."""
        with self.reading():
            rows = self.db.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE anticipated IS NOT NULL AND anticipated <= ? "
                "AND anticipation_surfaced = 0 ORDER BY anticipated, rid",
                (until,),
            ).fetchall()
            return self._rows_to_memories(rows, with_links=False)

    def mark_surfaced(self, memory_id: str) -> bool:
        """Record that an anticipation's arrival was acknowledged; False when another call did it first."""
        with self.lock.shared(), self._transaction() as db:
            cursor = db.execute(
                "UPDATE memories SET anticipation_surfaced = 1 WHERE id = ? AND anticipation_surfaced = 0",
                (memory_id,),
            )
            return int(cursor.rowcount) > 0

    def link_rows(self, ids: Sequence[str]) -> dict[str, list[tuple[str, str, float]]]:
        """Outgoing links (target, link type, confidence) by source id."""
        with self.reading():
            return self.tables.link_edges(list(ids))

    def previous(self, before: float, window: float, limit: int) -> list[str]:
        """Ids of the memories stored last at or before ``before`` and after ``before - window``, newest first."""
        with self.reading():
            rows = self.db.execute(
                "SELECT id FROM memories WHERE ts <= ? AND ts >= ? ORDER BY ts DESC, rid DESC LIMIT ?",
                (before, before - window, limit),
            ).fetchall()
            return [row[0] for row in rows]

    def dense(self, embedding: Vectors, n: int, filters: Filters | None = None) -> list[tuple[str, float, Vectors]]:
        """The ``n`` memories nearest to ``embedding`` (with ``filters``): (id, cosine similarity, vector), best
        first. Unfiltered, in a store of at most ``exact_search_limit`` memories: exact, in this process."""
        with self.reading():
            count = self.count_unlocked()
            if count == 0:
                return []
            if (filters is None or not filters.active) and count <= self.exact_search_limit:
                with self._index_failures():
                    self._dense_index.sync(
                        self.chroma.name, self._seen_generation, self.tables.ids, self.chroma.embeddings
                    )
                return self._dense_index.nearest(embedding, n)
            if count > self.exact_search_limit and len(self._dense_index):
                self._dense_index.clear()  # grown past the limit: its memory goes back
            where = filters.chroma_where() if filters else None
            with self._index_failures():
                found = self.chroma.query(embedding, min(n, count), where)
        self._vector_cache.put_many(self.chroma.name, ((memory_id, vector) for memory_id, _, vector in found))
        return found

    def lexical(
        self, match: str, n: int, filters: Filters | None = None, table: str = "fts_words"
    ) -> list[tuple[str, float]]:
        """FTS5 BM25 ranking for an FTS5 query expression (see :mod:`ego_memory.text.terms`); best first."""
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

    def english_vectors(self, ids: Sequence[str]) -> dict[str, bytes]:
        """The English-channel blobs of the memories that have one (empty bytes: not in Latin script)."""
        found: dict[str, bytes] = {}
        with self.reading():
            for chunk in chunks(ids):
                marks = ",".join("?" * len(chunk))
                found.update(self.db.execute(f"SELECT id, vector FROM english_vectors WHERE id IN ({marks})", chunk))
        return found

    def english_nearest(self, vector: Vectors, n: int) -> list[tuple[str, float]]:
        """The ``n`` memories nearest to ``vector`` in the English channel (exact), best first."""
        with self.reading():
            return self._english_index.nearest(self.db, vector, n)

    def without_english(self, limit: int) -> list[tuple[str, str]]:
        """(id, content) of up to ``limit`` memories the English channel has not read yet, oldest first."""
        with self.reading():
            return self.db.execute(
                "SELECT m.id, m.content FROM memories m LEFT JOIN english_vectors e ON e.id = m.id "
                "WHERE e.id IS NULL ORDER BY m.rid LIMIT ?",
                (limit,),
            ).fetchall()

    def count_without_english(self) -> int:
        with self.reading():
            return int(
                self.db.execute(
                    "SELECT count(*) FROM memories m LEFT JOIN english_vectors e ON e.id = m.id WHERE e.id IS NULL"
                ).fetchone()[0]
            )

    def put_english(self, blobs: Sequence[tuple[str, bytes]]) -> None:
        """Store English-channel blobs of existing memories (one that was forgotten meanwhile is skipped)."""
        with self.writing(), self._transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO english_vectors(id, vector) "
                "SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?1)",
                blobs,
            )

    def embeddings(self, ids: Sequence[str]) -> dict[str, Vectors]:
        """The vectors of the memories that exist (recently read ones from this process's cache)."""
        with self.reading():
            found = self._dense_index.vectors(self.chroma.name, self._seen_generation, ids)
            if len(found) < len(ids):
                found.update(self._vector_cache.get_many(self.chroma.name, [m for m in ids if m not in found]))
            missing = [memory_id for memory_id in ids if memory_id not in found]
            if missing:
                with self._index_failures():
                    fetched = self.chroma.embeddings(missing)
                self._vector_cache.put_many(self.chroma.name, fetched.items())
                found.update(fetched)
        return found

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

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        with self.reading():
            for chunk in chunks(ids):
                marks = ",".join("?" * len(chunk))
                found.update(row[0] for row in self.db.execute(f"SELECT id FROM memories WHERE id IN ({marks})", chunk))
        return found

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
            before = self._seen_generation
            now = time.time()
            with self._transaction() as db:
                db.executemany(
                    "INSERT OR REPLACE INTO journal(id, op, created) VALUES (?, 'add', ?)", [(i, now) for i in ids]
                )
            try:
                with self._index_failures():
                    batch = self.chroma.max_batch
                    for start in range(0, len(memories), batch):
                        chunk = memories[start : start + batch]
                        self.chroma.add(
                            [m.id for m in chunk],
                            vectors[start : start + batch],
                            [chroma_metadata(m, self.model_id) for m in chunk],
                        )
                with self._transaction() as db:
                    db.executemany(INSERT_MEMORY, [memory_row(m) for m in memories])
                    for memory in memories:
                        for link in memory.links:
                            self.tables.insert_link_pair(memory.id, link, now)
                    db.executemany("DELETE FROM journal WHERE id = ? AND op = 'add'", [(i,) for i in ids])
                    self._seen_generation = self.tables.bump_generation()
            except BaseException:
                self._rollback_add(ids)
                raise
            self._dense_index.wrote(
                self.chroma.name, before, self._seen_generation, added=zip(ids, vectors, strict=True)
            )

    def _rollback_add(self, ids: Sequence[str]) -> None:
        """Undo an add that did not commit: its vectors if the index allows it, its journal rows always (a
        vector left behind is an orphan the next open removes)."""
        try:
            self.chroma.delete(ids)
        except VectorIndexError:
            _log.warning("a failed store left %d vector(s) behind; they are removed at the next start", len(ids))
        try:
            with self._transaction() as db:
                db.executemany("DELETE FROM journal WHERE id = ? AND op = 'add'", [(i,) for i in ids])
        except sqlite3.Error:
            _log.error("could not roll back a failed store of %d memories; repaired at next start", len(ids))

    def link(self, source: str, target: str, link_type: LinkType, confidence: float, note: str = "") -> bool:
        """Create a bidirectional link; False when it already existed (both directions)."""
        with self.writing(), self._transaction() as db:
            exists = db.execute("SELECT count(*) FROM memories WHERE id IN (?, ?)", (source, target)).fetchone()[0]
            if exists != (1 if source == target else 2):
                raise StoreError("both memories must exist")
            return self.tables.insert_link_pair(source, MemoryLink(target, link_type, confidence, note), time.time())

    def revise(
        self, memory_id: str, *, importance: int | None, tags: Sequence[str] | None, is_private: bool | None
    ) -> tuple[Memory, Memory] | None:
        """Change a memory's importance, tags or privacy (``None``: unchanged) in one transaction; the index's
        copy of those fields follows. Returns (before, after), or None when there is no such memory."""
        with self.writing():
            found = self._load([memory_id], with_links=False)
            if not found:
                return None
            before = found[0]
            after = attrs.evolve(
                before,
                importance=before.importance if importance is None else importance,
                tags=before.tags if tags is None else tuple(tags),
                is_private=before.is_private if is_private is None else is_private,
            )
            if after == before:
                return before, after
            generation = self._seen_generation
            with self._transaction() as db:
                tags_json = json.dumps(list(after.tags), ensure_ascii=False)
                db.execute(
                    "UPDATE memories SET importance = ?, tags = ?, is_private = ? WHERE id = ?",
                    (after.importance, tags_json, int(after.is_private), memory_id),
                )
                self._seen_generation = self.tables.bump_generation()
            self._dense_index.wrote(self.chroma.name, generation, self._seen_generation)
            try:
                with self._index_failures():
                    self.chroma.update_metadata([memory_id], [chroma_metadata(after, self.model_id)])
            except VectorIndexError as exc:
                # SQLite holds the truth: the rebuild at the next start writes the index's copy again
                _log.warning("revise: the index's fields of %s are rewritten at the next start (%s)", memory_id, exc)
            if after.is_private != before.is_private:
                self._private_contents_changed()
            return before, after

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

    def delete(self, memory_id: str) -> Memory | None:
        """Delete one memory and every link to or from it. Returns the deleted memory, or None.

        The deletion is committed in SQLite first; a vector the index fails to delete is removed at the next
        open (its journal row stays), so the memory is gone either way."""
        with self.writing():
            found = self._load([memory_id])
            if not found:
                return None
            before = self._seen_generation
            with self._transaction() as db:
                db.execute(
                    "INSERT OR REPLACE INTO journal(id, op, created) VALUES (?, 'delete', ?)", (memory_id, time.time())
                )
                # The invariant A->B <=> B->A lets the reverse links be found from the memory's own links;
                # the statement also removes any row naming it, so nothing dangling can survive.
                self._delete_rows(memory_id)
                self._seen_generation = self.tables.bump_generation()
            self._dense_index.wrote(self.chroma.name, before, self._seen_generation, removed=[memory_id])
            try:
                with self._index_failures():
                    self.chroma.delete([memory_id])
            except VectorIndexError as exc:
                _log.warning("forget: the vector of %s is removed at the next start (%s)", memory_id, exc)
                return found[0]
            with self._transaction() as db:
                db.execute("DELETE FROM journal WHERE id = ? AND op = 'delete'", (memory_id,))
            return found[0]

    # ------------------------------------------------------------------------------------------
    # Episodes

    def add_episode(self, episode: Episode) -> None:
        with self.writing(), self._transaction() as db:
            db.execute(f"INSERT INTO episodes({EPISODE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)", episode_row(episode))

    def get_episode(self, episode_id: str) -> Episode | None:
        with self.reading():
            row = self.db.execute(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = ?", (episode_id,)).fetchone()
            return None if row is None else row_to_episode(row)

    def episodes(self) -> list[Episode]:
        with self.reading():
            rows = self.db.execute(f"SELECT {EPISODE_COLUMNS} FROM episodes ORDER BY start_ts, id").fetchall()
            return [row_to_episode(row) for row in rows]

    def episodes_holding(self, memory_id: str) -> list[Episode]:
        """The episodes ``memory_id`` is a member of."""
        with self.reading():
            rows = self.db.execute(
                f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE instr(memory_ids, ?) > 0 ORDER BY start_ts, id",
                (json.dumps(memory_id),),
            ).fetchall()
        return [e for e in (row_to_episode(row) for row in rows) if memory_id in e.memory_ids]

    def set_summaries(self, summaries: Mapping[str, str]) -> None:
        """Replace the summaries of episodes (id → summary) in one transaction."""
        if not summaries:
            return
        with self.writing(), self._transaction() as db:
            db.executemany("UPDATE episodes SET summary = ? WHERE id = ?", [(s, i) for i, s in summaries.items()])

    # ------------------------------------------------------------------------------------------
    # Consolidation

    def links_among(self, ids: Sequence[str]) -> list[tuple[str, str, str, float]]:
        """Links (source, target, type, confidence) whose source is among ``ids`` (both directions appear)."""
        rows: list[tuple[str, str, str, float]] = []
        with self.reading():
            for chunk in chunks(ids):
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
                self.tables.insert_link_pair(source, link, now)
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
