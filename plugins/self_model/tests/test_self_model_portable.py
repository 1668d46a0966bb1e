"""ego export / ego import of the self-model: every question (dormant and resolved too), people, the self-model;
checked before anything is written; importing twice adds nothing; a re-export is byte-identical."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from self_model_support import NOON, question_id, state_files

from ego_core import Clock, PluginHost, Settings
from ego_core.testing import HostFactory, PortableError, call_ok, export_file, import_file, mcp_client
from ego_self_model import SelfModelPlugin


async def populate(client: Any, clock: Clock) -> dict[str, str]:
    ids = {}
    for name, importance in (("home", 3), ("jazz", 1), ("alive", 5), ("bored", 2)):
        value = {"question": f"A question about {name}?", "importance": importance}
        ids[name] = question_id(await call_ok(client, "update_self", {"field": "new_question", "value": value}))
    await call_ok(client, "update_self", {"field": "resolve_question", "value": {"id": ids["bored"], "answer": "Yes."}})
    for field, value in [
        ("values", ["honesty", "play"]),
        ("identity", "I am a slow thinker, and that is fine."),
        ("skill_confidence", {"python": 0.7}),
        ("growth_log", "First entry."),
    ]:
        await call_ok(client, "update_self", {"field": field, "value": value})
    clock.set(NOON + timedelta(days=1))
    await call_ok(client, "update_self", {"field": "growth_log", "value": "Second entry, a day later."})
    await call_ok(client, "update_relationship", {"person": "Aiko", "field": "aliases", "value": ["Ai"]})
    await call_ok(client, "update_relationship", {"person": "Aiko", "field": "trust_level", "value": 0.65})
    await call_ok(client, "update_relationship", {"person": "Master", "field": "communication_style", "value": "terse"})
    clock.set(NOON + timedelta(days=400))
    return ids


def records(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line.get("plugin") == "self_model"]


@pytest.mark.anyio
async def test_export_import_round_trip_is_exact_and_idempotent(
    self_host: Callable[..., PluginHost], make_host: HostFactory, clock: Clock, tmp_path: Path
) -> None:
    source = self_host()
    async with mcp_client(source) as client:
        ids = await populate(client, clock)
        before = await call_ok(client, "introspect")
        export_file(source, tmp_path / "first.jsonl", include_private=False)
    exported = records(tmp_path / "first.jsonl")
    assert [r["type"] for r in exported] == [
        "meta",
        "self",
        "self",
        "self",
        "growth",
        "growth",
        *["question"] * 4,
        "person",
        "person",
        "trust",  # each person's first trust level: no text about them
        "trust",
    ]
    assert all(set(r) == {"plugin", "type", "person", "at", "trust"} for r in exported if r["type"] == "trust")
    questions = {r["id"]: r for r in exported if r["type"] == "question"}
    assert set(questions) == set(ids.values())
    assert questions[ids["bored"]]["answer"] == "Yes."
    assert questions[ids["jazz"]]["created"] == NOON.isoformat()

    target = make_host(
        {"self_model": SelfModelPlugin()},
        settings=Settings(data_dir=tmp_path / "restored", timezone="UTC"),
        clock=clock,
    )
    target.start()
    summary = import_file(target, tmp_path / "first.jsonl")
    assert summary.added["self_model"] == len(exported) - 1
    again = import_file(target, tmp_path / "first.jsonl")
    assert again.added["self_model"] == 0
    export_file(target, tmp_path / "second.jsonl", include_private=False)
    target.stop()
    assert (tmp_path / "second.jsonl").read_bytes() == (tmp_path / "first.jsonl").read_bytes()
    async with mcp_client(target) as client:
        assert await call_ok(client, "introspect") == before
        assert "Aiko (also Ai): you trust them." in await call_ok(client, "consider_them", {"person": "ai"})


BAD: list[tuple[dict[str, Any], str]] = [
    ({"type": "question", "id": "q_nothex", "text": "Q?"}, "`id`: expected"),
    ({"type": "self", "field": "values", "value": "honesty", "updated": NOON.isoformat()}, "`value`: expected"),
    ({"type": "self", "field": "mood", "value": [], "updated": NOON.isoformat()}, "`field`: expected one of"),
    ({"type": "growth", "at": "yesterday", "text": "x"}, "`at`: expected an ISO 8601 time"),
    ({"type": "growth", "at": "2026-03-14T12:00:00", "text": "x"}, "`at`: expected an ISO 8601 time"),
    ({"type": "person", "name": "Aiko"}, "`preferred_topics`: missing"),
    ({"type": "shared", "person": "aiko", "memory_id": "mem_1", "at": NOON.isoformat(), "private": "no"}, "`private`"),
    ({"type": "trust", "person": "aiko", "at": NOON.isoformat(), "trust": 1.5}, "`trust`: expected"),
    ({"type": "trust", "person": "aiko", "at": "noon", "trust": 0.5}, "`at`: expected an ISO 8601 time"),
    ({"type": "mood"}, "unknown record type"),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("record", "problem"), BAD, ids=[r["type"] + str(i) for i, (r, _p) in enumerate(BAD)])
async def test_a_bad_record_refuses_the_whole_file_and_nothing_is_written(
    self_host: Callable[..., PluginHost], clock: Clock, tmp_path: Path, ego_settings: Any, record: Any, problem: str
) -> None:
    host = self_host()
    async with mcp_client(host) as client:
        await populate(client, clock)
        export_file(host, tmp_path / "good.jsonl", include_private=True)
        lines = (tmp_path / "good.jsonl").read_text(encoding="utf-8").splitlines()
        header, body, end = lines[0], lines[1:-1], json.loads(lines[-1])
        body.append(json.dumps({"plugin": "self_model", **record}))
        end["records"]["self_model"] += 1
        (tmp_path / "bad.jsonl").write_text("\n".join([header, *body, json.dumps(end)]) + "\n", encoding="utf-8")
        before = state_files(ego_settings.data_dir)
        with pytest.raises(PortableError, match="nothing was imported") as refused:
            import_file(host, tmp_path / "bad.jsonl")
        assert problem in str(refused.value)
        assert f"record {len(body)} ({record['type']})" in str(refused.value) or "unknown" in str(refused.value)
        assert state_files(ego_settings.data_dir) == before
