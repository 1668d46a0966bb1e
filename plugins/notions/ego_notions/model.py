"""Notions as values, and the pure rules that form, label, decay and merge them."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import attrs

from ego_core import Memory
from ego_notions.api import NotionView

MIN_MEMBERS = 3
CONVICTION_COUNT = 5
CONVICTION_CONFIDENCE = 0.7
HALF_LIFE_DAYS = 30.0
CONVICTION_HALF_LIFE_DAYS = 90.0
DECAY_GRACE = timedelta(hours=24)
PRUNE_BELOW = 0.15
REINFORCE_STEP = 0.1
CONTRADICT_STEP = 0.15
DORMANT_BELOW = 0.2
WEAKENED_DROP = 0.1
"""A notion this much less certain than at the previous wake_up has weakened."""
DUPLICATE_JACCARD = 0.6
LINK_SHARED = 2
LABEL_CHARS = 48
META_TYPES = ("text", "notion_ids")

_SESSION = re.compile(r"session (start|end)|セッション(開始|終了)", re.IGNORECASE)
_FAREWELL = re.compile(r"^\s*(【セッション|goodbye|bye|see you|また|おやすみ)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?。！？\n]")
_TRIM = " \t\"'`“”‘’「」『』()[]{}（）【】<>《》〈〉・,、;:：；-—…"


@attrs.frozen
class Notion:
    """One notion. ``confidence`` was true at ``anchored``; it decays from there (never compounded)."""

    id: str
    label: str
    tone: str
    valence: float
    confidence: float
    anchored: datetime
    created: datetime
    reinforced: datetime
    sources: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    reinforcement_count: int = 0
    person: str | None = None
    meta: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    contradicted: datetime | None = None
    """When a contradicting memory last weakened it (None: never)."""
    chosen: bool = False
    """The label is the agent's own (``curate_notions relabel``), not drawn from the memories."""
    private_sources: tuple[str, ...] = ()
    """The sources that were private when the label and tags were last drawn (or private when they joined): when
    one turns private or public, or a source is forgotten, both are drawn again from the public ones."""

    def confidence_at(self, now: datetime) -> float:
        """The confidence now: halved every half-life since it was set (not during the first day)."""
        start = max(self.anchored, self.created + DECAY_GRACE)
        days = max(0.0, (now - start).total_seconds() / 86400)
        held = self.reinforcement_count >= CONVICTION_COUNT and self.confidence >= CONVICTION_CONFIDENCE
        half_life = CONVICTION_HALF_LIFE_DAYS if held else HALF_LIFE_DAYS
        return clamp(self.confidence * 0.5 ** (days / half_life))

    def is_conviction(self, now: datetime) -> bool:
        return self.reinforcement_count >= CONVICTION_COUNT and self.confidence_at(now) >= CONVICTION_CONFIDENCE

    def view(self, now: datetime) -> NotionView:
        return NotionView(
            id=self.id,
            label=self.label,
            tags=self.tags,
            tone=self.tone,
            valence=self.valence,
            confidence=round(self.confidence_at(now), 4),
            is_conviction=self.is_conviction(now),
            person=self.person,
            reinforced_at=self.reinforced,
            reinforcement_count=self.reinforcement_count,
            created=self.created,
        )


def clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    return low if not math.isfinite(value) else min(high, max(low, value))


def rank_key(notion: Notion, now: datetime) -> tuple[float, int, str, str]:
    """Most confident first, then most reinforced, then label, then id."""
    return (-round(notion.confidence_at(now), 6), -notion.reinforcement_count, notion.label.casefold(), notion.id)


def jaccard(first: Iterable[str], second: Iterable[str]) -> float:
    a, b = set(first), set(second)
    return len(a & b) / len(a | b) if a or b else 0.0


def is_ephemeral(members: Sequence[Memory]) -> bool:
    """More than half are session greetings, or more than half are of importance 1."""
    half = len(members) / 2
    greetings = sum(1 for m in members if _SESSION.search(m.content) or _FAREWELL.match(m.content))
    trivial = sum(1 for m in members if m.importance <= 1)
    return greetings > half or trivial > half


