"""How the memory tools word their answers: the scores beside recalled memories, the matches header, emotions,
and the lines other plugins add to a response."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ego_core import Claim, EmotionalTrace, RecallHit, Section
from ego_memory.recall.ranking import Matches
from ego_memory.record.emotions import VIVID_INTENSITY
from ego_memory.text.wording import count_of


def relevance(hit: RecallHit) -> float:
    """The hit's calibrated relevance (0-1, comparable across queries), or, when the ranking did not measure
    one, its ranking score squashed into 0-1."""
    if hit.relevance is not None:
        return hit.relevance
    return 1.0 / (1.0 + math.exp(-hit.score))


def shown_scores(hits: Sequence[RecallHit]) -> list[float | None]:
    """The score recall and search_memories show beside each hit, in the order shown: non-increasing down the list.

    A memory a link brought (``linked``) or one that came back unbidden shows no score (None): neither holds its
    place by it. The others show their relevance where the ranking agrees with it; where the ranking puts a less
    related memory above a more related one (for its recency, emotion, importance or links), the memories between
    show their mean relevance (an isotonic fit, pool adjacent violators), so the score is a non-decreasing
    function of the ranking score: memories tied in the ranking show one score."""
    scored = [i for i, hit in enumerate(hits) if not (hit.linked or hit.unbidden)]
    blocks: list[tuple[float, int, float]] = []  # (sum of relevance, count, ranking score of the block's last)
    for i in scored:
        hit = hits[i]
        if blocks and blocks[-1][2] == hit.score:  # a tie in the ranking: one score
            total, count, _ = blocks.pop()
            blocks.append((total + relevance(hit), count + 1, hit.score))
        else:
            blocks.append((relevance(hit), 1, hit.score))
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] < blocks[-1][0] / blocks[-1][1]:
            total, count, score = blocks.pop()
            before_total, before_count, _ = blocks.pop()
            blocks.append((before_total + total, before_count + count, score))
    values = [total / count for total, count, _ in blocks for _ in range(count)]
    shown: list[float | None] = [None] * len(hits)
    for i, value in zip(scored, values, strict=True):
        shown[i] = value
    return shown


def matches_header(hits: Sequence[RecallHit], matches: Matches | None) -> str:
    """``3 of 7 matches:`` — how many of the memories shown match the context, of how many match it in all (the
    candidates related to the context that the filters admit; ``60+``: at least that many). Memories shown that
    do not match are counted after it (``2 of 7 matches, 1 linked:``). Without a relevance measure (the stage
    off): ``3 memories:``."""
    if matches is None:
        return f"{count_of(len(hits), 'memory', 'memories')}:"
    linked = sum(1 for hit in hits if hit.linked)
    stray = sum(1 for hit in hits if hit.unbidden and not hit.linked and not relevance(hit))
    shown = len(hits) - linked - stray
    total = max(matches.count, shown)
    header = f"{shown} of {total}{'+' if matches.capped else ''} {'match' if total == 1 else 'matches'}"
    if linked:
        header += f", {linked} linked"
    if stray:
        header += f", {stray} unbidden"
    return header + ":"


def score_words(score: float | None, hit: RecallHit, *, label: str = "score ") -> str:
    """What a result line shows for its score: ``score 0.81``, or what the memory is when it has none
    (``linked``: a link brought it; ``unbidden``: it came back on its own)."""
    if score is not None:
        return f"{label}{score:.2f}"
    return "linked" if hit.linked else "unbidden"


def render_emotion(trace: EmotionalTrace) -> str:
    if trace.intensity >= VIVID_INTENSITY:
        return f"{trace.primary}({trace.intensity:.1f})"
    return trace.primary


def extra_lines(results: Sequence[tuple[str, Any]], claims: list[Claim] | None = None) -> list[str]:
    """The response lines plugins returned from a notification (a single string counts as one line; a
    :class:`~ego_core.Section` gives its text, and its claims to ``claims`` when given)."""
    lines: list[str] = []
    for _plugin, extra in results:
        for item in [extra] if isinstance(extra, str | Section) else extra:
            if isinstance(item, Section):
                lines.extend(item.text.splitlines())
                if claims is not None:
                    claims.extend(item.claims)
            else:
                lines.append(str(item))
    return lines
