"""What the notions plugin does: form notions in consolidate, keep them, reinforce and weaken them, curate them.

``NotionBook`` is also the ``notions.store`` service (``ego_core.NotionStore``).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, tzinfo

import attrs

from ego_core import PEOPLE, ConsolidationRun, Memory, MemoryService, NotionView, People, Services, log_event
from ego_notions.cliques import find_cliques
from ego_notions.model import (
    CONTRADICT_STEP,
    DORMANT_BELOW,
    DUPLICATE_JACCARD,
    LINK_SHARED,
    MIN_MEMBERS,
    PRUNE_BELOW,
    REINFORCE_STEP,
    WEAKENED_DROP,
    Notion,
    clamp,
    confidence_for,
    duplicate_of,
    is_ephemeral,
    jaccard,
    label_for,
    merged,
    rank_key,
    relinked,
    same_sign,
    tags_of,
    tone_of,
)
from ego_notions.store import NotionDB, new_id

MAX_NODES = 2000
"""Memories a consolidation looks at: the replayed ones first, then their linked neighbours."""
MAX_CANDIDATES = 64
"""Best-connected neighbours of one replayed memory its clique search runs on."""
MAX_CALLS = 50_000
"""Steps of all the clique searches of one consolidation before they stop with what they found."""


@attrs.frozen
class PassReport:
    created: int = 0
    pruned: int = 0
    merged: int = 0
    linked: int = 0
    looked_at: int = 0
    capped: bool = False

    def summary(self) -> str:
        parts = [
            f"{verb} {n} {noun}."
            for verb, n, noun in (
                ("Formed", self.created, "notion(s)"),
                ("Let go of", self.pruned, "notion(s)"),
                ("Merged", self.merged, "duplicate notion(s)"),
                ("Linked", self.linked, "notion pair(s)"),
            )
            if n
        ]
        return " ".join(parts)


class NotionBook:
    """The notions store and its rules; implements ``ego_core.NotionStore``."""

    def __init__(
        self,
        db: NotionDB,
        now: Callable[[], datetime],
        memories: Callable[[], MemoryService | None],
        log: logging.Logger,
        *,
        tz: Callable[[], tzinfo] = lambda: UTC,
        services: Services | None = None,
    ) -> None:
        self.db = db
        self.now = now
        self.memories = memories
        self.log = log
        self.tz = tz
        self.services = services

    # ----------------------------------------------------------------------------------------------
    # notions.store

    def notions(self, *, min_confidence: float = 0.0, limit: int | None = None) -> Sequence[NotionView]:
        now = self.now()
        held = [n for n in self.ranked(now) if n.confidence_at(now) >= min_confidence]
        return [n.view(now) for n in (held if limit is None else held[: max(0, limit)])]

    def convictions(self) -> Sequence[NotionView]:
        now = self.now()
        return [n.view(now) for n in self.ranked(now) if n.is_conviction(now)]

    def for_person(self, person: str) -> Sequence[NotionView]:
        now = self.now()
        wanted = person.strip().casefold()
        return [n.view(now) for n in self.ranked(now) if n.person and n.person.casefold() == wanted]

    def people(self) -> People | None:
        return self.services.get(PEOPLE, People) if self.services is not None else None

    def ranked(self, now: datetime) -> list[Notion]:
        return sorted(self.db.all(), key=lambda n: rank_key(n, now))

    def look_back(self) -> list[Notion]:
        """The notions that feel less certain than at the previous look (a drop of at least 0.1), most weakened
        first; what this look saw is kept for the next. Nothing at the first look."""
        now = self.now()
        held = {n.id: n for n in self.db.all()}
        seen = {i: round(n.confidence_at(now), 4) for i, n in held.items()}
        dropped = self.db.look_back(seen, WEAKENED_DROP, now) or []
        return sorted((held[i] for i in dropped), key=lambda n: (seen[n.id], n.id))

    # ----------------------------------------------------------------------------------------------
    # consolidate

    def consolidate(self, run: ConsolidationRun) -> PassReport:
        """Form notions from cliques around the replayed memories, then decay, prune, merge and link."""
        service = self.memories()
        created = 0
        looked_at = 0
        capped = False
        now = self.now()
        if service is not None and run.recent_ids:
            cliques, loaded = find_cliques(
                service, run.recent_ids, max_nodes=MAX_NODES, max_candidates=MAX_CANDIDATES, max_calls=MAX_CALLS
            )
            looked_at, capped = cliques.nodes, cliques.capped
            if capped:
                log_event(self.log, "notions_search_capped", nodes=cliques.nodes, cliques=len(cliques.groups))
            near = self.db.holding({i for group in cliques.groups for i in group})
            fresh: list[Notion] = []
            people = self.people()
            for group in cliques.groups:
                if duplicate_of(group, [*near, *fresh]):
                    continue
                notion = self._form([loaded[i] for i in group if i in loaded], now)
                if notion is not None:
                    fresh.append(attrs.evolve(notion, person=_person_of(notion.sources, people)))
            self.db.apply(save=fresh)
            created = len(fresh)
        notions = {n.id: n for n in self.db.all()}  # read once for the whole maintenance
        gone = [i for i, n in notions.items() if n.confidence_at(now) < PRUNE_BELOW]
        if gone:
            notions = self._delete(gone, notions)
        pruned = len(gone)
        merged_count = self._merge_duplicates(now, notions)
        if merged_count:
            notions = {n.id: n for n in self.db.all()}
        linked = self._link(notions)
        report = PassReport(created, pruned, merged_count, linked, looked_at, capped)
        log_event(
            self.log,
            "notions_consolidated",
            created=created,
            pruned=pruned,
            merged=merged_count,
            linked=linked,
            looked_at=looked_at,
        )
        return report

    def _form(self, members: Sequence[Memory], now: datetime) -> Notion | None:
        if len(members) < MIN_MEMBERS or is_ephemeral(members):
            return None
        public = [m for m in members if not m.is_private]
        tone = tone_of(members)
        tags = tags_of(public)
        return Notion(
            id=new_id(),
            label=label_for(tags, public, tone),
            tone=tone,
            valence=round(sum(m.emotional_trace.valence for m in members) / len(members), 4),
            confidence=confidence_for(len(members)),
            anchored=now,
            created=now,
            reinforced=now,
            sources=tuple(m.id for m in members),
            tags=tags,
        )

    def _merge_duplicates(self, now: datetime, notions: Mapping[str, Notion]) -> int:
        """Fold notions whose sources overlap by Jaccard ≥ 0.6 into the strongest of their group."""
        parent = {i: i for i in notions}

        def root(i: str) -> str:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for a, b in _sharing(notions.values(), 1):
            if jaccard(notions[a].sources, notions[b].sources) >= DUPLICATE_JACCARD:
                parent[root(a)] = root(b)
        groups: dict[str, list[Notion]] = defaultdict(list)
        for notion in notions.values():
            groups[root(notion.id)].append(notion)
        count = 0
        for group in groups.values():
            if len(group) < 2:
                continue
            group.sort(key=lambda n: (-n.confidence_at(now), -n.reinforcement_count, n.created, n.id))
            for absorbed in group[1:]:
                self.merge(absorbed.id, group[0].id)
                count += 1
        return count

    def _link(self, notions: Mapping[str, Notion]) -> int:
        """Link notions that share at least two memories (both ways)."""
        pairs = [
            (a, b)
            for a, b in _sharing(notions.values(), LINK_SHARED)
            if b not in notions[a].related or a not in notions[b].related
        ]
        changed: dict[str, Notion] = {}
        for a, b in pairs:
            for one, other in ((a, b), (b, a)):
                notion = changed.get(one, notions[one])
                if other not in notion.related:
                    changed[one] = attrs.evolve(notion, related=(*notion.related, other))
        self.db.apply(save=list(changed.values()))
        return len(pairs)

    # ----------------------------------------------------------------------------------------------
    # remember / forget

    def remembered(self, memory: Memory) -> None:
        """A stored memory with tags reinforces the notions sharing a tag, or weakens those it contradicts."""
        if not memory.tags:
            return
        now = self.now()
        save: list[Notion] = []
        delete: list[str] = []
        for notion in self.db.tagged(memory.tags):
            current = notion.confidence_at(now)
            if same_sign(memory.emotional_trace.valence, notion.valence):
                sources = notion.sources if memory.id in notion.sources else (*notion.sources, memory.id)
                save.append(
                    attrs.evolve(
                        notion,
                        confidence=clamp(current + REINFORCE_STEP),
                        anchored=now,
                        reinforced=now,
                        reinforcement_count=notion.reinforcement_count + 1,
                        sources=sources,
                    )
                )
            elif current - CONTRADICT_STEP < DORMANT_BELOW:
                delete.append(notion.id)
            else:
                weaker = clamp(current - CONTRADICT_STEP)
                save.append(attrs.evolve(notion, confidence=weaker, anchored=now, contradicted=now))
        if delete:
            self._delete(delete)
        self.db.apply(save=save)
        if save or delete:
            log_event(self.log, "notions_remembered", touched=len(save), let_go=len(delete))

    def forgot(self, memory_id: str) -> None:
        """Drop a forgotten memory from every notion's sources."""
        holding = self.db.holding([memory_id])
        self.db.apply(save=[attrs.evolve(n, sources=tuple(s for s in n.sources if s != memory_id)) for n in holding])

    # ----------------------------------------------------------------------------------------------
    # curation

    def merge(self, absorbed_id: str, kept_id: str, person: str | None = None, *, set_person: bool = False) -> Notion:
        """Fold ``absorbed_id`` into ``kept_id`` and point every reference at the kept one."""
        absorbed, kept = self.db.get(absorbed_id), self.db.get(kept_id)
        if absorbed is None or kept is None or absorbed_id == kept_id:
            raise KeyError(absorbed_id if absorbed is None else kept_id)
        result = merged(kept, absorbed, self.now(), person, set_person=set_person)
        referring = [
            relinked(n, absorbed_id, kept_id)
            for n in self.db.all()
            if n.id not in (absorbed_id, kept_id)
            and (absorbed_id in n.related or any(absorbed_id in f.get("value", []) for f in _id_fields(n)))
        ]
        self.db.apply(save=[result, *referring], delete=[absorbed_id])
        return result

    def _delete(self, ids: Iterable[str], notions: Mapping[str, Notion] | None = None) -> dict[str, Notion]:
        """Delete notions and every reference other notions hold to them; the notions left, by id."""
        gone = set(ids)
        held = {n.id: n for n in self.db.all()} if notions is None else dict(notions)
        save: dict[str, Notion] = {}
        for notion in held.values():
            if notion.id in gone:
                continue
            refs = gone.intersection(notion.related) or any(
                gone.intersection(f.get("value", [])) for f in _id_fields(notion)
            )
            if refs:
                related = tuple(r for r in notion.related if r not in gone)
                meta = {
                    k: (
                        {"type": "notion_ids", "value": [i for i in f["value"] if i not in gone]}
                        if f.get("type") == "notion_ids"
                        else f
                    )
                    for k, f in notion.meta.items()
                }
                save[notion.id] = attrs.evolve(notion, related=related, meta=meta)
        self.db.apply(save=list(save.values()), delete=sorted(gone))
        return {i: save.get(i, n) for i, n in held.items() if i not in gone}

    def delete(self, notion_id: str) -> bool:
        if self.db.get(notion_id) is None:
            return False
        self._delete([notion_id])
        return True


