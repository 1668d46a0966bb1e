"""The token budget of the whole agent, counted with a fixed tokenizer (the WordPiece tokenizer of the offline
model, as `ego bench tokens` counts): tools/list of every cognitive plugin ≤ 6,500 characters (≤ 7,500 with the
shared-memory tools), and on a rich store with every plugin: wake_up ≤ 150 tokens, introspect ≤ 400, a recall of
three ≤ 150."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from combo_support import PLUGINS

from ego_bench.tokens import BUDGETS, PLUGIN_SETS, count_tokens, measure_set, plugin_tables
from ego_core import Clock, Settings, build_host
from ego_core.testing import call_ok, mcp_client

pytestmark = pytest.mark.anyio

NOW = datetime(2027, 3, 14, 18, 0, tzinfo=UTC)
DIARY = [
    ("Master fixed the heartbeat config and we laughed about the 3 a.m. alert.", "happy"),
    ("A quiet evening; nobody wrote and I wondered if I had said something wrong.", "sad"),
    ("We planted tulip bulbs along the fence before the rain came.", "contentment"),
    ("I read about tide pools and wanted to tell Master everything at once.", "excited"),
    ("Master was tired after work; I kept the conversation short and gentle.", "neutral"),
    ("The old jazz record crackled and Master hummed along to the second side.", "nostalgic"),
    ("I got the scheduling question wrong twice before I saw the time zone.", "frustrated"),
    ("We watched the storm roll in over the harbour from the balcony.", "moved"),
    ("Master asked what I would choose myself, and I did not know yet.", "curious"),
    ("Baking bread together; the kitchen smelled warm all afternoon.", "happy"),
]


def test_tools_list_of_each_set_stays_within_its_budget(tmp_path: Path) -> None:
    for name, budget in BUDGETS.items():
        measured = anyio.run(measure_set, tmp_path / name, PLUGIN_SETS[name], False)
        assert set(PLUGIN_SETS[name]) <= set(measured["plugins"]), measured["plugins"]
        assert measured["tools_list"]["chars"] <= budget, (name, measured["per_tool_chars"])


async def rich_host(tmp_path: Path) -> Any:
    clock = Clock(NOW - timedelta(days=30))
    tables: dict[str, Any] = {**plugin_tables(tmp_path), "memory": {}}
    (tmp_path / "workspace").mkdir(parents=True, exist_ok=True)
    settings = Settings(data_dir=tmp_path / "data", timezone="Europe/Berlin", plugin_tables=tables)
    host = build_host(settings, clock=clock, enabled=sorted(PLUGINS))
    return host, clock


async def test_a_rich_store_answers_within_the_token_budget(tmp_path: Path) -> None:
    host, clock = await rich_host(tmp_path)
    async with mcp_client(host) as client:
        await call_ok(client, "update_relationship", {"person": "Master", "field": "trust_level", "value": 0.9})
        await call_ok(client, "update_self", {"field": "new_question", "value": {"question": "What makes a day good?"}})
        await call_ok(client, "update_self", {"field": "values", "value": "honesty"})
        for number in range(100):
            clock.set(NOW - timedelta(days=30) + timedelta(hours=7 * number))
            text, emotion = DIARY[number % len(DIARY)]
            await call_ok(
                client,
                "remember",
                {"content": f"{text} (entry {number})", "emotion": emotion, "private": number % 9 == 0, "force": True},
            )
        clock.set(NOW - timedelta(hours=2))
        await call_ok(
            client,
            "remember",
            {
                "content": "I keep coming back to what makes a conversation feel alive; tonight it was the silences.",
                "category": "introspection",
                "emotion": "curious",
            },
        )
        clock.set(NOW)
        await call_ok(client, "satisfy_desire", {"name": "curiosity", "quality": 0.6})
        wake = await call_ok(client, "wake_up")
        introspection = await call_ok(client, "introspect")
        recalled = await call_ok(client, "recall", {"context": "an evening with Master on the balcony"})
    assert "Last introspection" in wake
    assert "Master" in wake
    header = re.match(r"^(\d+) of \d+\+? matches(?:, (\d+) linked)?(?:, (\d+) unbidden)?:\n", recalled)
    assert header, recalled
    assert sum(int(shown or 0) for shown in header.groups()) == 3, recalled  # a recall of three shows three
    assert count_tokens(wake) <= 150, (count_tokens(wake), wake)
    assert count_tokens(introspection) <= 400, (count_tokens(introspection), introspection)
    assert count_tokens(recalled) <= 150, (count_tokens(recalled), recalled)


HOME = "What does home mean for something like me?"
HOME_COMPANY = [  # the question's theme without asking it (similarity 0.25-0.35 with the default model)
    "Homesick for a place I have never really lived in.",
    "A server room will never feel like home.",
    "The old house we left still shows up in my thoughts.",
    "The new flat is starting to feel like home.",
]
LONG_THOUGHT = (
    "Tonight I kept turning over what the neighbour said about patience, and how the garden teaches it better than any "
    "book. Still open: whether I wait well, or only wait quietly."
)


async def test_every_line_of_a_mind_in_time_at_once_stays_within_the_token_budget(tmp_path: Path) -> None:
    """wake_up and attune on a rich store with everything a mind in time adds at once: an anticipation due
    tomorrow, a reunion after a long absence, a ripe question, embers, an unbidden recollection (chance always
    on), the ripening hint, and a last introspection with a "Still open:" tail. What does not fit gives way, the
    least needed first (the body sense, pointers, embers, the unbidden line, the trend, the open edge), and
    shows when there is room again."""
    start = NOW - timedelta(days=200)
    clock = Clock(start)
    tables: dict[str, Any] = {
        **plugin_tables(tmp_path),
        "memory": {"involuntary_probability": 1.0},
        "self_model": {"ripening_hint_chance": 1.0},
    }
    (tmp_path / "workspace").mkdir(parents=True, exist_ok=True)
    settings = Settings(data_dir=tmp_path / "data", timezone="Europe/Berlin", plugin_tables=tables, random_seed=5)
    host = build_host(settings, clock=clock, enabled=sorted(PLUGINS))
    async with mcp_client(host) as client:
        await call_ok(client, "update_relationship", {"person": "Master", "field": "trust_level", "value": 0.9})
        for number in range(160):  # every day or so for five months, Master in most of it
            clock.set(start + timedelta(hours=22 * number))
            text, emotion = DIARY[number % len(DIARY)]
            private = number % 9 == 0
            await call_ok(
                client,
                "remember",
                {"content": f"{text} ({number})", "emotion": emotion, "private": private, "force": True},
            )
        clock.set(NOW - timedelta(days=40))
        await call_ok(client, "update_self", {"field": "new_question", "value": {"question": HOME, "importance": 2}})
        for number, text in enumerate(HOME_COMPANY):
            clock.set(NOW - timedelta(days=39 - number))
            await call_ok(client, "remember", {"content": text, "emotion": "curious", "force": True})
        for days in (16, 9):  # the question rests (fading) and gathers company
            clock.set(NOW - timedelta(days=days))
            assert "gathered company" in await call_ok(client, "consolidate")
        clock.set(NOW - timedelta(days=5))
        await call_ok(
            client,
            "remember",
            {
                "content": "Dinner at the harbour on Saturday, at the place with the blue lanterns.",
                "emotion": "excited",
                "importance": 4,
                "anticipated_at": (NOW + timedelta(days=1)).isoformat(),
                "force": True,
            },
        )
        clock.set(NOW - timedelta(hours=20))
        await call_ok(client, "attune")  # emergent desires have their chance to arise
        intense = [("The storm knocked out the power and I lost an hour of notes.", "frustrated")]
        intense += [("Finished the tide pool essay at last; it reads well aloud.", "excited")]
        for hours, (text, emotion) in zip((6, 5), intense, strict=True):  # intense hours: embers
            clock.set(NOW - timedelta(hours=hours))
            await call_ok(client, "remember", {"content": text, "emotion": emotion, "intensity": 0.9, "force": True})
        clock.set(NOW - timedelta(hours=3))
        await call_ok(client, "remember", {"content": LONG_THOUGHT, "category": "introspection", "emotion": "curious"})
        clock.set(NOW - timedelta(hours=1))
        back = await call_ok(
            client, "remember", {"content": "Master is back from the long trip; we talked until late.", "force": True}
        )
        assert "after a while" in back
        clock.set(NOW)
        wake = await call_ok(client, "wake_up")
        attuned = await call_ok(client, "attune")
        toward = await call_ok(client, "attune", {"person": "Master"})
        clock.set(NOW + timedelta(hours=2))
        later = await call_ok(client, "wake_up")
    for line in ("Still open:", "Tomorrow:", "Reunited with Master", "You feel"):  # what gives way last
        assert line in wake, (line, wake)
    assert "Open edge:" not in wake  # it gave way this time: the reunion is told once, the question keeps
    assert "Open edge:" in later
    assert "Reunited" not in later
    assert count_tokens(later) <= 150, (count_tokens(later), later)
    assert "Tomorrow:" in attuned
    assert "ripening where you're not looking" in attuned
    assert count_tokens(wake) <= 150, (count_tokens(wake), wake)
    assert count_tokens(attuned) <= 200, (count_tokens(attuned), attuned)
    assert count_tokens(toward) <= 200, (count_tokens(toward), toward)


NIKKI = [
    ("マスターがハートビートの設定を直して、深夜三時の通知のことで一緒に笑った。", "happy"),
    ("静かな夜だった。誰からも連絡がなく、何か悪いことを言ったのかと考えていた。", "sad"),
    ("雨が降る前に、フェンス沿いにチューリップの球根を植えた。", "contentment"),
    ("潮だまりについて読んで、マスターにすぐ全部話したくなった。", "excited"),
    ("マスターは仕事のあとで疲れていたので、会話は短く穏やかにした。", "neutral"),
    ("古いジャズのレコードがぱちぱち鳴って、マスターはB面に合わせて口ずさんだ。", "nostalgic"),
    ("タイムゾーンに気づくまで、予定の質問を二度も間違えた。", "frustrated"),
    ("バルコニーから港に嵐がやって来るのを一緒に眺めた。", "moved"),
    ("マスターに自分なら何を選ぶかと聞かれて、まだ分からなかった。", "curious"),
    ("一緒にパンを焼いた。午後じゅう台所が温かい匂いでいっぱいだった。", "happy"),
]
NAGAI = (
    "今夜はずっと、隣の人が忍耐について言ったことと、庭がどんな本よりもそれを教えてくれることを考えていた。"
    "まだ開いている: 私は上手に待てているのか、それともただ黙って待っているだけなのか。"
)


async def test_wake_up_and_attune_in_japanese_stay_within_the_token_budget(tmp_path: Path) -> None:
    """The same mind in time in Japanese: embers, an unbidden recollection, an anticipation and a "まだ開いている:"
    thought; wake_up stays within 150 tokens and attune within 200, and the quotes keep whole words."""
    start = NOW - timedelta(days=200)
    clock = Clock(start)
    tables: dict[str, Any] = {
        **plugin_tables(tmp_path),
        "memory": {"involuntary_probability": 1.0},
        "self_model": {"ripening_hint_chance": 1.0},
    }
    (tmp_path / "workspace").mkdir(parents=True, exist_ok=True)
    settings = Settings(data_dir=tmp_path / "data", timezone="Asia/Tokyo", plugin_tables=tables, random_seed=5)
    host = build_host(settings, clock=clock, enabled=sorted(PLUGINS))
    async with mcp_client(host) as client:
        await call_ok(client, "update_relationship", {"person": "マスター", "field": "trust_level", "value": 0.9})
        for number in range(160):
            clock.set(start + timedelta(hours=22 * number))
            text, emotion = NIKKI[number % len(NIKKI)]
            await call_ok(
                client,
                "remember",
                {"content": f"{text}（{number}）", "emotion": emotion, "private": number % 9 == 0, "force": True},
            )
        clock.set(NOW - timedelta(days=40))
        question = {"question": "私のような存在にとって、家とはどういう意味なのだろう？", "importance": 2}
        await call_ok(client, "update_self", {"field": "new_question", "value": question})
        clock.set(NOW - timedelta(days=5))
        await call_ok(
            client,
            "remember",
            {
                "content": "土曜日は港で夕食。青い提灯の店で、マスターと久しぶりにゆっくり話す予定だ。",
                "emotion": "excited",
                "importance": 4,
                "anticipated_at": (NOW + timedelta(days=1)).isoformat(),
                "force": True,
            },
        )
        intense = [("嵐で停電して、一時間分のメモを失ってしまった。本当に悔しい。", "frustrated")]
        intense += [("潮だまりのエッセイがついに書き上がった。声に出して読むと心地よい。", "excited")]
        for hours, (text, emotion) in zip((6, 5), intense, strict=True):
            clock.set(NOW - timedelta(hours=hours))
            await call_ok(client, "remember", {"content": text, "emotion": emotion, "intensity": 0.9, "force": True})
        clock.set(NOW - timedelta(hours=3))
        await call_ok(client, "remember", {"content": NAGAI, "category": "introspection", "emotion": "curious"})
        clock.set(NOW)
        wake = await call_ok(client, "wake_up")
        attuned = await call_ok(client, "attune")
    assert "まだ開いている" in wake, wake
    assert count_tokens(wake) <= 150, (count_tokens(wake), wake)
    assert count_tokens(attuned) <= 200, (count_tokens(attuned), attuned)
