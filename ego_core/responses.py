"""Helpers for composing tool responses: ``data + "\\n\\n---\\n" + scaffold`` and short renderings."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from ego_core.types import ScaffoldItem, ScaffoldLine, Section

SEPARATOR = "\n\n---\n"


def scaffold_text(items: Iterable[ScaffoldItem], served: Collection[str]) -> list[str]:
    """Lines of scaffold whose ``needs`` are all served, without duplicates, in order."""
    lines: list[str] = []
    for item in items:
        if isinstance(item, ScaffoldLine):
            if not item.needs <= set(served):
                continue
            text = item.text
        else:
            text = item
        if text and text not in lines:
            lines.append(text)
    return lines


def compose(data: str, scaffold: Iterable[str]) -> str:
    lines = [line for line in scaffold if line]
    return f"{data}{SEPARATOR}{chr(10).join(lines)}" if lines else data


def truncate(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters (newlines folded, ``…`` when cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)].rstrip() + "…"


def relative_age(moment: datetime, now: datetime) -> str:
    """``just now``, ``5m ago``, ``3h ago``, ``2d ago``, ``3w ago``, ``4mo ago``, ``2y ago``."""
    delta = now - moment
    if delta < timedelta(0):
        return "in the future"
    seconds = delta.total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)}m ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h ago"
    days = delta.days
    if days < 14:
        return f"{days}d ago"
    if days < 60:
        return f"{days // 7}w ago"
    if days < 365:
        return f"{days // 30}mo ago"
    return f"{days // 365}y ago"


def compose_sections(results: Sequence[tuple[str, Any]]) -> tuple[list[str], list[ScaffoldItem]]:
    """Order sections by (order, key); a plugin may return a Section, a str, or a list of them."""
    sections: list[Section] = []
    for plugin, result in results:
        items = result if isinstance(result, list | tuple) else [result]
        for item in items:
            if isinstance(item, Section):
                sections.append(item)
            elif isinstance(item, str) and item.strip():
                sections.append(Section(key=plugin, text=item))
    sections.sort(key=lambda s: (s.order, s.key))
    texts = [s.text.rstrip() for s in sections if s.text.strip()]
    scaffold = [line for s in sections for line in s.scaffold]
    return texts, scaffold
