"""What the notions plugin does: form notions in consolidate, keep them, reinforce and weaken them, curate them.

``NotionBook`` is also the ``notions.store`` service (``ego_notions.api.NotionStore``).
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta, tzinfo

import attrs

from ego_core import ConsolidationRun, Memory, MemoryService, Services, log_event
from ego_notions.api import NotionView
from ego_notions.cliques import Cliques, find_cliques
from ego_notions.groups import belongs, fold, holds, theme_groups
from ego_notions.labels import FORGOTTEN, PRIVATE, compose, is_japanese, language_of, person_word, quotes
from ego_notions.lexicon import theme_key, theme_word
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
    first_sentence,
    is_ephemeral,
    jaccard,
    merged,
    rank_key,
    relinked,
    same_sign,
    themes_of,
    tone_of,
)
from ego_notions.store import DRAWN_FLAG, NotionDB, new_id
from ego_notions.themes import Themes
from ego_self_model.api import PEOPLE, People

MAX_NODES = 2000
"""Memories a consolidation looks at: the replayed ones first, then their linked neighbours."""
MAX_CANDIDATES = 64
"""Best-connected neighbours of one replayed memory its clique search runs on."""
MAX_CALLS = 50_000
"""Steps of all the clique searches of one consolidation before they stop with what they found."""
BACKFILL = timedelta(days=90)
BACKFILL_LIMIT = 2000
"""The first consolidation after an upgrade reads the tags of the newest public memories of this window."""
INDEXED_FLAG = "memory_tags_since"
PREVIOUS_RUN_FLAG = "previous_consolidation"
THEME_SEEDS = 500
"""Tagged memories since the previous consolidation (the newest) whose themes a consolidation looks at, besides
the ones it replayed: a theme lived all month forms its notion whether consolidate ran every day or once."""


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
    """The notions store and its rules; implements ``ego_notions.api.NotionStore``."""

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
        self.themes = Themes(db, memories)

    # ----------------------------------------------------------------------------------------------
    # notions.store

    def notions(self, *, min_confidence: float = 0.0, limit: int | None = None) -> Sequence[NotionView]:
        now = self.now()
        held = [n for n in self.ranked(now) if n.confidence_at(now) >= min_confidence]
        return [n.view(now) for n in self.current(held if limit is None else held[: max(0, limit)])]

    def convictions(self) -> Sequence[NotionView]:
        now = self.now()
        return [n.view(now) for n in self.current([n for n in self.ranked(now) if n.is_conviction(now)])]

    def for_person(self, person: str) -> Sequence[NotionView]:
        now = self.now()
        wanted = person.strip().casefold()
        held = [n for n in self.ranked(now) if n.person and n.person.casefold() == wanted]
        return [n.view(now) for n in self.current(held)]

    def theme(self, word: str) -> str:
        return theme_key(word)

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
        """Form notions from cliques and theme groups around the replayed memories, then decay, prune, merge and
        link."""
        service = self.memories()
        created = 0
        looked_at = 0
        capped = False
        now = self.now()
        if service is not None:
            self._backfill(service, now)
            cliques, loaded, links = (
                find_cliques(
                    service, run.recent_ids, max_nodes=MAX_NODES, max_candidates=MAX_CANDIDATES, max_calls=MAX_CALLS
                )
                if run.recent_ids
                else (Cliques(groups=(), nodes=0, capped=False), {}, {})
            )
            looked_at, capped = cliques.nodes, cliques.capped
            if capped:
                log_event(self.log, "notions_search_capped", nodes=cliques.nodes, cliques=len(cliques.groups))
            seeds = [loaded[i] for i in dict.fromkeys(run.recent_ids) if i in loaded]
            self.themes.index(seeds, only_new=True)
            seeds += self._since_last_pass(service, loaded, now)
            themed, related = theme_groups(
                service, self.themes, seeds, loaded, links, max_nodes=MAX_NODES, cliques=cliques.groups
            )
            looked_at = max(looked_at, len(loaded))
            candidates = [*themed, *((group, None) for group in cliques.groups)]
            groups = fold(candidates, related, lambda ids: self._themes_of(ids, loaded))
            held: dict[str, Notion] = {}
            themes: dict[str, frozenset[str]] = {}
            holding: dict[str, set[str]] = defaultdict(set)  # memory id → the notions holding it

            def keep(notion: Notion) -> None:
                held[notion.id] = notion
                if notion.id not in themes:
                    themes[notion.id] = self.themes.key_set(notion.tags)
                for source in notion.sources:
                    holding[source].add(notion.id)

            for notion in self.db.holding({i for group, _ in groups for i in group}):
                keep(notion)
            changed: list[str] = []
            people = self.people()
            for group, focus in groups:
                keys = self._themes_of(group, loaded)
                nearby = [held[i] for i in sorted({n for i in group for n in holding.get(i, ())})]
                if any(holds(group, focus, keys, n.sources, themes[n.id]) for n in nearby):
                    continue
                members = [loaded[i] for i in group if i in loaded]
                home = next((n for n in nearby if belongs(group, focus, keys, n.sources, themes[n.id])), None)
                if home is not None:
                    grown = _grown(home, [m for m in members if m.id not in home.sources], now)
                    if grown is not home:
                        keep(grown)
                        changed.append(home.id)
                    continue
                formed = self._form(members, now, people)
                if formed is not None:
                    keep(formed)
                    changed.append(formed.id)
                    created += 1
            self.db.apply(save=[held[i] for i in dict.fromkeys(changed)])
        notions = {n.id: n for n in self.db.all()}  # read once for the whole maintenance
        gone = [i for i, n in notions.items() if n.confidence_at(now) < PRUNE_BELOW]
        if gone:
            notions = self._delete(gone, notions)
        pruned = len(gone)
        merged_count = self._merge_duplicates(now, notions)
        if merged_count:
            notions = {n.id: n for n in self.db.all()}
        linked = self._link(notions)
        self.db.set_flag(PREVIOUS_RUN_FLAG, run.until.isoformat())
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

    def _backfill(self, service: MemoryService, now: datetime) -> None:
        """Once, after an upgrade: the tags of the public memories of the last 90 days (newest 2,000) are read, so
        that themes lived before the upgrade form notions too."""
        if self.db.flag(INDEXED_FLAG) is not None:
            return
        self.themes.index(service.recent(now - BACKFILL, BACKFILL_LIMIT), only_new=True)
        self.db.set_flag(INDEXED_FLAG, now.isoformat())

    def _since_last_pass(self, service: MemoryService, loaded: dict[str, Memory], now: datetime) -> list[Memory]:
        """The tagged public memories stored since the previous consolidation (the last 90 days at the first) that
        it did not replay, added to ``loaded``."""
        last = self.db.flag(PREVIOUS_RUN_FLAG)
        since = datetime.fromisoformat(last) if last is not None else now - BACKFILL
        ids = [i for i in self.db.tagged_since(since.timestamp(), THEME_SEEDS) if i not in loaded]
        if ids:
            loaded.update((m.id, m) for m in service.get(ids))
        return [loaded[i] for i in ids if i in loaded]

    def mark_indexed(self) -> None:
        """Nothing to read back: a store that was empty when the plugin first started (its tags are read as they
        come)."""
        if self.db.flag(INDEXED_FLAG) is None:
            self.db.set_flag(INDEXED_FLAG, self.now().isoformat())

    def _themes_of(self, ids: Iterable[str], loaded: Mapping[str, Memory]) -> frozenset[str]:
        public = _chronological(loaded[i] for i in ids if i in loaded and not loaded[i].is_private)
        return frozenset(themes_of(public, self.themes.keys(t for m in public for t in m.tags)))

    def _form(self, members: Sequence[Memory], now: datetime, people: People | None = None) -> Notion | None:
        if len(members) < MIN_MEMBERS or is_ephemeral(members):
            return None
        members = _chronological(members)
        tone = tone_of(members)
        valence = round(sum(m.emotional_trace.valence for m in members) / len(members), 4)
        sources = tuple(m.id for m in members)
        person = _person_of(sources, people)
        agreeing = sum(1 for m in members if same_sign(m.emotional_trace.valence, valence))
        label, tags = self._drawn(members, tone, person)
        return Notion(
            id=new_id(),
            label=label,
            tone=tone,
            valence=valence,
            confidence=confidence_for(len(members)),
            anchored=now,
            created=now,
            reinforced=now,
            sources=sources,
            tags=tags,
            reinforcement_count=max(0, agreeing - MIN_MEMBERS),
            person=person,
            private_sources=tuple(m.id for m in members if m.is_private),
        )

    def _drawn(
        self, members: Sequence[Memory], tone: str, person: str | None, language: str = "en"
    ) -> tuple[str, tuple[str, ...]]:
        """The label and tags of a notion of ``members`` (oldest first), drawn from the public ones only (with no
        memory left, the forgotten phrase in ``language``)."""
        if not members:
            return FORGOTTEN[language], ()
        public = [m for m in members if not m.is_private]
        key_of = self.themes.keys(t for m in public for t in m.tags)
        keys = themes_of(public, key_of)
        language = language_of([m.content for m in (public or members)])
        words = {key: self._word(key, public, key_of, language) for key in keys}
        label = self._label(keys=keys, words=words, public=public, tone=tone, language=language, person=person)
        return label, tuple(words[key] for key in keys)

    def _word(self, key: str, public: Sequence[Memory], key_of: Mapping[str, str], language: str) -> str:
        """The word for a theme in a label in ``language``: the tag its memories use most in that language, else
        the lexicon's word, else a tag of that language learned for it, else the tag its memories use most."""
        japanese = language == "ja"
        counts = Counter(" ".join(t.split()) for m in public for t in m.tags if key_of.get(t) == key)
        written = [w for w in counts if is_japanese(w) == japanese]
        if written:
            return max(written, key=lambda w: counts[w])
        word = theme_word(key, language)
        if word is not None:
            return word
        learned = [t for t, k, ja, _b in self.db.themes() if k == key and ja == japanese]
        if learned:
            return learned[0]
        return max(counts, key=lambda w: counts[w]) if counts else key

    def _label(
        self,
        *,
        keys: Sequence[str],
        words: Mapping[str, str],
        public: Sequence[Memory],
        tone: str,
        language: str,
        person: str | None,
    ) -> str:
        """Its themes and feeling as a thought in the language of its memories (the person it is bound to named,
        and no theme twice); without themes, the most common first sentence of its public memories; without a
        public memory, nothing of them (not even the person)."""
        if not public:
            return PRIVATE[language]
        who = person_word(person, language, [t for m in public for t in m.tags]) if person else None
        skip = set(self.themes.keys([person]).values()) if person else set()
        shown = [words[key] for key in keys if key not in skip]
        if keys:
            return compose(shown, tone, language, who)
        candidates = [c for c in (first_sentence(m.content) for m in public) if c]
        if candidates:
            counts = Counter(candidates)
            best = max(counts.values())
            return next(c for c in candidates if counts[c] == best)
        return compose([], tone, language, who) if who else PRIVATE[language]

    # ----------------------------------------------------------------------------------------------
    # labels and tags drawn from public memories only

    def current(self, notions: Sequence[Notion], *, force: bool = False) -> list[Notion]:
        """``notions`` as they are now: one whose memory turned private or public, or was forgotten, since its
        label and tags were drawn has them drawn again from its public memories (and kept); with ``force``, every
        one. Whoever changed the memory (another process too), what is shown is drawn from what is public now."""
        service = self.memories()
        ids = list(dict.fromkeys(s for n in notions for s in n.sources))
        found: dict[str, Memory] = {}
        if service is None or not (ids or force):
            return list(notions)
        try:
            found = {m.id: m for m in service.get(ids)} if ids else {}
        except Exception as exc:  # the memory plugin's problem: the labels stay as they were last drawn
            log_event(self.log, "notions_labels_unchecked", error=type(exc).__name__)
            return list(notions)
        fresh: dict[str, Notion] = {}
        for notion in notions:
            present = [found[s] for s in notion.sources if s in found]
            private = {m.id for m in present if m.is_private}
            if force or len(present) != len(notion.sources) or private != set(notion.private_sources):
                fresh[notion.id] = self._redrawn(notion, present)
        if fresh:
            self.db.apply(save=list(fresh.values()))
            log_event(self.log, "notions_redrawn", count=len(fresh))
        return [fresh.get(n.id, n) for n in notions]

    def _redrawn(self, notion: Notion, present: Sequence[Memory]) -> Notion:
        """``notion`` with only the sources still kept (``present``), its tags drawn again from the public ones,
        and its label too unless the agent chose it and it quotes no private one."""
        members = _chronological(present)
        language = "ja" if is_japanese(notion.label) else "en"
        label, tags = self._drawn(members, notion.tone, notion.person, language)
        private = [m for m in members if m.is_private]
        kept = notion.chosen and not quotes(notion.label, [m.content for m in private])
        return attrs.evolve(
            notion,
            label=notion.label if kept else label,
            chosen=kept,
            tags=tags,
            sources=tuple(m.id for m in present),
            private_sources=tuple(m.id for m in private),
        )

    def reconcile(self) -> int:
        """Once after the upgrade that began to track it: every notion's label and tags checked against its
        memories (a label that is a memory's first sentence is drawn, not chosen). Returns how many changed."""
        service = self.memories()
        if self.db.flag(DRAWN_FLAG) is not None or service is None:
            return 0
        notions = self.db.all()
        ids = list(dict.fromkeys(s for n in notions for s in n.sources))
        try:
            found = {m.id: m for m in service.get(ids)} if ids else {}
        except Exception as exc:  # the memory plugin's problem: checked at the next start
            log_event(self.log, "notions_labels_unchecked", error=type(exc).__name__)
            return 0
        changed: list[Notion] = []
        for notion in notions:
            present = [found[s] for s in notion.sources if s in found]
            private = {m.id for m in present if m.is_private}
            chosen = notion.chosen and notion.label not in {first_sentence(m.content) for m in present}
            if len(present) != len(notion.sources) or private != set(notion.private_sources):
                changed.append(self._redrawn(attrs.evolve(notion, chosen=chosen), present))
            elif chosen != notion.chosen:
                changed.append(attrs.evolve(notion, chosen=chosen))
        self.db.apply(save=changed)
        self.db.set_flag(DRAWN_FLAG, self.now().isoformat())
        if changed:
            log_event(self.log, "notions_redrawn", count=len(changed))
        return len(changed)

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
        self.themes.index([memory])  # a public memory's tags: learned (a translation bridged) and kept
        now = self.now()
        save: list[Notion] = []
        delete: list[str] = []
        for notion in self.db.tagged(memory.tags):
            current = notion.confidence_at(now)
            if same_sign(memory.emotional_trace.valence, notion.valence):
                sources = notion.sources if memory.id in notion.sources else (*notion.sources, memory.id)
                hidden = notion.private_sources
                if memory.is_private and memory.id not in hidden:
                    hidden = (*hidden, memory.id)
                save.append(
                    attrs.evolve(
                        notion,
                        confidence=clamp(current + REINFORCE_STEP),
                        anchored=now,
                        reinforced=now,
                        reinforcement_count=notion.reinforcement_count + 1,
                        sources=sources,
                        private_sources=hidden,
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

    def revised(self, memory: Memory) -> None:
        """A memory's tags or privacy changed: its tags are read again (a private memory's are let go), and the
        notions holding it whose label and tags it turned private or public are drawn again (before its tags are
        let go, so that no theme stays kept for a tag only they held)."""
        if memory.is_private:
            self.current(self.db.holding([memory.id]))
        self.db.unindex_memory(memory.id)
        self.themes.index([memory])
        if not memory.is_private:
            self.current(self.db.holding([memory.id]))

    def forgot(self, memory_id: str) -> None:
        """Drop a forgotten memory from every notion's sources (their labels and tags drawn again from the public
        ones left), and its tags."""
        holding = [
            attrs.evolve(
                n,
                sources=tuple(s for s in n.sources if s != memory_id),
                private_sources=tuple(s for s in n.private_sources if s != memory_id),
            )
            for n in self.db.holding([memory_id])
        ]
        self.db.apply(save=holding)
        self.current(holding, force=True)
        self.db.unindex_memory(memory_id)

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


def _chronological(memories: Iterable[Memory]) -> list[Memory]:
    return sorted(memories, key=lambda m: (m.timestamp, m.id))


def _grown(notion: Notion, members: Sequence[Memory], now: datetime) -> Notion:
    """``notion`` with the memories of its group it did not hold yet: each that agrees with it (valence of the same
    sign) reinforces it, as it would have at ``remember``."""
    agreeing = [m for m in _chronological(members) if same_sign(m.emotional_trace.valence, notion.valence)]
    if not agreeing:
        return notion
    return attrs.evolve(
        notion,
        sources=(*notion.sources, *(m.id for m in agreeing)),
        private_sources=(*notion.private_sources, *(m.id for m in agreeing if m.is_private)),
        confidence=clamp(notion.confidence_at(now) + REINFORCE_STEP * len(agreeing)),
        anchored=now,
        reinforced=now,
        reinforcement_count=notion.reinforcement_count + len(agreeing),
    )


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
