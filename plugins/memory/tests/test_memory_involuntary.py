"""Involuntary surfacing: a dormant memory that comes back unbidden in recall (a Proust memory, in the last place
of the answer, never beyond ``n_results``) and in wake_up (an old, seldom recalled memory near the newest one,
in local dates), and the echoes a new memory stirs on remember; each tells ``on_memory_surfaced``."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from memory_support import recalled_contents, saved_id

from ego_core import (
    SLOTS,
    Clock,
    ConfigError,
    Memory,
    PluginHost,
    RecallHit,
    Section,
    Settings,
    build_host,
    estimate_tokens,
    hookimpl,
    word_break,
)
from ego_core.testing import HostFactory, call_ok, mcp_client, read_log
from ego_memory.plugin import MemoryPlugin
from ego_memory.surfacing.involuntary import UNBIDDEN_TOKENS

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
LONG_AGO = NOW - timedelta(days=900)

OLD_LIGHTHOUSE = "As a child I climbed the old lighthouse with my grandfather and counted every stair."
RECENT_LIGHTHOUSE = [
    "We visited the lighthouse on the cape today and watched its lamp turn.",
    "The lighthouse keeper showed us the great lens at the top of the tower.",
    "From the lighthouse gallery we saw the ferries come into the harbour.",
    "The lighthouse was painted red and white, fresh for the summer.",
]
UNRELATED = [
    "I fixed the bicycle chain with a borrowed wrench.",
    "The train to Kyoto was delayed by an hour.",
    "Baked a lemon cake for the first time; it sank in the middle.",
]


class Surfaced:
    """Listens to ``on_memory_surfaced``, as the desires plugin does."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        self.hits: list[list[tuple[str, bool]]] = []

    @hookimpl(optionalhook=True)
    def on_memory_surfaced(self, memory: Memory, how: str) -> None:
        self.seen.append((memory.id, how))

    @hookimpl(optionalhook=True)
    def on_recall_result(self, results: Sequence[RecallHit]) -> None:
        self.hits.append([(hit.memory.id, hit.unbidden) for hit in results])

    def involuntary(self) -> list[str]:
        return [memory_id for memory_id, how in self.seen if how == "involuntary"]


def host_of(
    make_host: HostFactory,
    data_dir: Path,
    clock: Clock,
    listener: Surfaced,
    *,
    memory: Mapping[str, Any] | None = None,
    seed: int | None = 11,
    timezone: str = "UTC",
    log: bool = False,
) -> PluginHost:
    settings = Settings(data_dir=data_dir, timezone=timezone, random_seed=seed)
    host = make_host(
        {"memory": MemoryPlugin(), "listener": listener},
        config={"memory": {**(memory or {})}},
        settings=settings,
        clock=clock,
        log=log,
    )
    host.start()
    return host


def plugin_of(host: PluginHost) -> MemoryPlugin:
    plugin = host.plugin("memory")
    assert isinstance(plugin, MemoryPlugin)
    return plugin


def access_count(host: PluginHost, memory_id: str) -> int:
    (memory,) = plugin_of(host)._require().store.get([memory_id])
    return memory.access_count


async def remember_at(client: Any, clock: Clock, when: datetime, content: str, **args: Any) -> str:
    clock.set(when)
    return saved_id(await call_ok(client, "remember", {"content": content, "force": True, **args}))


async def remember_text(client: Any, clock: Clock, when: datetime, content: str, **args: Any) -> str:
    """remember's answer (the memory saved)."""
    clock.set(when)
    text = await call_ok(client, "remember", {"content": content, "force": True, **args})
    saved_id(text)
    return text


async def lighthouse_store(client: Any, clock: Clock) -> str:
    """Four recent lighthouse memories, three unrelated ones, and an old lighthouse memory long dormant."""
    old = await remember_at(client, clock, LONG_AGO, OLD_LIGHTHOUSE, emotion="nostalgic")
    for number, text in enumerate(UNRELATED):
        await remember_at(client, clock, LONG_AGO + timedelta(days=100 + number), text)
    for number, text in enumerate(RECENT_LIGHTHOUSE):
        await remember_at(client, clock, NOW - timedelta(days=3 - number, hours=2), text)
    clock.set(NOW)
    return old


# ---------------------------------------------------------------------------------------------------
# recall


