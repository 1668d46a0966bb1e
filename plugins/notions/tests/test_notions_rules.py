"""The pure rules and the store, without the memory plugin: clique search, labels, decay, merge, the database."""

from __future__ import annotations

import itertools
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ego_core import EmotionalTrace, Memory
from ego_core.testing import HostFactory
from ego_notions import Notion, NotionDB, NotionsPlugin
from ego_notions.cliques import maximal_cliques
from ego_notions.groups import dense_core, fold, is_dense
from ego_notions.labels import (
    EN_FEELING,
    FORGOTTEN,
    JA_FEELING,
    PRIVATE,
    compose,
    drawn_shape,
    language_of,
    legacy_label,
    quotes,
)
from ego_notions.loanwords import romaji, sounds_alike
from ego_notions.model import first_sentence, is_ephemeral, merged, relinked, themes_of, tone_of
from ego_notions.store import open_file

NOW = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def memory(
    ident: str, content: str = "x", *, emotion: str = "neutral", tags: tuple[str, ...] = (), importance: int = 3
) -> Memory:
    return Memory(
        id=ident,
        content=content,
        timestamp=NOW,
        emotional_trace=EmotionalTrace(primary=emotion),
        importance=importance,
        tags=tags,
    )


def notion(ident: str = "notion_aaaaaaaaaaaa", **changes: object) -> Notion:
    base = Notion(
        id=ident,
        label="tea (happy)",
        tone="happy",
        valence=0.5,
        confidence=0.6,
        anchored=NOW,
        created=NOW,
        reinforced=NOW,
        sources=("mem_1", "mem_2", "mem_3"),
        tags=("tea",),
    )
    return attrs.evolve(base, **changes)


graphs = st.integers(min_value=0, max_value=12).flatmap(
    lambda n: st.sets(st.tuples(st.integers(0, n), st.integers(0, n)), max_size=40).map(lambda edges: (n, edges))
)


@given(graphs)
def test_cliques_are_maximal_cliques_of_three_or_more(graph: tuple[int, set[tuple[int, int]]]) -> None:
    n, edges = graph
    adjacency: dict[str, set[str]] = {f"m{i:02d}": set() for i in range(n + 1)}
    for a, b in edges:
        if a != b:
            adjacency[f"m{a:02d}"].add(f"m{b:02d}")
            adjacency[f"m{b:02d}"].add(f"m{a:02d}")
    found, capped = maximal_cliques(adjacency, max_candidates=64, max_calls=10_000)
    assert not capped
    for group in found:
        assert len(group) >= 3
        assert all(b in adjacency[a] for a, b in itertools.combinations(group, 2))
        outside = set(adjacency) - set(group)
        assert not any(all(o in adjacency[g] for g in group) for o in outside)  # maximal
    # every triangle lies in some found clique
    for a, b, c in itertools.combinations(sorted(adjacency), 3):
        if b in adjacency[a] and c in adjacency[a] and c in adjacency[b]:
            assert any({a, b, c} <= set(g) for g in found)


@given(graphs)
def test_a_theme_group_is_dense_and_one_theme_gives_one_group(graph: tuple[int, set[tuple[int, int]]]) -> None:
    n, edges = graph
    adjacency: dict[str, set[str]] = {f"m{i:02d}": set() for i in range(n + 1)}
    for a, b in edges:
        if a != b:
            adjacency[f"m{a:02d}"].add(f"m{b:02d}")
            adjacency[f"m{b:02d}"].add(f"m{a:02d}")
    core = dense_core(adjacency, adjacency)
    assert not core or (len(core) >= 3 and is_dense(core, adjacency))
    cliques, _ = maximal_cliques(adjacency, max_candidates=64, max_calls=10_000)
    candidates = [*((c, None) for c in cliques), *([(tuple(sorted(core)), "tea")] if core else [])]
    groups = fold(candidates, adjacency, lambda ids: frozenset({"tea"}))
    for (first, _), (second, _) in itertools.combinations(groups, 2):
        assert not set(first) <= set(second)  # one theme: no group within another
        assert not set(second) <= set(first)
    for group, _ in groups:
        assert len(group) >= 3


