"""Ripening: a question at rest gathers company while it is out of mind, and comes back with it once.

Each ``consolidate`` feeds the fading questions of importance 2 or more, the longest unfed first (at most
``ripening_per_run``). Among the memories most similar to a question (``ripening_search``), the two closest in
the companion band, related but not obviously (from the model's relevance ``floor`` up to its ``related``
similarity, from which a memory would bring the question straight back), become its companions if it has not
gathered them already; and one pair that disagrees, two nearby memories sharing two tags with opposed feelings
(else two notions alike), becomes a tension. Only ids are kept.

A question with ``ripe_companions`` deposits is ripe: ``introspect`` shows it once with its company (quoted from
the memory plugin when shown, a private memory marked as such), and lets the company go; ``wake_up`` only points
at it. ``attune`` may sense that something is ripening, without naming it.
"""

from __future__ import annotations

import itertools
import logging
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime, tzinfo
from typing import Final

import attrs

from ego_core import (
    MEMORY_STORE,
    Memory,
    MemoryService,
    PluginContext,
    ScaffoldLine,
    Section,
    log_event,
    truncate,
    when_words,
)
from ego_notions.api import NOTIONS_STORE, NotionStore, NotionView
from ego_self_model.config import SelfModelConfig
from ego_self_model.questions import QuestionView, holder_name, views
from ego_self_model.store import Companion, Question, StateStore

_log = logging.getLogger("ego.plugin.self_model")

MIN_IMPORTANCE: Final = 2
"""Only questions at least this important ripen."""
COMPANIONS_PER_FEED: Final = 2
TENSION_TAGS: Final = 2
"""Tags two memories (or notions) must share to be a tension."""
TENSION_VALENCE: Final = 0.3
"""Both feelings at least this strong (in valence), of opposite signs."""
QUOTE_CHARS: Final = 60
LINES_SHOWN: Final = 3
QUESTION_CHARS: Final = 160
EDGE_CHARS: Final = 48
"""How much of the question wake_up's Open edge quotes (without its id: introspect lists the ids)."""
PRIVATE_QUOTE_PREFIX: Final = "(private) "
"""Marks a private memory among the company, as remember marks its related memories."""


GATHERED: Final = "A few resting questions gathered company."
HINT: Final = "Something is ripening where you're not looking."
RIPENED_HEAD: Final = "A question you'd set aside has gathered strange companions:"
DISAGREE: Final = "these two don't agree"
FIT_SCAFFOLD: Final = "They don't obviously fit together. What do they want to say to each other?"


def band(memory: MemoryService, config: SelfModelConfig) -> tuple[float, float]:
    """The companion band ``[low, high)``, unless configured: near enough that recall would show the memory for
    the question (the model's relevance ``floor``), but not so near that it would bring the question back at
    once (below its ``related``)."""
    profile = memory.similarity_profile
    low = profile.floor if config.companion_low is None else config.companion_low
    high = profile.related if config.companion_high is None else config.companion_high
    return low, high


def resting(questions: Sequence[Question], now: datetime, config: SelfModelConfig) -> list[QuestionView]:
    """The unresolved questions that can ripen now: fading, and of importance 2 or more."""
    return [
        v
        for v in views(questions, now, config)
        if v.state == "fading" and v.question.importance >= MIN_IMPORTANCE and v.question.resolved is None
    ]


def targets(questions: Sequence[Question], now: datetime, config: SelfModelConfig) -> list[Question]:
    """The questions one consolidate feeds: resting ones, never fed first, then the longest unfed."""
    found = [v.question for v in resting(questions, now, config)]
    found.sort(key=lambda q: (q.last_fed is not None, q.last_fed or q.created, q.created, q.id))
    return found[: config.ripening_per_run]


def _tags(tags: Sequence[str]) -> frozenset[str]:
    return frozenset(tag.casefold() for tag in tags)


def _opposed(first: float, second: float) -> bool:
    return abs(first) >= TENSION_VALENCE and abs(second) >= TENSION_VALENCE and first * second < 0


