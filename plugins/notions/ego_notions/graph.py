"""Exploring: a walk from a memory or notion over links, and the shape of the notion network."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from typing import Any, Final

from ego_core import InvalidArgumentError, MemoryService, Response, ToolError, truncate
from ego_notions.book import NotionBook
from ego_notions.model import Notion

MAX_DEPTH: Final = 4
SEED: Final = re.compile(r"^(mem|notion)_[0-9A-Za-z]{1,40}$")
MAX_NODES: Final = 30
MAX_MEMORY_LINKS: Final = 12
"""Links followed from one memory (the most confident), so a hub cannot flood the walk."""
WALK_SCAFFOLD: Final = (
    "What's surprising about these connections?",
    "Is there a path here you haven't followed yet?",
)
NETWORK_SCAFFOLD: Final = (
    "What clusters surprise you? Are there connections missing?",
    "If a bridge notion were removed, what would fragment?",
)
Edge = tuple[str, str, str, str]
"""source, target, kind, label."""


def _memory_label(content: str, private: bool) -> str:
    return "(a private memory)" if private else truncate(content, 80)


def walk(book: NotionBook, seed: str, depth: int) -> Response:
    service = book.memories()
    now = book.now()
    notions: dict[str, Notion] = {}
    memories: dict[str, Any] = {}

    def node(ident: str) -> bool:
        if ident.startswith("notion_"):
            if ident not in notions:
                found = book.db.get(ident)
                if found is None:
                    return False
                notions[ident] = book.current([found])[0]
            return True
        if ident not in memories:
            if service is None:
                return False
            got = service.get([ident])
            if not got:
                return False
            memories[ident] = got[0]
        return True

    if not SEED.match(seed):
        raise InvalidArgumentError("id", "a memory id (mem_…, as recall shows) or a notion id (notion_…)")
    if not node(seed):
        raise ToolError(
            f"Seed not found: {seed}",
            ("Memory ids come from recall; curate_notions list shows notion ids.",),
        )
    order: list[tuple[str, int]] = []
    seen = {seed}
    queue: deque[tuple[str, int]] = deque([(seed, 0)])
    edges: list[Edge] = []
    truncated = False
    while queue:
        if len(order) >= MAX_NODES:
            truncated = True
            break
        ident, level = queue.popleft()
        order.append((ident, level))
        if level >= depth:
            continue
        for target, kind, label in _neighbours(ident, notions, memories, book, service):
            if target == ident or not node(target):
                continue
            edges.append((ident, target, kind, label))
            if target not in seen:
                seen.add(target)
                queue.append((target, level + 1))
    kept = {i for i, _ in order}
    unique = list(dict.fromkeys(e for e in edges if e[0] in kept and e[1] in kept))

    def label_of(ident: str) -> str:
        if ident in notions:
            return notions[ident].label
        memory = memories[ident]
        return _memory_label(memory.content, memory.is_private)

    def describe(ident: str) -> str:
        if ident in notions:
            n = notions[ident]
            return f'[notion] "{n.label}" confidence: {n.confidence_at(now):.1f}'
        m = memories[ident]
        day = m.timestamp.astimezone(book.tz()).strftime("%Y-%m-%d")
        return f'[memory] "{label_of(ident)}" ({day}, {m.emotional_trace.primary}) {ident}'

    seed_text = describe(seed).split("] ", 1)[1]
    lines = [f'Exploring from "{truncate(label_of(seed), 60)}" ({seed}, depth={depth})', "", f"[seed] {seed_text}"]
    current = 0
    for ident, level in order[1:]:
        if level != current:
            current = level
            lines.extend(["", f"depth {level}:"])
        lines.append(f"  {describe(ident)}")
        for source, target, kind, label in unique:
            if target == ident:
                via = f' (via "{truncate(label_of(source), 30)}")' if source != seed else ""
                lines.append(f"    <- {kind}{f' ({label})' if label else ''}{via}")
    lines.extend(["", f"{len(order)} nodes, {len(unique)} edges"])
    if truncated:
        lines.append(f"(stopped at {MAX_NODES} nodes; the neighbourhood is larger)")
    return Response(data="\n".join(lines), scaffold=WALK_SCAFFOLD)


def _neighbours(
    ident: str,
    notions: Mapping[str, Notion],
    memories: Mapping[str, Any],
    book: NotionBook,
    service: MemoryService | None,
) -> list[tuple[str, str, str]]:
    if ident in notions:
        notion = notions[ident]
        out = [(r, "related_notion", "") for r in notion.related]
        out += [(m, "source_memory", "") for m in notion.sources]
        for key, field in sorted(notion.meta.items()):
            if field.get("type") == "notion_ids":
                out += [(i, "meta_link", key) for i in field.get("value", [])]
        return out
    memory = memories[ident]
    links = sorted(memory.links, key=lambda link: (-link.confidence, link.target_id))[:MAX_MEMORY_LINKS]
    out = [(link.target_id, "memory_link", link.link_type) for link in links]
    out += [(n.id, "source_memory", "") for n in sorted(book.db.holding([ident]), key=lambda n: n.id)]
    return out


def network(book: NotionBook) -> Response:
    """Clusters (connected components with their hub), bridges (articulation points), isolated notions,
    convictions."""
    now = book.now()
    notions = {n.id: n for n in book.db.all()}
    adjacency: dict[str, set[str]] = {i: set() for i in notions}
    for notion in notions.values():
        targets = list(notion.related)
        for field in notion.meta.values():
            if field.get("type") == "notion_ids":
                targets += list(field.get("value", []))
        for target in targets:
            if target in notions and target != notion.id:
                adjacency[notion.id].add(target)
                adjacency[target].add(notion.id)
    drawn: dict[str, str] = {}

    def name(ident: str) -> str:
        """The label shown, brought up to date with its memories' privacy (only the notions shown are read)."""
        if ident not in drawn:
            drawn[ident] = book.current([notions[ident]])[0].label
        return drawn[ident]

    edge_count = sum(len(v) for v in adjacency.values()) // 2
    average = 2 * edge_count / len(notions) if notions else 0.0
    lines = [f"Notion network: {len(notions)} notions, {edge_count} edges, avg degree {average:.1f}"]
    seen: set[str] = set()
    clusters: list[list[str]] = []
    isolated: list[str] = []
    for start in sorted(adjacency):
        if start in seen:
            continue
        component, queue = [], deque([start])
        seen.add(start)
        while queue:
            current = queue.popleft()
            component.append(current)
            for near in sorted(adjacency[current]):
                if near not in seen:
                    seen.add(near)
                    queue.append(near)
        if len(component) > 1:
            clusters.append(component)
        else:
            isolated.append(start)

    def hub(component: list[str]) -> str:
        return min(component, key=lambda i: (-len(adjacency[i]), i))

    clusters.sort(key=lambda c: (-len(c), notions[hub(c)].label))
    if clusters:
        lines.extend(["", f"Clusters ({len(clusters)}):"])
        for component in clusters[:5]:
            members = sorted(component, key=lambda i: (-len(adjacency[i]), i))
            names = ", ".join(f'"{name(i)}"' for i in members[:5])
            more = f" (+{len(members) - 5})" if len(members) > 5 else ""
            lines.append(f'  [{len(component)} notions] hub: "{name(hub(component))}"')
            lines.append(f"    {names}{more}")
        if len(clusters) > 5:
            lines.append(f"  (+{len(clusters) - 5} smaller clusters)")
    bridges = _articulation_points(adjacency)
    if bridges:
        lines.extend(["", "Bridges:"])
        ranked = sorted(bridges, key=lambda i: (-len(adjacency[i]), i))
        lines += [f'  "{name(i)}" (conf={notions[i].confidence_at(now):.1f})' for i in ranked[:5]]
    if isolated:
        shown = ", ".join(f'"{name(i)}"' for i in sorted(isolated, key=lambda i: notions[i].label)[:5])
        lines.extend(["", "Isolated:", f"  {shown}" + (f" (+{len(isolated) - 5})" if len(isolated) > 5 else "")])
    convictions = sorted((n for n in notions.values() if n.is_conviction(now)), key=lambda n: n.id)
    if convictions:
        lines.extend(["", "Convictions:"])
        lines += [
            f'  "{name(n.id)}" conf={n.confidence_at(now):.2f} reinforced {n.reinforcement_count}x'
            for n in convictions[:5]
        ]
    return Response(data="\n".join(lines), scaffold=NETWORK_SCAFFOLD)


def _articulation_points(adjacency: Mapping[str, set[str]]) -> set[str]:
    """Articulation points by an iterative Tarjan search."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    points: set[str] = set()
    counter = 0
    for root in sorted(adjacency):
        if root in index:
            continue
        index[root] = low[root] = counter
        counter += 1
        children = 0
        stack: list[tuple[str, str | None, list[str]]] = [(root, None, sorted(adjacency[root]))]
        while stack:
            node, parent, pending = stack[-1]
            if pending:
                near = pending.pop()
                if near == parent:
                    continue
                if near in index:
                    low[node] = min(low[node], index[near])
                else:
                    index[near] = low[near] = counter
                    counter += 1
                    if node == root:
                        children += 1
                    stack.append((near, node, sorted(adjacency[near])))
            else:
                stack.pop()
                if parent is not None:
                    low[parent] = min(low[parent], low[node])
                    if parent != root and low[node] >= index[parent]:
                        points.add(parent)
        if children > 1:
            points.add(root)
    return points