def test_the_clique_search_is_capped() -> None:
    complete = {f"m{i:03d}": {f"m{j:03d}" for j in range(200) if j != i} for i in range(200)}
    found, capped = maximal_cliques(complete, max_candidates=64, max_calls=10_000)
    assert capped
    assert found
    assert all(len(g) <= 65 for g in found)  # a seed and at most 64 of its neighbours
    _, stopped = maximal_cliques(complete, max_candidates=200, max_calls=50)
    assert stopped


@given(st.floats(0.05, 1.0), st.lists(st.floats(0.0, 200.0), min_size=1, max_size=8))
def test_decay_is_a_function_of_time_not_of_how_often_it_is_read(start: float, days: list[float]) -> None:
    held = notion(confidence=start)
    moments = sorted(NOW + timedelta(days=d) for d in days)
    readings = [held.confidence_at(m) for m in moments]
    assert readings == sorted(readings, reverse=True)
    assert held.confidence_at(moments[-1]) == held.confidence_at(moments[-1])  # reading changes nothing
    assert held.confidence_at(NOW + DAY) == start  # the first day is a grace period


def test_half_lives() -> None:
    plain = notion(confidence=0.8)
    assert plain.confidence_at(NOW + 31 * DAY) == pytest.approx(0.4)
    conviction = notion(confidence=0.8, reinforcement_count=5)
    assert conviction.confidence_at(NOW + 91 * DAY) == pytest.approx(0.4)


def test_themes_tone_and_labels() -> None:
    members = [
        memory("a", emotion="sad", tags=("rain", "walk")),
        memory("b", emotion="happy", tags=("walk", "rain", "park")),
        memory("c", emotion="happy", tags=()),
    ]
    keys = {t: t for m in members for t in m.tags}
    assert themes_of(members, keys) == ["rain", "walk"]  # shared by every tagged member, in the order met
    assert tone_of(members) == "happy"
    spread = [memory("a", tags=("x", "y")), memory("b", tags=("y", "z")), memory("c", tags=("z", "q"))]
    assert themes_of(spread, {t: t for m in spread for t in m.tags}) == ["y", "z"]  # none shared: the two most met
    assert tone_of([memory("a", emotion="sad"), memory("b", emotion="happy")]) == "sad"  # a tie: the first met
    assert first_sentence("  「今日は雨」だった。明日は晴れ。") == "今日は雨」だった"
    assert first_sentence("x" * 60) == "x" * 45 + "..."


def test_labels_are_thoughts_in_the_language_of_their_memories() -> None:
    assert compose(["お茶"], "contentment", "ja") == "お茶で心が落ち着く"
    assert compose(["詩", "雨"], "melancholy", "ja") == "詩と雨に物悲しくなる"
    assert compose(["お茶"], "happy", "ja", "マスター") == "マスターとのお茶が嬉しい"
    assert compose(["tea"], "contentment", "en") == "Tea brings me calm"
    assert compose(["poetry", "rain"], "contentment", "en") == "Poetry and rain bring me calm"
    assert compose(["cats"], "happy", "en") == "Cats make me happy"
    assert compose(["news"], "curious", "en") == "I'm curious about news"
    assert compose(["tea"], "moved", "en", "Master") == "Tea with Master moves me"
    assert compose(["tea", "morning"], "contentment", "en", "Master") == "Tea and morning with Master bring me calm"
    assert compose([], "sad", "ja") == "胸にしまっていること"
    assert compose(["a", "b", "c", "d"], "curious", "en") == "I'm curious about a and b"  # two themes at most
    long = compose(["x" * 30, "y" * 30], "excited", "en")
    assert long.startswith("X")
    assert len(long) <= 48
    assert "y" not in long
    for tone in ("happy", "sad", "surprised", "moved", "excited", "nostalgic", "curious", "neutral"):
        for language in ("ja", "en"):
            label = compose(["雨" if language == "ja" else "rain"], tone, language)
            assert "(" not in label
            assert "&" not in label
            assert len(label) <= 48
    assert language_of(["雨だ。", "It rains.", "また雨。"]) == "ja"
    assert language_of(["雨だ。", "It rains."]) == "en"  # a tie: the latest
    assert language_of([]) == "en"