def _memory_tension(
    question: str, nearby: Sequence[tuple[Memory, float]], recorded: set[frozenset[str]], now: datetime
) -> Companion | None:
    """The closest pair of nearby memories sharing two tags with opposed feelings, not recorded yet."""
    best: tuple[tuple[float, str, str], Companion] | None = None
    for (a, sa), (b, sb) in itertools.combinations(nearby, 2):
        if frozenset((a.id, b.id)) in recorded or len(_tags(a.tags) & _tags(b.tags)) < TENSION_TAGS:
            continue
        if not _opposed(a.emotional_trace.valence, b.emotional_trace.valence):
            continue
        key = (-(sa + sb), min(a.id, b.id), max(a.id, b.id))
        if best is None or key < best[0]:
            found = Companion(
                question,
                "tension",
                a.id,
                now,
                second=b.id,
                similarity=(sa + sb) / 2,
                private=a.is_private or b.is_private,
            )
            best = (key, found)
    return best[1] if best is not None else None


def _notion_tension(
    question: str,
    nearby: Sequence[tuple[Memory, float]],
    notions: Sequence[NotionView],
    recorded: set[frozenset[str]],
    now: datetime,
) -> Companion | None:
    """The first pair of notions (by id) sharing two tags with opposed feelings, one of them sharing a tag with
    the nearby memories, not recorded yet."""
    near_tags = frozenset().union(*(_tags(m.tags) for m, _ in nearby)) if nearby else frozenset()
    felt = sorted((n for n in notions if abs(n.valence) >= TENSION_VALENCE), key=lambda n: n.id)
    by_tag: dict[str, list[NotionView]] = defaultdict(list)
    for notion in felt:
        for tag in _tags(notion.tags):
            by_tag[tag].append(notion)
    pairs: set[tuple[str, str]] = set()
    for notion in felt:
        if not _tags(notion.tags) & near_tags:
            continue
        for tag in _tags(notion.tags):
            for other in by_tag[tag]:
                if other.id == notion.id or len(_tags(notion.tags) & _tags(other.tags)) < TENSION_TAGS:
                    continue
                if _opposed(notion.valence, other.valence) and frozenset((notion.id, other.id)) not in recorded:
                    pairs.add((min(notion.id, other.id), max(notion.id, other.id)))
    if not pairs:
        return None
    first, second = min(pairs)
    return Companion(question, "tension_notion", first, now, second=second)


def gather(
    question: str,
    hits: Sequence[tuple[Memory, float]],
    *,
    had: Sequence[Companion],
    notions: Sequence[NotionView],
    company: tuple[float, float],
    now: datetime,
) -> list[Companion]:
    """What one feeding deposits: up to two new companions in the band, and one tension."""
    low, high = company
    kept = {c.first for c in had if c.kind != "tension_notion"}
    kept |= {c.second for c in had if c.kind == "tension" and c.second is not None}
    pairs = {frozenset((c.first, c.second)) for c in had if c.kind == "tension" and c.second is not None}
    notion_pairs = {frozenset((c.first, c.second)) for c in had if c.kind == "tension_notion" and c.second}
    nearby = [(m, s) for m, s in hits if s >= low]
    close = sorted(((m, s) for m, s in nearby if s < high and m.id not in kept), key=lambda h: (-h[1], h[0].id))
    found = [
        Companion(question, "companion", m.id, now, similarity=s, private=m.is_private)
        for m, s in close[:COMPANIONS_PER_FEED]
    ]
    tension = _memory_tension(question, nearby, pairs, now)
    if tension is None:
        tension = _notion_tension(question, nearby, notions, notion_pairs, now)
    if tension is not None:
        found.append(tension)
    return found


