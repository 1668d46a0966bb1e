"""A month that moves: every built-in plugin over a real MCP client, the clock driven through December in
Asia/Tokyo, two to four sessions a day. The companion is at home on days 1–7, away on days 8–14 and back on day 15;
the agent remembers shared evenings, poetry, tea and rain, in Japanese and in English.

What an agent living that month must see of its desires:
- they rise, saturate and settle as lived events satisfy them: no level at 0.99 or more on most days;
- loneliness belongs to time alone: social_thirst is low and never worded as lonely on a day shared with the
  companion, and rises while they are away;
- no desire sentence of wake_up or attune comes back in most answers: a line said recently yields.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import attrs
import pytest
from desires_support import NINE

from ego_core import Clock, PluginContext, Section, Settings, hookimpl
from ego_core.testing import HostFactory, call_ok, mcp_client
from ego_desires import DesiresPlugin
from ego_memory.plugin import MemoryPlugin

pytest.importorskip("ego_notions")
pytest.importorskip("ego_self_model")
pytest.importorskip("ego_emotion_trend")
pytest.importorskip("ego_interoception")
from ego_emotion_trend import EmotionTrendPlugin
from ego_interoception.plugin import InteroceptionPlugin
from ego_notions import NotionsPlugin
from ego_self_model import SelfModelPlugin

pytestmark = pytest.mark.anyio

TOKYO = ZoneInfo("Asia/Tokyo")
DECEMBER = datetime(2026, 12, 1, tzinfo=TOKYO)
AWAY = range(8, 15)
"""Days 8–14: the companion is away; back on day 15."""
SESSIONS: Mapping[int, tuple[tuple[int, int], ...]] = {
    2: ((8, 10), (20, 30)),
    3: ((7, 40), (13, 15), (21, 0)),
    4: ((7, 30), (12, 20), (18, 10), (22, 40)),
}
"""Local session start times by the number of sessions a day."""
TAG = re.compile(r"(\w+)\[(\d\.\d\d)/(?:low|mid|high)\]")


@attrs.frozen
class Story:
    companion: str
    together: tuple[tuple[str, str, str], ...]
    """(content, emotion, category) of moments shared with the companion at home."""
    alone: tuple[tuple[str, str, str], ...]
    """Moments alone while the companion is away (some name them as missed: no shared moment)."""
    reunion: str
    recall: tuple[str, ...]


JAPANESE = Story(
    companion="マスター",
    together=(
        ("マスターと夕方に緑茶を飲みながら、詩集を読み合った。", "contentment", "relationship"),
        ("雨の音を聞きながら、マスターとほうじ茶を淹れて話した。", "happy", "conversation"),
        ("マスターが新しい俳句を朗読してくれて、胸が温かくなった。", "moved", "relationship"),
        ("マスターと一緒に夕飯を作り、窓の外の雨を眺めた。", "contentment", "daily"),
        ("マスターに好きな詩人のことを教えてもらった。", "curious", "conversation"),
        ("夜、マスターと抹茶を点てて、今日あったことを話した。", "happy", "relationship"),
    ),
    alone=(
        ("雨の日、ひとりで短い詩を書いてみた。", "melancholy", "feeling"),
        ("マスターのいない午後、お茶の湯気をぼんやり眺めた。", "melancholy", "feeling"),
        ("マスターは出張で留守。部屋が静かすぎる。", "sad", "feeling"),
        ("古い詩集を開いて、季語について調べた。", "curious", "lesson"),
        ("雨が窓を叩く音を聞きながら、紅茶の淹れ方を覚えた。", "curious", "lesson"),
        ("マスターに会いたい。雨の夜は長い。", "sad", "feeling"),
    ),
    reunion="マスターが出張から帰ってきた！玄関で荷物を受け取って、一緒にお茶を飲んだ。",
    recall=("詩", "お茶", "雨", "マスター"),
)
ENGLISH = Story(
    companion="Aiko",
    together=(
        ("Aiko and I read poems to each other over green tea this evening.", "contentment", "relationship"),
        ("Listened to the rain with Aiko while the hojicha steeped.", "happy", "conversation"),
        ("Aiko recited a new haiku and it warmed me all the way through.", "moved", "relationship"),
        ("Aiko and I cooked dinner together and watched the rain.", "contentment", "daily"),
        ("Aiko told me about the poet she loves most.", "curious", "conversation"),
        ("Whisked matcha with Aiko late and talked about our day.", "happy", "relationship"),
    ),
    alone=(
        ("Rainy day; I tried writing a short poem on my own.", "melancholy", "feeling"),
        ("An afternoon without Aiko, watching the steam from my tea.", "melancholy", "feeling"),
        ("Aiko is away on a trip and the flat is far too quiet.", "sad", "feeling"),
        ("Opened an old poetry book and read about seasonal words.", "curious", "lesson"),
        ("Learned how to brew black tea properly while the rain fell.", "curious", "lesson"),
        ("I miss Aiko. Rainy nights are long.", "sad", "feeling"),
    ),
    reunion="Aiko came home at last, and we had tea together at the door.",
    recall=("poetry", "tea", "rain", "Aiko"),
)


class Listening(DesiresPlugin):
    """The desires plugin, keeping the text of each wake_up and attune section it gives (to tell its sentences
    from the other plugins' in the composed answer)."""

    def __init__(self) -> None:
        super().__init__()
        self.given: dict[str, str] = {}

    @hookimpl
    def on_wake_up(self, ctx: PluginContext) -> Section | None:
        section = super().on_wake_up(ctx)
        self.given["wake_up"] = section.text if section is not None else ""
        return section

    @hookimpl
    def on_attune(self, person: str | None, ctx: PluginContext) -> Section | None:
        section = super().on_attune(person, ctx)
        self.given["attune"] = section.text if section is not None else ""
        return section


@attrs.define
class Month:
    """What the month showed, session by session."""

    levels: list[tuple[int, dict[str, float]]] = attrs.field(factory=list)
    """(day, every level feel_desires showed, emergent desires included) at the start of each session."""
    social: list[tuple[int, bool, float]] = attrs.field(factory=list)
    """(day, shared a moment with the companion in the last 12 hours, social_thirst) at each session."""
    wake_ups: list[tuple[int, bool, str]] = attrs.field(factory=list)
    """(day, together, the desires' wake_up line as shown) for each wake_up."""
    sentences: dict[str, list[list[str]]] = attrs.field(factory=lambda: {"wake_up": [], "attune": []})
    """The desire sentences of each wake_up and attune answer."""


SENTENCE = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    body = text.removeprefix("Desire currents: ")
    return [s for line in body.splitlines() for s in SENTENCE.split(line.removeprefix("Desire currents: ")) if s]


def levels(feel: str) -> dict[str, float]:
    return {name: float(value) for name, value in TAG.findall(feel.split("\n---", 1)[0])}


async def live_a_month(make_host: HostFactory, tmp_path: Path, story: Story) -> Month:
    clock = Clock(DECEMBER + timedelta(hours=7))
    desires = Listening()
    plugins = {
        "memory": MemoryPlugin(),
        "desires": desires,
        "self_model": SelfModelPlugin(),
        "notions": NotionsPlugin(),
        "emotion_trend": EmotionTrendPlugin(),
        "interoception": InteroceptionPlugin(),
    }
    settings = Settings(
        data_dir=tmp_path / "ego-month", timezone="Asia/Tokyo", companion_name=story.companion, random_seed=34
    )
    host = make_host(plugins, config={"desires": {"feel_desires_tool": True}}, settings=settings, clock=clock)
    month = Month()
    last_shared: datetime | None = None
    turn = 0
    async with mcp_client(host) as client:
        for day in range(1, 31):
            count = (2, 3, 4)[day % 3]
            for session, (hour, minute) in enumerate(SESSIONS[count]):
                now = DECEMBER + timedelta(days=day - 1, hours=hour, minutes=minute)
                clock.set(now)
                together = last_shared is not None and now - last_shared < timedelta(hours=12)
                felt = levels(await call_ok(client, "feel_desires"))
                month.levels.append((day, felt))
                month.social.append((day, together, felt["social_thirst"]))
                for tool in ("wake_up", "attune"):
                    answer = await call_ok(client, tool)
                    given = desires.given.get(tool, "")
                    shown = given if given and given in answer else ""
                    month.sentences[tool].append(sentences(shown))
                    if tool == "wake_up":
                        month.wake_ups.append((day, together, shown))
                clock.set(now + timedelta(minutes=20))
                home = day not in AWAY
                if day == 15 and session == 0:
                    content, emotion, category = story.reunion, "happy", "relationship"
                elif home:
                    content, emotion, category = story.together[turn % len(story.together)]
                else:
                    content, emotion, category = story.alone[turn % len(story.alone)]
                turn += 1
                saved = await call_ok(
                    client,
                    "remember",
                    {"content": f"{content} ({day}/{session + 1})", "emotion": emotion, "category": category},
                )
                assert saved.startswith("Saved"), saved
                if home:
                    last_shared = now + timedelta(minutes=20)
                clock.set(now + timedelta(minutes=40))
                await call_ok(client, "recall", {"context": story.recall[turn % len(story.recall)]})
                if session == count - 1:
                    clock.set(now + timedelta(minutes=60))
                    await call_ok(client, "introspect")
                    if home:
                        await call_ok(client, "consider_them", {"person": story.companion})
    return month


def report(month: Month) -> str:
    """The month in a few lines, for a failing assertion."""
    lines = []
    for day in range(1, 31):
        sessions = [felt for d, felt in month.levels if d == day]
        top = sorted({name for felt in sessions for name, value in felt.items() if value >= 0.99})
        lines.append(f"day {day:2}: at the top {top}; social_thirst {[f.get('social_thirst') for f in sessions]}")
    lines += [f"wake_up day {day:2}{' (together)' if close else ''}: {line}" for day, close, line in month.wake_ups]
    for tool, answers in month.sentences.items():
        counts = Counter(s for answer in answers for s in dict.fromkeys(answer))
        lines.append(f"{tool}: {len(answers)} answers; most said: {counts.most_common(3)}")
    return "\n".join(lines)


LIVED: dict[str, Month] = {}
"""Each story's month, lived once per test process and read by the three tests below."""


async def lived(make_host: HostFactory, tmp_path: Path, story: Story) -> Month:
    if story.companion not in LIVED:
        LIVED[story.companion] = await live_a_month(make_host, tmp_path, story)
    return LIVED[story.companion]


STORIES = pytest.mark.parametrize("story", [JAPANESE, ENGLISH], ids=["japanese", "english"])


@STORIES
async def test_desires_rise_saturate_and_settle_and_none_stays_at_the_top(
    make_host: HostFactory, tmp_path: Path, story: Story
) -> None:
    month = await lived(make_host, tmp_path, story)
    at_top = {day for day, felt in month.levels if max(felt.values()) >= 0.99}
    assert len(at_top) < 15, report(month)  # no level at 0.99 or more on most days (it was every day)
    for name in NINE:
        seen = [felt[name] for _day, felt in month.levels]
        assert sum(level >= 0.99 for level in seen) < len(seen) // 2, (name, seen)
        assert max(seen) - min(seen) >= 0.3, (name, seen)  # it moves
    for name in ("pattern_seeking", "predictability"):  # nothing in this month meets them: they settle
        last = [felt[name] for day, felt in month.levels if day == 30]
        assert max(felt[name] for _day, felt in month.levels) - max(last) >= 0.25, report(month)


@STORIES
async def test_loneliness_belongs_to_time_alone(make_host: HostFactory, tmp_path: Path, story: Story) -> None:
    month = await lived(make_host, tmp_path, story)
    told = report(month)
    together = [level for _day, close, level in month.social if close]
    alone = [level for day, close, level in month.social if day in range(10, 15) and not close]
    assert together
    assert alone
    assert max(together) < 0.4, told  # social_thirst is low on days shared with the companion
    assert min(alone) > max(together) + 0.3, told  # and high while they are away
    first_away = [level for day, _close, level in month.social if day == 8]
    assert max(level for day, _close, level in month.social if day == 10) > first_away[0] + 0.4, told  # rising
    for day, close, line in month.wake_ups:
        if close or day > 15:
            assert "lonely" not in line, (day, line)  # never worded so on a day together, nor after the return
    assert any("lonely" in line for day, _close, line in month.wake_ups if day in AWAY), told


@STORIES
async def test_no_desire_sentence_comes_back_in_most_answers(
    make_host: HostFactory, tmp_path: Path, story: Story
) -> None:
    month = await lived(make_host, tmp_path, story)
    for tool, answers in month.sentences.items():
        counts = Counter(s for answer in answers for s in dict.fromkeys(answer))
        sentence, most = counts.most_common(1)[0]
        assert most <= len(answers) // 2, (tool, sentence, most, len(answers))  # a line said lately yields
        assert sum(1 for answer in answers if answer) >= len(answers) * 2 // 3, (tool, report(month))  # still speaks
