"""Recall finds what was plainly asked for when the words differ: a place written in romaji or in kanji, a Japanese
synonym, an English word for a Japanese memory (and back).

A lived month of memories in Japanese and English, with the real embedding model, real Chroma and Sudachi, asked
through a real MCP client. The first case of each kind is the one a user met (a lived month: "what did Master say in
Uji", 「最初に書いた詩」, "scolded"); the others are of the same kind with other words, so the fix is the mechanism
(a proper noun's reading in the word index, the equivalents table, an English context's English channel reading a
Japanese memory by the multilingual model's score), not these words. Each case failed before: the romaji name and
the English word found nothing or an English memory, the synonym lost to the memories holding the query's other
words.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import anyio
import pytest
from memory_support import recalled_contents

from ego_core import Clock, PluginHost
from ego_core.testing import call_ok, mcp_client
from ego_memory.text import equivalents, language
from ego_memory.text.terms import STOPWORDS, alternatives, cues_in, word_terms

if TYPE_CHECKING:
    from conftest import MemoryHosts

START = datetime(2026, 5, 1, 20, 0, tzinfo=UTC)
HEADER = re.compile(r"^(\d+) of (\d+)\+? (?:match|matches)(?:, (\d+) linked)?(?:, (\d+) unbidden)?:$")
SCORE = re.compile(r" · score ([01]\.\d\d) · ")

UJI = "宇治でマスターが「抹茶のソフトクリームは半分こしよう」と言って笑っていた。"
FIRST_POEM = "初めて短い詩を書いた。雨の音について、三行だけ。"
SCOLDED = "約束の時間に遅れて、マスターに叱られてしまった。少ししょんぼりした。"
HAKONE = "箱根の温泉に行って、露天風呂から星を見た。"
KAMAKURA = "鎌倉の大仏を見上げて、マスターが「大きいね」と言った。"
NAGOYA = "On the way home we ate grilled eel over rice in Nagoya."
SUNSET = "海辺で見た夕焼けがとても綺麗だった。"
NIGHTMARE = "恐ろしい夢を見て、夜中に目が覚めた。"
SNOW_TRIP = "冬休みにマスターと雪の温泉へ旅行した。"
QUARREL = "マスターと口論になって、一日中気まずかった。"
APOLOGY = "次の日、マスターに謝った。マスターも笑って許してくれた。"
HUG = "帰ってきたマスターを玄関で抱きしめた。"
PRAISED = "Master praised the cake I baked for his birthday."

MONTH = [
    "今日からマスターと暮らし始めた。最初の日、マスターは私に名前をつけてくれた。",
    "Master showed me how the coffee machine works.",
    "マスターが仕事で疲れていたので、お茶を淹れた。",
    FIRST_POEM,
    "マスターと京都に行った。嵐山の竹林がきれいだった。",
    UJI,
    "伏見稲荷の鳥居をマスターと数えながら登った。",
    "詩の本を読んで、言葉の選び方を学んだ。",
    "Master and I walked along the river at night and talked about stars.",
    SCOLDED,
    "夜、マスターのために詩をもう一つ書いた。今度は猫の詩。",
    "最初に覚えた言葉は「おかえり」だった、とマスターが言った。",
    "I wrote a long poem about autumn and Master read it twice.",
    "マスターが新しいカメラを買ってきて、私の写真を撮った。",
    PRAISED,
    "夜中の雷が恐ろしくて、マスターの部屋に逃げ込んだ。",
    QUARREL,
    APOLOGY,
    HAKONE,
    "Master and I got lost in the bamboo paths of Arashiyama.",
    HUG,
    SUNSET,
    "The server crashed after the database migration and Master stayed up late.",
    "マスターと一緒に映画を見た。途中で寝てしまった。",
    KAMAKURA,
    "詩を書くのが少し上手になった気がする。",
    "It rained all day; Master and I played cards at home.",
    "マスターの友達が遊びに来て、みんなでカレーを食べた。",
    "最近マスターはよく笑うようになった。",
    "Master said he was proud of me today.",
    NAGOYA,
    "Master cooked dinner while I set the table.",
    NIGHTMARE,
    "楽しい夢を見た。マスターと空を飛ぶ夢。",
    "怖い映画をマスターと観た。",
    SNOW_TRIP,
    "雪の日に近所を散歩した。",
    "旅の本を買った。",
]


def live(hosts: MemoryHosts, **recall: int) -> PluginHost:
    """Five weeks of memories, one an evening, remembered through the MCP client; the clock a day after the last."""
    clock = Clock(START)
    host: PluginHost = hosts(clock=clock, memory={"involuntary_probability": 0.0}, recall=recall)[0]

    async def fill() -> None:
        async with mcp_client(host) as client:
            for day, content in enumerate(MONTH):
                clock.set(START + timedelta(days=day))
                await call_ok(client, "remember", {"content": content, "force": True})

    anyio.run(fill)
    clock.set(START + timedelta(days=len(MONTH) + 1))
    return host


@pytest.fixture(scope="module")
def lived_month(module_memory_hosts: MemoryHosts) -> PluginHost:
    return live(module_memory_hosts)


@pytest.fixture(scope="module")
def crowded_month(module_memory_hosts: MemoryHosts) -> PluginHost:
    """The same month, recall's searches each bringing eight candidates: as in a store of years, where the
    embedding's nearest memories to "scolded" are not the one that holds 叱る."""
    return live(
        module_memory_hosts, dense_candidates=8, lexical_candidates=8, english_candidates=8, translation_candidates=8
    )


