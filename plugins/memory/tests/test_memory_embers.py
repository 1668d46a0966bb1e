"""Embers: the intense memories among the newest still smoulder in wake_up's ``Embers:`` line; a private one
offers its feeling, never its words."""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ego_core import Clock, PluginHost, Settings, estimate_tokens, word_break
from ego_core.testing import HostFactory, call_ok, mcp_client, read_log
from ego_memory.plugin import MemoryPlugin
from ego_memory.surfacing.embers import EMBER_TOKENS

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
EMBERS = re.compile(r"^Embers: (.+)$", re.MULTILINE)


def memory_host(make_host: HostFactory, tmp_path: Path, clock: Clock, *, log: bool = False) -> PluginHost:
    settings = Settings(data_dir=tmp_path / "data", timezone="UTC", random_seed=5)
    host = make_host(
        {"memory": MemoryPlugin()},
        config={"memory": {"involuntary_probability": 0}},
        settings=settings,
        clock=clock,
        log=log,
    )
    host.start()
    return host


async def remember(client: object, clock: Clock, hours_ago: float, content: str, **args: object) -> None:
    clock.set(NOW - timedelta(hours=hours_ago))
    await call_ok(client, "remember", {"content": content, "force": True, **args})


@pytest.mark.anyio
async def test_the_two_warmest_of_the_newest_intense_memories_smoulder(make_host: HostFactory, tmp_path: Path) -> None:
    clock = Clock(NOW)
    host = memory_host(make_host, tmp_path, clock)
    async with mcp_client(host) as client:
        await remember(
            client, clock, 30, "The very first snow of the year, and I could not stop smiling.", intensity=1.0
        )
        await remember(
            client,
            clock,
            9,
            "We watched the storm roll in over the harbour from the balcony.",
            emotion="moved",
            intensity=0.9,
        )
        await remember(
            client, clock, 8, "Master said my summary saved his whole afternoon.", emotion="happy", intensity=0.7
        )
        await remember(client, clock, 7, "A bus was late.", emotion="frustrated", intensity=0.6)
        await remember(client, clock, 5, "Read about tide pools all morning.", emotion="curious", intensity=0.4)
        await remember(
            client, clock, 2, "Still open: whether I was too eager.", category="introspection", intensity=0.95
        )
        clock.set(NOW)
        wake = await call_ok(client, "wake_up")
    found = EMBERS.search(wake)
    assert found is not None, wake
    assert found.group(1) == (
        "...moved about: We watched the storm roll in over… / ...happy about: Master said my summary saved his…"
    )
    # the snow is intense but no longer among the five newest; the thought is quoted above already
    assert "snow" not in found.group(1)
    assert "eager" not in found.group(1)
    assert wake.index("Last introspection") < wake.index("Embers:")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("old", "recent"),
    [
        ("The argument about the move left me shaking all evening.", "Finished the letter to my sister at last."),
        ("引っ越しのことで言い合いになって、夜までずっと震えていた。", "妹への手紙をやっと書き終えて、ほっとした。"),
    ],
)
async def test_an_intense_memory_older_than_a_day_no_longer_smoulders(
    make_host: HostFactory, tmp_path: Path, old: str, recent: str
) -> None:
    """A memory of last month was an ember on the first of this one: embers come from the last day only, in
    whatever language, however intense the older memory and however few the memories since."""
    clock = Clock(NOW)
    host = memory_host(make_host, tmp_path, clock)
    async with mcp_client(host) as client:
        await remember(client, clock, 24 * 40, old, emotion="anxious", intensity=1.0)
        await remember(client, clock, 25, old.replace("move", "flat").replace("引っ越し", "部屋"), intensity=0.9)
        clock.set(NOW)
        quiet = await call_ok(client, "wake_up")
        await remember(client, clock, 3, recent, emotion="happy", intensity=0.8)
        clock.set(NOW)
        wake = await call_ok(client, "wake_up")
    assert "Embers:" not in quiet, quiet
    found = EMBERS.search(wake)
    assert found is not None, wake
    assert found.group(1).startswith("...happy about: "), found.group(1)
    assert " / " not in found.group(1)  # the older ones stay out, not only behind a warmer one


@pytest.mark.anyio
async def test_calm_memories_leave_no_embers(make_host: HostFactory, tmp_path: Path) -> None:
    clock = Clock(NOW)
    host = memory_host(make_host, tmp_path, clock)
    async with mcp_client(host) as client:
        await remember(client, clock, 3, "Sorted the bookshelf by colour.", intensity=0.6)
        await remember(client, clock, 2, "Made tea.", intensity=0.3)
        clock.set(NOW)
        wake = await call_ok(client, "wake_up")
    assert "Embers:" not in wake


@pytest.mark.anyio
async def test_a_private_ember_keeps_its_words(make_host: HostFactory, tmp_path: Path) -> None:
    secret = "I cried after Master left because I was afraid he would not come back."
    clock = Clock(NOW)
    host = memory_host(make_host, tmp_path, clock, log=True)
    async with mcp_client(host) as client:
        await remember(client, clock, 3, secret, emotion="sad", intensity=0.9, private=True)
        clock.set(NOW)
        wake = await call_ok(client, "wake_up")
    found = EMBERS.search(wake)
    assert found is not None, wake
    assert found.group(1) == "...sad about something private"
    assert "afraid" not in wake
    logging.getLogger("ego.plugin.somebody").warning("wake: %s", wake)
    for handler in logging.getLogger().handlers:
        handler.flush()
    logged = "\n".join(str(record) for record in read_log(host))
    assert "wake: " in logged
    assert "afraid he would not come back" not in logged


@pytest.mark.anyio
async def test_a_japanese_ember_keeps_ten_characters_cut_at_a_word(make_host: HostFactory, tmp_path: Path) -> None:
    """An ember costs about as many tokens in Japanese as in English: its quote keeps ten characters or more and
    ends between words (never inside a katakana word or a run of kana)."""
    clock = Clock(NOW)
    host = memory_host(make_host, tmp_path, clock)
    stormy = "今日、マスターと一緒に新しいシステムの設計について遅くまで話した。"
    essay = "潮だまりのエッセイがついに書き上がった。声に出して読むと心地よい。"
    async with mcp_client(host) as client:
        await remember(client, clock, 9, stormy, emotion="excited", intensity=0.9)
        await remember(client, clock, 8, essay, emotion="happy", intensity=0.8)
        clock.set(NOW)
        wake = await call_ok(client, "wake_up")
    found = EMBERS.search(wake)
    assert found is not None, wake
    quotes = [fragment.split(" about: ", 1)[1] for fragment in found.group(1).split(" / ")]
    assert len(quotes) == 2, wake
    for quote, content in zip(quotes, (stormy, essay), strict=True):
        kept = quote.removesuffix("…")
        assert quote.endswith("…"), quote
        assert content.startswith(kept), quote
        assert len(kept) >= 10, quote
        assert word_break(content, len(kept)), quote
        assert estimate_tokens(quote) <= EMBER_TOKENS
    assert quotes[0] == "今日、マスターと一緒に…"
