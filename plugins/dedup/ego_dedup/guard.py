"""The duplicate guard on ``remember``.

A memory whose nearest existing memory is at least ``dedup_threshold`` similar adds nothing to the store but
noise in recall; it is not stored, and the agent gets the existing memory back to judge the difference.
"""

from __future__ import annotations

from datetime import datetime

import attrs

from ego_core import Memory, MemoryService, Response, ScaffoldItem, relative_age, truncate

NOT_SAVED = "Not saved — very similar memory already exists."
EXISTING_SNIPPET = 120
PRIVATE_AGE_NOTE = ", private"
"""Follows the existing memory's age when it is private: ``Existing (id: …, 2h ago, private): …``."""
UPDATE_HINT_WITH_RECALL = (
    "If this is a meaningful update, use recall to review the existing memory and consider whether the new "
    "perspective adds value."
)
UPDATE_HINT = (
    "If this is a meaningful update, review the existing memory and consider whether the new perspective adds value."
)
GUARD_SCAFFOLD: tuple[ScaffoldItem, ...] = (
    "Is there truly something new here, or is this a repetition?",
    "If your understanding has deepened, try expressing what changed specifically.",
)


@attrs.frozen
class Duplicate:
    """The existing memory a new one repeats, and how similar they are (1.0 for the exact same text)."""

    existing: Memory
    similarity: float
    exact: bool


NEIGHBOURS = 3
"""How many of the nearest memories may be the one repeated (the nearest may differ by a negation)."""


def find_duplicate(
    service: MemoryService, content: str, threshold: float, anticipated: datetime | None = None
) -> Duplicate | None:
    """The existing memory ``content`` repeats, or ``None``.

    The exact same text is found by its hash without computing an embedding. Otherwise the nearest memories
    are asked for once (the memory plugin reuses that answer and the embedding when it stores the memory): the
    most similar one at or above ``threshold`` that says the same thing - no negation, number or wording
    contrast (``MemoryService.contrast``) - is the duplicate. 映画を見なかった is not 映画を見た, whatever the
    cosine. Neither lookup counts as an access of the memory found.

    Only a memory anticipating the same moment (``anticipated``; None: none) can be repeated: a plan for a moment
    ahead and a memory of what happened are two memories, however alike their words.
    """
    same = service.find_exact(content)
    if same is not None and same.anticipated == anticipated:
        return Duplicate(existing=same, similarity=1.0, exact=True)
    for memory, similarity in service.nearest(content, NEIGHBOURS):
        if similarity < threshold:
            break
        if memory.anticipated == anticipated and service.contrast(content, memory.content) is None:
            return Duplicate(existing=memory, similarity=similarity, exact=False)
    return None


def duplicate_response(duplicate: Duplicate, now: datetime, *, recall_served: bool) -> Response:
    """The "Not saved" answer. It quotes the existing memory even when it is private, marked so: tool results go
    to the agent itself, whose memory it is (logs and files are redacted elsewhere)."""
    existing = duplicate.existing
    similarity = min(1.0, max(0.0, duplicate.similarity))
    data = "\n".join(
        [
            NOT_SAVED,
            f"Existing (id: {existing.id}, {relative_age(existing.timestamp, now)}"
            f"{PRIVATE_AGE_NOTE if existing.is_private else ''}): "
            f"{truncate(existing.content, EXISTING_SNIPPET)}",
            f"Similarity: {similarity:.2f}",
            UPDATE_HINT_WITH_RECALL if recall_served else UPDATE_HINT,
        ]
    )
    return Response(data=data, scaffold=GUARD_SCAFFOLD, declined=True)
