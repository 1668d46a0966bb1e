"""The vector index: one Chroma collection per embedding model, embedded (``PersistentClient``) or on a
Chroma server (``HttpClient``). Every failure inside Chroma surfaces as :class:`VectorIndexError`.

An embedded client is released when the index closes: Chroma keeps one ``System`` (database connections,
index files) per directory in a process-wide cache that otherwise lives until the process ends.
"""

from __future__ import annotations

import logging
import re
import shutil
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from ego_core import Memory, Vectors
from ego_memory.errors import StoreError, VectorIndexError
from ego_memory.store.rows import to_epoch

_log = logging.getLogger("ego.plugin.memory.store")
logging.getLogger("chromadb.config").setLevel(logging.INFO)
"""Chroma logs each component it starts and stops at DEBUG: noise in ego's log, and records at every shutdown."""

HNSW = {"space": "cosine", "batch_size": 50, "sync_threshold": 100}
"""Cosine distance. Chroma's single-record add slows down with the number of records not yet applied to its
index; applying every 50 and persisting every 100 keeps an add at ~8 ms instead of 14 ms on average (and up to
30 ms just before a sync with the defaults of 100/1000), at 10,000 and 100,000 vectors alike (docs/benchmarks.md)."""


def remove_tree(directory: Path, attempts: int = 5) -> None:
    """``rmtree``, walking again when a file vanishes under it (Chroma's closing threads finish a journal late)."""
    for _ in range(attempts - 1):
        try:
            shutil.rmtree(directory)
            return
        except FileNotFoundError:
            if not directory.exists():
                return
    shutil.rmtree(directory)


def collection_name(model_id: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model_id).strip("-._") or "model"
    return f"memories-{slug}"[:480]


def chroma_metadata(memory: Memory, model_id: str) -> dict[str, Any]:
    """What the index keeps beside a vector: only the fields a search filters on, as numbers and labels. Never
    the content or the tags: Chroma keeps what it is given in its write-ahead log and full-text index after a
    memory is forgotten, and the memory's words live in SQLite alone."""
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
    return meta


def describe(exc: BaseException) -> str:
    """``InternalError: first line of the message`` (short: it goes into one-line errors)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:200]}" if lines else type(exc).__name__


class _Systems:
    """Which embedded Chroma ``System`` each open index uses, so that the last one to close stops it and a
    reopen gets a fresh one (another process may have changed the files under the cached one)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders: dict[int, tuple[Any, int]] = {}

    @staticmethod
    def _cache() -> Any:
        from chromadb.api.shared_system_client import SharedSystemClient

        return SharedSystemClient

    def acquire(self, client: Any) -> Any:
        system = self._cache()._identifier_to_system[client._identifier]
        with self._lock:
            held = self._holders.get(id(system), (system, 0))[1]
            self._holders[id(system)] = (system, held + 1)
        return system

    def release(self, system: Any, identifier: str) -> None:
        """One holder fewer; the last one stops the System."""
        cache = self._cache()
        with self._lock:
            held = self._holders.get(id(system), (system, 1))[1] - 1
            if held > 0:
                self._holders[id(system)] = (system, held)
                return
            self._holders.pop(id(system), None)
            if cache._identifier_to_system.get(identifier) is system:
                cache._identifier_to_system.pop(identifier, None)
                cache._identifier_to_refcount.pop(identifier, None)
        system.stop()

    def evict(self, identifier: str) -> None:
        """Make the next client on this directory start a new System; a cached one that no open index holds
        (left behind by a client that failed to open) is stopped. Held ones live on until released."""
        cache = self._cache()
        with self._lock:
            system = cache._identifier_to_system.pop(identifier, None)
            cache._identifier_to_refcount.pop(identifier, None)
            orphan = system is not None and id(system) not in self._holders
        if orphan:
            try:
                system.stop()
            except Exception:  # a System whose start failed half-way: nothing more to free
                _log.debug("stopping an orphaned Chroma system failed", exc_info=True)


_systems = _Systems()


