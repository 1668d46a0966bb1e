"""The recall pipeline on real vectors: Hopfield completion, stage switches, time decay, boosts,
spreading activation, access bookkeeping, ``on_recall_result``, local-time date filters and Japanese recall."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
import pytest
from memory_support import recalled_contents

from ego_core import Clock, EmotionalTrace, Memory, MemoryLink, RecallHit, RecallNote, RecallQuery, hookimpl
from ego_core.testing import mcp_client, tool_text
from ego_memory.config import RecallConfig
from ego_memory.embedding import OnnxEmbedder, UseEmbedder
from ego_memory.recall.candidates import Candidates
from ego_memory.recall.completion import hopfield_complete
from ego_memory.recall.engine import RecallEngine
from ego_memory.store.filters import Filters
from ego_memory.store.memory_store import MemoryStore

if TYPE_CHECKING:
    from conftest import MemoryHosts

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)

BREAD = [
    "I baked a loaf of sourdough bread this morning.",
    "Kneading the dough took twenty minutes and my arms were tired.",
    "The bread came out of the oven with a crisp golden crust.",
    "We shared warm slices of the fresh loaf with butter.",
]
OTHERS = [
    "The server crashed after the database migration.",
    "It rained all day and the streets flooded near the station.",
    "We listened to an old jazz record in the evening.",
    "The train to Kyoto was delayed by an hour.",
    "A cat slept on the windowsill in the afternoon sun.",
    "I fixed the bicycle chain with a borrowed wrench.",
]


def mid(number: int) -> str:
    return f"mem_{number:012x}"


def make_memory(number: int, content: str, ts: datetime, **trace: Any) -> Memory:
    importance = trace.pop("importance", 3)
    access_count = trace.pop("access_count", 0)
    return Memory(
        id=mid(number),
        content=content,
        timestamp=ts,
        emotional_trace=EmotionalTrace(**trace),
        importance=importance,
        access_count=access_count,
    )


def fill(store: MemoryStore, embedder: UseEmbedder, memories: Sequence[Memory]) -> None:
    store.add_many(list(memories), embedder.embed([m.content for m in memories]))


@pytest.fixture
def store(tmp_path: Any, embedder: UseEmbedder) -> Iterator[MemoryStore]:
    opened = MemoryStore(tmp_path / "store", embedder.model_id)
    opened.open(embedder.embed)
    yield opened
    opened.close()


def engine_ids(engine: RecallEngine, embedder: UseEmbedder, context: str, n: int, now: datetime = NOW) -> list[str]:
    result = engine.search(context, embedder.embed([context])[0], n, now)
    return [hit.id for hit in result.hits]


# ---------------------------------------------------------------------------------------------------
# Hopfield completion on real vectors


def test_hopfield_completion_moves_the_query_into_its_cluster(embedder: UseEmbedder) -> None:
    patterns = embedder.embed(BREAD + OTHERS)
    query = embedder.embed(["something warm from the oven"])[0]
    completed = hopfield_complete(query, patterns, beta=8.0)

    assert completed.dtype == np.float32
    assert float(np.linalg.norm(completed)) == pytest.approx(1.0, abs=1e-5)
    cluster = patterns[: len(BREAD)]
    rest = patterns[len(BREAD) :]
    centroid = cluster.mean(axis=0)
    centroid /= np.linalg.norm(centroid)
    assert float(completed @ centroid) > float(query @ centroid)
    assert float((cluster @ completed).mean()) > float((cluster @ query).mean())
    assert float((cluster @ completed).mean()) > float((rest @ completed).mean())

    # a very sharp energy retrieves the single nearest stored pattern; a strong prior pulls to its pattern
    nearest = int(np.argmax(patterns @ query))
    assert float(hopfield_complete(query, patterns, beta=1000.0) @ patterns[nearest]) == pytest.approx(1.0, abs=1e-4)
    bias = np.zeros(len(patterns))
    bias[len(BREAD) + 2] = 60.0  # the jazz record
    pulled = hopfield_complete(query, patterns, beta=8.0, bias=bias)
    assert float(pulled @ patterns[len(BREAD) + 2]) == pytest.approx(1.0, abs=1e-4)


LANTERN = [
    "We hung a paper lantern over the porch for the summer festival.",
    "The lantern flickered while the storm knocked out the power.",
    "Grandfather repaired an old brass lantern in his workshop.",
    "A lantern procession crossed the bridge at midnight.",
    "My lantern battery died halfway through the cave tour.",
    "The shop sold a lantern shaped like a goldfish.",
    "Lantern light made the snow look orange.",
]


def test_hopfield_runs_over_every_candidate_including_bm25_only_ones(
    memory_hosts: MemoryHosts, embedder: UseEmbedder
) -> None:
    host, plugin = memory_hosts(recall={"dense_candidates": 3, "lexical_candidates": 20, "hopfield": True})
    ctx = host.context("memory")
    memories = plugin._require()
    tools = plugin._tools()
    for number, text in enumerate(LANTERN + BREAD + OTHERS):
        memories.store.add(make_memory(number, text, NOW - timedelta(hours=number)), embedder.embed([text])[0])

    context = "lantern"
    query = embedder.embed([context])[0]
    dense = {i for i, _, _ in memories.store.dense(query, 3)}
    lexical = {i for i, _ in memories.engine.lexical_ranking(context, 20, None)}
    assert lexical - dense, "the test needs candidates that only BM25 found"

    tools.recall({"context": context, "n_results": 3}, ctx)
    result = memories.last_search
    assert result is not None
    assert "hopfield" in result.stages
    assert result.pool == len(dense | lexical)
    assert result.completed_patterns == result.pool


# ---------------------------------------------------------------------------------------------------
# Stage switches


@pytest.fixture(scope="module")
def corpus_store(tmp_path_factory: pytest.TempPathFactory, embedder: UseEmbedder) -> Iterator[MemoryStore]:
    opened = MemoryStore(tmp_path_factory.mktemp("corpus"), embedder.model_id)
    opened.open(embedder.embed)
    texts = BREAD + OTHERS + LANTERN
    memories = [
        make_memory(n, text, NOW - timedelta(days=n), primary="moved" if n % 3 == 0 else "neutral")
        for n, text in enumerate(texts)
    ]
    memories[1] = attrs.evolve(memories[1], links=(MemoryLink(mid(5), "leads_to", 1.0, "sequence"),))
    fill(opened, embedder, memories)
    yield opened
    opened.close()


FULL = ("dense", "lexical", "fusion:zscore", "hopfield", "decay", "boosts", "speaker", "spreading", "two_hop")


@pytest.mark.parametrize(
    ("switch", "removed"),
    [
        ("fusion", {"lexical", "fusion:zscore"}),  # without fusion, recall is dense only
        ("hopfield", {"hopfield"}),
        ("decay", {"decay"}),
        ("boosts", {"boosts"}),
        ("spreading", {"spreading", "two_hop"}),
        ("two_hop", {"two_hop"}),
        ("speaker", {"speaker"}),
    ],
)
def test_each_stage_switch_removes_exactly_its_stage(
    corpus_store: MemoryStore, embedder: UseEmbedder, switch: str, removed: set[str]
) -> None:
    context = "baking bread in the oven"
    vector = embedder.embed([context])[0]
    every = {"hopfield": True}  # off by default; switched on so that every stage runs
    full = RecallEngine(corpus_store, RecallConfig(**every)).search(context, vector, 5, NOW)
    assert full.stages == FULL
    assert full.completed_patterns == full.pool

    result = RecallEngine(corpus_store, RecallConfig(**{**every, switch: False})).search(context, vector, 5, NOW)
    assert result.stages == tuple(stage for stage in FULL if stage not in removed)
    assert (result.completed_patterns == 0) == (switch == "hopfield")
    assert result.hits


def test_temporal_cues_run_only_for_a_context_that_asks_when(corpus_store: MemoryStore, embedder: UseEmbedder) -> None:
    for context, asks in (("when did I bake bread in the oven", True), ("baking bread in the oven", False)):
        vector = embedder.embed([context])[0]
        assert ("temporal" in RecallEngine(corpus_store, RecallConfig()).search(context, vector, 5, NOW).stages) == asks
        off = RecallEngine(corpus_store, RecallConfig(temporal=False)).search(context, vector, 5, NOW)
        assert "temporal" not in off.stages


def test_a_named_period_brings_its_memories_into_the_pool_and_lifts_them(
    store: MemoryStore, embedder: UseEmbedder
) -> None:
    march = datetime(2026, 3, 10, 19, 0, tzinfo=UTC)
    texts = BREAD + OTHERS
    fill(store, embedder, [make_memory(n, t, NOW - timedelta(days=n + 1)) for n, t in enumerate(texts)])
    target = make_memory(99, "Ken and I tried a new curry recipe together.", march)
    fill(store, embedder, [target])
    context = "What did we bake in March 2026?"
    narrow = {"dense_candidates": 2, "lexical_candidates": 2}
    without = RecallEngine(store, RecallConfig(dated=False, **narrow)).search(
        context, embedder.embed([context])[0], 3, NOW
    )
    assert target.id not in {hit.id for hit in without.hits}
    assert "dated" not in without.stages
    vector = embedder.embed([context])[0]
    # spreading off: competitive spreading lets a source excite itself, which would scale the period's lift
    isolated = RecallConfig(spreading=False, **narrow)
    with_period = RecallEngine(store, isolated).search(context, vector, 12, NOW)
    assert "dated" in with_period.stages
    unlifted = RecallEngine(store, attrs.evolve(isolated, dated_weight=0.0)).search(context, vector, 12, NOW)
    lifted = {hit.id: hit.score for hit in with_period.hits}
    assert set(lifted) == {hit.id for hit in unlifted.hits}
    for hit in unlifted.hits:  # same pool, same scores, but the period's memory gets dated_weight
        expected = hit.score + (RecallConfig().dated_weight if hit.id == target.id else 0.0)
        assert lifted[hit.id] == pytest.approx(expected)
    undated = "What did we bake?"
    plain = RecallEngine(store, RecallConfig(**narrow)).search(undated, embedder.embed([undated])[0], 3, NOW)
    assert "dated" not in plain.stages


def test_a_named_period_keeps_the_callers_filters(store: MemoryStore, embedder: UseEmbedder) -> None:
    march = datetime(2026, 3, 10, 19, 0, tzinfo=UTC)
    fill(
        store,
        embedder,
        [
            make_memory(1, "Ken and I tried a new curry recipe together.", march, primary="joy"),
            make_memory(2, "Ken and I burned the curry.", march, primary="sad"),
        ],
    )
    context = "What curry did we cook in March 2026?"
    engine = RecallEngine(store, RecallConfig(dense_candidates=1, lexical_candidates=1))
    result = engine.search(context, embedder.embed([context])[0], 5, NOW, Filters(emotion="sad"))
    assert [hit.id for hit in result.hits] == [mid(2)]


def test_hedging_words_are_left_out_of_the_lexical_query(store: MemoryStore, embedder: UseEmbedder) -> None:
    fill(
        store,
        embedder,
        [
            make_memory(1, "It will likely rain tomorrow, the forecast says.", NOW),
            make_memory(2, "Mia put on an old jazz record after dinner.", NOW),
        ],
    )
    context = "Would Mia likely enjoy jazz?"
    hedged = {m for m, _ in RecallEngine(store, RecallConfig()).lexical_ranking(context, 5, None)}
    assert hedged == {mid(2)}
    literal = {m for m, _ in RecallEngine(store, RecallConfig(hedges=False)).lexical_ranking(context, 5, None)}
    assert literal == {mid(1), mid(2)}
    only_hedges = {m for m, _ in RecallEngine(store, RecallConfig()).lexical_ranking("likely?", 5, None)}
    assert only_hedges == {mid(1)}  # a context of nothing but hedges still searches for them


def test_rrf_fusion_is_reported_as_such(corpus_store: MemoryStore, embedder: UseEmbedder) -> None:
    context = "baking bread in the oven"
    engine = RecallEngine(corpus_store, RecallConfig(fusion_method="rrf"))
    result = engine.search(context, embedder.embed([context])[0], 5, NOW)
    assert "fusion:rrf" in result.stages
    assert result.hits[0].id in {mid(n) for n in range(len(BREAD))}


def test_every_configuration_finds_the_obvious_memory(corpus_store: MemoryStore, embedder: UseEmbedder) -> None:
    context = "a brass lantern repaired in the workshop"
    for switch in ("fusion", "hopfield", "decay", "boosts", "spreading", None):
        config = RecallConfig(**{switch: False}) if switch else RecallConfig()
        top = engine_ids(RecallEngine(corpus_store, config), embedder, context, 1)
        assert top == [mid(len(BREAD) + len(OTHERS) + 2)], switch


# ---------------------------------------------------------------------------------------------------
# Time decay


def test_decay_does_not_bury_an_old_corpus(store: MemoryStore, embedder: UseEmbedder) -> None:
    three_years_ago = datetime.now(UTC) - timedelta(days=3 * 365)
    texts = BREAD + OTHERS + LANTERN
    fill(store, embedder, [make_memory(n, t, three_years_ago + timedelta(days=n)) for n, t in enumerate(texts)])
    newest = three_years_ago + timedelta(days=len(texts) - 1)
    engine = RecallEngine(store, RecallConfig())
    for context in ("fresh bread with butter", "a flooded street in the rain", "lantern light at a festival"):
        with_real_clock = engine_ids(engine, embedder, context, 8, datetime.now(UTC))
        just_after = engine_ids(engine, embedder, context, 8, newest + timedelta(minutes=1))
        assert with_real_clock == just_after, context
        undecayed = engine_ids(RecallEngine(store, RecallConfig(decay=False)), embedder, context, 1)
        assert with_real_clock[0] == undecayed[0], context


def test_decay_prefers_the_recent_of_two_equal_memories(store: MemoryStore, embedder: UseEmbedder) -> None:
    text = "I watered the tomato plants on the balcony."
    # the older memory has the smaller id, so it would win a tie
    fill(
        store,
        embedder,
        [make_memory(1, text, NOW - timedelta(days=400)), make_memory(2, text, NOW - timedelta(days=1))],
    )
    assert engine_ids(RecallEngine(store, RecallConfig(decay=False)), embedder, text, 2) == [mid(1), mid(2)]
    assert engine_ids(RecallEngine(store, RecallConfig()), embedder, text, 2) == [mid(2), mid(1)]


@pytest.mark.parametrize("strengthened_by", ["access", "links"])
def test_access_and_links_slow_decay(store: MemoryStore, embedder: UseEmbedder, strengthened_by: str) -> None:
    text = "We talked about moving to the seaside someday."
    moment = NOW - timedelta(days=200)
    others = [make_memory(10 + n, f"Unrelated errand number {n}: the tax office.", NOW) for n in range(5)]
    strong = make_memory(2, text, moment, access_count=30 if strengthened_by == "access" else 0)
    if strengthened_by == "links":
        strong = attrs.evolve(strong, links=tuple(MemoryLink(o.id, "related", 1.0) for o in others))
    fill(store, embedder, [*others, make_memory(1, text, moment), strong])
    # spreading off: the links must act through the half-life alone
    assert engine_ids(RecallEngine(store, RecallConfig(decay=False, spreading=False)), embedder, text, 2) == [
        mid(1),
        mid(2),
    ]
    assert engine_ids(RecallEngine(store, RecallConfig(spreading=False)), embedder, text, 2) == [mid(2), mid(1)]


# ---------------------------------------------------------------------------------------------------
# Emotion and importance boosts


@pytest.mark.parametrize(
    ("plain", "vivid"),
    [
        ({"primary": "neutral", "intensity": 0.3}, {"primary": "moved", "intensity": 0.9}),
        ({"importance": 1}, {"importance": 5}),
    ],
    ids=["emotion", "importance"],
)
def test_boosts_lift_a_vivid_or_important_memory_over_a_tied_one(
    store: MemoryStore, embedder: UseEmbedder, plain: dict[str, Any], vivid: dict[str, Any]
) -> None:
    text = "Master laughed at my joke about the broken umbrella."
    fill(store, embedder, [make_memory(1, text, NOW, **plain), make_memory(2, text, NOW, **vivid)])
    # the two vectors differ by float32 rounding only (the model's batch position): still a tie, broken by id
    vectors = embedder.embed([text, "Another text first.", text])
    assert float(vectors[0] @ vectors[2]) == pytest.approx(1.0, abs=1e-5)
    assert engine_ids(RecallEngine(store, RecallConfig(boosts=False)), embedder, text, 2) == [mid(1), mid(2)]
    assert engine_ids(RecallEngine(store, RecallConfig()), embedder, text, 2) == [mid(2), mid(1)]


# ---------------------------------------------------------------------------------------------------
# Spreading activation


def test_spreading_brings_in_a_linked_neighbour_that_matched_nothing(store: MemoryStore, embedder: UseEmbedder) -> None:
    texts = LANTERN + BREAD + OTHERS
    memories = [make_memory(n, t, NOW - timedelta(hours=n), primary="curious") for n, t in enumerate(texts)]
    neighbour = make_memory(99, "Afterwards we ate grilled squid from a street stall.", NOW, primary="happy")
    memories.append(attrs.evolve(neighbour, links=(MemoryLink(mid(0), "leads_to", 1.0, "sequence"),)))
    fill(store, embedder, memories)

    context = "the paper lantern over the porch at the summer festival"
    config = RecallConfig(dense_candidates=3, lexical_candidates=3)
    vector = embedder.embed([context])[0]
    without = RecallEngine(store, attrs.evolve(config, spreading=False)).search(context, vector, 10, NOW)
    assert without.hits[0].id == mid(0)
    assert mid(99) not in [h.id for h in without.hits]  # it matched nothing itself

    spread = RecallEngine(store, config).search(context, vector, 10, NOW)
    ranked = [h.id for h in spread.hits]
    assert ranked[0] == mid(0)
    assert mid(99) in ranked
    assert ranked.index(mid(99)) < len(ranked) - 1  # activated above the weakest candidate
    assert spread.pool == without.pool

    # a neighbour outside the filters stays out
    filtered = RecallEngine(store, config).search(context, vector, 10, NOW, Filters(emotion="curious"))
    assert mid(99) not in [h.id for h in filtered.hits]
    assert filtered.hits[0].id == mid(0)


def _ranked(store: MemoryStore, config: RecallConfig, scores: dict[str, float], chain: Sequence[str]) -> list[str]:
    """Candidates ranked by ``scores`` alone (BM25 scores; every other stage off), ``chain`` linked in sequence."""
    links: dict[str, list[tuple[str, str, float]]] = {m: [] for m in scores}
    for first, second in itertools.pairwise(chain):
        links[first].append((second, "leads_to", 1.0))
        links[second].append((first, "leads_to", 1.0))
    found = Candidates(
        context="a question",
        query_vector=np.zeros(4, dtype=np.float32),
        ids=list(scores),
        dense_ids=[],
        lexical=list(scores.items()),
        patterns=np.zeros((len(scores), 4), dtype=np.float32),
        rows=dict.fromkeys(scores, (0.0, "neutral", 0.0, 3, 0, None)),
        link_map=links,
        present=0.0,
    )
    return [hit.id for hit in RecallEngine(store, config).rank(found, 5, config=config).hits]


def test_spreading_contrast_keeps_the_clear_winner_above_a_chain_of_middling_sources(store: MemoryStore) -> None:
    """Two middling sources linked to the memory between them (paragraphs of one article) no longer lift it above
    the memory the context evoked most; a memory linked to that winner still rises."""
    config = RecallConfig(
        lexical_weight=1.0,
        english_weight=0.0,
        decay=False,
        boosts=False,
        speaker=False,
        temporal=False,
        dated=False,
        relevance=False,
    )
    weak = {f"weak{i}": 1.0 + 0.1 * i for i in range(6)}
    chain = {"best": 10.0, "left": 8.0, "right": 8.0, "middle": 7.6, "other": 7.0, "sixth": 6.0, **weak}
    assert _ranked(store, attrs.evolve(config, spreading=False), chain, ["left", "middle", "right"])[0] == "best"
    earlier = attrs.evolve(config, spreading_contrast=False, sequence_gain=0.3)
    assert _ranked(store, earlier, chain, ["left", "middle", "right"])[:2] == ["middle", "best"]
    assert _ranked(store, config, chain, ["left", "middle", "right"])[:2] == ["best", "middle"]

    winner = {"best": 10.0, "a": 6.0, "b": 5.8, "c": 5.6, "d": 5.4, "e": 5.2, "neighbour": 5.0, **weak}
    assert "neighbour" not in _ranked(store, attrs.evolve(config, spreading=False), winner, ["best", "neighbour"])
    assert _ranked(store, config, winner, ["best", "neighbour"])[:2] == ["best", "neighbour"]


# ---------------------------------------------------------------------------------------------------
# Through the plugin: bookkeeping, on_recall_result, date filters, Japanese


def test_access_statistics_are_updated_in_one_batch_for_exactly_the_hits(
    memory_hosts: MemoryHosts, embedder: UseEmbedder
) -> None:
    clock = Clock(NOW)
    host, plugin = memory_hosts(clock=clock)
    ctx = host.context("memory")
    memories = plugin._require()
    tools = plugin._tools()
    for number, text in enumerate(BREAD + OTHERS):
        memories.store.add(make_memory(number, text, NOW - timedelta(days=1)), embedder.embed([text])[0])
    clock.set(NOW + timedelta(hours=5))

    statements: list[str] = []
    memories.store.db.set_trace_callback(statements.append)
    try:
        response = tools.recall({"context": "fresh bread from the oven", "n_results": 3}, ctx)
    finally:
        memories.store.db.set_trace_callback(None)
    by_text = {text: mid(number) for number, text in enumerate(BREAD + OTHERS)}
    returned = [by_text[content] for content in recalled_contents(response.data)]
    assert len(returned) == 3

    updates = [s for s in statements if re.match(r"\s*UPDATE\s+memories\b", s, re.IGNORECASE)]
    assert len(updates) == 1, updates
    for memory in memories.store.get([mid(n) for n in range(len(BREAD + OTHERS))]):
        if memory.id in returned:
            assert (memory.access_count, memory.last_accessed) == (1, NOW + timedelta(hours=5))
        else:
            assert (memory.access_count, memory.last_accessed) == (0, None)


class Annotator:
    def __init__(self) -> None:
        self.seen: list[tuple[RecallQuery, tuple[RecallHit, ...]]] = []

    @hookimpl(optionalhook=True)
    def on_recall_result(self, query: RecallQuery, results: tuple[RecallHit, ...]) -> RecallNote:
        self.seen.append((query, results))
        return RecallNote(lines=("Annotator: a thread runs through these.",), boosts={results[-1].memory.id: 100.0})


@pytest.mark.anyio
async def test_on_recall_result_lines_and_boosts_are_applied(memory_hosts: MemoryHosts, embedder: UseEmbedder) -> None:
    annotator = Annotator()
    host, plugin = memory_hosts(plugins={"annotator": annotator}, clock=Clock(NOW + timedelta(hours=1)))
    memories = plugin._require()
    plugin._tools()
    for number, text in enumerate(BREAD + OTHERS):
        memories.store.add(make_memory(number, text, NOW), embedder.embed([text])[0])
    engine = memories.engine.search("bread", embedder.embed(["bread"])[0], 3, host.clock.now(), Filters())
    plain = [hit.id for hit in engine.hits]

    async with mcp_client(host) as client:
        result = await client.call_tool("recall", {"context": "bread", "n_results": 3, "category_filter": "daily"})
    data = tool_text(result).partition("\n\n---\n")[0]
    assert not result.is_error
    query, hits = annotator.seen[-1]
    assert (query.context, query.n_results, query.category_filter) == ("bread", 3, "daily")
    assert [h.memory.id for h in hits] == plain
    assert all(isinstance(h.memory, Memory) for h in hits)
    assert "Annotator: a thread runs through these." in data.splitlines()
    text_of = {mid(number): text for number, text in enumerate(BREAD + OTHERS)}
    assert recalled_contents(data) == [text_of[memory_id] for memory_id in [plain[-1], *plain[:-1]]]


@pytest.mark.anyio
async def test_date_filters_are_inclusive_days_in_local_time(memory_hosts: MemoryHosts) -> None:
    clock = Clock(datetime(2025, 3, 1, 14, 30, tzinfo=UTC))  # 23:30 on March 1st in Tokyo
    host, _plugin = memory_hosts(clock=clock, timezone="Asia/Tokyo")
    async with mcp_client(host) as client:
        late = await client.call_tool("remember", {"content": "Late evening tea on the first of March."})
        clock.set(datetime(2025, 3, 1, 15, 30, tzinfo=UTC))  # 00:30 on March 2nd in Tokyo
        early = await client.call_tool("remember", {"content": "Early morning tea on the second of March."})
        clock.set(datetime(2025, 3, 10, tzinfo=UTC))
        late_id = re.search(r"mem_[0-9a-f]{12}", tool_text(late)).group(0)  # type: ignore[union-attr]
        early_id = re.search(r"mem_[0-9a-f]{12}", tool_text(early)).group(0)  # type: ignore[union-attr]

        async def ids(**filters: Any) -> list[str]:
            result = await client.call_tool("search_memories", {"context": "tea", "n_results": 10, **filters})
            assert not result.is_error, tool_text(result)
            return re.findall(r"^(mem_[0-9a-f]{12}) \|", tool_text(result), re.MULTILINE)

        assert set(await ids()) == {late_id, early_id}
        assert await ids(date_from="2025-03-02") == [early_id]
        assert await ids(date_to="2025-03-01") == [late_id]
        assert await ids(date_from="2025-03-01", date_to="2025-03-01") == [late_id]
        assert await ids(date_from="2025-03-03") == []


JAPANESE_CORPUS = [
    "今日は夕焼けを一緒に見た",
    "昨日は駅前の本屋で新しい辞書を買った。",
    "猫が窓辺で気持ちよさそうに寝ていた。",
    "明日は雨が降るらしいので傘を用意した。",
    "We watched the sunrise from the hill.",
    "The kettle whistled while I read the news.",
    "Debugged the login page until midnight.",
]


@pytest.mark.parametrize("context", ["夕焼けを見た日", "夕焼け", "一緒に夕焼けを見たこと"])
def test_a_japanese_memory_is_found_by_a_japanese_query(context: str, japanese_memories: Any) -> None:
    tools, ctx, _ids = japanese_memories
    response = tools.recall({"context": context, "n_results": 3}, ctx)
    assert recalled_contents(response.data)[0] == JAPANESE_CORPUS[0]


@pytest.fixture(scope="module")
def japanese_memories(module_memory_hosts: MemoryHosts) -> Any:
    host, plugin = module_memory_hosts()
    ctx = host.context("memory")
    tools = plugin._tools()
    ids = []
    for text in JAPANESE_CORPUS:
        saved = tools.remember({"content": text}, ctx)
        ids.append(re.search(r"mem_[0-9a-f]{12}", saved.data).group(0))  # type: ignore[union-attr]
    return tools, ctx, ids


# ---------------------------------------------------------------------------------------------------
# Interference is competition for the same cue

LATER_JAPANESE = ["今日は一緒に映画を見た", "今日は友達とラーメンを食べた", "今日は一緒に公園を散歩した"]


@pytest.fixture(scope="module")
def japanese_diary(module_memory_hosts: MemoryHosts) -> Any:
    """JAPANESE_CORPUS, then three newer diary lines of the same frame (今日は…), ten minutes apart."""
    texts = JAPANESE_CORPUS + LATER_JAPANESE
    clock = Clock(NOW)
    host, plugin = module_memory_hosts(clock=clock)
    ctx = host.context("memory")
    tools = plugin._tools()
    ids = []
    for number, text in enumerate(texts):
        clock.set(NOW - timedelta(minutes=10 * (len(texts) - number)))
        saved = tools.remember({"content": text, "force": True}, ctx)
        ids.append(re.search(r"mem_[0-9a-f]{12}", saved.data).group(0))  # type: ignore[union-attr]
    clock.set(NOW)
    return tools, ctx, ids


def test_the_model_sees_one_frame_of_japanese_sentences_as_near_identical(
    onnx_embedder: OnnxEmbedder, embedder: UseEmbedder
) -> None:
    """Why the next test exists: most kanji are [UNK] to all-MiniLM-L6-v2, so diary lines of one frame (今日は…)
    looked near identical and newer ones interfered with older ones; the multilingual default tells them apart."""
    older, newer = onnx_embedder.embed([JAPANESE_CORPUS[0], LATER_JAPANESE[0]])
    assert float(older @ newer) > 0.9
    older, newer = embedder.embed([JAPANESE_CORPUS[0], LATER_JAPANESE[0]])
    assert float(older @ newer) < RecallConfig().interference_threshold


@pytest.mark.parametrize("context", ["夕焼け", "夕焼けを見た日", "一緒に夕焼けを見たこと"])
@pytest.mark.parametrize("tool", ["recall", "search_memories"])
def test_an_older_japanese_memory_is_not_buried_by_newer_ones_of_the_same_frame(
    japanese_diary: Any, tool: str, context: str
) -> None:
    tools, ctx, ids = japanese_diary
    response = getattr(tools, tool)({"context": context, "n_results": 3}, ctx)
    if tool == "recall":
        assert recalled_contents(response.data)[0] == JAPANESE_CORPUS[0], response.data
    else:  # the only memory that holds 夕焼け
        assert re.findall(r"^(mem_[0-9a-f]{12}) \|", response.data, re.MULTILINE)[0] == ids[0], response.data


def test_interference_spares_an_older_memory_holding_a_cue_the_newer_one_lacks(
    store: MemoryStore, embedder: UseEmbedder
) -> None:
    older, newer = "Mia's favourite tea is jasmine.", "Mia's favourite tea is sencha."
    fill(
        store,
        embedder,
        [
            make_memory(1, older, NOW - timedelta(days=120)),
            make_memory(2, newer, NOW - timedelta(days=20)),
            *(make_memory(10 + n, text, NOW - timedelta(days=n)) for n, text in enumerate(OTHERS)),
        ],
    )
    vectors = embedder.embed([older, newer])
    assert float(vectors[0] @ vectors[1]) > RecallConfig().interference_threshold
    engine = RecallEngine(store, RecallConfig())
    # Both answer every cue: the newer statement of the changed fact wins.
    assert engine_ids(engine, embedder, "What is Mia's favourite tea?", 2) == [mid(2), mid(1)]
    # The context names what only the older one holds: it is asking for the older one.
    assert engine_ids(engine, embedder, "When did Mia like jasmine tea?", 2) == [mid(1), mid(2)]


# ---------------------------------------------------------------------------------------------------
# The context is bounded like a memory


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["recall", "search_memories"])
async def test_an_overlong_context_is_refused_naming_the_parameter_and_the_limit(
    memory_hosts: MemoryHosts, tool: str
) -> None:
    host, plugin = memory_hosts()
    ctx = host.context("memory")
    plugin._tools().remember({"content": "We watched the sunset from the harbour."}, ctx)
    async with mcp_client(host) as client:
        refused = await client.call_tool(tool, {"context": "secret-context " * 534})  # 8010 characters
        text = tool_text(refused)
        assert refused.is_error
        assert "`context`" in text
        assert "at most 8000 characters" in text
        assert "secret-context" not in text
        longest = " ".join(f"sunset{n}" for n in range(1000))[:7990] + " harbour"  # 7998 characters
        accepted = await client.call_tool(tool, {"context": longest})
        assert not accepted.is_error, tool_text(accepted)
        assert "sunset from the harbour" in tool_text(accepted)
