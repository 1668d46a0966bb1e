"""Small helpers for the words of responses."""

from __future__ import annotations


def count_of(count: int, singular: str, plural: str | None = None) -> str:
    """``1 memory``, ``2 memories``, ``0 links``."""
    return f"{count} {singular if count == 1 else plural or singular + 's'}"
