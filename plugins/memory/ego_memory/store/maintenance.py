"""Keeping the indexes in step with the memories in SQLite, the source of truth: journal recovery, the FTS
check, reconciling and rebuilding the vector index, re-embedding with another model, and the full integrity
check of ``ego doctor``. The caller holds the store's lock unless a function takes the store's guards."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Protocol

from ego_core import Vectors
from ego_memory.store.schema import FTS_TABLES, LEXICAL_DROP, LEXICAL_SCHEMA
from ego_memory.store.tables import Tables
from ego_memory.store.vector_index import ChromaIndex, chroma_metadata
from ego_memory.text.language import LEXICON, segmented

_log = logging.getLogger("ego.plugin.memory.store")

EmbedFn = Callable[[Sequence[str]], Vectors]
Advance = Callable[[int], None]
Progress = Callable[[int, str], AbstractContextManager[Advance]]
"""``progress(total, description)`` gives a context whose value is called with each batch's size."""

INDEX_DAMAGED = "index_damaged"
"""Meta key: why the vector index must be rebuilt at the next open (set when it failed, or while rebuilding)."""
INDEX_CHECK = "index_check"
"""Meta key: set while an open checks the vector index; found at the next open, Chroma crashed the process."""
EMBED_BATCH = 256
LEXICON_KEY = "lexicon"
"""Meta key: the segmentation the word index was built with (:data:`ego_memory.text.language.LEXICON`)."""
LEXICON_PROGRESS = "lexicon_progress"
"""Meta key while the word index is rebuilt for a new segmentation: ``<lexicon> <last rid segmented>``."""
SEGMENT_BATCH = 500


class Guarded(Protocol):
    """The store as maintenance needs it: its tables and its inter-process lock."""

    @property
    def tables(self) -> Tables: ...

    def reading(self) -> AbstractContextManager[None]: ...

    def writing(self) -> AbstractContextManager[None]: ...


def no_progress(_total: int, _description: str) -> AbstractContextManager[Advance]:
    return nullcontext(lambda _n: None)


def _event(level: int, message: str, event: str, **fields: object) -> None:
    """A log line that is also a structured record (``event`` and its fields in the JSON log)."""
    _log.log(level, message, extra={"ego": {"event": event, **fields}})


# --------------------------------------------------------------------------------------------------
# At every open


def recover_journal(tables: Tables, index: ChromaIndex | None) -> int:
    """Roll every journal row to a consistent state: an interrupted remember is removed (its vector too), an
    interrupted forget is finished. With ``index=None`` only SQLite is repaired (the index is being rebuilt)."""
    rows = tables.db.execute("SELECT id, op FROM journal").fetchall()
    for memory_id, op in rows:
        exists = tables.exists(memory_id)
        if op == "delete" and exists:
            with tables.transaction():
                tables.delete_rows(memory_id)
        if index is not None and (op == "delete" or not exists):
            index.delete([memory_id])
        with tables.transaction():
            tables.db.execute("DELETE FROM journal WHERE id = ? AND op = ?", (memory_id, op))
    if rows:
        _log.warning("recovered %d interrupted write(s) in the memory store", len(rows))
    return len(rows)


def rebuild_fts(tables: Tables) -> None:
    """Rebuild an FTS index whose row count disagrees with the store."""
    count = tables.count()
    for table in FTS_TABLES:
        indexed = tables.db.execute(f"SELECT count(*) FROM {table}_docsize").fetchone()[0]
        if indexed != count:
            _log.warning("rebuilding %s: it indexes %d memories, the store holds %d", table, indexed, count)
            with tables.transaction():
                tables.db.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")


