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
    adjacency: Mapping[str, set[str]], max_candidates: int, max_calls: int, seeds: Sequence[str] | None = None
) -> tuple[list[tuple[str, ...]], bool]:
    """Maximal cliques of at least three members that hold one of ``seeds`` (default: every node).

    Each seed is searched in its own neighbourhood (Bron–Kerbosch with a pivot, started from the seed, with
    the ``max_candidates`` best-connected neighbours), in a fixed order so each clique is found once; all
    searches together stop after ``max_calls`` steps, keeping what they found.
    """
    chosen = set(adjacency) if seeds is None else set(seeds)
    # seeds first: a clique holding a seed is found from its first member, which is then a seed
    order = sorted(adjacency, key=lambda n: (n not in chosen, len(adjacency[n]), n))
    rank = {node: number for number, node in enumerate(order)}
    wanted = [n for n in order if n in chosen]
    found: set[tuple[str, ...]] = set()
    calls = 0
    capped = False

    def expand(r: list[str], p: set[str], x: set[str], graph: Mapping[str, set[str]]) -> bool:
        nonlocal calls
        calls += 1
        if calls > max_calls:
            return False
        if not p and not x:
            if len(r) >= MIN_MEMBERS:
                found.add(tuple(sorted(r)))
            return True
        pivot = max(p | x, key=lambda n: (len(graph[n] & p), n))
        for node in sorted(p - graph[pivot]):
            if not expand([*r, node], p & graph[node], x & graph[node], graph):
                return False
            p = p - {node}
            x = x | {node}
        return True

    for seed in wanted:
        near = adjacency[seed]
        if len(near) < MIN_MEMBERS - 1:
            continue
        if len(near) > max_candidates:
            capped = True
            near = set(sorted(near, key=lambda n: (-len(adjacency[n]), n))[:max_candidates])
        graph = {n: adjacency[n] & near for n in near}
        later = {n for n in near if rank[n] > rank[seed]}
        if not expand([seed], later, near - later, graph):
            return sorted(found), True
    return sorted(found), capped


def find_cliques(
    service: MemoryService, seeds: Sequence[str], *, max_nodes: int, max_candidates: int, max_calls: int
) -> tuple[Cliques, dict[str, Memory], dict[str, set[str]]]:
    """The cliques around ``seeds``, the memories looked at, and the links of meaning among them."""
    loaded, adjacency = neighbourhood(service, seeds, max_nodes)
    groups, capped = maximal_cliques(adjacency, max_candidates, max_calls, [s for s in seeds if s in adjacency])
    return Cliques(groups=tuple(groups), nodes=len(loaded), capped=capped), loaded, adjacency
