"""Corrections of a memory's importance, tags and privacy from the page: through the memory plugin's
``revise_memory`` (an owner tool: never offered to the agent), logged like the agent's calls, guarded like every
state-changing request, undoable, and a memory made private leaves every answer at once."""

from __future__ import annotations

import json

import pytest
from dashboard_support import PUBLIC, Seeded, csrf_of
from starlette.testclient import TestClient

from ego_core.testing import configure_logging


def revise(client: TestClient, memory_id: str, payload: object, csrf: str | None = None) -> tuple[int, dict[str, str]]:
    headers = {"X-Ego-Csrf": csrf if csrf is not None else csrf_of(client)}
    answer = client.post(f"/api/memories/{memory_id}/revise", headers=headers, content=json.dumps(payload))
    return answer.status_code, answer.json()


def test_importance_tags_and_privacy_are_corrected_and_undone(client: TestClient, seeded: Seeded) -> None:
    log_dir = seeded.host.settings.logs_path
    configure_logging(log_dir)
    target = seeded.public_ids[4]
    text = PUBLIC[4][0]
    before = client.get(f"/api/memories/{target}").json()
    assert before["revisable"] is True

    assert revise(client, target, {"importance": 5, "tags": ["散歩", "桜"]}) == (
        200,
        {"ok": True, "tool": "revise_memory"},
    )
    changed = client.get(f"/api/memories/{target}").json()
    assert (changed["importance"], changed["tags"]) == (5, ["散歩", "桜"])

    assert revise(client, target, {"private": True})[0] == 200
    hidden = client.get(f"/api/memories/{target}").json()
    assert (hidden["private"], hidden["content"]) == (True, None)
    for answer in (
        client.get("/api/memories", params={"q": "川沿いの桜", "limit": 50}).text,
        client.get("/api/memories").text,
        client.get("/api/now").text,
        client.get(f"/api/memories/{seeded.public_ids[0]}/graph?depth=3").text,
    ):
        assert text[:12] not in answer
        assert text[5:17] not in answer

    undo = {"private": False, "importance": before["importance"], "tags": before["tags"]}
    assert revise(client, target, undo)[0] == 200
    restored = client.get(f"/api/memories/{target}").json()
    assert {k: restored[k] for k in ("content", "importance", "tags", "private")} == {
        k: before[k] for k in ("content", "importance", "tags", "private")
    }
    records = [json.loads(line) for path in log_dir.glob("*.jsonl") for line in path.read_text().splitlines()]
    calls = [r for r in records if r.get("event") == "tool_call" and r.get("tool") == "revise_memory"]
    assert [(c["outcome"], c["agent"]) for c in calls] == [("ok", "dashboard")] * 3


@pytest.mark.parametrize(
    ("payload", "status", "words"),
    [
        ({}, 400, "nothing to change"),
        ({"content": "new words"}, 400, "unknown field 'content'"),
        ({"importance": 7}, 422, "Invalid arguments for revise_memory"),
        ({"tags": "not a list"}, 422, "Invalid arguments for revise_memory"),
        ({"private": "yes"}, 422, "Invalid arguments for revise_memory"),
        ([1, 2], 400, "must be a JSON object"),
    ],
)
def test_bad_corrections_are_refused_and_change_nothing(
    client: TestClient, seeded: Seeded, payload: object, status: int, words: str
) -> None:
    target = seeded.public_ids[1]
    before = client.get(f"/api/memories/{target}").json()

    code, body = revise(client, target, payload)

    assert code == status
    assert words in body["error"]
    assert client.get(f"/api/memories/{target}").json() == before


def test_a_correction_needs_the_csrf_token_and_an_existing_memory(client: TestClient, seeded: Seeded) -> None:
    target = seeded.public_ids[1]
    assert revise(client, target, {"importance": 1}, csrf="wrong")[0] == 403
    assert client.post(f"/api/memories/{target}/revise", json={"importance": 1}).status_code == 403
    code, body = revise(client, "mem_000000000000", {"importance": 1})
    assert code == 422
    assert "Memory not found" in body["error"]
    assert client.get(f"/api/memories/{target}").json()["importance"] != 1