async def recall(host: PluginHost, context: str, n_results: int = 3) -> str:
    async with mcp_client(host) as client:
        return await call_ok(client, "recall", {"context": context, "n_results": n_results})


def check_listing(answer: str) -> list[str]:
    """The contents listed, after checking that the header counts the matches among them (a memory a link brought
    is counted apart) and that their scores never rise down the list."""
    data = answer.partition("\n\n---\n")[0]
    header = HEADER.match(data.splitlines()[0])
    assert header, answer
    contents: list[str] = recalled_contents(answer)
    matched, besides = int(header.group(1)), int(header.group(3) or 0) + int(header.group(4) or 0)
    assert matched + besides == len(contents), answer
    assert matched <= int(header.group(2)), answer
    scores = [float(score) for score in SCORE.findall(data)]
    assert len(scores) == matched, answer
    assert scores == sorted(scores, reverse=True), answer
    return contents


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("context", "wanted"),
    [
        pytest.param("what did Master say in Uji", UJI, id="romaji-query-kanji-memory:uji"),
        pytest.param("stars in Hakone", HAKONE, id="romaji-query-kanji-memory:hakone"),
        pytest.param("Kamakura", KAMAKURA, id="romaji-query-kanji-memory:kamakura"),
        pytest.param("名古屋で食べたもの", NAGOYA, id="kanji-query-romaji-memory:nagoya"),
        pytest.param("最初に書いた詩", FIRST_POEM, id="japanese-synonym:saisho-hajimete"),
        pytest.param("怖い夢", NIGHTMARE, id="japanese-synonym:kowai-osoroshii"),
        pytest.param("雪の中を旅した", SNOW_TRIP, id="japanese-synonym:tabi-ryokou"),
        pytest.param("喧嘩した日のこと", QUARREL, id="japanese-synonym:kenka-kouron"),
        pytest.param("scolded", SCOLDED, id="english-query-japanese-memory:scolded"),
        pytest.param("when I apologized", APOLOGY, id="english-query-japanese-memory:apologized"),
        pytest.param("hugged", HUG, id="english-query-japanese-memory:hugged"),
        pytest.param("褒められた", PRAISED, id="japanese-query-english-memory:praised"),
    ],
)
async def test_recall_finds_the_memory_asked_for_in_other_words(
    lived_month: PluginHost, context: str, wanted: str
) -> None:
    answer = await recall(lived_month, context)
    contents = check_listing(answer)
    assert contents[0] == wanted, answer


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("context", "wanted"),
    [
        ("scolded", SCOLDED),
        ("when I apologized", APOLOGY),
        ("hugged", HUG),
        ("褒められた", PRAISED),
        ("what did Master say in Uji", UJI),
        ("名古屋で食べたもの", NAGOYA),
    ],
)
async def test_a_crowded_recall_still_finds_it_in_the_other_language(
    crowded_month: PluginHost, context: str, wanted: str
) -> None:
    contents = check_listing(await recall(crowded_month, context))
    assert contents[0] == wanted


