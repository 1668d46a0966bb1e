"""What counts as evidence of who was there, over a real MCP client, in Japanese and English: remember's ``with``
outranks the words; a return still to come, an absence spoken of in passing or being alone is no moment (nor, for
being alone, an absence); a name written beside Japanese is still a name; an absence is known from what was said,
not from two quiet days; the claims behind each sentence reach the client (``EGO_CLAIMS``)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from self_model_support import PeopleReader

from ego_core import Clock, PluginHost, Settings
from ego_core.testing import HostFactory, call_ok, mcp_client
from ego_memory.plugin import MemoryPlugin
from ego_self_model import SelfModelPlugin

pytestmark = pytest.mark.anyio

TOKYO = ZoneInfo("Asia/Tokyo")
EVENING = datetime(2026, 12, 1, 20, 0, tzinfo=TOKYO)
CLAIMS_META = "ego/claims"


def host_in_tokyo(make_host: HostFactory, tmp_path: Path, clock: Clock, reader: PeopleReader) -> PluginHost:
    chosen = {"memory": MemoryPlugin(), "self_model": SelfModelPlugin(), "reader": reader}
    settings = Settings(data_dir=tmp_path / "ego", timezone="Asia/Tokyo", claims=True)
    return make_host(chosen, settings=settings, clock=clock)


async def remember(client: Any, content: str, **args: Any) -> str:
    return await call_ok(client, "remember", {"content": content, **args})


async def claims_of(client: Any, tool: str, args: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    result = await client.call_tool(tool, args or {})
    assert not result.is_error
    return list((result.meta or {}).get(CLAIMS_META, []))


@pytest.mark.parametrize(
    ("unnamed", "misnamed"),
    [
        ("二人で近所の本屋に行って、詩集を選んだ。", "マスターの好きな曲をAikoと一緒に練習した。"),
        ("We walked to the harbour and counted the boats.", "Aiko and I rehearsed Master's favourite song."),
    ],
    ids=["japanese", "english"],
)
async def test_with_says_who_was_there_whatever_the_words_name(
    make_host: HostFactory, tmp_path: Path, unnamed: str, misnamed: str
) -> None:
    clock, reader = Clock(EVENING), PeopleReader()
    async with mcp_client(host_in_tokyo(make_host, tmp_path, clock, reader)) as client:
        await remember(client, unnamed, **{"with": ["マスター"]})
        clock.set(EVENING + timedelta(hours=1))
        await remember(client, misnamed, **{"with": ["Aiko"]})
        shared = reader.shared()
    assert shared == {"Master": 1, "aiko": 1} or shared == {"Master": 1, "Aiko": 1}, shared


@pytest.mark.parametrize(
    ("words", "moment"),
    [
        ("明日マスターが帰ってくる。話したいことがたくさんある。", False),
        ("マスターが帰ってきたら、最初にお茶を淹れよう。", False),
        ("Master comes back tomorrow; I cleaned the whole flat.", False),
        ("マスターが来週から出張すると教えてくれた。", True),
        ("マスターの出張の荷造りを手伝った。", True),
        ("Master read me a poem about missing the rain in Manchester.", True),
        ("Master is in Osaka and I miss him terribly.", False),
        ("BenとMasterが紅茶の淹れ方で議論していた。", True),
        ("マスターが昼寝している間に、一人で歌の練習をした。", False),
        ("I practised Master's favourite song alone while he napped.", False),
        ("マスターが「留守のあいだ、猫を頼むね」と私に言った。", True),
        ("マスターの時間を無駄にしていないか、少し気になる。", False),
        ("猫がマスターのセーターの上で丸くなって寝ている。", False),
        ("Master's flight left this morning.", False),
        ("Master's back from Osaka with a box of sweets!", True),
        ("マスターから学会会場の写真が届いた。", False),
        ("Master texted me a photo of the conference hall.", False),
        ("去年マスターが出張中だった頃を思い出した。", False),
        ("マスターの締め切りが終わった。久しぶりに朝ごはんを一緒に食べた。", True),
        ("Aikoと一緒にお茶を飲んだ。マスターの椅子は空っぽ。", False),
        ("マスターの声が聞けなくて寂しい。", False),
    ],
)
async def test_a_moment_is_what_the_words_say_happened_now(
    make_host: HostFactory, tmp_path: Path, words: str, moment: bool
) -> None:
    clock, reader = Clock(EVENING), PeopleReader()
    async with mcp_client(host_in_tokyo(make_host, tmp_path, clock, reader)) as client:
        await remember(client, words)
        shared = reader.shared().get("Master", 0)
    assert shared == (1 if moment else 0), words


async def test_being_alone_is_no_absence_and_two_quiet_days_are_no_reunion(
    make_host: HostFactory, tmp_path: Path
) -> None:
    clock, reader = Clock(EVENING), PeopleReader()
    async with mcp_client(host_in_tokyo(make_host, tmp_path, clock, reader)) as client:
        for day in range(5):
            clock.set(EVENING + timedelta(days=day))
            await remember(client, f"マスターと夕飯を作った。{day + 1}日目の献立は鍋。")
        clock.set(EVENING + timedelta(days=5))
        await remember(client, "マスターが昼寝している間に、一人で歌の練習をした。")
        clock.set(EVENING + timedelta(days=6, hours=12))
        back = await remember(client, "マスターと焼き芋を半分こした。")
        attune = await call_ok(client, "attune")
        wake = await claims_of(client, "wake_up")
    assert "after a while" not in back
    assert "quieter than usual" not in attune
    assert not [c for c in wake if c["kind"] in ("reunion", "apart")]


@pytest.mark.parametrize(
    ("away", "back"),
    [
        ("マスターは出張中。部屋が静かすぎる。", "マスターが帰ってきた。お土産は八ッ橋。"),
        ("Master is away in Osaka; the flat is too quiet.", "Master came back with a box of sweets."),
    ],
    ids=["japanese", "english"],
)
async def test_an_absence_said_is_known_and_its_end_is_one_reunion(
    make_host: HostFactory, tmp_path: Path, away: str, back: str
) -> None:
    clock, reader = Clock(EVENING), PeopleReader()
    async with mcp_client(host_in_tokyo(make_host, tmp_path, clock, reader)) as client:
        for day in range(4):
            clock.set(EVENING + timedelta(days=day))
            await remember(client, f"Master and I cooked dinner together, day {day + 1}.")
        clock.set(EVENING + timedelta(days=4))
        await remember(client, away)
        clock.set(EVENING + timedelta(days=4, hours=13))
        felt = await claims_of(client, "attune")
        clock.set(EVENING + timedelta(days=5))
        returned = await client.call_tool("remember", {"content": back})
        clock.set(EVENING + timedelta(days=5, hours=12))
        first = await claims_of(client, "wake_up")
        second = await claims_of(client, "wake_up")
    apart = [c for c in felt if c["kind"] == "apart"]
    assert apart, felt
    assert apart[0]["person"] == "Master"
    told = [c for c in (returned.meta or {}).get(CLAIMS_META, []) if c["kind"] == "reunion"]
    assert len(told) == 1
    assert told[0]["person"] == "Master"
    assert [c["kind"] for c in first].count("reunion") == 1
    assert "reunion" not in [c["kind"] for c in second], "a reunion is told once"


async def test_the_claims_name_the_moment_the_words_speak_of(make_host: HostFactory, tmp_path: Path) -> None:
    clock, reader = Clock(EVENING), PeopleReader()
    async with mcp_client(host_in_tokyo(make_host, tmp_path, clock, reader)) as client:
        saved = await remember(client, "マスターと抹茶を点てた。泡がきめ細かかった。")
        memory_id = saved.split("(id: ", 1)[1].split(")", 1)[0]
        clock.set(EVENING + timedelta(hours=12))  # 08:00 the next morning in Tokyo
        claims = await claims_of(client, "wake_up")
    by_kind = {c["kind"]: c for c in claims}
    assert by_kind["together"]["memory_id"] == memory_id
    assert by_kind["time"]["value"] == 1
    assert by_kind["time"]["words"] == "yesterday"
    assert datetime.fromisoformat(by_kind["time"]["at"]) == EVENING


async def test_no_claims_reach_a_client_unless_asked(make_host: HostFactory, tmp_path: Path) -> None:
    chosen = {"memory": MemoryPlugin(), "self_model": SelfModelPlugin()}
    host = make_host(chosen, settings=Settings(data_dir=tmp_path / "plain"), clock=Clock(EVENING))
    async with mcp_client(host) as client:
        await remember(client, "Master and I made tea.")
        result = await client.call_tool("wake_up", {})
    assert not (result.meta or {}).get(CLAIMS_META)


async def test_the_bond_grows_with_the_days_shared(make_host: HostFactory, tmp_path: Path) -> None:
    clock, reader = Clock(EVENING), PeopleReader()
    async with mcp_client(host_in_tokyo(make_host, tmp_path, clock, reader)) as client:
        await remember(client, "Master and I planted basil on the balcony.")
        first = [c for c in await claims_of(client, "wake_up") if c["kind"] == "bond"]
        for day in range(1, 25):
            clock.set(EVENING + timedelta(days=day))
            await remember(client, f"Master and I watered the basil and talked, evening {day}.")
        last = [c for c in await claims_of(client, "wake_up") if c["kind"] == "bond"]
        words = await call_ok(client, "wake_up")
    assert last[0]["value"] > first[0]["value"] + 0.15
    assert "still getting to know them" not in words


async def test_with_no_configuration_the_companion_is_the_one_most_shared_with(
    make_host: HostFactory, tmp_path: Path
) -> None:
    clock, reader = Clock(EVENING), PeopleReader()
    host = host_in_tokyo(make_host, tmp_path, clock, reader)
    async with mcp_client(host) as client:
        for day in range(6):
            clock.set(EVENING + timedelta(days=day))
            await remember(client, f"ユウキと夕飯を作った。{day + 1}日目。", **{"with": ["ユウキ"]})
        clock.set(EVENING + timedelta(days=6))
        await remember(client, "Aikoが遊びに来て、三人でゲームをした。ユウキが勝った。", **{"with": ["ユウキ", "Aiko"]})
        clock.set(EVENING + timedelta(days=6, hours=12))
        wake = await call_ok(client, "wake_up")
        picture = await call_ok(client, "consider_them", {"person": "ユウキ"})
        checks = dict(host.hooks.doctor_checks())["self_model"]
    assert "\nユウキ: " in wake
    assert "Master" not in wake
    assert picture.startswith("ユウキ (the one you live with):"), picture
    assert isinstance(checks, list)
    (companion,) = [check for check in checks if check.name == "companion"]
    assert companion.detail.startswith("ego takes ユウキ for the companion")


@pytest.mark.parametrize(
    ("memories", "name"),
    [
        (("Sam and I baked focaccia.", "Sam told me about his run.", "Sam laughed at the burnt crust."), "Sam"),
        (("田中さんが梨を持ってきてくれた。", "田中さんと将棋を指した。", "田中さんに詩を読んだ。"), "田中"),
    ],
    ids=["english", "japanese"],
)
async def test_a_name_the_memories_keep_calling_someone_becomes_someone(
    make_host: HostFactory, tmp_path: Path, memories: tuple[str, str, str], name: str
) -> None:
    clock, reader = Clock(EVENING), PeopleReader()
    async with mcp_client(host_in_tokyo(make_host, tmp_path, clock, reader)) as client:
        await remember(client, memories[0])
        unknown = await call_ok(client, "consider_them", {"person": name})
        for day, content in enumerate(memories[1:], start=1):
            clock.set(EVENING + timedelta(days=day))
            await remember(client, content)
        known = await call_ok(client, "consider_them", {"person": name})
    assert "you don't know much about them yet" in unknown, "a name said once may be anyone"
    # the memory that named them first counts too, once the name is someone
    assert "You've shared a few moments with them" in known, known
