"""Merge candidates for ``consolidate``.

Near-duplicates that slipped past the guard (worded a little differently, or saved with ``force``) are found
among the memories of the consolidation window only: one matrix product over their stored vectors, so the
cost grows with the number of recent memories (capped by ``max_recent``), never with the store. Merging
itself is left to the agent: consolidate proposes, the agent decides with recall and forget.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import datetime

import attrs

from ego_core import ConsolidationRun, Memory, MemoryService, ScaffoldItem, ScaffoldLine, Section, truncate

SECTION_KEY = "dedup"
PAIR_SNIPPET = 100

REVIEW_WITH_RECALL_AND_FORGET = ScaffoldLine(
    "Review each pair with recall. If one is redundant, use forget to remove it.", needs={"recall", "forget"}
)
REVIEW_WITH_RECALL = ScaffoldLine("Review each pair with recall and consider which to keep.", needs={"recall"})
REVIEW_WITH_FORGET = ScaffoldLine("Review each pair. If one is redundant, use forget to remove it.", needs={"forget"})
REVIEW = "Review each pair and consider which to keep."
BOTH_VALUABLE = "If both have value, consider which perspective to keep."


@attrs.frozen
class MergePair:
    """Two memories of the window that say nearly the same; ``a`` is the older one."""

    a: Memory
    b: Memory
    similarity: float


def _key(memory: Memory) -> datetime:
    """Sort key; sorts are stable, so memories stored at the same moment keep the store's (insertion) order."""
    return memory.timestamp


def window_memories(service: MemoryService, run: ConsolidationRun, cap: int) -> list[Memory]:
    """The newest ``cap`` memories of the consolidation window, oldest first.

    ``run.recent_ids`` (what consolidate replayed) is used when given; otherwise the window ``run.since`` …
    ``run.until`` is read from the store in pages of ``cap`` (the service lists oldest first), keeping only the
    newest ``cap``.
    """
    if run.recent_ids:
        chosen = service.get(list(dict.fromkeys(run.recent_ids)))
        return sorted(chosen, key=_key)[-cap:]
    kept: dict[str, Memory] = {}
    cursor = run.since
    while True:
        page = service.recent(cursor, limit=cap)
        fresh = [m for m in page if m.id not in kept and m.timestamp <= run.until]
        for memory in fresh:
            kept[memory.id] = memory
        if len(kept) > cap:
            kept = {m.id: m for m in sorted(kept.values(), key=_key)[-cap:]}
        if len(page) < cap or not fresh or page[-1].timestamp > run.until:
            break
        cursor = page[-1].timestamp
    return sorted(kept.values(), key=_key)


MERGEABLE_CONTRASTS = frozenset({None, "wording"})
"""A pair reworded is worth reviewing as one memory; a pair that differs by a negation or a number is not."""


def find_pairs(
    memories: Sequence[Memory],
    service: MemoryService,
    threshold: float,
    limit: int,
    *,
    at: datetime,
    kept: Callable[[Iterable[tuple[str, str]]], Collection[tuple[str, str]]] = lambda _pairs: (),
) -> list[MergePair]:
    """Unique pairs with cosine similarity ≥ ``threshold`` that do not contradict each other (negation, number),
    strongest first, at most ``limit``. A memory protected at ``at`` (``MemoryService.protected``: precious, or
    anticipating a moment still ahead) is never in a pair, nor are two memories anticipating different moments,
    nor a pair ``kept`` says was kept both of (it answers which of the pairs it is given were, ordered a ≤ b)."""
    protected = service.protected([m.id for m in memories], at)
    by_id = {m.id: m for m in memories if m.id not in protected}
    pairs: list[MergePair] = []
    similar = service.similar_pairs(list(by_id), threshold)
    reviewed = kept([(first, second) for first, second, _similarity in similar])
    for first, second, similarity in similar:
        if (min(first, second), max(first, second)) in reviewed:
            continue
        a, b = by_id[first], by_id[second]
        if a.anticipated == b.anticipated and service.contrast(a.content, b.content) in MERGEABLE_CONTRASTS:
            pairs.append(MergePair(a=a, b=b, similarity=similarity))
            if len(pairs) == limit:
                break
    pairs.sort(key=lambda p: (-p.similarity, p.a.id, p.b.id))
    return pairs[:limit]


def review_scaffold(*, recall: bool, forget: bool) -> tuple[ScaffoldItem, ...]:
    """The scaffold of the merge section, naming only the tools that are served."""
    if recall and forget:
        first: ScaffoldItem = REVIEW_WITH_RECALL_AND_FORGET
    elif recall:
        first = REVIEW_WITH_RECALL
    elif forget:
        first = REVIEW_WITH_FORGET
    else:
        first = REVIEW
    return (first, BOTH_VALUABLE)


def merge_section(pairs: Sequence[MergePair], *, recall: bool, forget: bool) -> Section | None:
    """The consolidate section listing ``pairs``; ``None`` when there are none (no line at all)."""
    if not pairs:
        return None
    lines = [f"Found {len(pairs)} near-duplicate pair(s):"]
    for pair in pairs:
        lines.append(f"- {pair.a.id} <-> {pair.b.id} (similarity: {pair.similarity:.2f})")
        for label, memory in (("A", pair.a), ("B", pair.b)):
            mark = " (private)" if memory.is_private else ""
            lines.append(f"  {label}{mark}: {truncate(memory.content, PAIR_SNIPPET)}")
    return Section(
        key=SECTION_KEY,
        text="\n".join(lines),
        slot=SECTION_KEY,
        scaffold=review_scaffold(recall=recall, forget=forget),
    )