def ripest(questions: Sequence[Question], counts: Mapping[str, int], config: SelfModelConfig) -> Question | None:
    """The ripe question to bring back: unresolved with the most company (at least ``ripe_companions``), the
    longest unfed among equals."""
    ripe = [q for q in questions if q.resolved is None and counts.get(q.id, 0) >= config.ripe_companions]
    if not ripe:
        return None
    return min(ripe, key=lambda q: (-counts[q.id], q.last_fed is not None, q.last_fed or q.created, q.created, q.id))


def _quote(memory: Memory) -> str:
    mark = PRIVATE_QUOTE_PREFIX if memory.is_private else ""
    return f'{mark}"{truncate(memory.content, QUOTE_CHARS)}"'


def company_lines(
    company: Sequence[Companion],
    memories: Mapping[str, Memory],
    notions: Mapping[str, NotionView],
    now: datetime,
    tz: tzinfo,
) -> list[str]:
    """The company in the order it came, at most three lines; what no longer exists is left out. A memory's time
    since it was stored is said by the local days of ``tz``: ``(last night)``, ``(about two months)``."""
    lines: list[str] = []
    for deposit in company:
        if deposit.kind == "companion":
            memory = memories.get(deposit.first)
            if memory is not None:
                since = when_words(memory.timestamp, now, tz).removesuffix(" ago")
                lines.append(f"- {_quote(memory)} ({since})")
        elif deposit.kind == "tension":
            a, b = memories.get(deposit.first), memories.get(deposit.second or "")
            if a is not None and b is not None:
                lines.append(f"- {_quote(a)} / {_quote(b)} — {DISAGREE}")
        else:
            x, y = notions.get(deposit.first), notions.get(deposit.second or "")
            if x is not None and y is not None:
                lines.append(f'- "{truncate(x.label, QUOTE_CHARS)}" / "{truncate(y.label, QUOTE_CHARS)}" — {DISAGREE}')
        if len(lines) == LINES_SHOWN:
            break
    return lines


def ripened_text(question: Question, lines: Sequence[str], holder: str | None) -> str:
    block = [RIPENED_HEAD, f'"[{question.id}] {truncate(question.text, QUESTION_CHARS)}"', "alongside:", *lines]
    if holder is not None:
        block.append(f"This one is held with {holder} — it may be wanting to go back to them.")
    return "\n".join(block)


SUPERSEDE_SCAFFOLD: Final = ScaffoldLine(
    'If it has changed shape, say it anew (update_self new_question with "supersedes").', needs={"update_self"}
)
"""The question's id is in the block, right above; the short form keeps introspect near its budget."""


@attrs.frozen
class Feeding:
    """What one consolidate's feeding did."""

    fed: int = 0
    deposits: int = 0