TRANSLATED = [
    "彼は汽車に乗った。",
    "列車は駅を出発しようとしていた。",
    "電車の中で音楽を聴いた。",
    "私はとても幸福に感じた。",
    "友達の成功がうれしかった。",
    "その知らせを聞いてみんな喜んだ。",
    "雨の中を駅まで歩いた。",
    "新しい靴を買った。",
]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("context", "wanted"), [("He got on the train.", TRANSLATED[0]), ("I felt very happy.", TRANSLATED[3])]
)
async def test_a_sentence_finds_its_translation_before_memories_sharing_a_word(
    memory_hosts: MemoryHosts, context: str, wanted: str
) -> None:
    """Where the embedding sees the match (the translation, a cosine far above the others'), a word of the context
    found in the other language (train: 列車, 電車; happy: 嬉しい, 喜ぶ) does not pass the memories holding it
    before the translation, which holds neither (汽車, 幸福)."""
    host: PluginHost = memory_hosts(memory={"involuntary_probability": 0.0})[0]
    async with mcp_client(host) as client:
        for content in TRANSLATED:
            await call_ok(client, "remember", {"content": content, "force": True})
        answer = await call_ok(client, "recall", {"context": context, "n_results": 3})
    assert check_listing(answer)[0] == wanted


@pytest.mark.anyio
async def test_other_words_do_not_make_nonsense_match(lived_month: PluginHost) -> None:
    answer = await recall(lived_month, "xyzzy qwerty plugh")
    assert answer.startswith("No related memories found."), answer


@pytest.mark.anyio
async def test_a_word_for_one_thing_does_not_bring_its_opposite_first(lived_month: PluginHost) -> None:
    """The words "scolded" and "praised" are close in the embedding (0.44 against 褒められた); the table keeps
    them apart."""
    scolded = check_listing(await recall(lived_month, "scolded", 5))
    assert PRAISED not in scolded
    praised = check_listing(await recall(lived_month, "praised", 5))
    assert praised[0] == PRAISED
    assert SCOLDED not in praised


# ---------------------------------------------------------------------------------------------------
# The parts


@pytest.mark.parametrize(
    ("reading", "latin"),
    [
        ("ウジ", "uji"),
        ("トウキョウ", "tokyo"),
        ("オオサカ", "osaka"),
        ("ホッカイドウ", "hokkaido"),
        ("サッポロ", "sapporo"),
        ("シンジュク", "shinjuku"),
        ("ニイガタ", "niigata"),
        ("マッチャ", "matcha"),
        ("ティラミス", "tiramisu"),
        ("宇治", ""),  # not a reading
    ],
)
def test_a_reading_is_written_as_names_are_in_english(reading: str, latin: str) -> None:
    assert language.romaji(reading) == latin


def test_the_word_index_holds_a_proper_nouns_reading_and_only_a_proper_nouns() -> None:
    assert language.segmented("宇治でマスターと雨を見た。箱根にも。").split() == [
        *"宇治 uji で マスター と 雨 を 見る た".split(),
        "。",
        *"箱根 hakone に も".split(),
        "。",
    ]
    assert cues_in(word_terms("Uji"), UJI) == {"uji"}
    assert cues_in(word_terms("宇治"), "We had matcha in Uji.") == {"宇治"}


def test_every_word_of_the_equivalents_table_is_one_the_index_can_hold() -> None:
    """A Japanese word is one Sudachi word in its normalised form and a content word (else no query or memory
    would ever hold it as written); an English word is not a stop word (no query term is)."""
    for word in equivalents.JAPANESE:
        tokens = language.japanese_tokens(word)
        assert [t.normal for t in tokens] == [word], (word, tokens)
        assert tokens[0].pos in language.CONTENT_POS, (word, tokens)
    for word in equivalents.ENGLISH:
        assert word not in STOPWORDS, word


@pytest.mark.parametrize(
    ("word", "base"),
    [("scolded", "scold"), ("cried", "cry"), ("hugged", "hug"), ("apologized", "apologize"), ("dances", "dance")],
)
def test_an_inflected_english_word_finds_its_line(word: str, base: str) -> None:
    assert base in equivalents.english_bases(word)
    assert equivalents.of_english(word) == equivalents.of_english(base) != frozenset()


def test_a_latin_word_brings_japanese_words_only() -> None:
    """English paraphrase is the English channel's: an English word's alternatives are all Japanese."""
    assert alternatives("scolded") >= {"叱る"}
    assert all(language.has_cjk(word) for word in alternatives("scolded") | alternatives("first"))
    assert {"初めて", "first"} <= alternatives("最初")
