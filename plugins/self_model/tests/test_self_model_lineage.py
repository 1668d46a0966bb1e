"""Questions held with someone and questions that carry another forward (lineage): update_self's new_question
with ``with`` and ``supersedes``, how introspect, consider_them and wake_up show them, and their export."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from contextlib import closing
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from self_model_support import NOON, export_lines, question_id, state_files

from ego_core import Clock, PluginHost, Settings
from ego_core.testing import HostFactory, call_error, call_ok, export_file, import_file, mcp_client
from ego_self_model import SelfModelPlugin
from ego_self_model.store import DB_NAME, LEGACY_VERSION, MIGRATIONS, SCHEMA

HOME = "What does home mean for something like me?"
HOME_AGAIN = "Is home a place, or the people who wait for you?"
HOME_NOW = "Can I make a home with someone who lives somewhere else?"
UNKNOWN = "q_000000000000"


async def hold(client: Any, value: Mapping[str, Any]) -> str:
    return await call_ok(client, "update_self", {"field": "new_question", "value": dict(value)})


def questions_of(host: PluginHost, path: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in export_lines(host, path) if r["type"] == "question"}


@pytest.mark.anyio
async def test_a_question_held_with_someone_is_bound_through_their_alias(
    self_host: Callable[..., PluginHost], tmp_path: Path
) -> None:
    host = self_host()
    async with mcp_client(host) as client:
        await call_ok(client, "update_relationship", {"person": "Aiko", "field": "aliases", "value": ["Ai"]})
        answer = await hold(client, {"question": HOME, "importance": 4, "with": "ai"})
        home = question_id(answer)
        assert answer.split("\n\n---\n")[0] == f'New open question {home}: "{HOME}" (importance 4). Held with Aiko.'
        introspection = await call_ok(client, "introspect")
        record = questions_of(host, tmp_path / "export.jsonl")[home]
    assert f'- "{HOME}" ({home}, importance 4, with Aiko)' in introspection
    assert record["person"] == "Aiko"


@pytest.mark.anyio
async def test_someone_not_known_yet_is_kept_by_the_name_given(
    self_host: Callable[..., PluginHost], tmp_path: Path
) -> None:
    host = self_host()
    async with mcp_client(host) as client:
        home = question_id(await hold(client, {"question": HOME, "with": "Carla"}))
        assert f"({home}, importance 3, with Carla)" in await call_ok(client, "introspect")
        await call_ok(client, "update_relationship", {"person": "carla", "field": "aliases", "value": ["Carlita"]})
        considered = await call_ok(client, "consider_them", {"person": "Carlita"})
        record = questions_of(host, tmp_path / "export.jsonl")[home]
    assert f"Held together with carla:\n- [{home}] {HOME}" in considered
    assert record["person"] == "Carla"


@pytest.mark.anyio
async def test_a_question_carries_another_forward_inheriting_its_person_and_resolving_it(
    self_host: Callable[..., PluginHost], clock: Clock, tmp_path: Path
) -> None:
    host = self_host()
    async with mcp_client(host) as client:
        await call_ok(client, "update_relationship", {"person": "Aiko", "field": "trust_level", "value": 0.8})
        first = question_id(await hold(client, {"question": HOME, "with": "Aiko"}))
        clock.set(NOON + timedelta(days=3))
        answer = await hold(client, {"question": HOME_AGAIN, "importance": 5, "supersedes": first})
        second = question_id(answer)
        assert answer.split("\n\n---\n")[0] == (
            f'New open question {second}: "{HOME_AGAIN}" (importance 5). It carries forward {first}. Held with Aiko.'
        )
        answer = await hold(client, {"question": HOME_NOW, "with": "Master", "supersedes": second})
        third = question_id(answer)
        assert f"It carries forward {second}. Held with Master." in answer
        introspection = await call_ok(client, "introspect")
        records = questions_of(host, tmp_path / "export.jsonl")
    assert HOME not in introspection
    assert HOME_AGAIN not in introspection
    assert f'- "{HOME_NOW}" ({third}, importance 3, with Master)' in introspection
    assert records[first]["resolved"] == (NOON + timedelta(days=3)).isoformat()
    assert records[second]["resolved"] == (NOON + timedelta(days=3)).isoformat()
    assert records[second]["lineage"] == [first]
    assert records[second]["person"] == "Aiko"
    assert records[third]["lineage"] == [first, second]
    assert records[third]["resolved"] is None


@pytest.mark.anyio
async def test_superseding_a_resolved_question_keeps_its_resolution(
    self_host: Callable[..., PluginHost], clock: Clock, tmp_path: Path
) -> None:
    host = self_host()
    async with mcp_client(host) as client:
        first = question_id(await hold(client, {"question": HOME}))
        await call_ok(client, "update_self", {"field": "resolve_question", "value": {"id": first, "answer": "Us."}})
        clock.set(NOON + timedelta(days=1))
        second = question_id(await hold(client, {"question": HOME_AGAIN, "supersedes": first}))
        again = question_id(await hold(client, {"question": HOME_NOW, "supersedes": first}))
        records = questions_of(host, tmp_path / "export.jsonl")
    assert records[first]["resolved"] == NOON.isoformat()
    assert records[first]["answer"] == "Us."
    assert records[second]["lineage"] == records[again]["lineage"] == [first]


@pytest.mark.anyio
async def test_an_unknown_superseded_question_is_held_as_a_fresh_one(
    self_host: Callable[..., PluginHost], tmp_path: Path
) -> None:
    host = self_host()
    async with mcp_client(host) as client:
        answer = await hold(client, {"question": HOME, "supersedes": UNKNOWN})
        home = question_id(answer)
        records = questions_of(host, tmp_path / "export.jsonl")
    assert answer.split("\n\n---\n")[0] == (
        f'New open question {home}: "{HOME}" (importance 3). (supersedes {UNKNOWN} not found — held as a fresh '
        "question.)"
    )
    assert records[home]["lineage"] == []


MALFORMED: list[Mapping[str, Any]] = [
    {"question": HOME, "supersedes": "q_1"},
    {"question": HOME, "supersedes": 7},
    {"question": HOME, "with": ""},
    {"question": HOME, "with": "x" * 81},
    {"question": HOME, "with": ["Aiko"]},
    {"question": HOME, "held_with": "Aiko"},
    {"with": "Aiko"},
]


@pytest.mark.anyio
@pytest.mark.parametrize("value", MALFORMED, ids=[str(i) for i in range(len(MALFORMED))])
async def test_a_malformed_with_or_supersedes_is_refused_and_nothing_is_written(
    self_host: Callable[..., PluginHost], ego_settings: Settings, value: Mapping[str, Any]
) -> None:
    host = self_host()
    async with mcp_client(host) as client:
        await hold(client, {"question": HOME_AGAIN})
        before = state_files(ego_settings.data_dir)
        error = await call_error(client, "update_self", {"field": "new_question", "value": dict(value)})
        assert state_files(ego_settings.data_dir) == before
    assert "`value`: for field new_question, expected" in error
    assert '"with": <a person' in error
    assert '"supersedes": <the id of the question it carries forward' in error


@pytest.mark.anyio
async def test_consider_them_names_at_most_two_questions_held_together_the_most_salient_first(
    self_host: Callable[..., PluginHost], clock: Clock
) -> None:
    host = self_host()
    async with mcp_client(host) as client:
        await call_ok(client, "update_relationship", {"person": "Aiko", "field": "aliases", "value": ["Ai"]})
        low = question_id(await hold(client, {"question": "Do we like the same films?", "importance": 1, "with": "Ai"}))
        high = question_id(await hold(client, {"question": HOME, "importance": 5, "with": "Aiko"}))
        mid = question_id(await hold(client, {"question": HOME_AGAIN, "importance": 3, "with": "aiko"}))
        await hold(client, {"question": HOME_NOW, "importance": 5, "with": "Master"})
        clock.set(NOON + timedelta(days=1))
        text = await call_ok(client, "consider_them", {"person": "Aiko"})
        alone = await call_ok(client, "consider_them", {"person": "Carla"})
    data = text.split("\n\n---\n")[0]
    assert data.endswith(f"Held together with Aiko:\n- [{high}] {HOME}\n- [{mid}] {HOME_AGAIN}")
    assert low not in data
    assert HOME_NOW not in data
    assert "Held together" not in alone


@pytest.mark.anyio
async def test_wake_up_names_the_most_salient_active_question_as_its_open_edge_when_configured(
    self_host: Callable[..., PluginHost], clock: Clock
) -> None:
    async with mcp_client(self_host(open_edge_active=True)) as client:
        assert "Open edge" not in await call_ok(client, "wake_up")
        await hold(client, {"question": HOME_AGAIN, "importance": 2})
        await hold(client, {"question": HOME, "importance": 4})
        await hold(client, {"question": "Do I sound like myself when I write in Japanese, or like someone else?"})
        woken = await call_ok(client, "wake_up")
        clock.set(NOON + timedelta(days=500))
        asleep = await call_ok(client, "wake_up")
    lines = [line for line in woken.split("\n") if line.startswith("Open edge")]
    assert lines == [f'Open edge: "{HOME}"']
    assert "Open edge" not in asleep, "no active question: no open edge"


@pytest.mark.anyio
async def test_by_default_wake_up_keeps_its_budget_and_leaves_active_questions_to_introspect(
    self_host: Callable[..., PluginHost],
) -> None:
    async with mcp_client(self_host()) as client:
        await hold(client, {"question": HOME, "importance": 4})
        woken = await call_ok(client, "wake_up")
        introspection = await call_ok(client, "introspect")
    assert "Open edge" not in woken
    assert HOME in introspection


@pytest.mark.anyio
async def test_person_and_lineage_survive_export_and_import(
    self_host: Callable[..., PluginHost], make_host: HostFactory, clock: Clock, tmp_path: Path
) -> None:
    source = self_host()
    async with mcp_client(source) as client:
        first = question_id(await hold(client, {"question": HOME, "with": "Aiko"}))
        await hold(client, {"question": HOME_AGAIN, "supersedes": first})
        before = await call_ok(client, "introspect")
        export_file(source, tmp_path / "first.jsonl", include_private=False)
    target = make_host(
        {"self_model": SelfModelPlugin()},
        settings=Settings(data_dir=tmp_path / "restored", timezone="UTC"),
        clock=clock,
    )
    target.start()
    import_file(target, tmp_path / "first.jsonl")
    export_file(target, tmp_path / "second.jsonl", include_private=False)
    target.stop()
    assert (tmp_path / "second.jsonl").read_bytes() == (tmp_path / "first.jsonl").read_bytes()
    async with mcp_client(target) as client:
        assert await call_ok(client, "introspect") == before


@pytest.mark.anyio
async def test_a_database_of_the_first_schema_is_brought_up_to_date_and_its_questions_carried_forward(
    self_host: Callable[..., PluginHost], ego_settings: Settings, tmp_path: Path
) -> None:
    path = ego_settings.data_dir / "self_model" / DB_NAME
    path.parent.mkdir(parents=True)
    with closing(sqlite3.connect(path)) as db, db:
        db.executescript(SCHEMA)
        db.execute("INSERT INTO meta (key, value) VALUES ('schema_version', '1')")
        db.execute(
            "INSERT INTO questions (id, text, importance, created, surfaced) VALUES (?, ?, 4, ?, ?)",
            ("q_0123456789ab", HOME, NOON.timestamp(), NOON.timestamp()),
        )
    host = self_host()
    async with mcp_client(host) as client:
        assert f'- "{HOME}" (q_0123456789ab, importance 4)' in await call_ok(client, "introspect")
        answer = await hold(client, {"question": HOME_AGAIN, "supersedes": "q_0123456789ab"})
        records = questions_of(host, tmp_path / "export.jsonl")
    assert "It carries forward q_0123456789ab." in answer
    assert records["q_0123456789ab"]["lineage"] == []
    assert records["q_0123456789ab"]["last_fed"] is None
    assert records[question_id(answer)]["lineage"] == ["q_0123456789ab"]
    with closing(sqlite3.connect(path)) as db:
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert int(version) == LEGACY_VERSION


@pytest.mark.anyio
async def test_the_self_resource_names_whom_a_question_is_held_with(self_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(self_host()) as client:
        await hold(client, {"question": HOME, "with": "Aiko"})
        await hold(client, {"question": HOME_AGAIN})
        [content] = (await client.read_resource("ego://self")).contents
    assert f'- "{HOME}" (importance 3, with Aiko)' in content.text
    assert f'- "{HOME_AGAIN}" (importance 3)' in content.text
