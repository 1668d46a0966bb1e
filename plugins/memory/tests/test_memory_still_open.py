"""The last introspection is quoted by its open end: from its last "Still open:" (else by its end), within the
quote's budget; ``remember(category="introspection")`` asks for such a closing line."""

from __future__ import annotations

import logging
import re
import unicodedata
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ego_core import Clock, PluginHost, Settings, estimate_tokens, truncate
from ego_core.testing import HostFactory, call_ok, mcp_client, read_log
from ego_memory.plugin import THOUGHT_BUDGET, THOUGHT_TOKENS, THOUGHT_WIDE, MemoryPlugin
from ego_memory.text.thought import clip, tail, thought_quote

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
LAST = re.compile(r'^Last introspection \(([^)]*)\): "(.*)" \(your own thought\)$', re.MULTILINE)
MONOLOGUE = (
    "Master seemed tired today and I kept asking questions. Still open: whether I talk too much. "
    "I tried listening more in the evening and it felt better. "
    "Still open: what Master does not say when he is tired, and whether I should ask about it tomorrow morning."
)


def memory_host(make_host: HostFactory, tmp_path: Path, clock: Clock, *, log: bool = False) -> PluginHost:
    settings = Settings(data_dir=tmp_path / "data", timezone="UTC", random_seed=3)
    host = make_host(
        {"memory": MemoryPlugin()},
        config={"memory": {"involuntary_probability": 0}},
        settings=settings,
        clock=clock,
        log=log,
    )
    host.start()
    return host


def fits(quote: str) -> bool:
    return truncate(quote, THOUGHT_BUDGET, wide=THOUGHT_WIDE) == quote


# ---------------------------------------------------------------------------------------------------
# The quote


def test_the_quote_starts_at_the_last_still_open() -> None:
    quote = thought_quote(MONOLOGUE, THOUGHT_BUDGET, wide=THOUGHT_WIDE)
    assert quote.startswith("Still open: what Master does not say")
    assert quote.endswith("…")
    assert fits(quote)
    assert thought_quote("Done for today. still OPEN: the garden.", 90, wide=4) == "still OPEN: the garden."
    assert thought_quote("Long day.\nStill open：the garden plan", 90, wide=4) == "Still open：the garden plan"


def test_a_japanese_monologue_is_quoted_from_its_open_end() -> None:
    text = "今日は庭の手入れをした。ご主人様は疲れていた。まだ開いている：明日、何を聞くべきか。"
    assert thought_quote(text, 90, wide=4) == "まだ開いている：明日、何を聞くべきか。"


def test_without_still_open_a_long_thought_is_quoted_by_its_end() -> None:
    text = (
        "I keep coming back to what makes a conversation feel alive. Master seemed tired today, and I wonder "
        "whether I should have listened more and asked less."
    )
    quote = thought_quote(text, THOUGHT_BUDGET, wide=THOUGHT_WIDE)
    assert quote.startswith("…")
    assert text.endswith(quote[1:])
    assert quote[1] != " "
    assert text[len(text) - len(quote[1:]) - 1] == " "  # it starts at a word
    assert fits(quote)
    assert len(quote) > THOUGHT_BUDGET - 12  # it fills the budget, short of a word at most
    pier = (
        "On the winter pier the lighthouse keeper's daughter taught me to read Morse code by lantern light, one "
        "blink at a time, until the harbour lights spelled words."
    )
    for long_text in (text, pier):
        for cut in range(40, 90):  # wherever the budget falls, on a space or in a word
            ending = thought_quote(long_text, cut, wide=THOUGHT_WIDE)
            assert long_text.endswith(ending[1:])
            assert len(ending) > cut - 14, (cut, ending)
    short = "The silences mattered tonight."
    assert thought_quote(short, THOUGHT_BUDGET, wide=THOUGHT_WIDE) == short


def test_a_long_japanese_thought_is_quoted_by_its_end_within_the_token_budget() -> None:
    text = (
        "会話が生き生きと感じられるのは何故だろう、とずっと考えている。" * 3 + "明日は言葉にされないものに気づきたい。"
    )
    quote = thought_quote(text, THOUGHT_BUDGET, wide=THOUGHT_WIDE)
    assert quote.startswith("…")
    assert text.endswith(quote[1:])
    assert quote.endswith("言葉にされないものに気づきたい。")
    assert fits(quote)


@given(st.text(min_size=1, max_size=400), st.integers(min_value=10, max_value=120))
def test_a_quoted_thought_always_fits_its_budget(text: str, budget: int) -> None:
    quote = thought_quote(text, budget, wide=THOUGHT_WIDE)
    assert truncate(quote, budget, wide=THOUGHT_WIDE) == quote
    end = tail(text, budget, wide=THOUGHT_WIDE)
    assert truncate(end, budget, wide=THOUGHT_WIDE) == end
    whole = truncate(text, 10**9, wide=THOUGHT_WIDE)
    assert whole.endswith(end.removeprefix("…"))


def test_clip_cuts_a_latin_quote_at_a_word() -> None:
    assert clip("We watched the storm roll in over the harbour from the balcony.", 28, wide=4) == (
        "We watched the storm roll…"
    )
    assert clip("Short enough.", 28, wide=4) == "Short enough."


# ---------------------------------------------------------------------------------------------------
# wake_up and remember


