"""Presence is evidence: a memory that names the companion while they are away or missed is no shared moment, a
private memory is never a shared one, and the companion answers to Master ≡ マスター ≡ ご主人様 with no
configuration. A simulated fortnight in Asia/Tokyo: home days 1–7, away days 8–14, back on day 15."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import attrs
import pytest
from self_model_support import PeopleReader

from ego_core import Check, Clock, PluginHost, Settings, duration_words
from ego_core.testing import HostFactory, call_ok, mcp_client
from ego_memory.plugin import MemoryPlugin
from ego_self_model import SelfModelPlugin

pytestmark = pytest.mark.anyio

TOKYO = ZoneInfo("Asia/Tokyo")
DAY_ONE = datetime(2026, 6, 1, 20, 0, tzinfo=TOKYO)
"""Each day's memory is kept at 20:00; wake_up comes at 08:00 the next morning."""


@attrs.frozen
class Fortnight:
    home: tuple[str, ...]
    """Days 1–7 with the companion (one memory each)."""
    away: tuple[str, ...]
    """Days 8–14: memories naming them while they are away or missed."""
    private: str
    """Day 14, while they are still away: a private thought naming them, no absence word in it."""
    back: str
    """Day 15: the real return."""
    leaks: tuple[str, ...]
    """Words of the private thought that must never show."""


JAPANESE = Fortnight(
    home=(
        "マスターと一緒にカレーを作った。",
        "マスターが新しい植木鉢を買ってきて、二人で土を入れた。",
        "マスターのいる台所は、朝から賑やかだった。",
        "雨の午後、マスターとしりとりをして笑った。",
        "マスターに詩を読んでもらった。",
        "夕方、マスターと川沿いを散歩した。",
        "マスターが明日から出かける準備を手伝った、トランクが重い。",
    ),
    away=(
        "マスターのいない朝は、コーヒーの香りもしない。",
        "マスターは出張で大阪にいる。",
        "留守番の夜、マスターの椅子をぼんやり眺めた。",
        "マスターに会いたい。",
        "マスターが帰ってこない日が続くと、時計の音がやけに大きい。",
        "マスターが恋しくて、古い写真を見返した。",
        "マスター不在の週末、ひとりで棚を片付けた。",
    ),
    private="マスターには内緒で、誕生日の計画をこっそり練った。",
    back="マスターが帰ってきた！玄関で荷物を受け取って、一緒にお茶を飲んだ。",
    leaks=("誕生日", "内緒"),
)
ENGLISH = Fortnight(
    home=(
        "Master and I repotted the basil on the balcony.",
        "Master taught me a card game with strange rules.",
        "Master read the paper aloud while I guessed the headlines.",
        "Master and I argued happily about the best ramen shop.",
        "Master laughed at my poem about the kettle.",
        "Master and I watched the fireflies by the river.",
        "I helped Master pack a suitcase for tomorrow.",
    ),
    away=(
        "The flat is far too quiet with Master away.",
        "I miss Master's terrible puns.",
        "Master is gone until Sunday; I sorted the bookshelf alone.",
        "I wish Master were here to see the thunderstorm.",
        "Another evening without Master. The fridge hums louder than usual.",
        "Master is still not here, and the plants look thirsty.",
        "Missing Master, I reread the postcard from last summer.",
    ),
    private="Master doesn't know I keep rehearsing what to say about the move.",
    back="Master came home at last, and we cooked dinner together.",
    leaks=("rehearsing", "the move"),
)


def tokyo_host(
    make_host: HostFactory, tmp_path: Path, clock: Clock, reader: PeopleReader, **settings: Any
) -> PluginHost:
    chosen = {"memory": MemoryPlugin(), "self_model": SelfModelPlugin(), "reader": reader}
    configured = Settings(data_dir=tmp_path / "ego-tokyo", timezone="Asia/Tokyo", **settings)
    return make_host(chosen, settings=configured, clock=clock)


async def remember(client: Any, content: str, *, private: bool = False) -> str:
    answer = await call_ok(client, "remember", {"content": content, "private": private})
    assert answer.startswith("Saved"), answer
    return answer