@pytest.mark.anyio
async def test_a_proust_memory_takes_the_last_place_of_a_recall(make_host: HostFactory, tmp_path: Path) -> None:
    clock, listener = Clock(NOW), Surfaced()
    host = host_of(make_host, tmp_path / "data", clock, listener, memory={"involuntary_probability": 1.0})
    async with mcp_client(host) as client:
        old = await lighthouse_store(client, clock)
        before = access_count(host, old)
        plain = await call_ok(client, "recall", {"context": "the lighthouse", "n_results": 3})
        shown = recalled_contents(plain)
    assert len(shown) == 3, plain
    assert re.match(r"^3 of \d+ matches:\n", plain), plain  # the old lighthouse memory is related: a match
    assert set(shown[:2]) <= set(RECENT_LIGHTHOUSE), plain
    assert re.search(r"^3\. \[2y ago\] ", plain, re.MULTILINE), plain
    lines = plain.splitlines()
    assert re.match(r"^   .+ · unbidden · private: false$", lines[6]), plain  # it says so, with no score out of order
    assert all(" · score " in line for line in (lines[2], lines[4])), plain
    assert not any(word in plain.lower() for word in ("proust", "involuntary"))
    assert listener.involuntary() == [old]
    ((*found, last),) = listener.hits
    assert last == (old, True)  # the other plugins can tell it from the matches
    assert not any(unbidden for _, unbidden in found)
    assert access_count(host, old) == before + 1  # counted as recalled, like every hit


@pytest.mark.anyio
async def test_a_recall_never_shows_more_than_asked_and_one_result_is_never_displaced(
    make_host: HostFactory, tmp_path: Path
) -> None:
    clock, listener = Clock(NOW), Surfaced()
    host = host_of(make_host, tmp_path / "data", clock, listener, memory={"involuntary_probability": 1.0})
    async with mcp_client(host) as client:
        old = await lighthouse_store(client, clock)
        answers = {
            n: await call_ok(client, "recall", {"context": "the lighthouse", "n_results": n}) for n in (1, 2, 10)
        }
    for n, text in answers.items():
        assert len(recalled_contents(text)) <= n, text
    assert "[2y ago]" not in answers[1]
    assert "\n2. [2y ago] " in answers[2]
    assert "[2y ago]" in answers[10]  # related enough to be among ten anyway
    assert listener.involuntary() == [old]  # brought back unbidden only in the answer of two


@pytest.mark.anyio
async def test_an_explicit_filter_turns_the_proust_memory_off_but_a_range_does_not(
    make_host: HostFactory, tmp_path: Path
) -> None:
    clock, listener = Clock(NOW), Surfaced()
    host = host_of(make_host, tmp_path / "data", clock, listener, memory={"involuntary_probability": 1.0})
    async with mcp_client(host) as client:
        old = await lighthouse_store(client, clock)
        filtered = [
            await call_ok(client, "recall", {"context": "the lighthouse", **extra})
            for extra in (
                {"category_filter": "daily"},
                {"emotion_filter": "neutral"},
                {"date_from": "2020-01-01"},
                {"date_to": "2026-06-01"},
            )
        ]
        assert listener.involuntary() == []
        ranged = await call_ok(client, "recall", {"context": "the lighthouse", "valence_range": [-1, 1]})
    for text in filtered:
        assert "[2y ago]" not in text, text
    assert "\n3. [2y ago] " in ranged, ranged
    assert listener.involuntary() == [old]


@pytest.mark.anyio
async def test_the_proust_memory_comes_by_seeded_chance(make_host: HostFactory, tmp_path: Path) -> None:
    """At the default probability (one recall in four) the same seed brings it back in the same recalls."""
    patterns: list[list[bool]] = []
    for run in range(2):
        clock, listener = Clock(NOW), Surfaced()
        host = host_of(make_host, tmp_path / f"data-{run}", clock, listener, seed=2026)
        async with mcp_client(host) as client:
            await lighthouse_store(client, clock)
            pattern = []
            for _ in range(24):
                text = await call_ok(client, "recall", {"context": "the lighthouse", "n_results": 3})
                pattern.append("[2y ago]" in text)
        patterns.append(pattern)
        assert len(listener.involuntary()) == sum(pattern)
        host.stop()
    assert patterns[0] == patterns[1]
    assert 1 <= sum(patterns[0]) <= 15, patterns[0]
    off_clock, off_listener = Clock(NOW), Surfaced()
    off = host_of(make_host, tmp_path / "off", off_clock, off_listener, memory={"involuntary_probability": 0})
    async with mcp_client(off) as client:
        await lighthouse_store(client, off_clock)
        for _ in range(8):
            text = await call_ok(client, "recall", {"context": "the lighthouse", "n_results": 3})
            assert "[2y ago]" not in text
    assert off_listener.involuntary() == []


