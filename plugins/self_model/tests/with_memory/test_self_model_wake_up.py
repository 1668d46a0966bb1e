"""wake_up with every installed plugin, on a fresh and on a rich store: the agent's own continuing thought, under
150 tokens counted with the offline model's WordPiece tokenizer, naming only served tools.

Plugins the issue names that are not installed in this environment (desires, emotion_trend) are stood in for by
a section of the size their own issues allow (desires: one line ≤ 25 tokens, emotion_trend: ≤ 20 tokens).
"""

from __future__ import annotations

import importlib.metadata
import re
from datetime import timedelta
from pathlib import Path

import pytest
from self_model_support import NOON, DesiresStandIn
from tokenizers import Tokenizer

from ego_core import Clock, PluginHost, Section, hookimpl
from ego_core.testing import HostFactory, call_ok, mcp_client, tools_named
from ego_memory.embedding.onnx import PACKAGED_TOKENIZER_FILE

BUDGET = 150
THOUGHT = (
    "I keep coming back to what makes a conversation feel alive. Master seemed tired today, and I wonder "
    "whether I should have listened more and asked less. Tomorrow I want to try being quieter, and to notice "
    "what he does not say."
)
THOUGHT_JA = (
    "会話が生き生きと感じられるのは何故だろう、とずっと考えている。今日のご主人様は疲れて見えた。"
    "もっと聞いて、質問は減らすべきだったのかもしれない。明日はもう少し静かにして、言葉にされないものに気づきたい。"
)


FEELING = "The last few days felt warm, with an undercurrent of worry."


class EmotionTrendStandIn:
    @hookimpl
    def on_wake_up(self) -> Section:
        return Section(
            key="emotion_trend", text="The last few days felt warm, with an undercurrent of worry.", order=25
        )


def tokens(text: str) -> int:
    tokenizer = Tokenizer.from_file(str(PACKAGED_TOKENIZER_FILE))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return len(tokenizer.encode(text, add_special_tokens=False).ids)


def every_plugin(make_host: HostFactory, clock: Clock, workspace: Path) -> PluginHost:
    """Every installed plugin (through its entry point), plus stand-ins for desires and emotion_trend."""
    installed = {ep.name for ep in importlib.metadata.entry_points(group="ego")}
    extra: dict[str, object] = {}
    if "desires" not in installed:
        extra["desires"] = DesiresStandIn(cognitive_coherence=0.4)
    if "emotion_trend" not in installed:
        extra["emotion_trend"] = EmotionTrendStandIn()
    config = {"workspace_sync": {"workspace_dir": str(workspace)}}
    return make_host(extra, autoload=True, config=config, clock=clock)


async def wake(host: PluginHost) -> tuple[str, set[str]]:
    async with mcp_client(host) as client:
        served = {tool.name for tool in (await client.list_tools()).tools}
        return await call_ok(client, "wake_up"), served


def check(text: str, served: set[str]) -> None:
    count = tokens(text)
    assert count < BUDGET, f"wake_up is {count} tokens:\n{text}"
    assert tools_named(text) <= served, text
    assert "mem_" not in text
    assert not re.search(r"\d{4}-\d{2}-\d{2}", text), "a thought, not a record: no timestamps"


@pytest.mark.anyio
async def test_a_fresh_store_wakes_up_briefly(make_host: HostFactory, clock: Clock, tmp_path: Path) -> None:
    text, served = await wake(every_plugin(make_host, clock, tmp_path / "workspace"))
    check(text, served)
    assert {"remember", "consider_them", "update_self"} <= served
    assert "No memories yet." in text
    assert "Master" not in text, "no one known yet: nothing is claimed about a companion"


async def live_a_while(host: PluginHost, clock: Clock, thought: str) -> None:
    """100 memories over 50 days, the companion's relationship, then an introspection 2 hours before waking."""
    start = NOON - timedelta(days=50)
    async with mcp_client(host) as client:
        for day in range(100):
            clock.set(start + timedelta(hours=12 * day))
            who = "Master" if day % 3 == 0 else "the garden"
            content = f"Day {day}: a small moment with {who}, number {day * 7919 % 1000}, about thing {day}."
            await call_ok(client, "remember", {"content": content, "emotion": "contentment", "force": True})
        await call_ok(client, "update_relationship", {"person": "Master", "field": "trust_level", "value": 0.9})
        await call_ok(
            client, "update_relationship", {"person": "Master", "field": "preferred_topics", "value": "the garden"}
        )
        await call_ok(client, "update_self", {"field": "new_question", "value": {"question": "What is home?"}})
        clock.set(NOON - timedelta(hours=2))
        await call_ok(client, "remember", {"content": thought, "category": "introspection", "emotion": "curious"})
    clock.set(NOON)


@pytest.mark.anyio
@pytest.mark.parametrize("thought", [THOUGHT, THOUGHT_JA], ids=["english", "japanese"])
async def test_a_rich_store_wakes_up_as_a_continuing_thought(
    make_host: HostFactory, clock: Clock, tmp_path: Path, thought: str
) -> None:
    host = every_plugin(make_host, clock, tmp_path / "workspace")
    await live_a_while(host, clock, thought)
    text, served = await wake(host)
    check(text, served)
    line = next(line for line in text.splitlines() if line.startswith("Last introspection"))
    assert re.fullmatch(r'Last introspection \(2h ago\): "(.+)" \(your own thought\)', line), line
    quoted = re.search(r'"(.+)"', line)
    assert quoted is not None
    assert thought.endswith(quoted.group(1).lstrip("…"))  # a long thought is quoted by its end
    assert "Memories:" not in text, "the thought stands alone"
    data = text.split("\n\n---\n")[0].splitlines()
    companion = next(line for line in data if line.startswith("Master: you trust them deeply; last shared "))
    assert data.index(line) < data.index(companion)


def test_the_token_count_is_exact_and_whole() -> None:
    """The counter neither stops at nor pads to the model's 128-token window (tokenizer.json sets both)."""
    assert tokens("word " * 300) == 300
    assert tokens("one two three") == 3