def migrate_lexicon(tables: Tables, *, progress: Progress = no_progress, batch: int = SEGMENT_BATCH) -> int:
    """Build the word index with this ego's segmentation unless the store already has it (caller holds the
    exclusive lock). Returns how many memories were segmented (0 when nothing had to be done).

    A store of legacy version 1 (its word index read the raw text, so Japanese words could not match; the
    adoption step gave it the ``terms`` column) or one segmented otherwise: its word index and the FTS triggers
    are dropped, every memory's terms are computed in batches (one transaction each, the last rid done recorded
    with it), then the word index and the triggers are created again and rebuilt in one transaction that
    records the lexicon. Interrupted anywhere, the next open finds the lexicon missing and carries on from the
    last batch.
    """
    if tables.meta(LEXICON_KEY) == LEXICON:
        with tables.transaction():  # the word index exists unless something outside ego removed it
            for statement in LEXICAL_SCHEMA:
                tables.db.execute(statement)
        return 0
    with tables.transaction():
        for statement in LEXICAL_DROP:  # no trigger may touch the indexes while terms change
            tables.db.execute(statement)
        state = (tables.meta(LEXICON_PROGRESS) or "").split()
        if len(state) != 2 or state[0] != LEXICON:
            state = [LEXICON, "-1"]
            tables.set_meta(LEXICON_PROGRESS, " ".join(state))
    done = int(state[1])
    total = tables.db.execute("SELECT count(*) FROM memories WHERE rid > ?", (done,)).fetchone()[0]
    if total:
        _event(
            logging.WARNING,
            f"building the word index with Japanese word segmentation ({LEXICON}) for {total} memories",
            "memory_lexicon_migration",
            memories=total,
            lexicon=LEXICON,
        )
    segmented_count = 0
    with progress(total, "segment words") as advance:
        while True:
            rows = tables.db.execute(
                "SELECT rid, content FROM memories WHERE rid > ? ORDER BY rid LIMIT ?", (done, batch)
            ).fetchall()
            if not rows:
                break
            values = [(segmented(content), rid) for rid, content in rows]
            done = rows[-1][0]
            with tables.transaction():
                tables.db.executemany("UPDATE memories SET terms = ? WHERE rid = ?", values)
                tables.set_meta(LEXICON_PROGRESS, f"{LEXICON} {done}")
            segmented_count += len(rows)
            advance(len(rows))
    with tables.transaction():
        for statement in LEXICAL_SCHEMA:
            tables.db.execute(statement)
        tables.db.execute("INSERT INTO fts_words(fts_words) VALUES ('rebuild')")
        tables.set_meta(LEXICON_KEY, LEXICON)
        tables.delete_meta(LEXICON_PROGRESS)
    if total:
        _event(
            logging.WARNING,
            f"built the word index with {LEXICON}: {segmented_count} memories segmented",
            "memory_lexicon_migrated",
            memories=segmented_count,
            lexicon=LEXICON,
        )
    return segmented_count


def embed_into(
    tables: Tables, index: ChromaIndex, ids: Sequence[str], embed: EmbedFn, *, advance: Advance, batch: int
) -> int:
    """Embed the memories ``ids`` (those that still exist) into ``index``, overwriting; returns how many."""
    embedded = 0
    for start in range(0, len(ids), batch):
        chunk = tables.load(ids[start : start + batch], with_links=False)
        if chunk:
            index.add(
                [m.id for m in chunk],
                embed([m.content for m in chunk]),
                [chroma_metadata(m, index.model_id) for m in chunk],
                replace=True,
            )
        embedded += len(chunk)
        advance(len(chunk))
    return embedded


def reconcile(tables: Tables, index: ChromaIndex, embed: EmbedFn) -> tuple[int, int]:
    """Make the index hold exactly the memories in SQLite. Returns (removed, re-embedded)."""
    in_index = index.all_ids()
    in_db = tables.ids()
    extra = sorted(in_index - in_db)
    missing = sorted(in_db - in_index)
    index.delete(extra)
    added = embed_into(tables, index, missing, embed, advance=lambda _n: None, batch=EMBED_BATCH)
    if extra or missing:
        _log.warning("reconciled the vector index: removed %d orphan(s), re-embedded %d", len(extra), added)
    return len(extra), added


# --------------------------------------------------------------------------------------------------
# Rebuilding and re-embedding