# ---------------------------------------------------------------------------------------------------
# wake_up

UNBIDDEN = re.compile(r'^Unbidden( \(private\))?: "(.+)" \(([a-z ]+) ago\)$', re.MULTILINE)
GARDEN_OLD = "We planted tulip bulbs along the fence before the autumn rain came."
GARDEN_NEW = "The tulips along the fence are blooming now, red and yellow."


async def garden_morning(client: Any, clock: Clock, old_age: timedelta) -> str:
    """The tulips planted ``old_age`` before NOW, something unrelated ten days later, the tulips in bloom three
    hours before NOW, and the clock at NOW; the planting's id."""
    old = await remember_at(client, clock, NOW - old_age, GARDEN_OLD)
    await remember_at(client, clock, NOW - old_age + timedelta(days=10), UNRELATED[0])
    await remember_at(client, clock, NOW - timedelta(hours=3), GARDEN_NEW)
    clock.set(NOW)
    return old


@pytest.mark.anyio
async def test_wake_up_brings_back_an_old_seldom_recalled_memory_near_the_newest(
    make_host: HostFactory, tmp_path: Path
) -> None:
    clock, listener = Clock(NOW), Surfaced()
    host = host_of(make_host, tmp_path / "data", clock, listener, memory={"involuntary_probability": 1.0})
    async with mcp_client(host) as client:
        old = await garden_morning(client, clock, timedelta(days=60))
        wake = await call_ok(client, "wake_up")
    found = UNBIDDEN.search(wake)
    assert found is not None, wake
    assert found.group(1) is None
    assert GARDEN_OLD.startswith(found.group(2).rstrip("…"))
    assert len(found.group(2)) <= 41
    assert found.group(3) == "about two months"
    assert not re.search(r"\d", found.group(0))  # time in words
    assert listener.seen == [(old, "involuntary")]
    assert access_count(host, old) == 0  # wake_up does not count as a recall


class Crowding(Surfaced):
    """Also fills wake_up with a section the agent needs more than an unbidden recollection."""

    @hookimpl
    def on_wake_up(self) -> Section:
        return Section(key="crowd", text=CROWD, order=50, priority=UNBIDDEN_PRIORITY + 5)


UNBIDDEN_PRIORITY = next(slot.priority for slot in SLOTS["wake_up"] if slot.name == "memory.unbidden")
CROWD = (
    "Today is the day of the long-planned move; boxes everywhere, the keys are with the neighbour. " * 3
    + "The kettle is packed, and so are the cups and the old photographs."
)
"""About 80 tokens: with it, wake_up's 150 have no room left for the unbidden line."""


@pytest.mark.anyio
async def test_an_unbidden_memory_the_budget_leaves_out_is_not_announced(
    make_host: HostFactory, tmp_path: Path
) -> None:
    clock, listener = Clock(NOW), Crowding()
    host = host_of(make_host, tmp_path / "data", clock, listener, memory={"involuntary_probability": 1.0})
    async with mcp_client(host) as client:
        await garden_morning(client, clock, timedelta(days=60))
        wake = await call_ok(client, "wake_up")
    assert CROWD.strip() in wake
    assert "Unbidden" not in wake
    assert listener.seen == []  # the others hear of a recollection only when the agent does


@pytest.mark.anyio
async def test_wake_up_leaves_out_recent_and_often_recalled_memories(make_host: HostFactory, tmp_path: Path) -> None:
    clock, listener = Clock(NOW), Surfaced()
    host = host_of(make_host, tmp_path / "data", clock, listener, memory={"involuntary_probability": 1.0})
    async with mcp_client(host) as client:
        await garden_morning(client, clock, timedelta(days=20))
        assert UNBIDDEN.search(await call_ok(client, "wake_up")) is None  # only twenty days old
        planted = "Tulip bulbs, fence, autumn rain: planted."
        old = await remember_at(client, clock, NOW - timedelta(days=90), planted)
        clock.set(NOW)
        for _ in range(3):  # recalled three times: not seldom any more
            await call_ok(client, "recall", {"context": planted, "n_results": 1})
        assert access_count(host, old) == 3
        await remember_at(client, clock, NOW - timedelta(hours=1), GARDEN_NEW + " Again.")
        clock.set(NOW)
        wake = await call_ok(client, "wake_up")
    assert UNBIDDEN.search(wake) is None, wake
    assert listener.seen == []


