"""What dedup never takes for a duplicate: a memory anticipating a moment is not a repeat of a memory of the
past (nor the other way round), and consolidate never proposes to merge a protected memory (precious, or
anticipating a moment still ahead)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta

import pytest
from dedup_support import NOON, PARAPHRASES, UNRELATED, remember, saved_id

from ego_core import Clock, PluginHost
from ego_core.testing import mcp_client, tool_text

pytestmark = pytest.mark.anyio

PAIR_LINE = re.compile(r"^- (mem_[0-9a-f]{12}) <-> (mem_[0-9a-f]{12}) \(similarity: 0\.\d\d\)$", re.MULTILINE)
FRIDAY = (NOON + timedelta(days=3)).isoformat()
LATER = (NOON + timedelta(days=30)).isoformat()
TONIGHT = (NOON + timedelta(hours=6)).isoformat()


async def test_dedup_guard_keeps_an_anticipation_apart_from_the_same_words_in_the_past(
    dedup_host: Callable[..., PluginHost],
) -> None:
    host = dedup_host()
    text = PARAPHRASES[0]
    async with mcp_client(host) as client:
        past = saved_id(await remember(client, text))
        planned = saved_id(await remember(client, text, anticipated_at=FRIDAY))  # a plan is not a repeat
        other_moment = saved_id(await remember(client, text, anticipated_at=LATER))
        again = await remember(client, text, anticipated_at=FRIDAY)  # the same plan for the same moment
        plain_again = await remember(client, text)
    assert len({past, planned, other_moment}) == 3
    assert again.startswith("Not saved — very similar memory already exists.")
    assert f"Existing (id: {planned}" in again
    assert plain_again.startswith("Not saved")
    assert f"Existing (id: {past}" in plain_again


async def test_consolidate_never_proposes_to_merge_a_protected_memory(
    dedup_host: Callable[..., PluginHost], clock: Clock
) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        plan, same_plan = [saved_id(await remember(client, text, anticipated_at=TONIGHT)) for text in PARAPHRASES[:2]]
        for content in UNRELATED:
            await remember(client, content)
        ahead = tool_text(await client.call_tool("consolidate", {}))
        # the moment has come: the two plans of it are memories like any other, and may be merged
        clock.set(NOON + timedelta(hours=7))  # consolidate looks at the last day
        arrived = tool_text(await client.call_tool("consolidate", {}))
        # a memory of the past is never merged with a plan; one that keeps coming back is precious
        plain = saved_id(await remember(client, PARAPHRASES[2] + " Lovely."))
        kept = saved_id(await remember(client, PARAPHRASES[2], importance=1, category="observation", force=True))
        unprotected = tool_text(await client.call_tool("consolidate", {}))
        for _ in range(3):
            found = await client.call_tool("search_memories", {"context": "herons", "category_filter": "observation"})
            assert tool_text(found).count(kept) == 1
        precious = tool_text(await client.call_tool("consolidate", {}))
    pairs = [{frozenset(pair) for pair in PAIR_LINE.findall(text)} for text in (ahead, arrived, unprotected, precious)]
    assert pairs[0] == set()
    assert pairs[1] == {frozenset((plan, same_plan))}
    assert pairs[2] == {frozenset((plan, same_plan)), frozenset((kept, plain))}
    assert pairs[3] == {frozenset((plan, same_plan))}
