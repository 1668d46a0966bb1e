"""Ideas across languages, over a real MCP client with the real memory plugin (the default multilingual model) on a
driven clock: memories of one activity, clearly related and tagged alike, form a notion although they never link
to each other; one theme in two languages (お茶 and tea, 詩 and poetry, and テニス and tennis, which no lexicon
joins) is one notion, reinforced from either language; a label is a short thought in the language of its memories,
made of its themes and its feeling; and a notion is as strong whether consolidate ran every day or once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import pytest
from notions_support import DAY, NOW, data_of, listed, remember
from themes_support import COFFEE, COOKING, GARDEN, POETRY, RAIN, STARS, TEA, TENNIS, WALK, Theme

from ego_core import Clock, PluginHost
from ego_core.testing import HostFactory, call_ok, mcp_client
from ego_memory.plugin import MemoryPlugin
from ego_notions import NotionBook, NotionsPlugin
from ego_notions.api import NOTIONS_STORE, NotionStore
from ego_notions.labels import is_japanese

pytestmark = pytest.mark.anyio


def _book(host: PluginHost) -> NotionBook:
    store = host.services.get(NOTIONS_STORE, NotionStore)
    assert isinstance(store, NotionBook)
    return store


def _reads_as_a_thought(label: str, japanese: bool) -> None:
    assert "(" not in label  # never an emotion in brackets
    assert "&" not in label  # never a list of tags
    assert len(label) <= 48
    assert is_japanese(label) == japanese, label


async def _live(
    client: Any, clock: Clock, themes: Sequence[Theme], *, days: int, japanese: bool, consolidate_daily: bool
) -> dict[str, str]:
    """A memory a day, the themes in turn, mostly in one language (the other every fourth day), tagged in the
    language of the memory; consolidate each evening (or only at the end). The ids of the memories, by theme."""
    written: dict[str, str] = {}
    used = {theme.en_tag: [0, 0] for theme in themes}
    for day in range(days):
        theme = themes[day % len(themes)]
        other = day % 4 == 3
        in_japanese = japanese != other
        count = used[theme.en_tag]
        side = 0 if in_japanese else 1
        texts = theme.ja if in_japanese else theme.en
        content = texts[count[side] % len(texts)]
        count[side] += 1
        clock.set(NOW + day * DAY + timedelta(hours=10))
        memory_id = await remember(
            client,
            content,
            emotion=theme.emotion,
            valence=theme.valence,
            tags=[theme.ja_tag if in_japanese else theme.en_tag],
        )
        written[memory_id] = theme.en_tag
        if consolidate_daily or day == days - 1:
            clock.set(NOW + day * DAY + timedelta(hours=22))
            await call_ok(client, "consolidate")
    return written


SIX = [
    pytest.param(WALK, True, id="ja-walk"),
    pytest.param(COOKING, True, id="ja-cooking"),
    pytest.param(GARDEN, False, id="en-garden"),
    pytest.param(COFFEE, False, id="en-coffee"),
]


@pytest.mark.parametrize(("theme", "japanese"), SIX)
async def test_six_related_memories_of_one_activity_form_one_notion(
    notions_host: Callable[..., PluginHost], clock: Clock, theme: Theme, japanese: bool
) -> None:
    """The first versions formed notions only from cliques of links, and remember links a memory only to near
    paraphrases of it: six memories of one shared activity, worded as one words a diary, formed nothing."""
    host = notions_host()
    texts = (theme.ja if japanese else theme.en)[:6]
    tag = theme.ja_tag if japanese else theme.en_tag
    async with mcp_client(host) as client:
        ids = []
        for day, content in enumerate(texts):
            clock.set(NOW + day * DAY)
            ids.append(await remember(client, content, emotion=theme.emotion, valence=theme.valence, tags=[tag]))
        assert "Formed 1 notion(s)." in await call_ok(client, "consolidate")
        ((_, label, confidence, reinforced),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        (notion,) = _book(host).db.all()
    assert sorted(notion.sources) == sorted(ids)
    _reads_as_a_thought(label, japanese)
    assert tag in label.casefold()
    # six memories: 0.3 + 0.1 · 6; the three beyond the three a notion needs count as reinforcements
    assert (confidence, reinforced) == (0.9, 3)


MONTHS = [
    pytest.param((POETRY, RAIN, TEA), True, id="ja-poetry-rain-tea"),
    pytest.param((WALK, COOKING, STARS), True, id="ja-walk-cooking-stars"),
    pytest.param((TENNIS, GARDEN, COFFEE), False, id="en-tennis-garden-coffee"),
]


@pytest.mark.parametrize(("themes", "japanese"), MONTHS)
async def test_a_month_of_themes_in_two_languages_gives_one_notion_per_theme(
    notions_host: Callable[..., PluginHost], clock: Clock, themes: tuple[Theme, ...], japanese: bool
) -> None:
    host = notions_host()
    async with mcp_client(host) as client:
        written = await _live(client, clock, themes, days=30, japanese=japanese, consolidate_daily=True)
        notions = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        book = _book(host)
        held = {n.id: n for n in book.db.all()}
        assert len(notions) == len(themes), notions  # one each: no notion per language, none per fragment
        for notion_id, label, _confidence, _reinforced in notions:
            sources = held[notion_id].sources
            assert len({written[i] for i in sources}) == 1  # the memories of one theme only ...
            in_both = {is_japanese(c.content) for c in book.memories().get(list(sources))}  # type: ignore[union-attr]
            assert in_both == {True, False}, label  # ... in both languages
            _reads_as_a_thought(label, japanese)
        assert len(book.convictions()) == len(themes)  # ten memories a theme in a month: each is held
        # the English tag finds the notion of the Japanese one (and the other way round)
        other = themes[0].en_tag if japanese else themes[0].ja_tag
        recalled = data_of(await call_ok(client, "recall", {"context": other}))
    shown = recalled.split("Notions:", 1)[1].splitlines()[1]
    first = next(label for i, label, _c, _r in notions if {written[s] for s in held[i].sources} == {themes[0].en_tag})
    assert shown.startswith(f'"{first}"')


CHESS = (
    "Played chess with Aiko after dinner.",
    "Studied a chess opening from an old book.",
    "Lost a long chess game but learned a lot.",
)


async def test_a_memory_in_the_other_language_reinforces_the_notion(
    notions_host: Callable[..., PluginHost], clock: Clock
) -> None:
    """お茶 and tea by the lexicon; テニス and tennis by the model (0.82); チェス and chess, a loanword the model puts
    at 0.55 only, by their sound (and the model finding them related)."""
    host = notions_host()
    async with mcp_client(host) as client:
        for texts, tag, emotion in (
            (TEA.ja, "お茶", "contentment"),
            (TENNIS.en, "tennis", "excited"),
            (CHESS, "chess", "curious"),
        ):
            for number, content in enumerate(texts[:3]):
                clock.set(NOW + number * DAY)
                await remember(client, content, emotion=emotion, valence=0.6, tags=[tag])
        await call_ok(client, "consolidate")
        listing = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        before = {label: (conf, reinf) for _, label, conf, reinf in listing}
        assert before == {
            "お茶で心が落ち着く": (0.6, 0),
            "Tennis excites me": (0.6, 0),
            "I'm curious about chess": (0.6, 0),
        }
        clock.set(NOW + 2 * DAY + timedelta(hours=2))
        await remember(client, TEA.en[0], emotion="happy", valence=0.5, tags=["Tea"])
        await remember(client, TENNIS.ja[0], emotion="happy", valence=0.5, tags=["テニス"])
        await remember(client, "マスターとチェスを指した。", emotion="happy", valence=0.5, tags=["チェス"])
        listing = listed(await call_ok(client, "curate_notions", {"action": "list"}))
    after = {label: (conf, reinf) for _, label, conf, reinf in listing}
    assert after == dict.fromkeys(before, (0.7, 1))


async def test_a_notion_is_as_strong_whether_consolidate_ran_every_day_or_once(
    notions_host: Callable[..., PluginHost], clock: Clock
) -> None:
    """Eight memories of a theme over eight days make a conviction either way: the memories beyond the three that
    form a notion count as reinforcements, as they would have had it formed on the third day."""
    for daily in (True, False):
        clock.set(NOW)
        host = notions_host(data=f"daily-{daily}")
        async with mcp_client(host) as client:
            await _live(client, clock, (POETRY,), days=8, japanese=True, consolidate_daily=daily)
            ((_, label, confidence, reinforced),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
            assert reinforced == 5, (daily, reinforced)
            assert confidence >= 0.7
            assert [c.label for c in _book(host).convictions()] == [label] == ["詩で心が落ち着く"]
        host.stop()


async def test_a_memory_made_private_or_forgotten_takes_its_tags_along(make_host: HostFactory, clock: Clock) -> None:
    """The tags of public memories are kept to find a theme's memories; a private memory's never are."""
    memory, notions = MemoryPlugin(), NotionsPlugin()
    host = make_host({"memory": memory, "notions": notions}, config={"memory": {"revise_tool": True}}, clock=clock)
    async with mcp_client(host) as client:
        kept = await remember(client, "Wrote a haiku about the kettle.", tags=["haiku", "kettle"])
        hidden = await remember(client, "A secret poem for Aiko.", tags=["poetry", "aiko"], private=True)
        book = _book(host)
        assert book.db.themed("kettle", 10) == [kept]
        assert {t for t, *_ in book.db.themes()} == {"haiku", "kettle"}  # never the private memory's tags
        assert book.db.themed("poetry", 10) == []
        await call_ok(client, "revise_memory", {"memory_id": kept, "private": True})
        assert book.db.themed("kettle", 10) == []
        assert book.db.themes() == []
        await call_ok(client, "revise_memory", {"memory_id": kept, "private": False})
        assert book.db.themed("haiku", 10) == [kept]
        await call_ok(client, "forget", {"memory_id": kept})
        assert book.db.themed("haiku", 10) == []
        assert book.db.themes() == []
        assert hidden


async def test_a_consolidation_after_quiet_days_still_sees_the_memories_since_the_previous_one(
    notions_host: Callable[..., PluginHost], clock: Clock
) -> None:
    """consolidate replays the last 24 hours; the notions look at every tagged memory since the previous one."""
    host = notions_host()
    async with mcp_client(host) as client:
        clock.set(NOW - DAY)
        await call_ok(client, "consolidate")  # nothing yet
        for day, content in enumerate(STARS.ja[:4]):
            clock.set(NOW + day * DAY)
            await remember(client, content, emotion="moved", valence=0.7, tags=["星"])
        clock.set(NOW + 6 * DAY)  # three quiet days: nothing to replay
        assert "Formed 1 notion(s)." in await call_ok(client, "consolidate")
        ((_, label, _c, reinforced),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
    assert (label, reinforced) == ("星に心を動かされる", 1)
