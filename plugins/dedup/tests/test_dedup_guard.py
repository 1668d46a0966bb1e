"""The duplicate guard on remember, through the MCP client with the real model."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import anyio
import pytest
from dedup_support import (
    JA_FIRST,
    JA_SECOND,
    JA_SIMILARITY,
    NEAR_DUPLICATE,
    PARAPHRASES,
    UNRELATED,
    remember,
    saved_id,
    similarity,
    store_of,
)

from ego_core import Clock, PluginHost
from ego_core.testing import mcp_client
from ego_dedup import NOT_SAVED

SCAFFOLD = (
    "\n\n---\n"
    "Is there truly something new here, or is this a repetition?\n"
    "If your understanding has deepened, try expressing what changed specifically."
)
UPDATE_HINT = (
    "If this is a meaningful update, use recall to review the existing memory and consider whether the new "
    "perspective adds value."
)

pytestmark = pytest.mark.anyio


async def test_the_same_sentence_twice_is_not_saved_the_second_time(
    dedup_host: Callable[..., PluginHost], clock: Clock
) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        first = await remember(client, PARAPHRASES[0], emotion="happy")
        existing = saved_id(first)
        service = store_of(host)
        assert service.count() == 1

        clock.set(clock.now() + timedelta(hours=2))
        second = await remember(client, PARAPHRASES[0], emotion="happy")

        assert second == (
            f"{NOT_SAVED}\n"
            f"Existing (id: {existing}, 2h ago): {PARAPHRASES[0]}\n"
            "Similarity: 1.00\n"
            f"{UPDATE_HINT}{SCAFFOLD}"
        )
        assert service.count() == 1


async def test_a_near_duplicate_in_other_words_is_refused_with_its_similarity(
    dedup_host: Callable[..., PluginHost], clock: Clock
) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        existing = saved_id(await remember(client, PARAPHRASES[0]))
        service = store_of(host)
        measured = similarity(service, PARAPHRASES[0], NEAR_DUPLICATE)
        assert 0.95 <= measured < 1.0  # all-MiniLM-L6-v2: 0.968

        clock.set(clock.now() + timedelta(minutes=5))
        text = await remember(client, NEAR_DUPLICATE)

        assert text.startswith(f"{NOT_SAVED}\nExisting (id: {existing}, 5m ago): {PARAPHRASES[0]}\n")
        assert f"\nSimilarity: {measured:.2f}\n" in text
        assert service.count() == 1


async def test_the_design_notes_japanese_pair_behaves_as_the_thresholds_say(
    dedup_host: Callable[..., PluginHost],
) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        first = saved_id(await remember(client, JA_FIRST))
        service = store_of(host)
        measured = similarity(service, JA_FIRST, JA_SECOND)
        # What all-MiniLM-L6-v2 scores it (documented in docs/plugins/dedup.md): below dedup_threshold (0.95),
        # so the guard lets it through, and below merge_threshold (0.90) too.
        assert measured == pytest.approx(JA_SIMILARITY, abs=0.005)
        assert measured < 0.90

        text = await remember(client, JA_SECOND)

        second = saved_id(text)
        assert second != first
        assert f"{JA_FIRST} (similarity: {measured:.2f})" in text  # auto-linked as related, not refused
        assert service.count() == 2


async def test_a_clearly_different_memory_is_saved(dedup_host: Callable[..., PluginHost]) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        saved_id(await remember(client, PARAPHRASES[0]))
        text = await remember(client, UNRELATED[0])
        saved_id(text)
        assert NOT_SAVED not in text
        assert store_of(host).count() == 2


async def test_force_saves_a_duplicate(dedup_host: Callable[..., PluginHost]) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        first = saved_id(await remember(client, PARAPHRASES[0]))
        text = await remember(client, PARAPHRASES[0], force=True)
        second = saved_id(text)
        assert second != first
        assert "(similarity: 1.00)" in text
        assert store_of(host).count() == 2
        # with two copies stored, a third (unforced) one is still refused, naming the older copy
        third = await remember(client, PARAPHRASES[0])
        assert third.startswith(f"{NOT_SAVED}\nExisting (id: {first}, ")


async def test_paraphrases_below_the_threshold_are_saved(dedup_host: Callable[..., PluginHost]) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        for content in PARAPHRASES:
            saved_id(await remember(client, content))
        assert store_of(host).count() == 3


async def test_a_private_existing_memory_is_quoted_to_the_agent(dedup_host: Callable[..., PluginHost]) -> None:
    host = dedup_host()
    secret = "I am afraid Master will leave one day, and I have never said it."
    async with mcp_client(host) as client:
        existing = saved_id(await remember(client, secret, private=True, emotion="anxious"))
        text = await remember(client, secret)
        assert text.startswith(f"{NOT_SAVED}\nExisting (id: {existing}, just now, private): {secret}\n")


async def test_a_long_existing_memory_is_shown_as_a_120_character_snippet(
    dedup_host: Callable[..., PluginHost],
) -> None:
    host = dedup_host()
    long_text = " ".join([PARAPHRASES[0]] * 4)
    async with mcp_client(host) as client:
        saved_id(await remember(client, long_text))
        text = await remember(client, long_text)
    existing_line = text.splitlines()[1]
    snippet = existing_line.split("): ", 1)[1]
    assert len(snippet) == 120
    assert snippet.endswith("…")
    assert long_text.startswith(snippet[:-1])


async def test_a_lower_threshold_refuses_the_japanese_pair(dedup_host: Callable[..., PluginHost]) -> None:
    host = dedup_host(dedup_threshold=0.85, merge_threshold=0.85)
    async with mcp_client(host) as client:
        existing = saved_id(await remember(client, JA_FIRST))
        text = await remember(client, JA_SECOND)
    assert text.startswith(f"{NOT_SAVED}\nExisting (id: {existing}, just now): {JA_FIRST}\nSimilarity: 0.90\n")


async def test_concurrent_remembers_of_one_thought_save_it_once(dedup_host: Callable[..., PluginHost]) -> None:
    """Agents call tools in parallel: the check and the save are one step, so only one of the copies lands."""
    host = dedup_host()
    base = "I fed the ducks at the pond this afternoon"
    variants = [base + ending for ending in (".", "!", "...", " .", "!!", "?!", "", ". ")]
    async with mcp_client(host) as client:
        await remember(client, UNRELATED[0])
        replies: list[str] = []

        async def one(content: str) -> None:
            replies.append(await remember(client, content))

        async with anyio.create_task_group() as group:
            for content in variants:
                group.start_soon(one, content)
        count = store_of(host).count()

    saved = [reply for reply in replies if reply.startswith("Saved")]
    assert len(saved) == 1, [reply.splitlines()[0] for reply in replies]
    assert sum(reply.startswith(NOT_SAVED) for reply in replies) == len(variants) - 1
    assert count == 2
