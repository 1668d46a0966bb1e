"""The memory plugin's part of ``ego export`` / ``ego import``: memories (with links and access statistics)
and episodes as records. Vectors are not exported; an import embeds the text again with the configured model.

An import obeys the data model like ``remember`` does: a record whose values have the wrong type, or beyond
the bounds of :mod:`ego_memory.record.limits`, refuses the whole file before anything is written; values outside
their range are normalised.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ego_core import Memory, RememberDraft
from ego_memory.api import MemoryHooks
from ego_memory.index.blas import one_blas_thread
from ego_memory.record.limits import MAX_EPISODE_MEMBERS, MAX_SUMMARY_CHARS
from ego_memory.record.model import (
    RecordError,
    converter,
    memory_to_dict,
    normal_importance,
    read_memory_record,
    read_strict,
)
from ego_memory.service import Memories
from ego_memory.store.rows import Episode, content_hash

_log = logging.getLogger("ego.plugin.memory")

RECORD_VERSION = 1
MEMORY_ID = re.compile(r"^mem_[0-9a-f]{12}$")
EPISODE_ID = re.compile(r"^ep_[0-9a-f]{12}$")
BATCH = 256


def export_records(memories: Memories, include_private: bool) -> Iterator[Mapping[str, Any]]:
    store = memories.store
    private = set() if include_private else store.private_ids()
    yield {"type": "meta", "record_version": RECORD_VERSION, "embedding_model": store.model_id}
    for memory in store.iter_memories():
        if memory.id in private:
            continue
        shared = tuple(link for link in memory.links if link.target_id not in private)
        yield {"type": "memory", **memory_to_dict(attrs.evolve(memory, links=shared))}
    for episode in store.episodes():
        members = [i for i in episode.memory_ids if i not in private]
        if not members:
            continue
        data = converter.unstructure(attrs.evolve(episode, memory_ids=tuple(members)))
        yield {"type": "episode", **data}


def _where(number: int, kind: object, body: Mapping[str, Any]) -> str:
    ident = body.get("id")
    named = f" {ident}" if isinstance(ident, str) and (MEMORY_ID.match(ident) or EPISODE_ID.match(ident)) else ""
    return f"record {number} ({kind}{named})"


def _parse(
    records: Sequence[Mapping[str, Any]], max_content_chars: int | None = None
) -> tuple[list[Memory], list[Episode], list[str], dict[str, int]]:
    """Memories and episodes under remember's rules, every problem (naming record and field), and how many
    records normalisation changed per field.

    A value of the wrong JSON type (a string where a list belongs, ``"7"`` for a number) is a problem: the
    whole file is refused. A value of the right type outside the data model (importance 99, intensity 7,
    an unknown emotion or category) is normalised exactly as ``remember`` normalises it.
    """
    memories: list[Memory] = []
    episodes: list[Episode] = []
    problems: list[str] = []
    normalised: dict[str, int] = {}
    for number, record in enumerate(records, start=1):
        kind = record.get("type")
        body = {k: v for k, v in record.items() if k != "type"}
        where = _where(number, kind, body)
        try:
            if kind == "meta":
                if body.get("record_version") != RECORD_VERSION:
                    problems.append(
                        f"{where}: record_version {body.get('record_version')!r}, expected {RECORD_VERSION}"
                    )
            elif kind == "memory":
                memory, changed = read_memory_record(body, max_content_chars)
                if not MEMORY_ID.match(memory.id):
                    problems.append(f"{where}: `id`: must be mem_ followed by 12 hex digits")
                else:
                    memories.append(memory)
                    for name in changed:
                        normalised[name] = normalised.get(name, 0) + 1
            elif kind == "episode":
                episode = read_strict(body, Episode)
                if not EPISODE_ID.match(episode.id):
                    problems.append(f"{where}: `id`: must be ep_ followed by 12 hex digits")
                elif len(episode.summary) > MAX_SUMMARY_CHARS:
                    problems.append(f"{where}: `summary`: must be at most {MAX_SUMMARY_CHARS} characters")
                elif len(episode.memory_ids) > MAX_EPISODE_MEMBERS:
                    problems.append(f"{where}: `memory_ids`: must be a list of at most {MAX_EPISODE_MEMBERS} ids")
                else:
                    episodes.append(attrs.evolve(episode, importance=normal_importance(episode.importance)))
            else:
                problems.append(f"{where}: unknown record type")
        except RecordError as exc:
            problems.extend(f"{where}: {problem}" for problem in exc.problems)
        except Exception as exc:  # anything else a record can provoke: report, never raise
            problems.append(f"{where}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'invalid'}")
    return memories, episodes, problems, normalised


def check_records(records: Sequence[Mapping[str, Any]], max_content_chars: int | None = None) -> list[str]:
    memories, _episodes, problems, _normalised = _parse(records, max_content_chars)
    seen: set[str] = set()
    for memory in memories:
        if memory.id in seen:
            problems.append(f"memory {memory.id} appears twice")
        seen.add(memory.id)
    return problems


def import_records(memories: Memories, records: Sequence[Mapping[str, Any]], progress: Any = None) -> int:
    parsed, episodes, problems, normalised = _parse(records, memories.config.max_content_chars)
    if problems:
        raise ValueError("; ".join(problems))
    if normalised:
        _log.warning(
            "import: values outside the data model were normalised as remember does them (%s)",
            ", ".join(f"{name}: {count}" for name, count in sorted(normalised.items())),
        )
    store = memories.store
    existing = store.existing_ids([m.id for m in parsed])
    new = [m for m in parsed if m.id not in existing]
    if any(r.get("type") == "meta" and r.get("duplicate_guard") is True for r in records):
        return guarded_import(memories, new, episodes, progress)
    known = (
        existing
        | {m.id for m in parsed}
        | store.existing_ids(sorted({link.target_id for m in new for link in m.links}))
    )
    for start in range(0, len(new), BATCH):
        chunk = [
            attrs.evolve(m, links=tuple(link for link in m.links if link.target_id in known - {m.id}))
            for m in new[start : start + BATCH]
        ]
        vectors = memories.embed([m.content for m in chunk])
        for memory in chunk:
            if memory.is_private:
                memories.redactor.add(memory.id, memory.content, memory.timestamp.timestamp())
        store.add_many(chunk, vectors)
        if progress is not None:
            progress(len(chunk))
    memories.fill_english()
    added_episodes = 0
    for episode in episodes:
        if store.get_episode(episode.id) is None:
            store.add_episode(episode)
            added_episodes += 1
    return len(new) + added_episodes


def guarded_import(memories: Memories, new: Sequence[Memory], episodes: Sequence[Episode], progress: Any = None) -> int:
    """Store memories read from another format (``ego import --from``) under the duplicate guard, as ``remember``
    does. The same text is never stored twice. Each memory is offered to ``before_remember`` (the dedup plugin)
    against the store, and one that repeats a memory stored earlier in the same batch (the model's calibrated
    duplicate similarity, saying the same: ``MemoryService.contrast``) is left out too; batches of ``BATCH`` are
    embedded and stored at once (the guard's lookups reuse the embeddings)."""
    store = memories.store
    threshold = memories.similarity_profile.duplicate
    added = 0
    seen: set[str] = set()
    with store.writing():
        for start in range(0, len(new), BATCH):
            chunk = new[start : start + BATCH]
            vectors = np.asarray(memories.embed([m.content for m in chunk]), dtype=np.float64)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            unit = vectors / np.where(norms > 0, norms, 1.0)
            kept = _choose(memories, chunk, unit, seen, threshold)
            for index in kept:
                memory = chunk[index]
                if memory.is_private:
                    memories.redactor.add(memory.id, memory.content, memory.timestamp.timestamp())
            store.add_many([chunk[i] for i in kept], vectors[kept].astype(np.float32))
            added += len(kept)
            if progress is not None:
                progress(len(chunk))
    memories.fill_english()
    for episode in episodes:
        members = store.existing_ids(list(episode.memory_ids))
        if members and store.get_episode(episode.id) is None:
            kept_ids = tuple(i for i in episode.memory_ids if i in members)
            store.add_episode(attrs.evolve(episode, memory_ids=kept_ids))
            added += 1
    return added


@one_blas_thread
def _choose(memories: Memories, chunk: Sequence[Memory], unit: Any, seen: set[str], threshold: float) -> list[int]:
    """The indices of the memories of ``chunk`` the guard lets in (one BLAS thread: many small searches)."""
    store = memories.store
    kept: list[int] = []
    for index, memory in enumerate(chunk):
        key = content_hash(memory.content)
        if key in seen or store.find_by_content(memory.content) is not None:
            continue
        if _repeats(memories, memory, [chunk[i] for i in kept], unit[kept] @ unit[index], threshold):
            continue
        draft = RememberDraft(
            content=memory.content,
            emotion=memory.emotional_trace.primary,
            importance=memory.importance,
            category=memory.category,
            tags=memory.tags,
            is_private=memory.is_private,
            anticipated=memory.anticipated,
        )
        if MemoryHooks(memories.ctx).before_remember(draft=draft) is not None:
            continue
        seen.add(key)
        kept.append(index)
    return kept


def _repeats(
    memories: Memories, memory: Memory, earlier: Sequence[Memory], similarities: Any, threshold: float
) -> bool:
    """Whether ``memory`` repeats one of ``earlier`` (kept before it in the same batch)."""
    for other, similarity in zip(earlier, similarities, strict=True):
        if (
            float(similarity) >= threshold
            and other.anticipated == memory.anticipated
            and memories.contrast(memory.content, other.content) is None
        ):
            return True
    return False