@pytest.mark.anyio
async def test_wake_up_counts_thirty_days_in_local_dates(make_host: HostFactory, tmp_path: Path) -> None:
    """01:00 in Tokyo on 10 June is 16:00 UTC on 9 June: a memory of the evening of 11 May in Tokyo is thirty
    local days old, though only twenty-nine by UTC dates."""
    now = datetime(2026, 6, 9, 16, 0, tzinfo=UTC)
    clock, listener = Clock(now), Surfaced()
    host = host_of(
        make_host,
        tmp_path / "data",
        clock,
        listener,
        memory={"involuntary_probability": 1.0},
        timezone="Asia/Tokyo",
    )
    async with mcp_client(host) as client:
        late = await remember_at(client, clock, datetime(2026, 5, 11, 15, 30, tzinfo=UTC), GARDEN_OLD)  # 12 May JST
        await remember_at(client, clock, now - timedelta(hours=2), GARDEN_NEW)
        clock.set(now)
        assert UNBIDDEN.search(await call_ok(client, "wake_up")) is None
        on_time = await remember_at(
            client, clock, datetime(2026, 5, 11, 11, 0, tzinfo=UTC), "Tulip bulbs went in along the fence, rain coming."
        )  # 20:00 on 11 May in Tokyo
        await remember_at(client, clock, now - timedelta(hours=1), GARDEN_NEW + " Again.")
        clock.set(now)
        wake = await call_ok(client, "wake_up")
    assert UNBIDDEN.search(wake) is not None, wake
    assert listener.seen == [(on_time, "involuntary")]
    assert late not in {memory_id for memory_id, _ in listener.seen}


# ---------------------------------------------------------------------------------------------------
# echoes on remember

ECHO = re.compile(r'^This echoes something from ([a-z ]+)( \(private\))?: "(.+)"$', re.MULTILINE)
OLD_KITE = "Flew a red kite on the windy beach with my father."
KITES_TODAY = "Children were flying kites on the beach today; the wind was strong."


@pytest.mark.anyio
async def test_a_new_memory_echoes_a_dormant_related_one(make_host: HostFactory, tmp_path: Path) -> None:
    clock, listener = Clock(NOW), Surfaced()
    host = host_of(make_host, tmp_path / "data", clock, listener)
    async with mcp_client(host) as client:
        old = await remember_at(client, clock, LONG_AGO, OLD_KITE, emotion="nostalgic")
        await remember_at(client, clock, LONG_AGO + timedelta(days=3), UNRELATED[1])
        saved = await remember_text(client, clock, NOW, KITES_TODAY)
    found = ECHO.search(saved)
    assert found is not None, saved
    assert found.group(1) == "well over a year ago"
    assert found.group(2) is None
    assert found.group(3) == OLD_KITE
    assert saved.index("This echoes") > saved.index("Saved (id:")
    assert listener.seen == [(old, "echo")]
    assert access_count(host, old) == 1  # it fades more slowly from now on


@pytest.mark.anyio
async def test_an_echo_already_among_the_most_related_is_not_quoted_twice(
    make_host: HostFactory, tmp_path: Path
) -> None:
    clock, listener = Clock(NOW), Surfaced()
    host = host_of(make_host, tmp_path / "data", clock, listener)
    async with mcp_client(host) as client:
        old = await remember_at(client, clock, LONG_AGO, OLD_KITE)
        saved = await remember_text(client, clock, NOW, "Flew a red kite on the windy beach with my father again.")
        fresh = await remember_text(
            client, clock, NOW + timedelta(hours=2), "Flew a red kite on the windy beach, my father laughing."
        )
    assert "Most related:" in saved
    assert OLD_KITE[:40] in saved, saved
    assert ECHO.search(saved) is None, saved
    assert listener.seen[0] == (old, "echo")
    assert access_count(host, old) >= 1
    assert ECHO.search(fresh) is None  # no longer dormant after the echo and the link: nothing to echo


@pytest.mark.anyio
async def test_a_fresh_memory_is_no_echo(make_host: HostFactory, tmp_path: Path) -> None:
    clock, listener = Clock(NOW), Surfaced()
    host = host_of(make_host, tmp_path / "data", clock, listener)
    async with mcp_client(host) as client:
        await remember_at(client, clock, NOW - timedelta(days=10), OLD_KITE)
        saved = await remember_text(client, clock, NOW, KITES_TODAY)
    assert ECHO.search(saved) is None
    assert listener.seen == []


