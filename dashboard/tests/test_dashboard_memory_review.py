"""The Memory view's review: a memory's episode in its detail, and merge candidates (the memory service's vectors
at the merge threshold, its contrast guard, its protected memories) with "keep both" remembered and undone."""

from __future__ import annotations

import json
from pathlib import Path

from dashboard_support import PRIVATE, Seeded, build_seeded, call, csrf_of, owner_client
from starlette.testclient import TestClient

from ego_core import MEMORY_STORE, MemoryService
from ego_core.testing import HostFactory
from ego_dashboard.state import LEGACY_KEPT_FILE, REVIEWS

NEAR = (
    "I repotted the basil on the balcony this evening",
    "I repotted the basil on the balcony in the evening",
)
NEGATED = (
    "The deploy to production succeeded on the first try today",
    "The deploy to production did not succeed on the first try today",
)


def test_the_detail_shows_the_memorys_episode(client: TestClient, seeded: Seeded) -> None:
    detail = client.get(f"/api/memories/{seeded.public_ids[0]}").json()
    episode = detail["episode"]
    assert episode["id"] == seeded.episode_id
    assert episode["summary"].startswith("A calm morning walk, then talk of the garden")
    assert episode["size"] == 3
    assert episode["gone"] == 0
    members = {m["id"]: m for m in episode["members"]}
    assert set(members) == {seeded.public_ids[0], seeded.public_ids[1], seeded.private_ids[0]}
    assert members[seeded.private_ids[0]]["content"] is None  # a private member by its emotion and date only
    assert members[seeded.public_ids[1]]["content"].startswith("Master and I talked")
    private_detail = client.get(f"/api/memories/{seeded.private_ids[0]}").json()
    assert private_detail["episode"]["id"] == seeded.episode_id
    for text, _emotion in PRIVATE:
        assert text[:12] not in json.dumps(private_detail, ensure_ascii=False)
    assert client.get(f"/api/memories/{seeded.public_ids[3]}").json()["episode"] is None


def candidates(client: TestClient) -> dict[str, object]:
    answer = client.get("/api/merge-candidates")
    assert answer.status_code == 200, answer.text
    payload: dict[str, object] = answer.json()
    return payload


def pair_ids(payload: dict[str, object]) -> set[frozenset[str]]:
    return {frozenset((p["a"]["id"], p["b"]["id"])) for p in payload["pairs"]}  # type: ignore[attr-defined]


def test_merge_candidates_keep_both_and_undo(client: TestClient, seeded: Seeded) -> None:
    service = seeded.host.services.get(MEMORY_STORE, MemoryService)
    assert service is not None
    for text in (*NEAR, *NEGATED):
        call(seeded.host, "remember", {"content": text, "emotion": "happy", "force": True})
    stored = {text: service.find_exact(text) for text in (*NEAR, *NEGATED)}
    ids = {text: memory.id for text, memory in stored.items() if memory is not None}
    near = frozenset((ids[NEAR[0]], ids[NEAR[1]]))
    found = candidates(client)
    assert found["available"] is True
    assert found["threshold"] == service.similarity_profile.merge
    assert found["threshold_from"] == "dedup"  # the dedup plugin's threshold (here its profile's)
    assert found["keep_both_served"] is True
    assert near in pair_ids(found)
    assert frozenset((ids[NEGATED[0]], ids[NEGATED[1]])) not in pair_ids(found)  # a negation is not a merge
    pair = next(p for p in found["pairs"] if frozenset((p["a"]["id"], p["b"]["id"])) == near)  # type: ignore[attr-defined]
    assert pair["similarity"] >= found["threshold"]
    guarded = service.protected(
        [card["id"] for p in found["pairs"] for card in (p["a"], p["b"])], seeded.host.clock.now()
    )  # type: ignore[attr-defined]
    for listed in found["pairs"]:  # type: ignore[attr-defined]
        assert listed["a"]["protected"] == (listed["a"]["id"] in guarded)
        assert listed["b"]["protected"] == (listed["b"]["id"] in guarded)
    assert pair["a"]["protected"] is False  # not precious, looking forward to nothing

    body = {"a": pair["a"]["id"], "b": pair["b"]["id"]}
    assert client.post("/api/merge-candidates/keep", json=body).status_code == 403  # no CSRF token
    csrf = {"X-Ego-Csrf": csrf_of(client)}
    kept = client.post("/api/merge-candidates/keep", json=body, headers=csrf)
    assert kept.status_code == 200, kept.text
    assert near not in pair_ids(candidates(client))
    listed = candidates(client)
    assert listed["kept"] == 1
    (kept_row,) = listed["kept_pairs"]  # type: ignore[misc]
    assert {kept_row["a"]["id"], kept_row["b"]["id"]} == set(near)
    assert {kept_row["a"]["content"], kept_row["b"]["content"]} == set(NEAR)
    reviews = seeded.host.services.get(REVIEWS)
    assert reviews is not None
    assert reviews.count() == 1  # kept by the dedup plugin, which consolidate also reads
    assert {m.id for m in service.get(list(near))} == set(near)  # keeping both changes no memory

    undone = client.post("/api/merge-candidates/unkeep", json=body, headers=csrf)
    assert undone.status_code == 200
    assert near in pair_ids(candidates(client))
    again = client.post("/api/merge-candidates/unkeep", json=body, headers=csrf)
    assert again.status_code == 422
    assert "Not kept" in again.json()["error"]
    for bad in ({"a": body["a"]}, {"a": body["a"], "b": body["a"]}, {"a": 1, "b": 2}):
        assert client.post("/api/merge-candidates/keep", json=bad, headers=csrf).status_code == 400
    unknown = {"a": body["a"], "b": "mem_000000000000"}
    refused = client.post("/api/merge-candidates/keep", json=unknown, headers=csrf)
    assert refused.status_code == 422
    assert "Memory not found: mem_000000000000" in refused.json()["error"]


def test_pairs_kept_in_the_dashboards_old_file_are_adopted_by_dedup(make_host: HostFactory) -> None:
    seeded = build_seeded(make_host)
    first, second = seeded.public_ids[0], seeded.public_ids[1]
    legacy = Path(seeded.host.settings.data_dir) / "dashboard" / LEGACY_KEPT_FILE
    legacy.parent.mkdir(parents=True, exist_ok=True)
    legacy.write_text(json.dumps({f"{first}|{second}": "2026-11-20T10:00:00+00:00", "bad": "x"}), encoding="utf-8")

    with owner_client(seeded.host, "http://127.0.0.1:8766") as client:
        listed = candidates(client)

    assert listed["kept"] == 1
    assert {listed["kept_pairs"][0]["a"]["id"], listed["kept_pairs"][0]["b"]["id"]} == {first, second}  # type: ignore[index]
    assert not legacy.exists()
    assert legacy.with_name(legacy.name + ".adopted").exists()


def test_keep_one_forgets_the_other_through_the_tool(client: TestClient, seeded: Seeded) -> None:
    for text in NEAR:
        call(seeded.host, "remember", {"content": text, "emotion": "happy", "force": True})
    pair = next(
        p
        for p in candidates(client)["pairs"]  # type: ignore[attr-defined]
        if {p["a"].get("content"), p["b"].get("content")} == set(NEAR)
    )
    csrf = {"X-Ego-Csrf": csrf_of(client)}
    gone = client.post(f"/api/memories/{pair['b']['id']}/forget", headers=csrf, content="{}")
    assert gone.status_code == 200
    assert frozenset((pair["a"]["id"], pair["b"]["id"])) not in pair_ids(candidates(client))
    assert client.get(f"/api/memories/{pair['a']['id']}").status_code == 200
