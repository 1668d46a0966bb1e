"""What recall and search_memories show beside their results, through the MCP client: the score reads in the
order of the list (non-increasing), the header counts the memories that match the context (not the store), and a
memory brought by a link or come back unbidden says so instead of showing a score."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memory_support import recall_block, saved_id

from ego_core import Clock
from ego_core.testing import call_ok, mcp_client

if TYPE_CHECKING:
    from conftest import MemoryHosts
    from ego_core import PluginHost

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
SEPARATOR = "\n\n---\n"
HEADER = re.compile(r"^(\d+) of (\d+)(\+?) (?:match|matches)(?:, (\d+) linked)?(?:, (\d+) unbidden)?:$")
RECALL_META = re.compile(r"^   .+ · importance [1-5] · (score [01]\.\d\d|linked|unbidden) · private: (?:true|false)$")
SEARCH_LINE = re.compile(r"^mem_[0-9a-f]{12} \| [^|]+ \| [a-z]+ \| [a-z_]+ \| ([01]\.\d\d|linked) \| private: ")

BREAD = [
    "I baked a loaf of sourdough bread this morning.",
    "The sourdough bread came out of the oven with a crisp crust.",
    "We shared warm slices of the fresh sourdough bread with butter.",
]
UNRELATED = [
    "The server crashed after the database migration.",
    "It rained all day and the streets flooded near the station.",
    "We listened to an old jazz record in the evening.",
    "The train to Kyoto was delayed by an hour.",
    "A cat slept on the windowsill in the afternoon sun.",
    "I fixed the bicycle chain with a borrowed wrench.",
    "The dentist appointment was moved to Thursday.",
    "My tax forms are due at the end of the quarter.",
    "The football match ended in a draw after extra time.",
    "A spider built a web across the garage door.",
    "The printer ran out of cyan ink again.",
    "Snow covered the mountain pass in November.",
]
SAKURA = [
    "公園で満開の桜を見ながらお花見をした。",
    "川沿いの桜並木を散歩して、花びらが舞っていた。",
    "夜桜がライトアップされていて、とても綺麗だった。",
]
UNRELATED_JA = [
    "サーバーがデータベースの移行後に落ちた。",
    "歯医者の予約を木曜日に変更した。",
    "自転車のチェーンを借りたレンチで直した。",
    "確定申告の書類を税務署に提出した。",
    "プリンターのインクがまた切れた。",
    "サッカーの試合は延長戦の末に引き分けだった。",
    "猫が窓辺で昼寝をしていた。",
    "電車が一時間遅れて会議に遅刻した。",
    "ガレージの扉に蜘蛛が巣を張っていた。",
    "冷蔵庫の牛乳の賞味期限が切れていた。",
    "新しいキーボードの打鍵感が気に入った。",
    "引っ越しの見積もりを三社に頼んだ。",
]


def parse(text: str, *, search: bool = False) -> tuple[re.Match[str], list[str]]:
    """The header's match and, per result, what its line shows for the score (``score 0.81``, ``linked``, …)."""
    data = text.partition(SEPARATOR)[0]
    lines = data.splitlines()
    header = HEADER.match(lines[0])
    assert header, data
    if search:
        shown = [SEARCH_LINE.match(line) for line in lines[1:] if line.startswith("mem_")]
    else:
        shown = [RECALL_META.match(line) for line in lines[1:] if line.startswith("   ")]
    assert all(shown), data
    return header, [found.group(1) for found in shown if found]


def scores(marks: list[str]) -> list[float]:
    return [float(mark.removeprefix("score ")) for mark in marks if mark not in ("linked", "unbidden")]


async def fill(client: Any, clock: Clock, texts: list[str], *, start: datetime) -> list[str]:
    """Remember ``texts`` an hour apart (no sequence links between them), oldest first; their ids."""
    ids = []
    for number, text in enumerate(texts):
        clock.set(start + timedelta(hours=number))
        ids.append(saved_id(await call_ok(client, "remember", {"content": text, "force": True})))
    clock.set(NOW)
    return ids


