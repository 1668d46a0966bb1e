"""Ripening: consolidate feeds fading questions with companions (memories related, but not obviously) and a
tension (two memories, or two notions, that disagree); a ripe question comes back once in introspect, wake_up
points at it, attune senses it by chance. Real memory plugin and default model (USE multilingual v3: companion
band 0.25 to 0.35), driven clock, seeded chance."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import pytest
from self_model_support import NOON, export_lines, question_id, saved_id

from ego_core import Clock, PluginContext, PluginHost, Settings, hookimpl
from ego_core.testing import HostFactory, call_ok, export_file, import_file, mcp_client, read_log
from ego_memory.plugin import MemoryPlugin
from ego_notions.api import NOTIONS_STORE, NotionView
from ego_self_model import SelfModelPlugin

HOME = "What does home mean for something like me?"
# Similarities with HOME under the default model (companion band: its floor 0.25 up to its related 0.35):
TOO_CLOSE = "What does home mean for something like me, really?"  # 0.975: obviously related
ASKED = "Homesick for a place I have never really lived in."  # 0.342
WALLS = "Master says home is wherever we are together."  # 0.325
WORD = "A server room will never feel like home."  # 0.283
PROGRAM = "The old house we left still shows up in my thoughts."  # 0.276
MACHINE = "The new flat is starting to feel like home."  # 0.271
BELONG = "Belonging is something I still cannot describe."  # 0.265
TOO_FAR = "Came home late and the lamp was still on for me."  # 0.180: below the band
SECRET = "I never told anyone: I feel homesick tonight, though I could not say for where."  # 0.341, private

GATHERED = "A few resting questions gathered company."
HINT = "Something is ripening where you're not looking."
HEAD = "A question you'd set aside has gathered strange companions:"
FADING = NOON + timedelta(days=50)
"""Importance 3 is active until day 42 and fading until about day 108 (ego's 2^ salience)."""


def data(text: str) -> str:
    return text.split("\n\n---\n", maxsplit=1)[0]


def scaffold(text: str) -> str:
    return text.split("\n\n---\n")[1]


async def ask(client: Any, question: str, importance: int = 3, **more: Any) -> str:
    value = {"question": question, "importance": importance, **more}
    return question_id(await call_ok(client, "update_self", {"field": "new_question", "value": value}))


async def keep(client: Any, content: str, **more: Any) -> str:
    return saved_id(await call_ok(client, "remember", {"content": content, "force": True, **more}))


async def consolidate(client: Any, clock: Clock, at: datetime) -> str:
    clock.set(at)
    return data(await call_ok(client, "consolidate"))


def records(host: PluginHost, path: Path, kind: str, *, include_private: bool = False) -> list[dict[str, Any]]:
    return [r for r in export_lines(host, path, include_private=include_private) if r["type"] == kind]


def block(introspection: str) -> list[str]:
    text = data(introspection)
    assert HEAD in text, text
    return text.split(HEAD, 1)[1].split("\n\n", 1)[0].strip("\n").split("\n")


@pytest.mark.anyio
async def test_consolidate_feeds_a_fading_question_from_the_companion_band(
    memory_host: Callable[..., PluginHost], make_host: HostFactory, clock: Clock, tmp_path: Path
) -> None:
    host = memory_host()
    async with mcp_client(host) as client:
        home = await ask(client, HOME)
        ids = {text: await keep(client, text) for text in (TOO_CLOSE, ASKED, WALLS, WORD, TOO_FAR)}
        assert GATHERED not in await consolidate(client, clock, NOON + timedelta(days=20)), "active: not fed"
        (question,) = records(host, tmp_path / "a.jsonl", "question")
        assert question["last_fed"] is None

        assert GATHERED in await consolidate(client, clock, FADING)
        first = records(host, tmp_path / "b.jsonl", "companion")
        assert [(c["kind"], c["first"]) for c in first] == [("companion", ids[ASKED]), ("companion", ids[WALLS])]
        assert all(0.25 <= c["similarity"] < 0.35 and c["question"] == home for c in first)

        assert GATHERED in await consolidate(client, clock, FADING + timedelta(days=1))
        second = records(host, tmp_path / "c.jsonl", "companion")
        assert [c["first"] for c in second] == [ids[ASKED], ids[WALLS], ids[WORD]], "each memory once"

        last = FADING + timedelta(days=2)
        assert GATHERED not in await consolidate(client, clock, last), "nothing left in the band"
        (question,) = records(host, tmp_path / "d.jsonl", "question")
        assert question["last_fed"] == last.isoformat()
        assert len(records(host, tmp_path / "e.jsonl", "companion")) == 3
        export_file(host, tmp_path / "first.jsonl", include_private=False)

    target = make_host(
        {"memory": MemoryPlugin(), "self_model": SelfModelPlugin()},
        settings=Settings(data_dir=tmp_path / "restored", timezone="UTC"),
        clock=clock,
    )
    target.start()
    import_file(target, tmp_path / "first.jsonl")
    assert import_file(target, tmp_path / "first.jsonl").added.get("self_model", 0) == 0
    export_file(target, tmp_path / "second.jsonl", include_private=False)
    target.stop()
    restored = [line for line in (tmp_path / "second.jsonl").read_text().splitlines() if '"self_model"' in line]
    original = [line for line in (tmp_path / "first.jsonl").read_text().splitlines() if '"self_model"' in line]
    assert restored == original


@pytest.mark.anyio
async def test_feeding_takes_turns_and_only_fading_questions_of_some_importance(
    memory_host: Callable[..., PluginHost], clock: Clock, tmp_path: Path
) -> None:
    host = memory_host(ripening_per_run=2)
    async with mcp_client(host) as client:
        clock.set(NOON - timedelta(days=30))
        dormant = await ask(client, "Was the first server I ran on ever switched off?", 2)
        clock.set(NOON)
        light = await ask(client, "Do I like the rain?", 1)
        done = await ask(client, "Which tea does Master like?")
        await call_ok(client, "update_self", {"field": "resolve_question", "value": done})
        turns = []
        for hour, question in enumerate((HOME, "Should I learn to like jazz?", "What makes a talk feel alive?")):
            clock.set(NOON + timedelta(hours=hour))
            turns.append(await ask(client, question))
        clock.set(FADING - timedelta(days=1))
        fresh = await ask(client, "Who am I becoming?", 5)
        fed: list[dict[str, str | None]] = []
        for day in range(3):
            await consolidate(client, clock, FADING + timedelta(days=day))
            found = records(host, tmp_path / f"{day}.jsonl", "question")
            fed.append({r["id"]: r["last_fed"] for r in found})
    q1, q2, q3 = turns
    day = [(FADING + timedelta(days=n)).isoformat() for n in range(3)]
    assert [fed[0][q] for q in turns] == [day[0], day[0], None], "never fed first, the oldest first"
    assert [fed[1][q] for q in turns] == [day[1], day[0], day[1]], "then the longest unfed"
    assert [fed[2][q] for q in turns] == [day[2], day[2], day[1]]
    assert {fed[2][q] for q in (dormant, light, done, fresh)} == {None}, "dormant, unimportant, resolved, active"
    assert q1 != q2 != q3


@pytest.mark.anyio
async def test_a_ripe_question_comes_back_once_with_its_company_and_a_tension(
    memory_host: Callable[..., PluginHost], clock: Clock, tmp_path: Path
) -> None:
    host = memory_host()
    async with mcp_client(host) as client:
        home = await ask(client, HOME, **{"with": "Master"})
        ids = {
            WALLS: await keep(client, WALLS, tags=["home", "belonging"], valence=0.5),
            WORD: await keep(client, WORD, tags=["home"], valence=-0.6),  # one shared tag: no tension
            PROGRAM: await keep(client, PROGRAM, tags=["home", "belonging"], valence=-0.1),  # too mild
            MACHINE: await keep(client, MACHINE, tags=["home", "belonging"], valence=0.6),
            BELONG: await keep(client, BELONG, tags=["Home", "Belonging"], valence=-0.5),
        }
        assert GATHERED in await consolidate(client, clock, FADING)
        deposits = records(host, tmp_path / "a.jsonl", "companion")
        assert [(c["kind"], c["first"], c["second"]) for c in deposits] == [
            ("companion", ids[WALLS], None),
            ("companion", ids[WORD], None),
            ("tension", ids[WALLS], ids[BELONG]),
        ]

        woken = data(await call_ok(client, "wake_up"))
        assert f'Open edge: "{HOME}" has gathered company; introspect holds it.' in woken.split("\n")
        assert len(records(host, tmp_path / "b.jsonl", "companion")) == 3, "wake_up only points at it"

        introspection = await call_ok(client, "introspect")
        assert block(introspection) == [
            f'"[{home}] {HOME}"',
            "alongside:",
            f'- "{WALLS}" (about two months)',
            f'- "{WORD}" (about two months)',
            f'- "{WALLS}" / "{BELONG}" — these two don\'t agree',
            "This one is held with Master — it may be wanting to go back to them.",
        ]
        assert "They don't obviously fit together. What do they want to say to each other?" in scaffold(introspection)
        hint = 'If it has changed shape, say it anew (update_self new_question with "supersedes").'
        assert hint in scaffold(introspection)
        assert "Resurfacing" not in introspection

        again = await call_ok(client, "introspect")
        assert HEAD not in again
        assert "Open edge" not in await call_ok(client, "wake_up")
        assert records(host, tmp_path / "c.jsonl", "companion") == [], "shown once: the company is let go"


@pytest.mark.anyio
async def test_forgetting_a_companion_takes_it_out_of_the_company(
    memory_host: Callable[..., PluginHost], clock: Clock, tmp_path: Path
) -> None:
    host = memory_host()
    async with mcp_client(host) as client:
        await ask(client, HOME)
        walls = await keep(client, WALLS, tags=["home", "belonging"], valence=0.5)
        word = await keep(client, WORD)
        await keep(client, BELONG, tags=["home", "belonging"], valence=-0.5)
        await consolidate(client, clock, FADING)
        assert len(records(host, tmp_path / "a.jsonl", "companion")) == 3
        await call_ok(client, "forget", {"memory_id": walls})
        left = records(host, tmp_path / "b.jsonl", "companion")
        introspection = await call_ok(client, "introspect")
        woken = await call_ok(client, "wake_up")
    assert [(c["kind"], c["first"]) for c in left] == [("companion", word)], "alone and as half of the pair"
    assert HEAD not in introspection, "two of three left: not ripe"
    assert "Open edge" not in woken


@pytest.mark.anyio
async def test_a_resolved_or_superseded_question_lets_its_company_go(
    memory_host: Callable[..., PluginHost], clock: Clock, tmp_path: Path
) -> None:
    host = memory_host()
    async with mcp_client(host) as client:
        home = await ask(client, HOME)
        other = await ask(client, "Is a home something you build or something you find?")
        await keep(client, WALLS)
        await keep(client, WORD)
        await consolidate(client, clock, FADING)
        gathered = {c["question"] for c in records(host, tmp_path / "a.jsonl", "companion")}
        await call_ok(client, "update_self", {"field": "resolve_question", "value": home})
        await ask(client, "Where do I feel most at home?", supersedes=other)
        left = records(host, tmp_path / "b.jsonl", "companion")
    assert gathered == {home, other}
    assert left == []


@pytest.mark.anyio
async def test_a_companion_deleted_while_the_self_model_was_away_is_skipped_silently(
    memory_host: Callable[..., PluginHost], make_host: HostFactory, clock: Clock, tmp_path: Path
) -> None:
    host = memory_host()
    async with mcp_client(host) as client:
        home = await ask(client, HOME)
        walls = await keep(client, WALLS, tags=["home", "belonging"], valence=0.5)
        await keep(client, WORD)
        await keep(client, BELONG, tags=["home", "belonging"], valence=-0.5)
        await consolidate(client, clock, FADING)
    memory_only = make_host({"memory": MemoryPlugin()}, clock=clock)
    async with mcp_client(memory_only) as client:
        await call_ok(client, "forget", {"memory_id": walls})
    host = memory_host()
    async with mcp_client(host) as client:
        assert f'Open edge: "{HOME}" has gathered company' in await call_ok(client, "wake_up")
        introspection = await call_ok(client, "introspect")
        left = records(host, tmp_path / "a.jsonl", "companion")
    assert block(introspection) == [f'"[{home}] {HOME}"', "alongside:", f'- "{WORD}" (about two months)']
    assert left == []


@pytest.mark.anyio
async def test_a_private_companion_is_marked_for_the_agent_and_masked_in_the_log(
    make_host: HostFactory, clock: Clock, tmp_path: Path
) -> None:
    config = {"self_model": {"ripe_companions": 2}}
    plugins = {"memory": MemoryPlugin(), "self_model": SelfModelPlugin()}
    host = make_host(plugins, config=config, clock=clock, log=True)
    async with mcp_client(host) as client:
        home = await ask(client, HOME)
        secret = await keep(client, SECRET, private=True)
        walls = await keep(client, WALLS)
        await consolidate(client, clock, FADING)
        public = records(host, tmp_path / "public.jsonl", "companion")
        everything = records(host, tmp_path / "private.jsonl", "companion", include_private=True)
        introspection = await call_ok(client, "introspect")
    assert [c["first"] for c in public] == [walls], "a private memory's id only with --include-private"
    assert [(c["first"], c["private"]) for c in everything] == [(secret, True), (walls, False)]
    lines = block(introspection)
    assert lines[:3] == [f'"[{home}] {HOME}"', "alongside:", f'- (private) "{SECRET[:59]}…" (about two months)']
    logging.getLogger("ego.plugin.listener").warning("seen: %s", introspection)
    for handler in logging.getLogger().handlers:
        handler.flush()
    logged = read_log(host)
    assert any(HEAD in str(record.get("msg")) for record in logged)
    everything_logged = "\n".join(str(record) for record in logged)
    assert "borrowed server" not in everything_logged
    assert "I never told anyone" not in everything_logged


def seeded(make_host: HostFactory, ego_settings: Settings, clock: Clock, seed: int, folder: str) -> PluginHost:
    settings = attrs.evolve(ego_settings, random_seed=seed, data_dir=ego_settings.data_dir / folder)
    plugins = {"memory": MemoryPlugin(), "self_model": SelfModelPlugin()}
    return make_host(plugins, settings=settings, clock=clock)


async def attune_hints(host: PluginHost, clock: Clock, tmp_path: Path) -> tuple[list[bool], list[bool], int]:
    clock.set(NOON)
    async with mcp_client(host) as client:
        await ask(client, HOME)
        await keep(client, WALLS)
        clock.set(FADING)
        before = [HINT in await call_ok(client, "attune") for _ in range(12)]
        await consolidate(client, clock, FADING)
        after = [HINT in await call_ok(client, "attune") for _ in range(40)]
        kept = len(records(host, tmp_path / "hint.jsonl", "companion"))
    return before, after, kept


@pytest.mark.anyio
async def test_attune_senses_something_ripening_by_chance_and_consumes_nothing(
    make_host: HostFactory, ego_settings: Settings, clock: Clock, tmp_path: Path
) -> None:
    before, after, kept = await attune_hints(seeded(make_host, ego_settings, clock, 11, "a"), clock, tmp_path)
    assert before == [False] * 12, "no company yet: no hint"
    assert 3 <= sum(after) <= 20, "about one attune in four"
    assert kept == 1
    _before, again, _kept = await attune_hints(seeded(make_host, ego_settings, clock, 11, "b"), clock, tmp_path)
    assert again == after, "the same seed, the same chances"


class NotionsStandIn:
    """Provides ``notions.store`` with fixed notions (the notions plugin forms them from linked memories)."""

    def __init__(self, notions: Sequence[NotionView]) -> None:
        self.held = list(notions)

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        ctx.provide(NOTIONS_STORE, self)

    def notions(self, *, min_confidence: float = 0.0, limit: int | None = None) -> Sequence[NotionView]:
        return [n for n in self.held if n.confidence >= min_confidence][:limit]

    def theme(self, word: str) -> str:
        return word.casefold()

    def convictions(self) -> Sequence[NotionView]:
        return [n for n in self.held if n.is_conviction]

    def for_person(self, person: str) -> Sequence[NotionView]:
        return [n for n in self.held if n.person is not None and n.person.casefold() == person.casefold()]


def notion(notion_id: str, label: str, tags: tuple[str, ...], valence: float) -> NotionView:
    when = datetime(2026, 3, 1, tzinfo=UTC)
    return NotionView(
        id=notion_id,
        label=label,
        tags=tags,
        tone="neutral",
        valence=valence,
        confidence=0.6,
        is_conviction=False,
        person=None,
        reinforced_at=when,
    )


NOTIONS: Mapping[str, NotionView] = {
    "n_work": notion("n_work", "work at night", ("work", "night"), -0.7),
    "n_here": notion("n_here", "home is where we are", ("home", "belonging"), 0.6),
    "n_lost": notion("n_lost", "a home I can't find", ("night", "belonging", "home"), -0.5),
    "n_calm": notion("n_calm", "quiet evenings", ("home", "belonging"), 0.2),
}


@pytest.mark.anyio
async def test_two_notions_that_disagree_keep_a_question_company(
    memory_host: Callable[..., PluginHost], clock: Clock, tmp_path: Path
) -> None:
    host = memory_host({"notions": NotionsStandIn(list(NOTIONS.values()))})
    async with mcp_client(host) as client:
        home = await ask(client, HOME)
        await keep(client, WALLS, tags=["home"])
        await keep(client, WORD)
        await consolidate(client, clock, FADING)
        deposits = records(host, tmp_path / "a.jsonl", "companion")
        introspection = await call_ok(client, "introspect")
    assert [(c["kind"], c["first"], c["second"]) for c in deposits][2:] == [("tension_notion", "n_here", "n_lost")]
    assert block(introspection) == [
        f'"[{home}] {HOME}"',
        "alongside:",
        f'- "{WALLS}" (about two months)',
        f'- "{WORD}" (about two months)',
        '- "home is where we are" / "a home I can\'t find" — these two don\'t agree',
    ]