def test_loanwords_sound_like_their_source_words() -> None:
    for loan, source in [
        ("チェス", "chess"),
        ("ウクレレ", "ukulele"),
        ("ハーモニカ", "harmonica"),
        ("キャンプ", "camp"),
        ("ジグソーパズル", "jigsaw puzzle"),
        ("ウィスキー", "whiskey"),
        ("バイオリン", "violin"),
    ]:
        assert sounds_alike(loan, source), (loan, source)
        assert sounds_alike(source, loan)
    assert romaji("ティー") == "ti"
    assert not sounds_alike("ティー", "tea")  # one consonant says too little
    assert not sounds_alike("チェス", "chart")
    assert not sounds_alike("茶", "cha")  # kanji are not loanwords


def test_labels_the_first_versions_generated_are_rewritten() -> None:
    assert legacy_label("詩 & 雨 (contentment)", ["詩", "雨"], "contentment", None) == "詩と雨で心が落ち着く"
    assert legacy_label("tea & morning (happy)", ["tea", "morning"], "happy", None) == "Tea and morning make me happy"
    assert legacy_label("お茶 (happy)", ["お茶"], "happy", "Master") == "マスターとのお茶が嬉しい"
    assert legacy_label("朝の散歩は気持ちがいい (happy)", [], "happy", None) == "朝の散歩は気持ちがいい"
    assert legacy_label("untitled (sad)", [], "sad", None) == "Something I keep to myself"
    assert legacy_label("small daily rituals", ["tea"], "happy", None) is None  # chosen by the agent: kept
    assert legacy_label("tea (calm)", ["tea"], "calm", None) is None  # not an emotion ego knows


PRIVATE_ALPHABET = "abcdefghijklmnopqrstuvwxyzAIKO .,!" + "あいうえおかきくけこ癌病院。"
PRIVATE_TEXTS = st.text(alphabet=PRIVATE_ALPHABET, min_size=4, max_size=80)
"""Latin letters, kana and kanji, spaces and sentence ends."""


@given(PRIVATE_TEXTS, st.data())
def test_a_label_repeating_a_run_of_a_private_text_quotes_it(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, max(0, len(text) - 4)))
    length = data.draw(st.integers(12, 40))
    label = text[start : start + length]
    folded = " ".join(label.casefold().split())
    if len(folded) >= 12 or (len(folded) >= 8 and folded in " ".join(text.casefold().split())):
        assert quotes(label, [text]), (label, text)


@given(PRIVATE_TEXTS)
def test_a_label_holding_the_first_sentence_of_a_private_text_quotes_it(text: str) -> None:
    head = first_sentence(text).removesuffix("...")
    if len(head) >= 4:
        assert quotes(f"「{head}」と思った", [text])
        assert quotes(f"{head.upper()} (sad)", [text])


def test_labels_of_other_words_quote_nothing() -> None:
    private = ["Aiko has cancer. The doctor called.", "アイコが癌になった。眠れない。"]
    for label in ("Tea brings me calm", "お茶で心が落ち着く", "daily rituals", "夜の心配事", "Aiko"):
        assert not quotes(label, private), label
    assert quotes("aiko  HAS cancer", private)  # case and spacing do not hide it
    assert quotes("ｱｲｺが癌になった", private)  # nor half-width katakana (NFKC)
    assert quotes("癌になった日", private)  # four kana or kanji of it
    assert quotes("has cancer", private)  # the whole label a passage of it
    assert not quotes("rain", ["The rain fell all night."])  # too short to be a quote of its own