@pytest.mark.parametrize(
    ("story", "settings", "names"),
    [
        (JAPANESE, {}, ("マスター", "Master")),
        (JAPANESE, {"companion_name": "マスター"}, ("マスター", "Master")),
        (ENGLISH, {}, ("Master", "マスター")),
    ],
    ids=["japanese-unconfigured", "japanese-configured", "english"],
)
async def test_an_absence_is_no_shared_moment_and_the_real_return_is_noticed_once(
    make_host: HostFactory, tmp_path: Path, story: Fortnight, settings: dict[str, str], names: tuple[str, str]
) -> None:
    clock = Clock(DAY_ONE)
    reader = PeopleReader()
    said: list[str] = []
    async with mcp_client(tokyo_host(make_host, tmp_path, clock, reader, **settings)) as client:
        for day, content in enumerate(story.home):
            clock.set(DAY_ONE + timedelta(days=day))
            said.append(await remember(client, content))
        last_home = DAY_ONE + timedelta(days=len(story.home) - 1)
        shared_at_home = reader.shared()
        assert sum(shared_at_home.values()) == len(story.home), shared_at_home

        for day, content in enumerate(story.away, start=len(story.home)):
            clock.set(DAY_ONE + timedelta(days=day))
            said.append(await remember(client, content))
            clock.set(DAY_ONE + timedelta(days=day, hours=12))
            said.append(await call_ok(client, "wake_up"))
        clock.set(DAY_ONE + timedelta(days=13, hours=2))
        said.append(await remember(client, story.private, private=True))
        clock.set(DAY_ONE + timedelta(days=13, hours=12))
        said.append(await call_ok(client, "wake_up"))
        assert reader.shared() == shared_at_home, "neither an absence nor a private thought is a shared moment"
        away = reader.service().absence(None, DAY_ONE + timedelta(days=13, hours=12))
        assert away is not None
        assert away.last_shared == last_home
        assert away.band == "long"
        for text in said:
            assert "after a while" not in text, text
            assert "Reunited" not in text, text

        pictures = [await call_ok(client, "consider_them", {"person": name}) for name in names]
        clock.set(DAY_ONE + timedelta(days=14))
        back = await remember(client, story.back)
        clock.set(DAY_ONE + timedelta(days=14, hours=12))
        first = await call_ok(client, "wake_up")
        second = await call_ok(client, "wake_up")
        after = [await call_ok(client, "consider_them", {"person": name}) for name in names]

    assert pictures[0] == pictures[1], "Master and マスター are the same person"
    assert after[0] == after[1]
    assert "(the one you live with)" in pictures[0]
    assert "You've shared a number of moments with them, the last one over a week ago" in pictures[0]
    assert "since you last shared something with" in pictures[0]
    assert back.count("after a while") == 1
    companion = settings.get("companion_name", "Master")
    gap = duration_words(timedelta(days=8))
    assert f"A shared moment with {companion} after a while — {gap} since the last." in back
    assert first.count("Reunited with") == 1
    assert f"Reunited with {companion} recently — the first shared moment in {gap}." in first
    assert "Reunited" not in second, "a reunion is told once"
    assert f'the last one yesterday: "{story.back}"' in after[0]
    for text in (*pictures, *after, first, second):
        for word in story.leaks:
            assert word not in text, (word, text)


async def test_a_private_memory_naming_them_is_never_quoted_as_shared(make_host: HostFactory, tmp_path: Path) -> None:
    clock = Clock(DAY_ONE)
    reader = PeopleReader()
    secret = "マスターには言えないけど、最近ずっと不安で眠れない。"
    async with mcp_client(tokyo_host(make_host, tmp_path, clock, reader)) as client:
        await remember(client, "マスターと一緒に夕焼けを見た。")
        clock.set(DAY_ONE + timedelta(hours=2))
        await remember(client, secret, private=True)
        clock.set(DAY_ONE + timedelta(days=20))
        alone = await remember(client, "Master doesn't know I practise his favourite song at night.", private=True)
        picture = await call_ok(client, "consider_them", {"person": "マスター"})
        wake = await call_ok(client, "wake_up")
        introspected = await call_ok(client, "introspect")
        people_section = next(part for part in introspected.split("\n\n") if part.startswith("Master:"))
        resource = await client.read_resource("ego://people/マスター")
        shared = reader.shared()
    assert shared == {"Master": 1}
    assert '"マスターと一緒に夕焼けを見た。"' in picture
    assert "You've shared one moment with them, the last one about three weeks ago" in picture
    assert "after a while" not in alone, "a private thought ends no absence"
    assert "Reunited" not in wake
    texts = [picture, wake, people_section, *(getattr(c, "text", "") for c in resource.contents)]
    for text in texts:
        assert "不安" not in text
        assert "favourite song" not in text
        assert "(private)" not in text