class ChromaIndex:
    """One Chroma collection, embedded in ``directory`` or on the server at ``url``."""

    def __init__(self, directory: Path, name: str, model_id: str, url: str | None = None) -> None:
        self.directory = directory
        self.name = name
        self.model_id = model_id
        self.url = url
        self._client: Any = None
        self._collection: Any = None
        self._system: Any = None

    @property
    def embedded(self) -> bool:
        return not self.url

    @contextmanager
    def _failures(self, doing: str) -> Iterator[None]:
        """Chroma's errors (and Rust panics, which are not ``Exception``) as :class:`VectorIndexError`."""
        try:
            yield
        except StoreError:
            raise
        except BaseException as exc:
            if not isinstance(exc, Exception) and type(exc).__name__ != "PanicException":
                raise
            where = f"the Chroma server at {self.url}" if self.url else "the vector index"
            raise VectorIndexError(f"{where} failed while {doing} ({describe(exc)})") from exc

    def open(self) -> None:
        with self._failures("opening"):
            try:
                self._connect()
                self._collection = self._client.get_or_create_collection(
                    self.name,
                    configuration={"hnsw": dict(HNSW)},
                    metadata={"embedding_model": self.model_id},
                    embedding_function=None,
                )
            except BaseException:
                self.close(evict=True)
                raise

    def _connect(self) -> None:
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
            self._system = _systems.acquire(self._client)

    def close(self, *, evict: bool = False) -> None:
        """Release the client (the embedded System stops with its last user); ``evict``: the next open starts
        on a fresh System, not on one another index in this process may still hold."""
        client, system = self._client, self._system
        self._client = self._collection = self._system = None
        if system is not None:
            _systems.release(system, str(self.directory))
        elif client is not None:
            try:
                client.close()
            except Exception:  # a server that went away: nothing left to release
                _log.debug("closing the Chroma client failed", exc_info=True)
        if evict and self.embedded:
            _systems.evict(str(self.directory))

    def reopen(self) -> None:
        """Open again on a fresh client: this process's cached index may be stale."""
        self.close(evict=True)
        self.open()

    def wipe(self) -> None:
        """Delete the whole index, then open an empty one: the embedded directory (whatever state it is in), or
        the collection on a server."""
        if self.url:
            with self._failures("deleting the collection"):
                if self._client is None:
                    self._connect()
                if self.name in {c.name for c in self._client.list_collections()}:
                    self._client.delete_collection(self.name)
            self.close()
        else:
            self.close(evict=True)
            try:
                if self.directory.is_dir() and not self.directory.is_symlink():
                    remove_tree(self.directory)
                elif self.directory.exists() or self.directory.is_symlink():
                    self.directory.unlink()
            except OSError as exc:
                raise VectorIndexError(
                    f"the broken vector index at {self.directory} cannot be removed ({describe(exc)}); "
                    "remove that directory by hand, then start ego again"
                ) from exc
        self.open()

    def probe(self) -> None:
        """Read what a recall reads (the collection's log and metadata, one vector, the HNSW index); raises
        :class:`VectorIndexError` when the index cannot serve."""
        with self._failures("being checked"):
            collection = self.collection
            if int(collection.count()) == 0:
                return
            first = collection.get(limit=1, include=["embeddings"])
            if len(first["ids"]):
                collection.query(query_embeddings=np.asarray(first["embeddings"][:1]), n_results=1, include=[])

    @property
    def collection(self) -> Any:
        if self._collection is None:
            self.open()
        return self._collection

    @property
    def max_batch(self) -> int:
        if self._client is None:
            self.open()
        with self._failures("reading its batch size"):
            return max(1, min(5000, int(self._client.get_max_batch_size())))

    def count(self) -> int:
        with self._failures("counting"):
            return int(self.collection.count())

    def add(
        self,
        ids: Sequence[str],
        embeddings: Vectors,
        metadatas: Sequence[Mapping[str, Any]],
        *,
        replace: bool = False,
    ) -> None:
        """Add vectors (``replace=True`` overwrites existing ids, for repairs and re-indexing); no text."""
        with self._failures("adding vectors"):
            write = self.collection.upsert if replace else self.collection.add
            write(ids=list(ids), embeddings=embeddings, metadatas=[dict(m) for m in metadatas])

    def update_metadata(self, ids: Sequence[str], metadatas: Sequence[Mapping[str, Any]]) -> None:
        """Replace the fields kept beside existing vectors (the vectors stay)."""
        if ids:
            with self._failures("updating fields"):
                self.collection.update(ids=list(ids), metadatas=[dict(m) for m in metadatas])

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            with self._failures("deleting vectors"):
                self.collection.delete(ids=list(ids))

    def query(self, embedding: Vectors, n: int, where: Mapping[str, Any] | None) -> list[tuple[str, float, Vectors]]:
        if n <= 0:
            return []
        with self._failures("searching"):
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
        with self._failures("reading vectors"):
            result = self.collection.get(ids=list(ids), include=["embeddings"])
        return {
            result["ids"][i]: np.asarray(result["embeddings"][i], dtype=np.float32) for i in range(len(result["ids"]))
        }

    def all_ids(self, batch: int = 5000) -> set[str]:
        found: set[str] = set()
        offset = 0
        with self._failures("listing its ids"):
            while True:
                chunk = self.collection.get(include=[], limit=batch, offset=offset)["ids"]
                found.update(chunk)
                if len(chunk) < batch:
                    return found
                offset += batch

    def drop(self) -> None:
        """Delete this collection (another collection in the same directory stays), and close."""
        with self._failures("deleting the collection"):
            if self._client is None:
                self._connect()
            self._client.delete_collection(self.name)
        self.close()
