"""Labels and tags that forget: a notion's label and tags are drawn from its public memories only, and drawn again
when one of them turns private or public or is forgotten — through the owner's revise_memory, in another process
whose host has no notions plugin, or before the upgrade that began to track it. Over a real MCP client with the
real memory plugin, in Japanese and English; a label shorter than the private redactor's 24-character opening
(``Aiko has cancer``) included."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import closing
from datetime import timedelta
from pathlib import Path
from typing import Any

import attrs
import pytest
from notions_support import NOW, clique, data_of, link_all, listed, remember

from ego_core import Clock, PluginHost
from ego_core.testing import HostFactory, ToolRunner, call_ok, export_file, mcp_client, tool_text
from ego_memory.plugin import MemoryPlugin
from ego_notions import NotionBook, NotionsPlugin
from ego_notions.api import NOTIONS_STORE, NotionStore
from ego_notions.store import DB_NAME

pytestmark = pytest.mark.anyio
MINUTE = timedelta(minutes=1)


@attrs.frozen
class Case:
    language: str
    contents: tuple[str, ...]
    label: str
    """The label the notion is drawn with while its memories are public (shorter than 24 characters)."""
    hidden: str
    """The label once all of them are private."""
    words: tuple[str, ...]
    """Words of the private memories that must not show anywhere once they are private."""


CASES = [
    Case(
        "en",
        (
            "Aiko has cancer. The doctor called this morning.",
            "Aiko has cancer. I keep thinking about it at work.",
            "Aiko has cancer. We talked late into the night.",
            "Aiko has cancer. I could not sleep at all.",
        ),
        "Aiko has cancer",
        "Something I keep to myself",
        ("cancer", "Aiko has"),
    ),
    Case(
        "ja",
        (
            "アイコが癌になった。朝に医者から電話があった。",
            "アイコが癌になった。仕事中もずっと考えてしまう。",
            "アイコが癌になった。夜遅くまで二人で話した。",
            "アイコが癌になった。一晩中眠れなかった。",
        ),
        "アイコが癌になった",
        "胸にしまっていること",
        ("癌", "アイコが"),
    ),
]


def _book(host: PluginHost) -> NotionBook:
    store = host.services.get(NOTIONS_STORE, NotionStore)
    assert isinstance(store, NotionBook)
    return store


async def revise(host: PluginHost, memory_id: str, **changes: Any) -> str:
    """The owner's revise_memory (the dashboard's runner: never offered to the agent by default)."""
    result = await ToolRunner(host, owner=True).call("revise_memory", {"memory_id": memory_id, **changes})
    text = tool_text(result)
    assert not result.is_error, text
    return text


def section(text: str, head: str) -> str:
    """The lines of ``text`` from the one starting with ``head`` to the next empty one ("" when there is none)."""
    lines = data_of(text).splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(head)), None)
    if start is None:
        return ""
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return "\n".join(lines[start:end])


async def surfaces(client: Any, host: PluginHost, notion_id: str, memory_id: str) -> str:
    """Every place a notion's label or tags show to the agent: curate_notions list, explore and network, the notion
    landscape of introspect, the notion lines of recall and attune's, and the notions.store service (the memories
    themselves show to the agent as its own, marked private, in introspect and recall)."""
    texts = [
        await call_ok(client, "curate_notions", {"action": "list"}),
        await call_ok(client, "curate_notions", {"action": "explore", "id": notion_id, "depth": 1}),
        await call_ok(client, "curate_notions", {"action": "explore", "id": memory_id, "depth": 1}),
        await call_ok(client, "curate_notions", {"action": "network"}),
        section(await call_ok(client, "introspect"), "Notion landscape:"),
        section(await call_ok(client, "attune"), "Convictions:"),
        section(await call_ok(client, "recall", {"context": "the doctor called", "n_results": 3}), "Notions:"),
    ]
    views = _book(host).notions()
    texts += [json.dumps([(v.label, list(v.tags)) for v in views], ensure_ascii=False)]
    return "\n".join(texts)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.language)
async def test_a_label_drawn_from_memories_made_private_is_drawn_again(
    make_host: HostFactory, clock: Clock, case: Case
) -> None:
    host = make_host({"memory": MemoryPlugin(), "notions": NotionsPlugin()}, clock=clock)
    async with mcp_client(host) as client:
        ids = await clique(client, case.contents, emotion="sad", valence=-0.6)
        await call_ok(client, "consolidate")
        ((notion_id, label, _, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        assert label == case.label
        assert len(label) < 24  # shorter than the redactor's opening: only drawing it again keeps it out
        before = await surfaces(client, host, notion_id, ids[0])
        assert f'- "{case.label}" confidence: 0.7' in before  # the notion landscape of introspect
        assert f'Notions:\n"{case.label}" sad confidence: 0.7' in before  # recall's notion lines

        for memory_id in ids[:3]:
            await revise(host, memory_id, private=True)
        ((_, label, _, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        assert label == case.label  # the fourth is public still: its first sentence is its own

        await revise(host, ids[3], private=True)
        after = await surfaces(client, host, notion_id, ids[0])
        assert f'- "{case.hidden}" confidence: 0.7' in after
        for word in case.words:
            assert word not in after, word
        stored = _book(host).db.get(notion_id)
        assert stored is not None
        assert (stored.label, stored.tags, set(stored.private_sources)) == (case.hidden, (), set(ids))

        await revise(host, ids[1], private=False)  # public again: its words may be drawn again
        ((_, label, _, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        assert label == case.label


@pytest.mark.parametrize(
    ("contents", "tags", "formed", "drawn"),
    [
        (
            ("Chemo day with Aiko.", "Sat with Aiko after her scan.", "Tea on the porch.", "Tea after dinner."),
            ("chemo", "tea"),
            "Chemo and tea make me sad",
            "Tea makes me sad",
        ),
        (
            ("アイコと抗がん剤の日。", "検査のあとアイコのそばにいた。", "縁側でお茶を飲んだ。", "夕食後のお茶。"),
            ("抗がん剤", "お茶"),
            "抗がん剤とお茶が悲しい",
            "お茶が悲しい",
        ),
    ],
    ids=["en", "ja"],
)
async def test_tags_of_a_private_memory_leave_the_label_and_the_tags(
    make_host: HostFactory, clock: Clock, contents: tuple[str, ...], tags: tuple[str, str], formed: str, drawn: str
) -> None:
    """Themes too are drawn from public memories: a theme only memories now private held leaves the label and the
    notion's tags; what the public ones hold is drawn instead."""
    host = make_host({"memory": MemoryPlugin(), "notions": NotionsPlugin()}, clock=clock)
    async with mcp_client(host) as client:
        ids = []
        for i, content in enumerate(contents):
            clock.set(NOW + i * MINUTE)  # one after the other: the themes in the order they were met
            ids.append(await remember(client, content, emotion="sad", valence=-0.5, tags=[tags[i // 2]]))
        await link_all(client, ids)
        await call_ok(client, "consolidate")
        ((notion_id, label, _, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        assert label == formed
        for memory_id in ids[:2]:
            await revise(host, memory_id, private=True)
        ((_, label, _, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        notion = _book(host).db.get(notion_id)
        assert notion is not None
        assert (label, notion.tags) == (drawn, (tags[1],))
        for memory_id in ids[2:]:
            await revise(host, memory_id, private=True)
        notion = _book(host).db.get(notion_id)
        assert notion is not None
        assert (notion.label, notion.tags) == (CASES[0 if drawn.startswith("Tea") else 1].hidden, ())
        assert _book(host).db.themes() == []  # no tag of a private memory is kept, not even through a notion


async def test_a_label_the_agent_chose_stays_unless_it_quotes_a_private_memory(
    make_host: HostFactory, clock: Clock
) -> None:
    host = make_host({"memory": MemoryPlugin(), "notions": NotionsPlugin()}, clock=clock)
    case = CASES[0]
    async with mcp_client(host) as client:
        ids = await clique(client, case.contents[:3], emotion="sad", valence=-0.6)
        await call_ok(client, "consolidate")
        ((notion_id, _, _, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        await call_ok(client, "curate_notions", {"action": "relabel", "id": notion_id, "label": "夜の心配事"})
        await revise(host, ids[0], private=True)
        ((_, label, _, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        assert label == "夜の心配事"  # the agent's own words, quoting nothing private

        quoted = "Aiko has cancer, and I am scared"
        await call_ok(client, "curate_notions", {"action": "relabel", "id": notion_id, "label": quoted})
        await revise(host, ids[1], private=True)
        ((_, label, _, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        assert label == "Aiko has cancer"  # drawn from the one public memory left
        await revise(host, ids[2], private=True)
        ((_, label, _, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        assert label == "Something I keep to myself"


async def test_forgotten_memories_take_their_words_along(make_host: HostFactory, clock: Clock) -> None:
    host = make_host({"memory": MemoryPlugin(), "notions": NotionsPlugin()}, clock=clock)
    contents = (
        "Aiko has cancer. The doctor called.",
        "Aiko has cancer. I keep thinking of it.",
        "Tea at dawn calms me. The kettle sang.",
    )
    async with mcp_client(host) as client:
        ids = await clique(client, contents, emotion="sad", valence=-0.4)
        await call_ok(client, "consolidate")
        ((notion_id, label, _, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        assert label == "Aiko has cancer"
        await call_ok(client, "forget", {"memory_id": ids[0]})
        await call_ok(client, "forget", {"memory_id": ids[1]})
        ((_, label, _, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        assert label == "Tea at dawn calms me"
        await call_ok(client, "forget", {"memory_id": ids[2]})
        ((_, label, _, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        assert label == "Something I no longer remember"
        notion = _book(host).db.get(notion_id)
        assert notion is not None
        assert notion.sources == ()


async def test_a_memory_made_private_where_notions_did_not_run_is_caught_when_shown(
    make_host: HostFactory, ego_settings: Any, clock: Clock
) -> None:
    """The dashboard (or any host) without the notions plugin revises a memory: the notions plugin of the other
    process draws the label again the moment it would show it, and the public export never carries it."""
    case = CASES[1]
    host = make_host({"memory": MemoryPlugin(), "notions": NotionsPlugin()}, clock=clock)
    async with mcp_client(host) as client:
        ids = await clique(client, case.contents, emotion="sad", valence=-0.6)
        await call_ok(client, "consolidate")
        ((_, label, _, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        assert label == case.label
        beside = make_host({"memory": MemoryPlugin()}, clock=clock)  # the same data directory, another host
        beside.start()
        try:
            for memory_id in ids:
                await revise(beside, memory_id, private=True)
        finally:
            beside.stop()
        assert "癌" in (_book(host).db.all()[0].label)  # not told: the stored label is stale until shown
        landscape = section(await call_ok(client, "introspect"), "Notion landscape:")
        assert landscape == f'Notion landscape:\n- "{case.hidden}" confidence: 0.7'
        assert "癌" not in landscape
        assert "癌" not in _book(host).db.all()[0].label
        export_file(host, ego_settings.data_dir.parent / "public.jsonl", include_private=False)
    assert "癌" not in (ego_settings.data_dir.parent / "public.jsonl").read_text(encoding="utf-8")


def _as_schema_4(path: Path, label: str) -> None:
    """The notions database as the version before schema 5 left it, with a label in the first versions' form."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("ALTER TABLE notions DROP COLUMN chosen")
        db.execute("ALTER TABLE notions DROP COLUMN private_sources")
        db.execute("UPDATE notions SET label = ?", (label,))
        db.execute("UPDATE meta SET value = '4' WHERE key = 'schema'")
        db.execute("DELETE FROM meta WHERE key = 'labels_drawn'")
        db.execute("PRAGMA user_version = 0")  # that version kept its schema in meta only
        db.commit()


def _stored_labels(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as db:
        return [str(row[0]) for row in db.execute("SELECT label FROM notions ORDER BY id")]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.language)
async def test_labels_drawn_from_private_memories_before_the_upgrade_are_drawn_again_at_start(
    make_host: HostFactory, ego_settings: Any, clock: Clock, case: Case
) -> None:
    """A store of the version before: memories made private while nothing tracked what the labels were drawn
    from. The first start of this version draws them again before anything is shown; a label the agent chose
    that quotes nothing private stays."""
    first: Callable[[], PluginHost] = lambda: make_host(  # noqa: E731
        {"memory": MemoryPlugin(), "notions": NotionsPlugin()}, clock=clock
    )
    host = first()
    async with mcp_client(host) as client:
        ids = await clique(client, case.contents[:3], emotion="sad", valence=-0.6)
        kept = await clique(client, ["Morning tea.", "Green tea at noon.", "Tea after dinner."], tags=["tea"])
        await call_ok(client, "consolidate")
        assert len(listed(await call_ok(client, "curate_notions", {"action": "list"}))) == 2
    host.stop()
    path = ego_settings.data_dir / "notions" / DB_NAME
    with closing(sqlite3.connect(path)) as db:
        rows = db.execute("SELECT id, sources FROM notions").fetchall()
    secret = next(i for i, s in rows if ids[0] in json.loads(s))
    chosen = next(i for i, s in rows if kept[0] in json.loads(s))
    _as_schema_4(path, f"{case.label} (sad)")  # the first versions' form, kept by the upgrade to 4
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE notions SET label = 'my quiet rituals' WHERE id = ?", (chosen,))
        db.commit()
    beside = make_host({"memory": MemoryPlugin()}, clock=clock)
    beside.start()
    try:
        for memory_id in ids:
            await revise(beside, memory_id, private=True)
    finally:
        beside.stop()

    upgraded = first()
    upgraded.start()
    try:
        labels = dict(zip(sorted([secret, chosen]), _stored_labels(path), strict=True))
        assert labels == {secret: case.hidden, chosen: "my quiet rituals"}
        notion = _book(upgraded).db.get(chosen)
        assert notion is not None
        assert notion.chosen
    finally:
        upgraded.stop()