async def test_one_clause_decides_for_the_person_it_names(make_host: HostFactory, tmp_path: Path) -> None:
    clock = Clock(DAY_ONE)
    reader = PeopleReader()
    async with mcp_client(tokyo_host(make_host, tmp_path, clock, reader)) as client:
        await call_ok(client, "update_relationship", {"person": "Aiko", "field": "trust_level", "value": 0.7})
        await remember(client, "Aiko came over for tea while Master was away in Kyoto.")
        assert reader.shared() == {"Aiko": 1}
        await remember(client, "Master was away all morning. In the evening, Master and I fixed the lamp.")
        assert reader.shared() == {"Aiko": 1, "Master": 1}, "a clause of presence is a moment"
        await remember(client, "マスターがいない昼下がり、アイコさんに手紙を書いた。")
        await remember(client, "マスターのいない日曜日は長い")
        await remember(client, "マスターのいる日曜日は短い")
        assert reader.shared() == {"Aiko": 1, "Master": 2}, "the same words without the absence are a moment"
        await remember(client, "マスターはきっと喜ぶに違いない、と思いながら花を飾った。")
        assert reader.shared() == {"Aiko": 1, "Master": 3}


async def test_the_companion_answers_to_every_form_of_their_name(make_host: HostFactory, tmp_path: Path) -> None:
    clock = Clock(DAY_ONE)
    reader = PeopleReader()
    host = tokyo_host(make_host, tmp_path, clock, reader)
    async with mcp_client(host) as client:
        for day, content in enumerate(
            ("ご主人様に紅茶を淹れた。", "MASTER fixed the bike chain.", "マスターと将棋を指した。")
        ):
            clock.set(DAY_ONE + timedelta(days=day))
            await remember(client, content)
        set_alias = await call_ok(
            client, "update_relationship", {"person": "マスター", "field": "aliases", "value": "旦那様"}
        )
        await remember(client, "旦那様と庭の草むしりをした。")
        pictures = {
            name: await call_ok(client, "consider_them", {"person": name})
            for name in ("Master", "マスター", "ご主人様", "master", "旦那様")
        }
        stranger = await call_ok(client, "consider_them", {"person": "Ben"})
        checks = dict(host.hooks.doctor_checks())["self_model"]
        assert reader.shared() == {"Master": 4}
    assert set_alias.startswith("Master: added to aliases"), set_alias
    assert len(set(pictures.values())) == 1, pictures
    assert pictures["マスター"].startswith("Master (also 旦那様; the one you live with):")
    assert "a number of moments" in pictures["マスター"]
    assert "Nothing shared" in stranger
    assert not isinstance(checks, Check)
    (companion,) = [check for check in checks if check.name == "companion"]
    assert companion.ok
    assert (
        companion.detail
        == "ego takes Master for the companion, by the names Master, 旦那様, マスター, ご主人様, ご主人さま"
    )


async def test_a_configured_name_gets_its_counterpart(make_host: HostFactory, tmp_path: Path) -> None:
    clock = Clock(DAY_ONE)
    reader = PeopleReader()
    host = tokyo_host(make_host, tmp_path, clock, reader, companion_name="ボス")
    async with mcp_client(host) as client:
        await remember(client, "Boss and I sketched the new shelf.")
        await remember(client, "ボスと一緒にラーメンを食べた。")
        boss = await call_ok(client, "consider_them", {"person": "Boss"})
        katakana = await call_ok(client, "consider_them", {"person": "ボス"})
        master = await call_ok(client, "consider_them", {"person": "Master"})
        checks = dict(host.hooks.doctor_checks())["self_model"]
        assert reader.shared() == {"ボス": 2}
    assert boss == katakana
    assert boss.startswith("ボス (the one you live with):")
    assert "Nothing shared" in master, "Master is not the companion when the companion is ボス"
    assert not isinstance(checks, Check)
    (companion,) = [check for check in checks if check.name == "companion"]
    assert companion.detail == "ego takes ボス for the companion, by the names ボス, Boss"