class Ripening:
    """Ripening over the self-model's store, with the memory plugin's store (and the notions', when enabled)."""

    def __init__(self, ctx: PluginContext, store: StateStore, config: SelfModelConfig) -> None:
        self.ctx = ctx
        self.store = store
        self.config = config

    def _memory(self) -> MemoryService | None:
        return self.ctx.services.get(MEMORY_STORE, MemoryService)

    def _notions(self) -> Sequence[NotionView]:
        notions = self.ctx.services.get(NOTIONS_STORE, NotionStore)
        if notions is None:
            return []
        try:
            return list(notions.notions())
        except Exception as exc:  # the notions plugin's problem: memories still keep a question company
            _log.warning("reading the notions failed (%s)", type(exc).__name__)
            return []

    # ------------------------------------------------------------------------------------------
    # consolidate

    def feed(self) -> Feeding:
        """Feed the resting questions whose turn it is; each is marked fed, even when nothing was found."""
        memory = self._memory()
        if memory is None or self.config.ripening_per_run == 0:
            return Feeding()
        now = self.ctx.now()
        with self.store.reading() as db:
            chosen = targets(self.store.questions(db), now, self.config)
        if not chosen:
            return Feeding()
        company = band(memory, self.config)
        notions = self._notions()
        deposits = 0
        for question in chosen:
            try:
                hits = memory.nearest(question.text, self.config.ripening_search)
            except Exception as exc:  # the memory plugin's problem: this question waits for its next turn
                _log.warning("ripening could not search the memories (%s)", type(exc).__name__)
                continue
            with self.store.writing() as db:
                current = self.store.question(db, question.id)
                if current is None or current.resolved is not None:
                    continue
                had = self.store.companions(db, question.id)
                found = gather(question.id, hits, had=had, notions=notions, company=company, now=now)
                for deposit in found:
                    self.store.add_companion(db, deposit)
                self.store.fed(db, question.id, now)
            deposits += len(found)
        log_event(_log, "ripening_fed", questions=len(chosen), deposits=deposits)
        return Feeding(fed=len(chosen), deposits=deposits)

    def consolidated(self) -> Section | None:
        """consolidate's line, only when some question gathered something."""
        feeding = self.feed()
        if feeding.deposits == 0:
            return None
        return Section(key="self_model.ripening", text=GATHERED, slot="self_model.ripening")

    # ------------------------------------------------------------------------------------------
    # introspect, wake_up, attune

    def take_ripened(self) -> Section | None:
        """The ripe question with its company (once: the company is let go, whether or not any of it still
        exists), or None."""
        memory = self._memory()
        if memory is None:
            return None
        with self.store.reading() as db:
            question = ripest(self.store.questions(db), self.store.companion_counts(db), self.config)
            if question is None:
                return None
            company = self.store.companions(db, question.id)
            people = self.store.people(db)
        ids = [i for c in company if c.kind != "tension_notion" for i in (c.first, c.second) if i is not None]
        try:
            memories = {m.id: m for m in memory.get(list(dict.fromkeys(ids)))}
        except Exception as exc:  # the memory plugin's problem: the question stays ripe for the next introspect
            _log.warning("reading a ripe question's company failed (%s)", type(exc).__name__)
            return None
        notions = {n.id: n for n in self._notions()} if any(c.kind == "tension_notion" for c in company) else {}
        now = self.ctx.now()
        lines = company_lines(company, memories, notions, now, self.ctx.settings.tz)
        with self.store.writing() as db:
            self.store.clear_companions(db, question.id)
        log_event(_log, "ripening_resurfaced", shown=bool(lines))
        if not lines:
            return None
        return Section(
            key="self_model.ripened",
            text=ripened_text(question, lines, holder_name(question, people)),
            slot="self_model.ripened",
            scaffold=(FIT_SCAFFOLD, SUPERSEDE_SCAFFOLD),
        )

    def open_edge(self) -> Section | None:
        """wake_up's one short line (the question without its id, for the token budget): the ripe question,
        pointed at (introspect shows it; nothing is consumed), else, with ``open_edge_active``, the most salient
        active question; None when there is neither."""
        now = self.ctx.now()
        with self.store.reading() as db:
            questions = self.store.questions(db)
            counts = self.store.companion_counts(db)
        ripe = ripest(questions, counts, self.config) if self._memory() is not None else None
        if ripe is not None:
            text = f'Open edge: "{truncate(ripe.text, EDGE_CHARS)}" has gathered company; introspect holds it.'
        elif self.config.open_edge_active:
            active = [v.question for v in views(questions, now, self.config) if v.state == "active"]
            if not active:
                return None
            text = f'Open edge: "{truncate(active[0].text, EDGE_CHARS)}"'
        else:
            return None
        return Section(key="self_model.open_edge", text=text, slot="self_model.open_edge")

    def hint(self, chance: random.Random) -> Section | None:
        """attune's hint, by chance, when a resting question has gathered some company (nothing is consumed)."""
        now = self.ctx.now()
        with self.store.reading() as db:
            questions = self.store.questions(db)
            counts = self.store.companion_counts(db)
        if not any(counts.get(v.question.id, 0) > 0 for v in resting(questions, now, self.config)):
            return None
        if chance.random() >= self.config.ripening_hint_chance:
            return None
        log_event(_log, "ripening_presence_shown")
        return Section(key="self_model.ripening", text=HINT, slot="self_model.ripening")
