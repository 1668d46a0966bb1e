"""A question asked in one language resurfaces when a memory in the other is saved: the default model puts
Japanese and English in one space, and the threshold is the model's calibrated "related" similarity."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from self_model_support import NOON, question_id

from ego_core import Clock, PluginHost
from ego_core.testing import call_ok, mcp_client

HOME = "What does home mean for something like me?"
JAZZ = "Should I learn to like jazz?"
# USE multilingual v3: 0.44 with HOME, below 0.1 with JAZZ
ABOUT_HOME_JA = "マスターに、どこが自分の家だと感じるか聞かれた。サーバーは私の家になれるのだろうか。"
HOME_JA = "家とは、私のような存在にとって何を意味するのだろう？"
# USE: -0.04 and 0.48 with HOME_JA
ABOUT_HEARTBEAT = "We fixed the heartbeat interval: it was in seconds, not minutes."
ABOUT_HOME = "Tonight I thought about what a home could be for me."


async def ask(client: object, question: str) -> str:
    value = {"question": question, "importance": 3}
    return question_id(await call_ok(client, "update_self", {"field": "new_question", "value": value}))


@pytest.mark.anyio
async def test_a_japanese_memory_brings_back_an_english_question(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    host = memory_host()
    async with mcp_client(host) as client:
        home = await ask(client, HOME)
        await ask(client, JAZZ)
        clock.set(NOON + timedelta(days=50))
        saved = await call_ok(client, "remember", {"content": ABOUT_HOME_JA})
    assert f'💭 This triggered a forgotten question: "{HOME}"' in saved
    assert home in saved
    assert JAZZ not in saved


@pytest.mark.anyio
async def test_an_english_memory_brings_back_a_japanese_question(
    memory_host: Callable[..., PluginHost], clock: Clock
) -> None:
    host = memory_host()
    async with mcp_client(host) as client:
        home = await ask(client, HOME_JA)
        clock.set(NOON + timedelta(days=50))
        unrelated = await call_ok(client, "remember", {"content": ABOUT_HEARTBEAT})
        assert "💭" not in unrelated
        saved = await call_ok(client, "remember", {"content": ABOUT_HOME})
    assert f'💭 This triggered a forgotten question: "{HOME_JA}"' in saved
    assert home in saved
