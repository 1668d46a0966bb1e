"""Merge candidates during consolidate, called through the host's hook.

The memories are stored through the MCP client (the real remember, guard included); ``on_consolidate`` is
called the way the consolidate tool calls it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from dedup_support import (
    CLEANED,
    COOKED,
    JA_FIRST,
    JA_SECOND,
    MERGE,
    NOT_WATCHED,
    PAID_3000,
    PAID_5000,
    PARAPHRASES,
    REWORDING,
    UNRELATED,
    WATCHED,
    remember,
    saved_id,
    similarity,
    store_of,
)

from ego_core import Clock, ConsolidationRun, PluginHost, Section
from ego_core.testing import mcp_client
from ego_dedup import SECTION_KEY
from ego_memory.api import MemoryHooks

pytestmark = pytest.mark.anyio

PAIR_LINE = re.compile(r"^- (mem_[0-9a-f]{12}) <-> (mem_[0-9a-f]{12}) \(similarity: (\d\.\d\d)\)$")
REVIEW = "Review each pair with recall. If one is redundant, use forget to remove it."
BOTH = "If both have value, consider which perspective to keep."


def day_before(moment: datetime) -> ConsolidationRun:
    return ConsolidationRun(since=moment - timedelta(hours=24), until=moment)


def dedup_section(host: PluginHost, run: ConsolidationRun) -> Section | None:
    sections = [
        result for plugin, result in MemoryHooks(host.context("memory")).on_consolidate(run=run) if plugin == "dedup"
    ]
    assert len(sections) <= 1
    return sections[0] if sections else None


def pairs_of(section: Section) -> list[tuple[str, str, str]]:
    return [m.groups() for line in section.text.splitlines() if (m := PAIR_LINE.match(line))]  # type: ignore[misc]


async def store(host: PluginHost, *contents: str) -> list[str]:
    async with mcp_client(host) as client:
        return [saved_id(await remember(client, content)) for content in contents]


async def test_paraphrase_pairs_are_listed_strongest_first_with_snippets(
    dedup_host: Callable[..., PluginHost], clock: Clock
) -> None:
    host = dedup_host()
    ids = await store(host, PARAPHRASES[0], UNRELATED[0], PARAPHRASES[1], UNRELATED[1], PARAPHRASES[2])
    host.start()
    service = store_of(host)
    content = dict(zip(ids, [PARAPHRASES[0], UNRELATED[0], PARAPHRASES[1], UNRELATED[1], PARAPHRASES[2]], strict=True))
    paraphrase_ids = [ids[0], ids[2], ids[4]]
    # the measured band: the guard let them through (other words), consolidate proposes them
    measured = {
        (a, b): similarity(service, content[a], content[b]) for a, b in itertools.combinations(paraphrase_ids, 2)
    }
    assert all(MERGE <= value < 0.90 for value in measured.values()), measured  # use: 0.874-0.881
    assert {service.contrast(content[a], content[b]) for a, b in measured} == {"wording"}
    for a, b in itertools.combinations(ids, 2):
        if (a, b) not in measured:
            assert similarity(service, content[a], content[b]) < 0.25

    section = dedup_section(host, day_before(clock.now()))

    assert section is not None
    assert (section.key, section.slot) == (SECTION_KEY, SECTION_KEY)
    expected = sorted(measured.items(), key=lambda item: -item[1])
    lines = ["Found 3 near-duplicate pair(s):"]
    for (a, b), value in expected:
        lines += [f"- {a} <-> {b} (similarity: {value:.2f})", f"  A: {content[a]}", f"  B: {content[b]}"]
    assert section.text == "\n".join(lines)
    assert [str(getattr(line, "text", line)) for line in section.scaffold] == [REVIEW, BOTH]


async def test_a_private_memory_in_a_pair_is_marked_private(
    dedup_host: Callable[..., PluginHost], clock: Clock
) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        public = saved_id(await remember(client, PARAPHRASES[0]))
        private = saved_id(await remember(client, PARAPHRASES[1], private=True))
    host.start()

    section = dedup_section(host, day_before(clock.now()))

    assert section is not None
    lines = section.text.splitlines()
    assert lines[1].startswith(f"- {public} <-> {private} ")
    assert lines[2:] == [f"  A: {PARAPHRASES[0]}", f"  B (private): {PARAPHRASES[1]}"]


async def test_no_pairs_means_no_section(dedup_host: Callable[..., PluginHost], clock: Clock) -> None:
    host = dedup_host()
    await store(host, PARAPHRASES[0], *UNRELATED)
    host.start()
    assert dedup_section(host, day_before(clock.now())) is None


async def test_an_empty_store_has_nothing_to_propose(dedup_host: Callable[..., PluginHost], clock: Clock) -> None:
    host = dedup_host()
    host.start()
    assert dedup_section(host, day_before(clock.now())) is None


async def test_the_design_notes_japanese_pair_is_proposed(dedup_host: Callable[..., PluginHost], clock: Clock) -> None:
    host = dedup_host()
    first, second = await store(host, JA_FIRST, JA_SECOND)  # saved: other words (0.869)
    host.start()
    measured = similarity(store_of(host), JA_FIRST, JA_SECOND)
    assert MERGE <= measured < 0.90

    section = dedup_section(host, day_before(clock.now()))

    assert section is not None
    assert section.text == (
        "Found 1 near-duplicate pair(s):\n"
        f"- {first} <-> {second} (similarity: {measured:.2f})\n"
        f"  A: {JA_FIRST}\n"
        f"  B: {JA_SECOND}"
    )


@pytest.mark.parametrize("merge_threshold", [None, 0.5])
async def test_a_rewording_is_proposed_a_negation_or_another_number_never(
    dedup_host: Callable[..., PluginHost], clock: Clock, merge_threshold: float | None
) -> None:
    host = dedup_host(merge_threshold=merge_threshold, max_merge_candidates=50)
    pairs = [
        (WATCHED, NOT_WATCHED),
        (PAID_3000, PAID_5000),
        (COOKED, CLEANED),
        (JA_FIRST, JA_SECOND),
        (PARAPHRASES[0], REWORDING),
    ]
    ids = await store(host, *itertools.chain.from_iterable(pairs))  # all saved: none repeats another
    host.start()
    service = store_of(host)
    negation, number, lookalike, ja_wording, en_wording = [(ids[i], ids[i + 1]) for i in range(0, len(ids), 2)]
    assert similarity(service, WATCHED, NOT_WATCHED) >= MERGE  # use: 0.902
    assert similarity(service, PAID_3000, PAID_5000) >= MERGE  # use: 0.916
    assert similarity(service, PARAPHRASES[0], REWORDING) >= MERGE  # use: 0.892
    assert similarity(service, COOKED, CLEANED) < MERGE  # use: 0.700

    section = dedup_section(host, day_before(clock.now()))

    assert section is not None
    listed = {frozenset((a, b)) for a, b, _ in pairs_of(section)}
    assert {frozenset(ja_wording), frozenset(en_wording)} <= listed  # a rewording is proposed ...
    assert frozenset(negation) not in listed  # ... a contradiction or another amount never, at any threshold
    assert frozenset(number) not in listed
    # another activity (0.700): listed only with a threshold that low
    assert (frozenset(lookalike) in listed) == (merge_threshold is not None)
    if merge_threshold is None:
        assert listed == {frozenset(ja_wording), frozenset(en_wording)}


async def test_never_more_than_max_merge_candidates(dedup_host: Callable[..., PluginHost], clock: Clock) -> None:
    host = dedup_host(max_merge_candidates=2)
    await store(host, *PARAPHRASES, *UNRELATED)
    host.start()
    service = store_of(host)
    strongest = sorted(
        (similarity(service, a, b) for a, b in itertools.combinations(PARAPHRASES, 2)),
        reverse=True,
    )[:2]

    section = dedup_section(host, day_before(clock.now()))

    assert section is not None
    assert section.text.startswith("Found 2 near-duplicate pair(s):\n")
    assert [float(value) for _, _, value in pairs_of(section)] == [round(v, 2) for v in strongest]


async def test_pairs_are_unique(dedup_host: Callable[..., PluginHost], clock: Clock) -> None:
    host = dedup_host(merge_threshold=0.5, max_merge_candidates=50)
    await store(host, *PARAPHRASES)
    host.start()
    section = dedup_section(host, day_before(clock.now()))
    assert section is not None
    pairs = [frozenset((a, b)) for a, b, _ in pairs_of(section)]
    assert len(pairs) == 3
    assert len(set(pairs)) == len(pairs)
    assert all(len(pair) == 2 for pair in pairs)


async def test_only_the_window_is_considered(dedup_host: Callable[..., PluginHost], clock: Clock) -> None:
    host = dedup_host()
    today = clock.now()
    clock.set(today - timedelta(hours=30))
    (old,) = await store(host, PARAPHRASES[0])
    clock.set(today)
    first, second = await store(host, PARAPHRASES[1], PARAPHRASES[2])
    host.start()

    section = dedup_section(host, day_before(today))

    assert section is not None
    assert [(a, b) for a, b, _ in pairs_of(section)] == [(first, second)]
    assert old not in section.text

    # the ids consolidate replayed, when given, are the window
    replayed = ConsolidationRun(since=today - timedelta(hours=24), until=today, recent_ids=(old, first))
    section = dedup_section(host, replayed)
    assert section is not None
    assert [(a, b) for a, b, _ in pairs_of(section)] == [(old, first)]


@pytest.mark.parametrize("with_ids", [True, False])
async def test_max_recent_keeps_the_newest(dedup_host: Callable[..., PluginHost], clock: Clock, with_ids: bool) -> None:
    host = dedup_host(max_recent=2)
    start = clock.now()
    ids = []
    for minute, content in enumerate(PARAPHRASES):
        clock.set(start + timedelta(minutes=minute))
        ids += await store(host, content)
    host.start()
    now = clock.now()
    run = ConsolidationRun(since=now - timedelta(hours=24), until=now, recent_ids=tuple(ids) if with_ids else ())

    section = dedup_section(host, run)

    assert section is not None
    assert [(a, b) for a, b, _ in pairs_of(section)] == [(ids[1], ids[2])]


async def test_consolidate_without_dedup_lists_nothing(
    memory_only_host: Callable[[], PluginHost], clock: Clock
) -> None:
    host = memory_only_host()
    await store(host, *PARAPHRASES, *UNRELATED)
    host.start()
    results = MemoryHooks(host.context("memory")).on_consolidate(run=day_before(clock.now()))
    assert [plugin for plugin, _ in results if plugin == "dedup"] == []
    assert all("near-duplicate" not in str(getattr(result, "text", result)) for _, result in results)
