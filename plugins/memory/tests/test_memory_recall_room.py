"""How much of a vivid memory recall and search_memories show: recall's contents share one room for the answer."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

from ego_core import Clock, text_width
from ego_core.testing import call_ok, mcp_client
from ego_memory.tools.memory import RECALL_LEAST, RECALL_ROOM, SEARCH_WIDTH

if TYPE_CHECKING:
    from conftest import MemoryHosts

NOW = datetime(2026, 4, 10, 9, 0, tzinfo=UTC)
KANAZAWA = (
    "来月の旅行計画：ご主人と一緒に金沢へ行き、兼六園を歩いて、近江町市場で海鮮丼を食べ、夜は温泉旅館に泊まる。"
    "持ち物リストは明日作る。"
)
CONTENT_LINE = re.compile(r"^\d+\. \[[^\]]+\] (.+)$")


def contents(answer: str) -> list[str]:
    """The content lines of a recall answer, without their number and age."""
    data = answer.partition("\n\n---\n")[0]
    return [match.group(1) for line in data.splitlines()[1:] if (match := CONTENT_LINE.match(line))]


def japanese_diary(day: int) -> str:
    """A Japanese memory wider than the whole room (about 2,700 columns) that a recall about the bakery finds."""
    return f"パン屋の日記{day}日目：" + "朝から生地をこねて、窯の温度を確かめ、焼き上がったパンを棚に並べた。" * 40


def english_diary(day: int) -> str:
    """An English memory wider than the whole room (about 2,800 columns) that a recall about the bakery finds."""
    return f"Bakery diary, day {day}: " + "I kneaded the dough at dawn, checked the oven and shelved the loaves. " * 40


@pytest.mark.anyio
async def test_a_japanese_memory_comes_back_whole(memory_hosts: MemoryHosts) -> None:
    """A user found: recall cut this memory after about sixty characters (120 columns), its last sentence lost."""
    host, _plugin = memory_hosts(clock=Clock(NOW))
    async with mcp_client(host) as client:
        await call_ok(client, "remember", {"content": KANAZAWA})
        (one,) = contents(await call_ok(client, "recall", {"context": "金沢旅行", "n_results": 1}))
        assert one == KANAZAWA
        assert KANAZAWA in await call_ok(client, "recall", {"context": "金沢旅行", "n_results": 10})
        assert KANAZAWA in await call_ok(client, "search_memories", {"context": "金沢旅行"})


@pytest.mark.anyio
@pytest.mark.parametrize("diary", [japanese_diary, english_diary], ids=["japanese", "english"])
async def test_one_hit_takes_the_whole_room_and_ten_share_it(memory_hosts: MemoryHosts, diary: object) -> None:
    assert callable(diary)
    host, _plugin = memory_hosts(clock=Clock(NOW))
    async with mcp_client(host) as client:
        for day in range(10):
            await call_ok(client, "remember", {"content": diary(day)})
        (one,) = contents(await call_ok(client, "recall", {"context": "bakery diary パン屋の日記", "n_results": 1}))
        ten = contents(await call_ok(client, "recall", {"context": "bakery diary パン屋の日記", "n_results": 10}))
        searched = await call_ok(client, "search_memories", {"context": "bakery diary パン屋の日記", "n_results": 10})

    assert one.endswith("…")
    assert RECALL_ROOM - 40 <= text_width(one) <= RECALL_ROOM
    assert any(diary(day).startswith(one[:-1]) for day in range(10))
    assert len(ten) == 10
    share = RECALL_ROOM // 10
    for shown in ten:
        assert shown.endswith("…")
        assert max(RECALL_LEAST, share) - 40 <= text_width(shown) <= max(RECALL_LEAST, share)
    assert sum(text_width(shown) for shown in ten) <= RECALL_ROOM
    lines = searched.splitlines()[1:11]
    for line in lines:
        text = line.split(" | ", 6)[6]
        assert text.endswith("…")
        assert SEARCH_WIDTH - 40 <= text_width(text) <= SEARCH_WIDTH


@pytest.mark.anyio
async def test_what_a_short_memory_leaves_goes_to_the_long_ones(memory_hosts: MemoryHosts) -> None:
    host, _plugin = memory_hosts(clock=Clock(NOW))
    async with mcp_client(host) as client:
        await call_ok(client, "remember", {"content": KANAZAWA})
        await call_ok(client, "remember", {"content": "金沢旅行の日記：" + japanese_diary(1)})
        shown = contents(await call_ok(client, "recall", {"context": "金沢旅行", "n_results": 2}))
    assert KANAZAWA in shown
    (long,) = [text for text in shown if text != KANAZAWA]
    assert long.endswith("…")
    assert RECALL_ROOM - text_width(KANAZAWA) - 40 <= text_width(long) <= RECALL_ROOM - text_width(KANAZAWA)
