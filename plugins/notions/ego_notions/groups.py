"""The groups of memories a notion can rise from: cliques of the link graph, and the memories of one theme.

A **theme group** is what the agent keeps coming back to: memories tagged with one theme (in any language: ``tea``
and ``お茶`` are one theme) that are related in meaning — cosine at least the embedding model's calibrated
``related`` threshold, or linked — densely: each member related to at least half of the others
(:func:`dense_core`). Memories of one activity are rarely near-paraphrases, so they seldom link to each other at
``remember`` (the link threshold is for the same thing said twice); tagged alike and related, they are one theme.

Overlapping candidates are folded (:func:`fold`): a group most of whose members are in a larger one of the same
themes joins it when the union stays dense, and is dropped when it adds nothing, so one theme gives one notion.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Final

import numpy as np

from ego_core import Memory, MemoryService
from ego_notions.model import DUPLICATE_JACCARD, MIN_MEMBERS, jaccard
from ego_notions.themes import Themes

THEME_REACH: Final = 48
"""Memories of one theme a consolidation reads besides the ones it replayed and their neighbours (the newest)."""
DENSITY: Final = 0.5
"""A member of a group is related to at least this share of the other members."""

Adjacency = dict[str, set[str]]
Group = tuple[tuple[str, ...], str | None]
"""The memory ids of a group (sorted), and the theme it was found for (None: a clique of links)."""


def dense_core(nodes: Iterable[str], adjacency: Mapping[str, set[str]], density: float = DENSITY) -> set[str]:
    """The largest part of ``nodes`` found by letting go of the least related member, one at a time, until each
    is related to at least ``density`` of the others (empty when fewer than three remain)."""
    members = set(nodes)
    while len(members) >= MIN_MEMBERS:
        need = math.ceil(density * (len(members) - 1) - 1e-9)
        degree = {n: len(adjacency.get(n, set()) & members) for n in members}
        weakest = min(members, key=lambda n: (degree[n], n))
        if degree[weakest] >= need:
            return members
        members.discard(weakest)
    return set()


def is_dense(members: Collection[str], adjacency: Mapping[str, set[str]], density: float = DENSITY) -> bool:
    need = math.ceil(density * (len(members) - 1) - 1e-9)
    chosen = set(members)
    return all(len(adjacency.get(n, set()) & chosen) >= need for n in chosen)


def theme_groups(
    service: MemoryService,
    themes: Themes,
    seeds: Sequence[Memory],
    loaded: dict[str, Memory],
    links: Mapping[str, set[str]],
    *,
    max_nodes: int,
    cliques: Sequence[tuple[str, ...]] = (),
    reach: int = THEME_REACH,
) -> tuple[list[Group], Adjacency]:
    """The theme groups holding a replayed memory (``seeds``) with their theme, and the relations among the
    memories looked at (links, and related memories of a shared theme). Memories of a group not yet in ``loaded``
    are added to it.

    A theme of which three or more of ``seeds`` lie in one of ``cliques`` is already a group of its own: it is
    not looked for again (the clique stands for it)."""
    key_of = themes.keys(t for m in loaded.values() for t in m.tags)
    seed_ids = {m.id for m in seeds}
    carried: dict[str, set[str]] = defaultdict(set)
    for memory in seeds:
        for tag in memory.tags:
            if tag in key_of:
                carried[key_of[tag]].add(memory.id)
    within = [set(c) for c in cliques]
    wanted = {
        key
        for key, ids in carried.items()
        if len(ids) < MIN_MEMBERS or not any(ids <= clique for clique in within if len(clique) >= len(ids))
    }
    adjacency: Adjacency = defaultdict(set, {i: set(near) for i, near in links.items()})
    if not wanted:
        return [], adjacency
    members: dict[str, set[str]] = defaultdict(set)
    for memory in loaded.values():
        for tag in memory.tags:
            if key_of.get(tag) in wanted:
                members[key_of[tag]].add(memory.id)
    room = max(0, max_nodes - len(loaded))
    extra: set[str] = set()
    for key in sorted(wanted):
        for memory_id in themes.db.themed(key, reach):
            if memory_id not in loaded and memory_id not in extra:
                if len(extra) >= room:
                    continue
                extra.add(memory_id)
            members[key].add(memory_id)
    chosen = {k: ids for k, ids in members.items() if len(ids) >= MIN_MEMBERS and ids & seed_ids}
    every = sorted({i for ids in chosen.values() for i in ids})
    if not every:
        return [], adjacency
    vectors = service.embeddings(every)
    related = service.similarity_profile.related
    groups: list[Group] = []
    for key in sorted(chosen):
        ids = sorted(i for i in chosen[key] if i in vectors)
        if len(ids) < MIN_MEMBERS:
            continue
        matrix = np.stack([np.asarray(vectors[i], dtype=np.float64).reshape(-1) for i in ids])
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = matrix / np.where(norms > 0, norms, 1.0)
        rows, cols = np.nonzero(np.triu(matrix @ matrix.T, k=1) >= related)
        for a, b in zip(rows.tolist(), cols.tolist(), strict=True):
            adjacency[ids[a]].add(ids[b])
            adjacency[ids[b]].add(ids[a])
        core = dense_core(ids, adjacency)
        if core & seed_ids:
            groups.append((tuple(sorted(core)), key))
    missing = sorted({i for g, _ in groups for i in g} - set(loaded))
    if missing:
        loaded.update((m.id, m) for m in service.get(missing))
    return [(g, key) for g, key in groups if all(i in loaded for i in g)], adjacency


def holds(
    group: Collection[str], focus: str | None, keys: frozenset[str], held: Collection[str], held_keys: frozenset[str]
) -> bool:
    """Whether a group is already held by one of ``held`` memories (themes ``held_keys``): a clique within it, or a
    theme group within it whose theme is among its themes or that is as alike as a duplicate. (The memories of one
    theme within a wider one, tea within the moments with Master, are a notion of their own.)"""
    members = set(group)
    if not members <= set(held):
        return False
    return focus is None or focus in held_keys or jaccard(members, held) >= DUPLICATE_JACCARD


def belongs(
    group: Collection[str], focus: str | None, keys: frozenset[str], held: Collection[str], held_keys: frozenset[str]
) -> bool:
    """Whether a group not held yet should join ``held``: as alike as a duplicate, or of its themes (the theme it was
    found for, or all of a clique's themes, among ``held_keys``) with most of its memories in it."""
    members = set(group)
    if jaccard(members, held) >= DUPLICATE_JACCARD:
        return True
    mine = focus in held_keys if focus is not None else keys <= held_keys
    return mine and 2 * len(members & set(held)) >= len(members)


def fold(
    candidates: Iterable[Group],
    adjacency: Mapping[str, set[str]],
    themes_of: Callable[[Collection[str]], frozenset[str]],
) -> list[Group]:
    """One group per theme, largest first: a candidate held by a group already chosen (:func:`holds`) is let go;
    one that belongs to it (:func:`belongs`) joins it when the union stays dense and keeps its themes, and is let
    go when it is as alike as a duplicate; any other candidate is a group of its own."""
    accepted: list[tuple[set[str], frozenset[str], str | None]] = []
    where: dict[str, set[int]] = defaultdict(set)  # memory id → the accepted groups holding it
    for group, focus in sorted(set(candidates), key=lambda g: (-len(g[0]), g[0], g[1] or "")):
        members = set(group)
        keys = themes_of(members)
        for number in sorted({n for i in members for n in where.get(i, ())}):
            held, held_keys, held_focus = accepted[number]
            if holds(members, focus, keys, held, held_keys):
                break
            if not belongs(members, focus, keys, held, held_keys):
                continue
            union = held | members
            if is_dense(union, adjacency) and themes_of(union) == held_keys:
                accepted[number] = (union, held_keys, held_focus)
                for i in members:
                    where[i].add(number)
                break
            if jaccard(members, held) >= DUPLICATE_JACCARD:
                break
        else:
            for i in members:
                where[i].add(len(accepted))
            accepted.append((members, keys, focus))
    return [(tuple(sorted(members)), focus) for members, _, focus in accepted]
