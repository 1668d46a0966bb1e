"""The duplicate guard on remember, through the MCP client with the real (default) model.

A memory is refused when the same text exists, or when one of its nearest memories is at least the duplicate
threshold similar and says the same: the same content words in the same order, the same negations and numbers.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import timedelta

import anyio
import pytest
from dedup_support import (
    CLEANED,
    COOKED,
    DUPLICATE,
    JA_FIRST,
    JA_SECOND,
    JA_SIMILARITY,
    NEAR_DUPLICATE,
    NOON,
    NOT_WATCHED,
    PAID_3000,
    PAID_5000,
    PARAPHRASES,
    PUNCTUATION_ONLY,
    RAINED,
    RAINED_AGAIN,
    REWORDING,
    UNRELATED,
    WATCHED,
    remember,
    saved_id,
    similarity,
    store_of,
)

from ego_core import Clock, Memory, MemoryService, PluginHost
from ego_core.testing import mcp_client
from ego_dedup import NOT_SAVED, find_duplicate
from ego_memory.contrast import contrast

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


async def test_a_near_duplicate_with_the_same_words_is_refused_with_its_similarity(
    dedup_host: Callable[..., PluginHost], clock: Clock
) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        existing = saved_id(await remember(client, PARAPHRASES[0]))
        service = store_of(host)
        measured = similarity(service, PARAPHRASES[0], NEAR_DUPLICATE)
        assert DUPLICATE <= measured < 0.95  # use: 0.888
        assert service.contrast(PARAPHRASES[0], NEAR_DUPLICATE) is None  # only "," "I" and "!" differ

        clock.set(clock.now() + timedelta(minutes=5))
        text = await remember(client, NEAR_DUPLICATE)

        assert text.startswith(f"{NOT_SAVED}\nExisting (id: {existing}, 5m ago): {PARAPHRASES[0]}\n")
        assert f"\nSimilarity: {measured:.2f}\n" in text
        assert service.count() == 1


async def test_a_punctuation_only_variant_is_refused(dedup_host: Callable[..., PluginHost]) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        existing = saved_id(await remember(client, PARAPHRASES[0]))
        service = store_of(host)
        measured = similarity(service, PARAPHRASES[0], PUNCTUATION_ONLY)
        assert DUPLICATE <= measured < 0.95  # use: 0.898 (the encoder reads punctuation)
        assert service.contrast(PARAPHRASES[0], PUNCTUATION_ONLY) is None

        text = await remember(client, PUNCTUATION_ONLY)

        assert text.startswith(f"{NOT_SAVED}\nExisting (id: {existing}, just now): {PARAPHRASES[0]}\n")
        assert f"\nSimilarity: {measured:.2f}\n" in text
        assert service.count() == 1


async def test_a_japanese_variant_with_the_same_words_is_refused(dedup_host: Callable[..., PluginHost]) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        existing = saved_id(await remember(client, RAINED))
        service = store_of(host)
        measured = similarity(service, RAINED, RAINED_AGAIN)
        assert DUPLICATE <= measured < 0.95  # use: 0.925
        assert service.contrast(RAINED, RAINED_AGAIN) is None

        text = await remember(client, RAINED_AGAIN)

        assert text.startswith(f"{NOT_SAVED}\nExisting (id: {existing}, just now): {RAINED}\n")
        assert f"\nSimilarity: {measured:.2f}\n" in text
        assert service.count() == 1


async def test_a_rewording_above_the_threshold_is_saved(dedup_host: Callable[..., PluginHost]) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        first = saved_id(await remember(client, PARAPHRASES[0]))
        service = store_of(host)
        measured = similarity(service, PARAPHRASES[0], REWORDING)
        assert DUPLICATE <= measured < 0.95  # use: 0.892, as close as NEAR_DUPLICATE
        assert service.contrast(PARAPHRASES[0], REWORDING) == "wording"

        text = await remember(client, REWORDING)

        assert saved_id(text) != first
        assert f"{PARAPHRASES[0]} (similarity: {measured:.2f})" in text  # auto-linked, not refused
        assert service.count() == 2


@pytest.mark.parametrize(
    ("first", "second", "why", "band"),
    [
        (WATCHED, NOT_WATCHED, "negation", (DUPLICATE, 0.95)),  # use: 0.902
        (PAID_3000, PAID_5000, "number", (DUPLICATE, 0.95)),  # use: 0.916
        (COOKED, CLEANED, "wording", (0.65, DUPLICATE)),  # use: 0.700, look-alikes: another activity
    ],
)
async def test_a_memory_that_says_something_else_is_saved(
    dedup_host: Callable[..., PluginHost], first: str, second: str, why: str, band: tuple[float, float]
) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        existing = saved_id(await remember(client, first))
        service = store_of(host)
        measured = similarity(service, first, second)
        assert band[0] <= measured < band[1], measured
        assert service.contrast(first, second) == why

        text = await remember(client, second)

        assert saved_id(text) != existing
        assert f"{first} (similarity: {measured:.2f})" in text  # linked to it (use links at 0.65), not refused
        assert service.count() == 2
        # a true repetition of either is still refused, naming the one it repeats
        assert (await remember(client, second)).startswith(f"{NOT_SAVED}\nExisting (id: {saved_id(text)}, ")
        assert (await remember(client, first)).startswith(f"{NOT_SAVED}\nExisting (id: {existing}, ")
        assert service.count() == 2


class _Neighbours:
    """A store that answers ``nearest`` with the given memories: what ``find_duplicate`` asks of the service."""

    def __init__(self, *nearest: tuple[str, float]) -> None:
        self.answer = [
            (Memory(id=f"mem_{i:012x}", content=content, timestamp=NOON), value)
            for i, (content, value) in enumerate(nearest)
        ]

    def find_exact(self, content: str) -> Memory | None:
        return None

    def nearest(self, text: str, k: int = 1) -> list[tuple[Memory, float]]:
        return self.answer[:k]

    def contrast(self, first: str, second: str) -> str | None:
        return contrast(first, second)


def as_service(fake: _Neighbours) -> MemoryService:
    return fake  # type: ignore[return-value]


def test_the_duplicate_may_be_a_further_neighbour() -> None:
    """The nearest memory may differ by a negation; the next one may say the same: that one is the duplicate."""
    variant = "今日は、マスターと一緒に映画を見た！"
    found = find_duplicate(as_service(_Neighbours((NOT_WATCHED, 0.93), (WATCHED, 0.92))), variant, DUPLICATE)
    assert found is not None
    assert (found.existing.content, found.similarity, found.exact) == (WATCHED, 0.92, False)
    # below the threshold, a neighbour is no duplicate however alike its words
    assert find_duplicate(as_service(_Neighbours((NOT_WATCHED, 0.93), (WATCHED, 0.84))), variant, DUPLICATE) is None


async def test_the_design_notes_japanese_pair_behaves_as_the_thresholds_say(
    dedup_host: Callable[..., PluginHost],
) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        first = saved_id(await remember(client, JA_FIRST))
        service = store_of(host)
        measured = similarity(service, JA_FIRST, JA_SECOND)
        # What use scores it (documented in docs/plugins/dedup.md): above the duplicate threshold (0.85), but the
        # second sentence says it in other words, so the guard lets it through.
        assert measured == pytest.approx(JA_SIMILARITY, abs=0.005)
        assert measured >= DUPLICATE
        assert service.contrast(JA_FIRST, JA_SECOND) == "wording"

        text = await remember(client, JA_SECOND)

        second = saved_id(text)
        assert second != first
        assert f"{JA_FIRST} (similarity: {measured:.2f})" in text  # auto-linked as related, not refused
        assert service.count() == 2


async def test_a_clearly_different_memory_is_saved(dedup_host: Callable[..., PluginHost]) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        saved_id(await remember(client, PARAPHRASES[0]))
        service = store_of(host)
        assert similarity(service, PARAPHRASES[0], UNRELATED[0]) < 0.25
        text = await remember(client, UNRELATED[0])
        saved_id(text)
        assert NOT_SAVED not in text
        assert service.count() == 2


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


async def test_paraphrases_above_the_threshold_are_saved(dedup_host: Callable[..., PluginHost]) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        service = store_of(host)
        for a, b in itertools.combinations(PARAPHRASES, 2):
            assert DUPLICATE <= similarity(service, a, b) < 0.90  # use: 0.874-0.881
            assert service.contrast(a, b) == "wording"
        for content in PARAPHRASES:
            saved_id(await remember(client, content))
        assert service.count() == 3


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


async def test_a_configured_threshold_replaces_the_profiles(dedup_host: Callable[..., PluginHost]) -> None:
    before = "I fed the ducks at the pond this afternoon!"
    after = "I fed the ducks at the pond this afternoon ."
    lower = dedup_host(dedup_threshold=0.80, merge_threshold=0.80)
    async with mcp_client(lower) as client:
        existing = saved_id(await remember(client, before))
        service = store_of(lower)
        measured = similarity(service, before, after)
        assert 0.80 <= measured < DUPLICATE  # use: 0.839, saved with the profile's 0.85
        assert service.contrast(before, after) is None
        text = await remember(client, after)
    assert text.startswith(f"{NOT_SAVED}\nExisting (id: {existing}, just now): {before}\nSimilarity: {measured:.2f}\n")

    higher = dedup_host(dedup_threshold=0.95)  # a second host on the same store
    async with mcp_client(higher) as client:
        count = store_of(higher).count()
        saved_id(await remember(client, PARAPHRASES[0]))
        saved_id(await remember(client, NEAR_DUPLICATE))  # 0.888: refused with the profile's 0.85
        assert store_of(higher).count() == count + 2


async def test_concurrent_remembers_of_one_thought_save_it_once(dedup_host: Callable[..., PluginHost]) -> None:
    """Agents call tools in parallel: the check and the save are one step, so only one of the copies lands."""
    host = dedup_host()
    base = "I fed the ducks at the pond this afternoon"
    # The same words, other punctuation: use scores every two of them 0.866-1.0 (". " is "." once trimmed), so
    # whichever lands first, the others repeat it. (" ." is left out: 0.787 against "?!".)
    variants = [base + ending for ending in (".", "!", "...", "!!", "?!", "", ". ")]
    async with mcp_client(host) as client:
        service = store_of(host)
        for a, b in itertools.combinations(variants, 2):
            assert similarity(service, a, b) >= DUPLICATE, (a, b)
            assert service.contrast(a, b) is None
        await remember(client, UNRELATED[0])
        replies: list[str] = []

        async def one(content: str) -> None:
            replies.append(await remember(client, content))

        async with anyio.create_task_group() as group:
            for content in variants:
                group.start_soon(one, content)
        count = service.count()

    saved = [reply for reply in replies if reply.startswith("Saved")]
    assert len(saved) == 1, [reply.splitlines()[0] for reply in replies]
    assert sum(reply.startswith(NOT_SAVED) for reply in replies) == len(variants) - 1
    assert count == 2
