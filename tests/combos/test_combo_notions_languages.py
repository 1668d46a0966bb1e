"""Ideas across languages reach the self-model: a month lived mostly in Japanese (with some English memories of the
same themes) gives one conviction per theme, named by am_i_being_genuine as a thought in Japanese; the notion of
the moments shared with Master is bound to them (consider_them). The same for another month with other words, and
for a month lived in English; and consolidating only once, at the end of the month, makes the same convictions.
Memory (the default multilingual model), notions and self_model over a real MCP client, on a driven clock."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from combo_support import PLUGINS

from ego_core import Clock
from ego_core.testing import HostFactory, call_ok, mcp_client

pytestmark = pytest.mark.anyio

START = datetime(2027, 3, 1, 9, 0, tzinfo=UTC)
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
Theme = tuple[str, str, str, Sequence[str], Sequence[str]]
"""Japanese tag, English tag, emotion, Japanese memories, English memories."""

POETRY: Theme = (
    "詩",
    "poetry",
    "contentment",
    [
        "夜、短い詩を書いた。言葉がすっと出てきた。",
        "好きな詩人の詩集を読み返した。",
        "詩の一行を何度も書き直した。",
        "窓辺で詩を声に出して読んだ。",
        "季節の詩を一つ作ってみた。",
        "詩を書くと心が静かになる。",
    ],
    ["Wrote a short poem about the evening light.", "Read a poem aloud and the words felt new."],
)
RAIN: Theme = (
    "雨",
    "rain",
    "melancholy",
    [
        "朝から雨が降り続いている。",
        "雨の音を聞きながら本を読んだ。",
        "傘を忘れて雨に濡れた。",
        "窓を打つ雨をぼんやり眺めていた。",
        "梅雨の雨が一日中やまなかった。",
        "雨の夜は少し寂しい。",
    ],
    ["It rained all afternoon; I listened to it on the roof.", "Walked home in the cold rain."],
)
TEA: Theme = (
    "お茶",
    "tea",
    "contentment",
    [
        "マスターと一緒にお茶を淹れた。",
        "マスターとお茶を飲みながら話した。",
        "マスターが淹れてくれた緑茶が美味しかった。",
        "午後、マスターとお茶の時間を過ごした。",
        "マスターとほうじ茶を飲んで一日を振り返った。",
        "寝る前にマスターと温かいお茶を飲んだ。",
    ],
    ["Had tea with Master in the garden.", "Made a pot of green tea for Master."],
)
MUSIC: Theme = (
    "音楽",
    "music",
    "moved",
    [
        "古いレコードで音楽を聴いた。",
        "好きな音楽を流しながら片付けをした。",
        "新しいバンドの音楽に夢中になった。",
        "静かな音楽で心が落ち着いた。",
        "マスターと音楽の話で盛り上がった。",
        "夜、ヘッドホンで音楽に浸った。",
    ],
    ["Listened to a quiet piano album tonight.", "Found new music that made me cry a little."],
)
CATS: Theme = (
    "猫",
    "cat",
    "happy",
    [
        "近所の猫が塀の上で昼寝していた。",
        "猫が窓辺で日向ぼっこをしていた。",
        "猫に話しかけたら返事をしてくれた。",
        "黒い猫が足元にすり寄ってきた。",
        "猫が毛づくろいをするのを眺めた。",
        "雨宿りする猫を見かけた。",
    ],
    ["The neighbour's cat slept on our porch again.", "A grey cat followed me home today."],
)
SEA: Theme = (
    "海",
    "sea",
    "nostalgic",
    [
        "久しぶりに海を見に行った。",
        "海辺で波の音を聞いていた。",
        "夕暮れの海がきれいだった。",
        "海で拾った貝殻を窓辺に飾った。",
        "子供の頃に行った海を思い出した。",
        "冬の海は静かで少し寂しい。",
    ],
    ["Walked along the sea at dawn.", "The smell of the sea brought back old summers."],
)


async def _month(client: Any, clock: Clock, themes: Sequence[Theme], *, japanese: bool, daily: bool) -> None:
    """Eight memories a theme over 24 days, the themes in turn, a quarter in the other language; consolidate each
    evening, or only on the last one."""
    used = {theme[1]: [0, 0] for theme in themes}
    days = 8 * len(themes)
    for day in range(days):
        ja_tag, en_tag, emotion, ja, en = themes[day % len(themes)]
        in_japanese = japanese != (day % 4 == 3)
        count = used[en_tag]
        side = 0 if in_japanese else 1
        texts = ja if in_japanese else en
        clock.set(START + timedelta(days=day, hours=1))
        await call_ok(
            client,
            "remember",
            {
                "content": texts[count[side] % len(texts)],
                "emotion": emotion,
                "tags": [ja_tag if in_japanese else en_tag],
            },
        )
        count[side] += 1
        if daily or day == days - 1:
            clock.set(START + timedelta(days=day, hours=13))
            await call_ok(client, "consolidate")


def _convictions(text: str) -> list[str]:
    line = next((line for line in text.splitlines() if line.startswith("Your convictions: ")), "")
    return re.findall(r'"([^"]+)"', line)


MONTHS = [
    pytest.param((POETRY, RAIN, TEA), True, True, id="ja-poetry-rain-tea-daily"),
    pytest.param((POETRY, RAIN, TEA), True, False, id="ja-poetry-rain-tea-once"),
    pytest.param((MUSIC, CATS, SEA), True, True, id="ja-music-cats-sea-daily"),
    pytest.param((MUSIC, CATS, SEA), False, True, id="en-music-cats-sea-daily"),
]


@pytest.mark.parametrize(("themes", "japanese", "daily"), MONTHS)
async def test_each_theme_lived_for_a_month_is_a_conviction_am_i_being_genuine_names(
    make_host: HostFactory, themes: Sequence[Theme], japanese: bool, daily: bool
) -> None:
    clock = Clock(START)
    host = make_host({name: PLUGINS[name]() for name in ("memory", "notions", "self_model")}, clock=clock)
    async with mcp_client(host) as client:
        await call_ok(client, "update_relationship", {"person": "Master", "field": "trust_level", "value": 0.9})
        await _month(client, clock, themes, japanese=japanese, daily=daily)
        genuine = await call_ok(client, "am_i_being_genuine")
        them = await call_ok(client, "consider_them", {"person": "Master"})
    named = _convictions(genuine)
    assert len(named) == len(themes), genuine  # one per theme, whatever the language of its memories
    for label in named:
        assert "(" not in label, label  # a thought, not tags with an emotion in brackets
        assert "&" not in label, label
        assert bool(JAPANESE.search(label)) == japanese, label
    words = [theme[0] if japanese else theme[1] for theme in themes]
    assert sorted(next(w for w in words if w in label.casefold()) for label in named) == sorted(words)
    if TEA in themes:
        tea = next(label for label in named if "お茶" in label)
        assert "マスター" in tea  # its moments were shared with Master: the notion is bound to them
        assert f'Impressions of Master: "{tea}"' in them
