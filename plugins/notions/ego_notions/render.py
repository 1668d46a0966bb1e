"""How notions show in other tools' answers: recall's notion lines, introspect's notion landscape and attune's
convictions line. Each shown notion is first brought up to date with its memories' privacy
(:meth:`~ego_notions.book.NotionBook.current`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from ego_core import Memory
from ego_notions.book import NotionBook
from ego_notions.model import CONVICTION_CONFIDENCE, Notion, meta_summary

RECALL_NOTIONS = 3
LANDSCAPE = 5
ATTUNE_CONVICTIONS = 2
LATELY = timedelta(days=3)
"""A contradiction this recent still shows in attune."""


def _related(book: NotionBook, notion: Notion, limit: int = 2) -> list[Notion]:
    now = book.now()
    return book.current(sorted(book.db.many(notion.related), key=lambda n: (-n.confidence_at(now), n.label))[:limit])


def recall_lines(book: NotionBook, memories: Sequence[Memory]) -> tuple[str, ...]:
    """Notions sharing a memory or a tag with the recalled memories (at most three)."""
    if not memories:
        return ()
    now = book.now()
    ids = {m.id for m in memories}
    tags = [t for m in memories for t in m.tags]
    themes = set(book.themes.keys(tags).values())
    found = {n.id: n for n in [*book.db.holding(ids), *book.db.tagged(tags)]}
    if not found:
        return ()

    def key(n: Notion) -> tuple[int, int, float, str]:
        return (
            -len(ids.intersection(n.sources)),
            -len(themes.intersection(book.themes.key_set(n.tags))),
            -n.confidence_at(now),
            n.label,
        )

    lines = ["Notions:"]
    for notion in book.current(sorted(found.values(), key=key)[:RECALL_NOTIONS]):
        lines.append(f'"{notion.label}" {notion.tone} confidence: {notion.confidence_at(now):.1f}')
        for field_key, field in sorted(notion.meta.items()):
            if field.get("type") == "text":
                value = str(field.get("value", ""))
                lines.append(f"  [{field_key}] {value if len(value) <= 50 else value[:47] + '...'}")
        related = _related(book, notion)
        if related:
            lines.append("  → " + ", ".join(f'"{r.label}" confidence: {r.confidence_at(now):.1f}' for r in related))
    return tuple(lines)


def introspect_text(book: NotionBook) -> str:
    """``Notion landscape:`` the strongest notions (confidence ≥ 0.7), at most five."""
    now = book.now()
    strong = book.current([n for n in book.ranked(now) if n.confidence_at(now) >= CONVICTION_CONFIDENCE][:LANDSCAPE])
    if not strong:
        return ""
    lines = ["Notion landscape:"]
    for notion in strong:
        related = _related(book, notion)
        arrow = " → " + ", ".join(f'"{r.label}"' for r in related) if related else ""
        mark = " (conviction)" if notion.is_conviction(now) else ""
        lines.append(
            f'- "{notion.label}" confidence: {notion.confidence_at(now):.1f}{mark}{arrow}{meta_summary(notion)}'
        )
    return "\n".join(lines)


def attune_text(book: NotionBook) -> str:
    """The strongest convictions (at most two), and the notion a contradiction weakened lately, in one line."""
    now = book.now()
    ranked = book.ranked(now)
    named = [n for n in ranked if n.is_conviction(now)][:ATTUNE_CONVICTIONS]
    shaken = sorted(
        (n for n in ranked if n.contradicted is not None and now - LATELY <= n.contradicted <= now),
        key=lambda n: (n.contradicted, n.id),
        reverse=True,
    )
    shown = {n.id: n for n in book.current([*named, *shaken[:1]])}
    named = [shown[n.id] for n in named]
    doubt = shown[shaken[0].id] if shaken else None
    parts: list[str] = []
    if named:
        doubted = doubt.id if doubt is not None else None
        marked = [f'"{n.label}"' + (" (feels less certain lately)" if n.id == doubted else "") for n in named]
        parts.append(f"Convictions: {', '.join(marked)}.")
    if doubt is not None and all(n.id != doubt.id for n in named):
        parts.append(f'"{doubt.label}" feels less certain lately.')
    return " ".join(parts)
