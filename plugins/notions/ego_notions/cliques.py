"""Maximal cliques of the memory link graph near the memories a consolidation replayed (bounded work)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from ego_core import Memory, MemoryLink, MemoryService
from ego_notions.model import MIN_MEMBERS

TIME_ONLY = frozenset({"sequence", "replay"})
"""Notes of the links memory draws between memories only because one came after the other."""


def meaningful(link: MemoryLink) -> bool:
    """A link of meaning (similarity, cause, one the agent drew), not mere succession in time."""
    return not (link.link_type == "leads_to" and link.note in TIME_ONLY)


@attrs.frozen
class Cliques:
    groups: tuple[tuple[str, ...], ...]
    nodes: int
    """Memories looked at (the replayed ones and their linked neighbours)."""
    capped: bool
    """The node cap or the search cap cut the search short."""


def neighbourhood(
    service: MemoryService, seeds: Sequence[str], max_nodes: int
) -> tuple[dict[str, Memory], dict[str, set[str]]]:
    """The seeds and their linked neighbours (at most ``max_nodes``), with undirected adjacency among them."""
    loaded: dict[str, Memory] = {m.id: m for m in service.get(list(dict.fromkeys(seeds))[:max_nodes])}
    outer = [link.target_id for m in list(loaded.values()) for link in m.links if link.target_id not in loaded]
    room = max_nodes - len(loaded)
    if room > 0 and outer:
        loaded.update((m.id, m) for m in service.get(list(dict.fromkeys(outer))[:room]))
    adjacency: dict[str, set[str]] = {i: set() for i in loaded}
    for memory in loaded.values():
        for link in memory.links:
            if meaningful(link) and link.target_id in loaded and link.target_id != memory.id:
                adjacency[memory.id].add(link.target_id)
                adjacency[link.target_id].add(memory.id)
    return loaded, adjacency


def maximal_cliques(
    adjacency: Mapping[str, set[str]], max_candidates: int, max_calls: int
) -> tuple[list[tuple[str, ...]], bool]:
    """Maximal cliques of at least three members (Bron–Kerbosch with a pivot), among the ``max_candidates``
    best-connected nodes; the search stops after ``max_calls`` steps, keeping what it found."""
    candidates = [n for n, near in adjacency.items() if len(near) >= MIN_MEMBERS - 1]
    capped = len(candidates) > max_candidates
    candidates = sorted(candidates, key=lambda n: (-len(adjacency[n]), n))[:max_candidates]
    keep = set(candidates)
    graph = {n: adjacency[n] & keep for n in candidates}
    found: list[tuple[str, ...]] = []
    calls = 0

    def expand(r: list[str], p: set[str], x: set[str]) -> bool:
        nonlocal calls
        calls += 1
        if calls > max_calls:
            return False
        if not p and not x:
            if len(r) >= MIN_MEMBERS:
                found.append(tuple(sorted(r)))
            return True
        pivot = max(p | x, key=lambda n: (len(graph[n] & p), n))
        for node in sorted(p - graph[pivot]):
            if not expand([*r, node], p & graph[node], x & graph[node]):
                return False
            p = p - {node}
            x = x | {node}
        return True

    complete = expand([], set(graph), set())
    return sorted(found), capped or not complete


def find_cliques(
    service: MemoryService, seeds: Sequence[str], *, max_nodes: int, max_candidates: int, max_calls: int
) -> tuple[Cliques, dict[str, Memory]]:
    loaded, adjacency = neighbourhood(service, seeds, max_nodes)
    groups, capped = maximal_cliques(adjacency, max_candidates, max_calls)
    return Cliques(groups=tuple(groups), nodes=len(loaded), capped=capped), loaded