# ---------------------------------------------------------------------------------------------------
# The header counts the matches


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("related", "context"),
    [(BREAD, "baking sourdough bread"), (SAKURA, "桜のお花見")],
    ids=["english", "japanese"],
)
async def test_the_header_counts_the_memories_that_match(
    memory_hosts: MemoryHosts, related: list[str], context: str
) -> None:
    clock = Clock(NOW)
    host, plugin = memory_hosts(clock=clock, memory={"involuntary_probability": 0.0})
    unrelated = UNRELATED_JA if related is SAKURA else UNRELATED
    texts = [*unrelated[:6], *related, *unrelated[6:]]
    async with mcp_client(host) as client:
        await fill(client, clock, texts, start=NOW - timedelta(days=2))
        answers = {n: await call_ok(client, "recall", {"context": context, "n_results": n}) for n in (1, 2, 10)}
        searched = await call_ok(client, "search_memories", {"context": context, "n_results": 2})
    assert plugin._require().count() == 15
    for n, answer in answers.items():
        header, marks = parse(answer)
        assert header.group(0) == f"{min(n, 3)} of 3 matches:", answer
        assert len(marks) == min(n, 3)
        assert scores(marks) == sorted(scores(marks), reverse=True), answer
    shown = {line for line in answers[10].splitlines() if re.match(r"^\d+\. ", line)}
    assert {line.partition("] ")[2] for line in shown} == set(related)  # the three that match, and only they
    header, marks = parse(searched, search=True)
    assert header.group(0) == "2 of 3 matches:", searched
    assert scores(marks) == sorted(scores(marks), reverse=True)


@pytest.mark.anyio
async def test_a_filter_narrows_the_count_to_what_it_admits(memory_hosts: MemoryHosts) -> None:
    clock = Clock(NOW)
    host, _plugin = memory_hosts(clock=clock, memory={"involuntary_probability": 0.0})
    async with mcp_client(host) as client:
        await fill(client, clock, UNRELATED[:6], start=NOW - timedelta(days=10))
        clock.set(NOW - timedelta(days=5))
        await call_ok(client, "remember", {"content": BREAD[0], "emotion": "happy", "force": True})
        clock.set(NOW - timedelta(days=4))
        await call_ok(client, "remember", {"content": BREAD[1], "emotion": "proud", "force": True})
        clock.set(NOW - timedelta(days=3))
        await call_ok(client, "remember", {"content": BREAD[2], "emotion": "happy", "force": True})
        clock.set(NOW)
        happy = await call_ok(client, "recall", {"context": "sourdough bread", "emotion_filter": "happy"})
        every = await call_ok(client, "recall", {"context": "sourdough bread", "n_results": 1})
    assert parse(happy)[0].group(0) == "2 of 2 matches:", happy
    assert parse(every)[0].group(0) == "1 of 3 matches:", every


@pytest.mark.anyio
async def test_a_count_the_searches_could_not_finish_says_at_least(memory_hosts: MemoryHosts) -> None:
    clock = Clock(NOW)
    host, _plugin = memory_hosts(
        clock=clock, memory={"involuntary_probability": 0.0}, recall={"dense_candidates": 2, "lexical_candidates": 2}
    )
    async with mcp_client(host) as client:
        await fill(client, clock, [*BREAD, *UNRELATED[:4]], start=NOW - timedelta(days=2))
        answer = await call_ok(client, "recall", {"context": "sourdough bread", "n_results": 2})
    header, _marks = parse(answer)
    assert header.group(3) == "+", answer  # "2 of 2+ matches": the searches came back full
    assert int(header.group(2)) >= 2


# ---------------------------------------------------------------------------------------------------
# Linked and unbidden memories say what they are


@pytest.mark.anyio
async def test_a_memory_brought_by_a_link_says_linked(memory_hosts: MemoryHosts) -> None:
    clock = Clock(NOW)
    host, _plugin = memory_hosts(
        clock=clock,
        memory={"involuntary_probability": 0.0},
        recall={"dense_candidates": 3, "lexical_candidates": 3, "english_candidates": 3},
    )
    squid = "Afterwards we ate grilled squid from a street stall."
    async with mcp_client(host) as client:
        ids = await fill(client, clock, [*BREAD, *UNRELATED[:8], squid], start=NOW - timedelta(days=3))
        await call_ok(client, "link_memories", {"source_id": ids[0], "target_id": ids[-1], "link_type": "leads_to"})
        answer = await call_ok(client, "recall", {"context": "I baked sourdough bread", "n_results": 5})
        searched = await call_ok(client, "search_memories", {"context": "I baked sourdough bread", "n_results": 5})
    assert recall_block(answer, squid).endswith(" · linked · private: false"), answer
    header, marks = parse(answer)
    assert header.group(4) == str(marks.count("linked")), answer  # "…, 2 linked:" (a sequence link brings one too)
    assert int(header.group(1)) == len(marks) - marks.count("linked") == 3
    assert "score 0.00" not in answer
    assert scores(marks) == sorted(scores(marks), reverse=True), answer
    squid_line = next(line for line in searched.splitlines() if line.startswith(ids[-1]))
    assert " | linked | " in squid_line, searched
    header, marks = parse(searched, search=True)
    assert header.group(4) == str(marks.count("linked")), searched