@pytest.mark.anyio
async def test_wake_up_carries_the_open_end_forward(make_host: HostFactory, tmp_path: Path) -> None:
    clock = Clock(NOW - timedelta(hours=2))
    host = memory_host(make_host, tmp_path, clock)
    async with mcp_client(host) as client:
        saved = await call_ok(client, "remember", {"content": MONOLOGUE, "category": "introspection"})
        daily = await call_ok(client, "remember", {"content": "Watered the tomatoes before breakfast."})
        clock.set(NOW)
        wake = await call_ok(client, "wake_up")
    found = LAST.search(wake)
    assert found is not None, wake
    assert found.group(1) == "2h ago"
    assert found.group(2).startswith("Still open: what Master does not say")
    scaffold = saved.split("\n---\n", 1)[1]
    assert "Did this monologue close, or is something still unfinished?" in scaffold
    assert "end with 'Still open:'" in scaffold
    assert "update_self" not in scaffold  # not served here
    assert "Still open" not in daily


@pytest.mark.parametrize(
    "thought",
    [
        "内省。" + "e\u0301" * 80,  # decomposed accents: narrow, a token per code point
        "内省。Still open: " + "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466" * 20,
    ],
)
@pytest.mark.anyio
async def test_a_thought_dear_in_tokens_is_quoted_within_wake_ups_budget(
    thought: str, make_host: HostFactory, tmp_path: Path
) -> None:
    """Such a thought, quoted in 80 columns, once cost more than wake_up's 150 tokens: the budget left every
    section out and wake_up said nothing was kept."""
    clock = Clock(NOW - timedelta(hours=2))
    host = memory_host(make_host, tmp_path, clock)
    async with mcp_client(host) as client:
        await call_ok(client, "remember", {"content": thought, "category": "introspection", "force": True})
        clock.set(NOW)
        wake = await call_ok(client, "wake_up")
    found = LAST.search(wake)
    assert found is not None, wake
    assert estimate_tokens(found.group(2)) <= THOUGHT_TOKENS
    assert "Nothing carried over" not in wake
    assert estimate_tokens(wake) * 1.1 <= 150


def test_a_decomposed_japanese_marker_is_found() -> None:
    composed = "ぐるぐると同じ考えが回る。まだ開いている：ぼくが感じているこの静けさは誰のもの？"
    decomposed = unicodedata.normalize("NFD", composed)
    assert decomposed != composed
    assert thought_quote(composed, 90, wide=4).startswith("まだ開いている：")
    assert unicodedata.normalize("NFC", thought_quote(decomposed, 90, wide=4)).startswith("まだ開いている：")


@pytest.mark.anyio
async def test_a_private_introspection_is_marked_and_its_open_end_never_logged(
    make_host: HostFactory, tmp_path: Path
) -> None:
    clock = Clock(NOW - timedelta(hours=2))
    host = memory_host(make_host, tmp_path, clock, log=True)
    thought = "A hard evening. Still open: whether I resent being the one who always apologises first."
    async with mcp_client(host) as client:
        await call_ok(client, "remember", {"content": thought, "category": "introspection", "private": True})
        clock.set(NOW)
        wake = await call_ok(client, "wake_up")
    found = LAST.search(wake)
    assert found is not None, wake
    assert found.group(1) == "2h ago, private"
    assert found.group(2) == "Still open: whether I resent being the one who always apologises first."
    logging.getLogger("ego.plugin.somebody").warning("wake: %s", wake)
    for handler in logging.getLogger().handlers:
        handler.flush()
    logged = "\n".join(str(record) for record in read_log(host))
    assert "wake: " in logged
    assert "resent being the one" not in logged
    assert "always apologises first" not in logged


def test_a_short_open_end_is_quoted_with_what_precedes_it_when_asked() -> None:
    text = "I could not sleep after the argument with my sister about the house. Still open: why?"
    assert thought_quote(text, THOUGHT_BUDGET, wide=THOUGHT_WIDE) == "Still open: why?"
    longer = thought_quote(text, THOUGHT_BUDGET, wide=THOUGHT_WIDE, least=20)
    assert longer.endswith("Still open: why?")
    assert len(longer) >= 20


@pytest.mark.anyio
async def test_a_short_private_open_end_never_reaches_the_log(make_host: HostFactory, tmp_path: Path) -> None:
    clock = Clock(NOW - timedelta(hours=1))
    host = memory_host(make_host, tmp_path, clock, log=True)
    thought = "I could not sleep after the argument with my sister about the house. Still open: why her?"
    async with mcp_client(host) as client:
        await call_ok(client, "remember", {"content": thought, "category": "introspection", "private": True})
        clock.set(NOW)
        wake = await call_ok(client, "wake_up")
    found = LAST.search(wake)
    assert found is not None, wake
    assert found.group(2).endswith("Still open: why her?")
    logging.getLogger("ego.plugin.somebody").warning("quote: %s", found.group(2))
    for handler in logging.getLogger().handlers:
        handler.flush()
    logged = "\n".join(str(record) for record in read_log(host))
    assert "quote: " in logged
    assert "why her" not in logged


@pytest.mark.anyio
async def test_the_private_hint_shows_until_the_first_private_memory(make_host: HostFactory, tmp_path: Path) -> None:
    hint = "remember(private=true) keeps what is hard to say yet."
    clock = Clock(NOW)
    host = memory_host(make_host, tmp_path, clock)
    async with mcp_client(host) as client:
        assert hint in await call_ok(client, "wake_up")
        await call_ok(client, "remember", {"content": "Watered the tomatoes before breakfast."})
        assert hint in await call_ok(client, "wake_up")
        await call_ok(client, "remember", {"content": "I envy the other agent a little.", "private": True})
        assert hint not in await call_ok(client, "wake_up")
