"""Recall in a store written in both languages: a memory in the other language from the context competes with the
memories in the context's own language on the context's words (``recall.across_languages``).

A household writes English and Japanese. Before, a memory in the context's language holding one or two of its
words ("Master", a name, 手紙) came before the memory in the other language that held every word of it through
the equivalents table (a lived month: "the evening Master came home from Osaka", 「Benが英語に訳してくれた俳句」),
and before a sentence's own translation the embedding model saw. These cases are of the same kinds in other words,
with the real embedding model, Chroma and Sudachi, through a real MCP client; each came second or lower without
the stage (checked by hand with ``across_languages = false``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import anyio
import pytest
from memory_support import recalled_contents

from ego_core import Clock, PluginHost
from ego_core.testing import call_ok, mcp_client
from ego_memory.plugin import MemoryPlugin
from ego_memory.text.terms import cues_translated, word_terms

if TYPE_CHECKING:
    from conftest import MemoryHosts

START = datetime(2026, 2, 1, 20, 0, tzinfo=UTC)

SNOW_WALK = "雪の朝、マスターが駅まで一緒に歩いてくれた。手袋を片方貸してくれた。"
KEN_LETTER = "Ken taught me to write a letter to his mother in English, and checked every line."
HAPPY = "私はとても幸福に感じた。"
SCARED = "その子は犬を怖がっている。"

HOUSEHOLD = [
    SNOW_WALK,
    "Master bought a new shovel and cleared the snow from the steps.",
    "The station was crowded with people going to the festival.",
    "Master told me the story of the first morning he met his cat.",
    "I walked to the bakery alone and bought bread.",
    "Kenが英語を教えてくれた。発音がまだ難しい。",
    KEN_LETTER,
    "Kenから手紙が届いた。旅先の写真が一枚入っていた。",
    "手紙の書き方をマスターに教わった。",
    "Kenと手紙の話をした。",
    "今日は雨。マスターと映画を見た。",
    "マスターが新しいカメラを買った。",
    "Master cooked curry and we ate it on the balcony.",
    "I read a poem about the sea to Master.",
    "Master fell asleep on the sofa after work.",
    HAPPY,
    SCARED,
    "新しい靴を買った。",
    "I felt tired after the long walk.",
    "She was very happy with her new job.",
    "The dog barked at the mailman all morning.",
    "I'm afraid I can't come to the party.",
]


def live(hosts: MemoryHosts, contents: list[str], **recall: bool) -> tuple[PluginHost, MemoryPlugin]:
    """``contents`` remembered through the MCP client, one an evening; the clock a day after the last."""
    clock = Clock(START)
    host, plugin = hosts(clock=clock, memory={"involuntary_probability": 0.0}, recall=recall)

    async def fill() -> None:
        async with mcp_client(host) as client:
            for day, content in enumerate(contents):
                clock.set(START + timedelta(days=day))
                await call_ok(client, "remember", {"content": content, "force": True})

    anyio.run(fill)
    clock.set(START + timedelta(days=len(contents) + 1))
    return host, plugin


@pytest.fixture(scope="module")
def household(module_memory_hosts: MemoryHosts) -> tuple[PluginHost, MemoryPlugin]:
    return live(module_memory_hosts, HOUSEHOLD)


async def first(host: PluginHost, context: str) -> str:
    async with mcp_client(host) as client:
        answer = await call_ok(client, "recall", {"context": context, "n_results": 3})
    contents: list[str] = recalled_contents(answer)
    assert contents, answer
    return contents[0]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("context", "wanted"),
    [
        # Every word held through the table (snowy → 雪, morning → 朝, walked → 歩く, station → 駅), while
        # English memories hold "Master", "snow", "station" or "walked" as written.
        pytest.param(
            "the snowy morning Master walked me to the station", SNOW_WALK, id="english-query-japanese-memory"
        ),
        # Ken as written, 英語, 教える, 手紙 through the table (English, taught, letter); Japanese memories hold
        # Ken with 手紙 or 英語 and 教える.
        pytest.param("Kenが英語で書き方を教えてくれた手紙", KEN_LETTER, id="japanese-query-english-memory"),
        # The embedding model sees the translation; English memories share "very happy", "afraid", "dog".
        pytest.param("I felt very happy.", HAPPY, id="a-sentence-and-its-translation:happy"),
        pytest.param("The child is scared of dogs.", SCARED, id="a-sentence-and-its-translation:dogs"),
    ],
)
async def test_a_memory_in_the_other_language_holding_the_context_comes_first(
    household: tuple[PluginHost, MemoryPlugin], context: str, wanted: str
) -> None:
    host, plugin = household
    assert await first(host, context) == wanted
    memories = plugin._require()
    assert memories.last_search is not None
    assert "across" in memories.last_search.stages


@pytest.mark.anyio
async def test_a_memory_in_the_contexts_language_holding_its_words_still_comes_first(
    household: tuple[PluginHost, MemoryPlugin],
) -> None:
    """The words a memory in the other language holds weigh as much as the same words written in the context's
    language, not more: the memory holding them as written still wins."""
    host, _plugin = household
    assert await first(host, "the bakery where I bought bread") == "I walked to the bakery alone and bought bread."
    assert await first(host, "Kenから届いた手紙の写真") == "Kenから手紙が届いた。旅先の写真が一枚入っていた。"


def test_a_store_in_the_other_language_alone_is_ranked_as_before(memory_hosts: MemoryHosts) -> None:
    """With no memory in the context's language to weigh them against, the memories in the other language are not
    rescored (the single-language translation benchmark is unchanged); the stage does not run."""
    host, plugin = live(memory_hosts, [content for content in HOUSEHOLD if not content.isascii()])
    assert anyio.run(first, host, "the snowy morning Master walked me to the station") == SNOW_WALK
    memories = plugin._require()
    assert memories.last_search is not None
    assert "across" not in memories.last_search.stages


def test_switched_off_the_stage_does_not_run(memory_hosts: MemoryHosts) -> None:
    host, plugin = live(memory_hosts, HOUSEHOLD[:6], across_languages=False)
    anyio.run(first, host, "the snowy morning Master walked me to the station")
    memories = plugin._require()
    assert memories.last_search is not None
    assert "across" not in memories.last_search.stages


@pytest.mark.parametrize(
    ("context", "text", "held"),
    [
        (
            "the snowy morning Master walked me to the station",
            SNOW_WALK,
            {"snowy", "morning", "master", "walked", "station"},
        ),
        ("Kenが英語で書き方を教えてくれた手紙", KEN_LETTER, {"英語", "書く", "教える", "手紙"}),  # Ken as written
        ("Master walked home", "Master walked home and マスター smiled.", set()),  # held as written
    ],
)
def test_the_words_a_memory_holds_only_in_the_other_language(context: str, text: str, held: set[str]) -> None:
    assert cues_translated(word_terms(context), text) == held