# ---------------------------------------------------------------------------------------------------
# private memories


@pytest.mark.anyio
async def test_private_memories_surface_marked_and_never_reach_the_log(make_host: HostFactory, tmp_path: Path) -> None:
    secret_garden = "Secretly I buried the broken tulip vase under the fence so nobody would know."
    secret_kite = "Secretly I flew the red kite on the windy beach with my father, and told nobody."
    clock, listener = Clock(NOW), Surfaced()
    host = host_of(
        make_host,
        tmp_path / "data",
        clock,
        listener,
        memory={"involuntary_probability": 1.0},
        log=True,
    )
    async with mcp_client(host) as client:
        await remember_at(client, clock, NOW - timedelta(days=400), secret_garden, private=True)
        await remember_at(client, clock, LONG_AGO, secret_kite, private=True)
        saved = await remember_text(
            client, clock, NOW - timedelta(hours=2), "Children were flying red kites by the sea."
        )
        await remember_at(client, clock, NOW - timedelta(hours=1), "The tulips along the fence are blooming now.")
        clock.set(NOW)
        wake = await call_ok(client, "wake_up")
        recalled = await call_ok(client, "recall", {"context": "the tulip vase by the fence", "n_results": 2})
    echo = ECHO.search(saved)
    assert echo is not None, saved
    assert echo.group(2) == " (private)"
    unbidden = UNBIDDEN.search(wake)
    assert unbidden is not None, wake
    assert unbidden.group(1) == " (private)"
    assert "private: true" in recalled
    # whatever quotes these lines is masked on its way to the log
    for text in (echo.group(0), unbidden.group(0), recalled):
        logging.getLogger("ego.plugin.listener").warning("seen: %s", text)
    for handler in logging.getLogger().handlers:
        handler.flush()
    logged = "\n".join(str(record) for record in read_log(host))
    assert "seen: " in logged
    for secret in (secret_garden, secret_kite):
        assert secret[:20] not in logged
        assert secret[-20:] not in logged
    assert unbidden.group(2).rstrip("…")[:20] not in logged
    assert echo.group(3).rstrip("…")[:20] not in logged


# ---------------------------------------------------------------------------------------------------
# configuration


@pytest.mark.parametrize("value", [1.5, -0.1, float("nan")])
def test_an_involuntary_probability_outside_zero_to_one_is_refused(tmp_path: Path, value: float) -> None:
    settings = Settings(data_dir=tmp_path / "data", plugin_tables={"memory": {"involuntary_probability": value}})
    with pytest.raises(ConfigError) as raised:
        build_host(settings, autoload=False, plugins={"memory": MemoryPlugin()})
    assert str(raised.value) == (
        f"plugins.memory.involuntary_probability: expected a probability from 0 (never) to 1 (always), got {value}"
    )
    assert not (tmp_path / "data" / "memory").exists()


NIWA_OLD = "祖父と一緒に庭でトマトとバジルの苗を植えて、夕方まで土をいじっていたことを覚えている。"
NIWA_NEW = "庭のトマトが赤くなってきた。バジルの苗もよく育っている。"


@pytest.mark.anyio
async def test_an_unbidden_japanese_memory_keeps_ten_characters_cut_at_a_word(
    make_host: HostFactory, tmp_path: Path
) -> None:
    """The unbidden quote is bound in tokens: in Japanese it keeps ten characters or more (not "祖父と一緒…") and
    ends between words, at about the cost of an English one."""
    clock, listener = Clock(NOW), Surfaced()
    host = host_of(make_host, tmp_path / "data", clock, listener, memory={"involuntary_probability": 1.0})
    async with mcp_client(host) as client:
        await remember_at(client, clock, NOW - timedelta(days=60), NIWA_OLD)
        await remember_at(client, clock, NOW - timedelta(days=50), UNRELATED[0])
        await remember_at(client, clock, NOW - timedelta(hours=3), NIWA_NEW)
        clock.set(NOW)
        wake = await call_ok(client, "wake_up")
    found = UNBIDDEN.search(wake)
    assert found is not None, wake
    quote = found.group(2)
    kept = quote.removesuffix("…")
    assert quote.endswith("…"), quote
    assert NIWA_OLD.startswith(kept), quote
    assert len(kept) >= 10, quote
    assert word_break(NIWA_OLD, len(kept)), quote
    assert estimate_tokens(quote) <= UNBIDDEN_TOKENS
    assert quote == "祖父と一緒に庭でトマトとバジル…"