def _person_of(sources: Sequence[str], people: People | None) -> str | None:
    """The person most of a notion's memories were shared with: the single largest share, more than half."""
    if people is None:
        return None
    try:
        shares = people.sharing(sources)
    except Exception:  # the self-model's problem: the notion forms unbound
        return None
    counts = sorted(((len(set(ids) & set(sources)), name) for name, ids in shares.items()), reverse=True)
    if not counts or counts[0][0] * 2 <= len(sources) or (len(counts) > 1 and counts[1][0] == counts[0][0]):
        return None
    return counts[0][1]


def _id_fields(notion: Notion) -> list[dict[str, list[str]]]:
    return [dict(f) for f in notion.meta.values() if f.get("type") == "notion_ids"]


def _sharing(notions: Iterable[Notion], at_least: int) -> list[tuple[str, str]]:
    """Pairs of notions (a < b) sharing at least ``at_least`` source memories (found through the memories)."""
    by_memory: dict[str, list[str]] = defaultdict(list)
    for notion in notions:
        for memory_id in set(notion.sources):
            by_memory[memory_id].append(notion.id)
    shared: dict[tuple[str, str], int] = defaultdict(int)
    for holders in by_memory.values():
        ordered = sorted(holders)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                shared[(a, b)] += 1
    return sorted(pair for pair, n in shared.items() if n >= at_least)