def tone_of(members: Sequence[Memory]) -> str:
    """The most frequent primary emotion; a tie goes to the one met first."""
    counts = Counter(m.emotional_trace.primary for m in members)
    best = max(counts.values())
    return next(m.emotional_trace.primary for m in members if counts[m.emotional_trace.primary] == best)


def confidence_for(size: int) -> float:
    return min(0.3 + 0.1 * size, 0.9)


def themes_of(members: Sequence[Memory], key_of: Mapping[str, str]) -> list[str]:
    """The theme keys of a group (``key_of`` maps a tag to its theme): those every tagged member shares, else the two
    most frequent; the most frequent first, then in the order ``members`` (oldest first) met them."""
    tagged = [list(dict.fromkeys(key_of[t] for t in m.tags if t in key_of)) for m in members]
    tagged = [keys for keys in tagged if keys]
    if not tagged:
        return []
    counts: Counter[str] = Counter(key for keys in tagged for key in keys)
    order = list(dict.fromkeys(key for keys in tagged for key in keys))
    ranked = sorted(order, key=lambda key: (-counts[key], order.index(key)))
    shared = [key for key in ranked if counts[key] == len(tagged)]
    return shared or ranked[:2]


def first_sentence(content: str) -> str:
    """The text before the first sentence end, trimmed, at most 48 characters (45 plus "...")."""
    folded = " ".join(content.split())
    head = _SENTENCE_END.split(folded, maxsplit=1)[0].strip(_TRIM)
    if len(head) > LABEL_CHARS:
        head = head[:45].rstrip(_TRIM) + "..."
    return head


def same_sign(first: float, second: float) -> bool:
    return first == 0 or second == 0 or (first > 0) == (second > 0)


def merged(
    kept: Notion, absorbed: Notion, now: datetime, person: str | None = None, *, set_person: bool = False
) -> Notion:
    """``absorbed`` folded into ``kept``: unions of sources, tags and links, the higher confidence, summed counts."""
    chosen = person if set_person else kept.person or absorbed.person
    confidence = max(kept.confidence_at(now), absorbed.confidence_at(now))
    related = tuple(r for r in dict.fromkeys((*kept.related, *absorbed.related)) if r not in (kept.id, absorbed.id))
    meta = {**absorbed.meta, **kept.meta}
    return attrs.evolve(
        kept,
        sources=tuple(dict.fromkeys((*kept.sources, *absorbed.sources))),
        tags=tuple(dict.fromkeys((*kept.tags, *absorbed.tags))),
        related=related,
        confidence=confidence,
        anchored=now,
        reinforced=max(kept.reinforced, absorbed.reinforced),
        created=min(kept.created, absorbed.created),
        reinforcement_count=kept.reinforcement_count + absorbed.reinforcement_count,
        person=chosen,
        meta=meta,
        contradicted=max((t for t in (kept.contradicted, absorbed.contradicted) if t is not None), default=None),
        private_sources=tuple(dict.fromkeys((*kept.private_sources, *absorbed.private_sources))),
    )


def relinked(notion: Notion, gone: str, into: str) -> Notion:
    """``notion`` with references to ``gone`` pointed at ``into`` (no duplicates, no self-reference)."""
    related = tuple(r for r in dict.fromkeys(into if r == gone else r for r in notion.related) if r != notion.id)
    meta: dict[str, Mapping[str, Any]] = {}
    for key, field in notion.meta.items():
        if field.get("type") == "notion_ids":
            ids = [into if i == gone else i for i in field.get("value", [])]
            ids = [i for i in dict.fromkeys(ids) if i != notion.id]
            meta[key] = {"type": "notion_ids", "value": ids}
        else:
            meta[key] = field
    return attrs.evolve(notion, related=related, meta=meta)


def meta_summary(notion: Notion) -> str:
    if not notion.meta:
        return ""
    fields = ", ".join(f"{key}:{field.get('type')}" for key, field in sorted(notion.meta.items()))
    return f" meta=[{fields}]"