@pytest.mark.anyio
async def test_a_japanese_memory_brought_by_a_link_says_linked(memory_hosts: MemoryHosts) -> None:
    clock = Clock(NOW)
    host, _plugin = memory_hosts(
        clock=clock, memory={"involuntary_probability": 0.0}, recall={"dense_candidates": 3, "lexical_candidates": 3}
    )
    stall = "そのあと屋台でイカ焼きを食べた。"
    async with mcp_client(host) as client:
        ids = await fill(client, clock, [*SAKURA, *UNRELATED_JA[:8], stall], start=NOW - timedelta(days=3))
        await call_ok(client, "link_memories", {"source_id": ids[0], "target_id": ids[-1], "link_type": "leads_to"})
        answer = await call_ok(client, "recall", {"context": "満開の桜でお花見", "n_results": 5})
    assert recall_block(answer, stall).endswith(" · linked · private: false"), answer
    header, marks = parse(answer)
    assert header.group(4) == str(marks.count("linked")), answer  # "…, 2 linked:" (an auto-link brings one too)
    assert int(header.group(1)) == len(marks) - marks.count("linked")
    assert "score 0.00" not in answer
    assert scores(marks) == sorted(scores(marks), reverse=True), answer


# ---------------------------------------------------------------------------------------------------
# Scores read down the list, for many queries (English and Japanese)

WORDS = (
    "rain harbour bread lantern code dog park tea letter train music garden night morning master laugh "
    "quiet storm river sunset window book coffee festival"
).split()
WORDS_JA = "雨 港 パン 提灯 犬 公園 お茶 手紙 電車 音楽 庭 夜 朝 嵐 川 夕焼け 窓 本 珈琲 祭り".split()


@pytest.fixture(scope="module")
def seeded_host(module_memory_hosts: MemoryHosts) -> PluginHost:
    """A store of 60 random memories, English and Japanese, of varied age, emotion and importance, some linked."""
    clock = Clock(NOW)
    host, plugin = module_memory_hosts(clock=clock)
    ctx = host.context("memory")
    memories = plugin._require()
    tools = plugin._tools()
    rng = random.Random(20261206)
    ids: list[str] = []
    for number in range(60):
        japanese = number % 3 == 0
        words = [rng.choice(WORDS_JA if japanese else WORDS) for _ in range(rng.randint(3, 9))]
        content = ("、".join(words) + "。") if japanese else " ".join(words).capitalize() + f" ({number})."
        clock.set(NOW - timedelta(days=rng.randint(0, 400), minutes=number))
        saved = tools.remember(
            {
                "content": content,
                "emotion": rng.choice(["happy", "sad", "curious", "nostalgic", "neutral", "anxious"]),
                "intensity": round(rng.random(), 2),
                "importance": rng.randint(1, 5),
                "force": True,
            },
            ctx,
        )
        ids.append(saved_id(saved.data))
    for _ in range(15):
        first, second = rng.sample(ids, 2)
        memories.store.link(first, second, "leads_to", 1.0)
    clock.set(NOW)
    return host


async def answers(host: PluginHost, args: dict[str, Any]) -> tuple[str, str]:
    async with mcp_client(host) as client:
        return await call_ok(client, "recall", args), await call_ok(client, "search_memories", args)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(st.sampled_from([*WORDS, *WORDS_JA, "zebra"]), min_size=1, max_size=4),
    n_results=st.integers(min_value=1, max_value=10),
    ranged=st.booleans(),
)
def test_shown_scores_never_rise_down_the_list(
    seeded_host: PluginHost, words: list[str], n_results: int, ranged: bool
) -> None:
    args: dict[str, Any] = {"context": " ".join(words), "n_results": n_results}
    if ranged:
        args["valence_range"] = [-0.5, 1.0]
    recalled, searched = anyio.run(answers, seeded_host, args)
    for text, search in ((recalled, False), (searched, True)):
        if text.startswith("No related memories found."):
            continue
        header, marks = parse(text, search=search)
        assert len(marks) <= n_results
        values = scores(marks)
        assert values == sorted(values, reverse=True), text
        linked, unbidden = marks.count("linked"), marks.count("unbidden")
        assert int(header.group(4) or 0) == linked, text
        matched = int(header.group(1))
        assert matched + linked + int(header.group(5) or 0) == len(marks), text
        assert matched <= int(header.group(2)), text
        assert unbidden <= 1, text
        assert not (search and unbidden), text  # search_memories brings nothing unbidden