def rebuild_index(
    tables: Tables, index: ChromaIndex, embed: EmbedFn, *, reason: str, progress: Progress = no_progress
) -> int:
    """Delete the vector index and embed every memory of SQLite into a new one (caller holds the exclusive
    lock). Until it completes, the store remembers that the index must be rebuilt. Returns how many."""
    total = tables.count()
    _event(
        logging.WARNING,
        f"rebuilding the vector index from the memory database ({total} memories), because {reason}",
        "memory_index_rebuild",
        memories=total,
    )
    started = time.monotonic()
    with tables.transaction():
        tables.set_meta(INDEX_DAMAGED, reason)
    recover_journal(tables, None)
    index.wipe()
    with progress(total, "rebuild vector index") as advance:
        embedded = embed_into(tables, index, tables.ids_in_order(), embed, advance=advance, batch=EMBED_BATCH)
    with tables.transaction():
        tables.delete_meta(INDEX_DAMAGED)
        tables.delete_meta(INDEX_CHECK)
        tables.bump_generation()
    _event(
        logging.WARNING,
        f"rebuilt the vector index: {embedded} memories re-embedded in {time.monotonic() - started:.1f} s",
        "memory_index_rebuilt",
        memories=embedded,
        seconds=round(time.monotonic() - started, 1),
    )
    return embedded


def embed_all(
    store: Guarded, target: ChromaIndex, embed: EmbedFn, *, resume: bool, batch: int, advance: Advance
) -> int:
    """Embed every memory into ``target``, one locked batch at a time (other processes keep working between
    batches). With ``resume``, vectors already in ``target`` are kept, so an interrupted run continues where it
    stopped, and memories added meanwhile are picked up. Returns how many were embedded in this run."""
    embedded = 0
    while True:
        with store.reading():
            ids = store.tables.ids_in_order()
        done = target.all_ids() if resume else set()
        todo = [i for i in ids if i not in done]
        if not todo:
            return embedded
        for start in range(0, len(todo), batch):
            with store.writing():
                chunk = todo[start : start + batch]
                embedded += embed_into(store.tables, target, chunk, embed, advance=advance, batch=batch)
        if not resume:
            return embedded


# --------------------------------------------------------------------------------------------------
# ego doctor


def integrity_problems(tables: Tables, index: ChromaIndex) -> list[str]:
    """FTS integrity, index/SQLite agreement, the link invariant, no pending journal row (caller reads)."""
    problems: list[str] = []
    for table in FTS_TABLES:
        try:
            tables.db.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
        except sqlite3.DatabaseError as exc:
            problems.append(f"{table}: {exc}")
    damaged = tables.meta(INDEX_DAMAGED)
    if damaged is not None:
        problems.append(f"the vector index must be rebuilt ({damaged}); ego does it at its next start")
    else:
        in_index = index.all_ids()
        in_db = tables.ids()
        if in_index != in_db:
            problems.append(
                f"vector index disagrees with the store: {len(in_index - in_db)} orphan vector(s), "
                f"{len(in_db - in_index)} memory(ies) without a vector"
            )
    asymmetric = tables.db.execute(
        "SELECT count(*) FROM links a WHERE NOT EXISTS (SELECT 1 FROM links b WHERE b.source = a.target "
        "AND b.target = a.source AND b.link_type = a.link_type)"
    ).fetchone()[0]
    if asymmetric:
        problems.append(f"{asymmetric} link(s) without their reverse link")
    dangling = tables.db.execute(
        "SELECT count(*) FROM links l WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = l.target) "
        "OR NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = l.source)"
    ).fetchone()[0]
    if dangling:
        problems.append(f"{dangling} link(s) to memories that no longer exist")
    pending = tables.db.execute("SELECT count(*) FROM journal").fetchone()[0]
    if pending:
        problems.append(f"{pending} interrupted write(s) not yet recovered")
    return problems


@contextmanager
def checking_index(tables: Tables) -> Iterator[None]:
    """Marks the store while the vector index is checked at open: if Chroma crashes the process (it can, on
    corrupt index files), the next open finds the mark and rebuilds instead of crashing again."""
    with tables.transaction():
        tables.set_meta(INDEX_CHECK, str(time.time()))
    try:
        yield
    finally:
        with tables.transaction():
            tables.delete_meta(INDEX_CHECK)
