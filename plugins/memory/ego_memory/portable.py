"""The memory plugin's part of ``ego export`` / ``ego import``: memories (with links and access statistics)
and episodes as records. Vectors are not exported; an import embeds the text again with the configured model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from ego_core.types import Memory
from ego_memory.memories import Memories
from ego_memory.model import converter, memory_from_dict, memory_to_dict
from ego_memory.store import Episode

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


def _parse(records: Sequence[Mapping[str, Any]]) -> tuple[list[Memory], list[Episode], list[str]]:
    memories: list[Memory] = []
    episodes: list[Episode] = []
    problems: list[str] = []
    for number, record in enumerate(records, start=1):
        kind = record.get("type")
        body = {k: v for k, v in record.items() if k != "type"}
        where = f"record {number} ({kind})"
        try:
            if kind == "meta":
                if body.get("record_version") != RECORD_VERSION:
                    problems.append(
                        f"{where}: record_version {body.get('record_version')!r}, expected {RECORD_VERSION}"
                    )
            elif kind == "memory":
                memory = memory_from_dict(body)
                if not MEMORY_ID.match(memory.id):
                    problems.append(f"{where}: id must be mem_ followed by 12 hex digits")
                elif not memory.content.strip():
                    problems.append(f"{where}: {memory.id} has no content")
                else:
                    memories.append(memory)
            elif kind == "episode":
                episode = converter.structure(body, Episode)
                if not EPISODE_ID.match(episode.id):
                    problems.append(f"{where}: id must be ep_ followed by 12 hex digits")
                else:
                    episodes.append(episode)
            else:
                problems.append(f"{where}: unknown record type")
        except Exception as exc:  # cattrs and value errors: report, never raise
            problems.append(f"{where}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'invalid'}")
    return memories, episodes, problems


def check_records(records: Sequence[Mapping[str, Any]]) -> list[str]:
    memories, _episodes, problems = _parse(records)
    seen: set[str] = set()
    for memory in memories:
        if memory.id in seen:
            problems.append(f"memory {memory.id} appears twice")
        seen.add(memory.id)
    return problems


def import_records(memories: Memories, records: Sequence[Mapping[str, Any]], progress: Any = None) -> int:
    parsed, episodes, problems = _parse(records)
    if problems:
        raise ValueError("; ".join(problems))
    store = memories.store
    existing = store.existing_ids([m.id for m in parsed])
    new = [m for m in parsed if m.id not in existing]
    known = (
        existing
        | {m.id for m in parsed}
        | store.existing_ids(sorted({link.target_id for m in new for link in m.links}))
    )
    for start in range(0, len(new), BATCH):
        chunk = [
            attrs.evolve(m, links=tuple(link for link in m.links if link.target_id in known))
            for m in new[start : start + BATCH]
        ]
        vectors = memories.embed([m.content for m in chunk])
        for memory in chunk:
            if memory.is_private:
                memories.redactor.add(memory.id, memory.content)
        store.add_many(chunk, vectors)
        if progress is not None:
            progress(len(chunk))
    added_episodes = 0
    for episode in episodes:
        if store.get_episode(episode.id) is None:
            store.add_episode(episode)
            added_episodes += 1
    return len(new) + added_episodes