@given(
    st.sampled_from(sorted(JA_FEELING)),
    st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz詩雨お茶", min_size=1, max_size=12), max_size=3),
    st.sampled_from(["ja", "en"]),
    st.one_of(st.none(), st.sampled_from(["Master", "マスター", "Aiko"])),
)
def test_every_label_compose_draws_reads_as_drawn(
    tone: str, words: list[str], language: str, person: str | None
) -> None:
    assert drawn_shape(compose(words, tone, language, person))


def test_words_the_agent_chose_do_not_read_as_drawn() -> None:
    for label in ("daily rituals", "夜の心配事", "Aiko has cancer", "朝の散歩は気持ちがいい", "the calm of tea"):
        assert not drawn_shape(label), label
    for label in (*PRIVATE.values(), *FORGOTTEN.values(), "Tea with Master moves me", "マスターとのお茶が嬉しい"):
        assert drawn_shape(label), label
    assert len(EN_FEELING) == len(JA_FEELING)


def test_ephemeral_groups() -> None:
    assert is_ephemeral([memory("a", "Session start"), memory("b", "おやすみ"), memory("c", "A real thought")])
    assert is_ephemeral([memory(str(i), importance=1) for i in range(2)] + [memory("c")])
    assert not is_ephemeral([memory("a", "Tea"), memory("b", "Bye for now"), memory("c", "Coffee")])


def test_merge_and_relink() -> None:
    kept = notion("notion_aaaaaaaaaaaa", related=("notion_bbbbbbbbbbbb", "notion_cccccccccccc"), person="Master")
    absorbed = notion(
        "notion_bbbbbbbbbbbb",
        sources=("mem_3", "mem_4"),
        tags=("cup",),
        confidence=0.9,
        reinforcement_count=2,
        related=("notion_aaaaaaaaaaaa",),
        meta={"why": {"type": "text", "value": "calm"}},
    )
    result = merged(kept, absorbed, NOW)
    assert result.sources == ("mem_1", "mem_2", "mem_3", "mem_4")
    assert result.tags == ("tea", "cup")
    assert result.related == ("notion_cccccccccccc",)
    assert (result.confidence, result.reinforcement_count, result.person) == (0.9, 2, "Master")
    assert merged(kept, absorbed, NOW, None, set_person=True).person is None
    other = notion(
        "notion_cccccccccccc",
        related=("notion_bbbbbbbbbbbb", "notion_aaaaaaaaaaaa"),
        meta={"see": {"type": "notion_ids", "value": ["notion_bbbbbbbbbbbb", "notion_cccccccccccc"]}},
    )
    moved = relinked(other, "notion_bbbbbbbbbbbb", "notion_aaaaaaaaaaaa")
    assert moved.related == ("notion_aaaaaaaaaaaa",)
    assert moved.meta["see"]["value"] == ["notion_aaaaaaaaaaaa"]


def test_the_store_round_trips_and_indexes(tmp_path: Path) -> None:
    db = NotionDB(open_file(tmp_path))
    first = notion(meta={"why": {"type": "text", "value": "静けさ"}}, person="Master")
    second = notion("notion_bbbbbbbbbbbb", sources=("mem_9",), tags=("Coffee",))
    db.apply(save=[first, second])
    assert db.get(first.id) == first
    assert [n.id for n in db.holding(["mem_2"])] == [first.id]
    assert [n.id for n in db.tagged(["coffee"])] == [second.id]
    db.apply(delete=[first.id])
    assert db.holding(["mem_2"]) == []
    db.close()
    assert [n.id for n in NotionDB(open_file(tmp_path)).all()] == [second.id]


def test_tags_are_found_by_theme_in_either_language(tmp_path: Path) -> None:
    db = NotionDB(open_file(tmp_path))
    db.apply(save=[notion(tags=("お茶", "#Morning"))])
    for tags in (["tea"], ["Teas"], ["ティー"], ["茶"], ["朝"], ["mornings"]):
        assert [n.id for n in db.tagged(tags)] == ["notion_aaaaaaaaaaaa"], tags
    assert db.tagged(["coffee", "緑茶"]) == []  # another theme; a near-synonym is not a translation


