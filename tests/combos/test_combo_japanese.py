"""An agent that lives in Japanese, over stdio with every built-in plugin and no model variable set (the default
multilingual embedder ships with its weights): negation and look-alike pairs are kept, one-character words are
found, English and Japanese find each other, and nonsense finds nothing."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from mcp import Client

from ego_core.testing import tool_text

if TYPE_CHECKING:
    from conftest import EgoWorld

pytestmark = pytest.mark.anyio

SAVED = re.compile(r"^Saved \(id: (mem_[0-9a-f]{12})\)")
MEMORIES = (
    "今日はマスターと一緒に映画を見た。",
    "今日はマスターと一緒に映画を見なかった。",
    "今日はマスターと一緒に料理を作った。",
    "今日はマスターと一緒に掃除をした。",
    "夕焼けがとてもきれいだった。",
    "雨の日に詩を書いた。",
    "公園を散歩して気分が晴れた。",
    "マスターが他の人を褒めていて、少し嫉妬した。",
    "京都の桜を見に行く約束をした。",
    "停電で部屋が真っ暗になった。",
    "I finished reading a novel about the sea.",
    "We talked about Rust lifetimes for an hour.",
    "The cat slept on the keyboard again.",
    "Master and I planned a trip to Hokkaido for the winter.",
)


async def test_an_agent_that_lives_in_japanese(world: EgoWorld) -> None:
    params = world.stdio("--disable", "bench,shared_memory", EGO_TIMEZONE="Asia/Tokyo")
    assert "EGO_EMBEDDING_MODEL_DIR" not in params.env  # type: ignore[operator]
    async with Client(params) as client:

        async def call(tool: str, **args: object) -> str:
            result = await client.call_tool(tool, args)
            assert not result.is_error, tool_text(result)
            return tool_text(result)

        ids: dict[str, str] = {}
        for content in MEMORIES:
            reply = await call("remember", content=content)
            found = SAVED.match(reply)
            assert found, f"{content!r} was not saved: {reply}"  # negation and look-alikes are kept
            ids[content] = found.group(1)

        refused = await call("remember", content="今日は、マスターと一緒に映画を見た！")
        assert refused.startswith("Not saved"), refused  # the same words again: a duplicate

        async def top(context: str, n: int = 3) -> list[str]:
            lines = (await call("search_memories", context=context, n_results=n)).splitlines()
            return [line.split(" | ", 1)[0] for line in lines[1:] if line.startswith("mem_")]

        for word, content in (("詩", MEMORIES[5]), ("雨", MEMORIES[5]), ("散歩", MEMORIES[6]), ("停電", MEMORIES[9])):
            assert (await top(word, 1)) == [ids[content]], word  # one- and two-character words are words
        assert await top("詩", 5) != await top("桜", 5)  # the ranking reads the query

        for english, content in (
            ("sunset", MEMORIES[4]),
            ("jealousy", MEMORIES[7]),
            ("cherry blossoms in Kyoto", MEMORIES[8]),
            ("power outage", MEMORIES[9]),
        ):
            assert ids[content] in await top(english), english  # English finds the Japanese memory
        for japanese, content in (("海の小説", MEMORIES[10]), ("猫", MEMORIES[12]), ("旅行の計画", MEMORIES[13])):
            assert ids[content] in await top(japanese), japanese  # and Japanese the English one

        nothing = await call("recall", context="xyzzy qwerty plugh")
        assert nothing.startswith("No related memories found."), nothing

        recall = await call("recall", context="映画")
        assert "今日はマスターと一緒に映画を見" in recall
        assert re.search(r"score (0\.\d\d|1\.00)", recall)
