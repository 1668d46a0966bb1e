"""Access to the tables of ``memory.sqlite3`` shared by the store and its maintenance: transactions, the
metadata table, and memories with their links. Callers hold the store's lock; nothing here takes it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ego_core import Database, Memory, MemoryLink
from ego_memory.store.rows import MEMORY_COLUMNS, row_to_memory

CHUNK = 500
"""Ids per ``IN (...)`` list (SQLite limits the number of parameters of a statement)."""


def chunks(ids: Sequence[str], size: int = CHUNK) -> Iterator[list[str]]:
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


class Tables:
    def __init__(self, database: Database) -> None:
        self.database = database
        self.db = database.db

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self.database.write() as db:
            yield db

    # ------------------------------------------------------------------------------------------
    # The metadata table: embedding model, active collection, generation, pending repairs

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def delete_meta(self, key: str) -> None:
        self.db.execute("DELETE FROM meta WHERE key = ?", (key,))

    def generation(self) -> int:
        value = self.meta("generation")
        return int(value) if value is not None else 0

    def bump_generation(self) -> int:
        self.db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
        return self.generation()

    # ------------------------------------------------------------------------------------------
    # Memories and links

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM memories").fetchone()[0])

    def ids(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT id FROM memories")}

    def ids_in_order(self) -> list[str]:
        """Every memory id, in insertion order."""
        return [row[0] for row in self.db.execute("SELECT id FROM memories ORDER BY rid")]

    def memories(self, rows: Iterable[Sequence[Any]], with_links: bool = True) -> list[Memory]:
        rows = list(rows)
        links = self.links_for([r[0] for r in rows]) if with_links else {}
        return [row_to_memory(row, links.get(row[0], ())) for row in rows]

    def links_for(self, ids: Sequence[str]) -> dict[str, list[MemoryLink]]:
        """Outgoing links by source id, strongest first."""
        found: dict[str, list[MemoryLink]] = {}
        for chunk in chunks(ids):
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

    def link_edges(self, ids: Sequence[str]) -> dict[str, list[tuple[str, str, float]]]:
        """Outgoing links as (target, link type, confidence) by source id, strongest first (what ranking reads,
        without building a :class:`MemoryLink` per row)."""
        found: dict[str, list[tuple[str, str, float]]] = {}
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            rows = self.db.execute(
                f"SELECT source, target, link_type, confidence FROM links WHERE source IN ({marks}) "
                "ORDER BY confidence DESC, target",
                chunk,
            ).fetchall()
            for source, target, link_type, confidence in rows:
                edges = found.get(source)
                if edges is None:
                    found[source] = edges = []
                edges.append((target, link_type, confidence))
        return found

    def link_strengths(self, ids: Sequence[str]) -> dict[str, float]:
        """The summed confidence of each memory's outgoing links (memories without links are absent)."""
        found: dict[str, float] = {}
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            found.update(
                self.db.execute(
                    f"SELECT source, total(confidence) FROM links WHERE source IN ({marks}) GROUP BY source", chunk
                )
            )
        return found

    def load(self, ids: Sequence[str], with_links: bool = True) -> list[Memory]:
        """The memories with these ids that exist, in the order asked."""
        if not ids:
            return []
        by_id: dict[str, Memory] = {}
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            rows = self.db.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({marks})", chunk).fetchall()
            for memory in self.memories(rows, with_links):
                by_id[memory.id] = memory
        return [by_id[i] for i in ids if i in by_id]

    def exists(self, memory_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM memories WHERE id = ?", (memory_id,)).fetchone() is not None

    def delete_rows(self, memory_id: str) -> None:
        """One memory and every link naming it (inside the caller's transaction)."""
        self.db.execute("DELETE FROM links WHERE source = ? OR target = ?", (memory_id, memory_id))
        self.db.execute("DELETE FROM memories WHERE id = ?", (memory_id,))

    def insert_link_pair(self, source: str, link: MemoryLink, now: float) -> bool:
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