def test_a_store_of_the_first_versions_gets_thoughts_for_labels_and_themes_for_tags(tmp_path: Path) -> None:
    """A user's store from before themes: labels such as "詩 & 雨 (contentment)" and tags indexed by spelling."""
    db = NotionDB(open_file(tmp_path))
    db.apply(save=[notion(tags=("詩", "雨"), tone="contentment"), notion("notion_bbbbbbbbbbbb", label="my own words")])
    db.close()
    old = sqlite3.connect(tmp_path / "notions.sqlite3")
    old.execute("UPDATE notions SET label = '詩 & 雨 (contentment)' WHERE id = 'notion_aaaaaaaaaaaa'")
    old.execute("UPDATE meta SET value = '3' WHERE key = 'schema'")
    old.execute("PRAGMA user_version = 0")  # as the releases of schema 3 left it
    old.execute("DELETE FROM meta WHERE key = 'lexicon'")
    old.execute("DELETE FROM notion_tags")
    old.executemany("INSERT INTO notion_tags VALUES (?, 'notion_aaaaaaaaaaaa')", [("詩",), ("雨",)])
    old.commit()
    old.close()
    db = NotionDB(open_file(tmp_path))
    labels = {n.id: n.label for n in db.all()}
    assert labels == {"notion_aaaaaaaaaaaa": "詩と雨で心が落ち着く", "notion_bbbbbbbbbbbb": "my own words"}
    assert [n.id for n in db.tagged(["poetry"])] == [n.id for n in db.tagged(["Rain"])] == ["notion_aaaaaaaaaaaa"]


def test_the_upgrade_to_5_tells_drawn_labels_from_chosen_ones(tmp_path: Path) -> None:
    """Before 5 nothing said who chose a label: one that reads as drawn is drawn (and drawn again when its memories
    turn private); any other may be the agent's, kept unless it quotes a private memory; the check at start is due."""
    db = NotionDB(open_file(tmp_path))
    db.apply(
        save=[
            notion(label="Tea brings me calm"),
            notion("notion_bbbbbbbbbbbb", label="my own words"),
            notion("notion_cccccccccccc", label="Something I keep to myself"),
        ]
    )
    db.set_flag("labels_drawn", NOW.isoformat())
    db.close()
    old = sqlite3.connect(tmp_path / "notions.sqlite3")
    old.execute("ALTER TABLE notions DROP COLUMN chosen")
    old.execute("ALTER TABLE notions DROP COLUMN private_sources")
    old.execute("UPDATE meta SET value = '4' WHERE key = 'schema'")
    old.execute("PRAGMA user_version = 0")
    old.commit()
    old.close()
    db = NotionDB(open_file(tmp_path))
    chosen = {n.id: (n.chosen, n.private_sources) for n in db.all()}
    assert chosen == {
        "notion_aaaaaaaaaaaa": (False, ()),
        "notion_bbbbbbbbbbbb": (True, ()),
        "notion_cccccccccccc": (False, ()),
    }
    assert db.flag("labels_drawn") is None


def test_a_failed_write_changes_nothing(tmp_path: Path) -> None:
    db = NotionDB(open_file(tmp_path))
    db.apply(save=[notion()])
    broken = attrs.evolve(notion("notion_bbbbbbbbbbbb"), label=None)  # violates NOT NULL
    with pytest.raises(sqlite3.IntegrityError):
        db.apply(save=[notion("notion_cccccccccccc"), broken])
    assert [n.id for n in db.all()] == ["notion_aaaaaaaaaaaa"]


@pytest.mark.anyio
async def test_without_memory_notions_is_not_served(make_host: HostFactory) -> None:
    from ego_core.testing import mcp_client

    host = make_host({"notions": NotionsPlugin()})
    async with mcp_client(host) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "curate_notions" not in names
