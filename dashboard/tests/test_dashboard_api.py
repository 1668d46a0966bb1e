"""The dashboard's JSON API over a real host: views, search through the recall path, corrections through the
tools, the guards (Host, owner, CSRF), bad input, and privacy (no private text in any answer)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from dashboard_support import (
    FELT_HOURS_AGO,
    PRIVATE,
    TRUST_SEEDED,
    Seeded,
    build_seeded,
    call,
    csrf_of,
    owner_client,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from ego_core import Memory, MemoryLink
from ego_core.testing import HostFactory, configure_logging
from ego_dashboard.app import build_app, is_loopback
from ego_dashboard.owner import issue_owner_token
from ego_dashboard.state import memory_card
from ego_memory.plugin import MemoryPlugin

VIEWS = [
    "/",
    "/api/status",
    "/api/now",
    "/api/memories",
    "/api/self",
    "/api/history",
    "/api/history/desires",
    "/api/people",
    "/api/logs",
    "/api/shared",
    "/api/merge-candidates",
]


def private_runs(width: int = 12) -> set[str]:
    runs = set()
    for text, _emotion in PRIVATE:
        runs.update(text[i : i + width] for i in range(len(text) - width + 1))
    return runs


def leaks(body: str) -> list[str]:
    decoded = body
    with contextlib.suppress(ValueError):
        decoded = json.dumps(json.loads(body), ensure_ascii=False)
    return sorted(run for run in private_runs() if run in body or run in decoded)


def every_answer(client: TestClient, seeded: Seeded) -> dict[str, str]:
    bodies = {path: client.get(path).text for path in VIEWS}
    for memory_id in [*seeded.public_ids, *seeded.private_ids]:
        for path in (f"/api/memories/{memory_id}", f"/api/memories/{memory_id}/graph?depth=3"):
            bodies[path] = client.get(path).text
    for query in ("secret worry sonnet manuscript", "転職を考えている", "Keiko", "walk"):
        bodies[f"search {query}"] = client.get("/api/memories", params={"q": query, "limit": 50}).text
    bodies["private only"] = client.get("/api/memories", params={"private": "only"}).text
    return bodies


def test_the_page_and_every_view_answer(client: TestClient, seeded: Seeded) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert "text/html" in page.headers["content-type"]
    assert "script-src 'self'" in page.headers["content-security-policy"]
    status = client.get("/api/status").json()
    assert {"memory", "self_model", "desires", "interoception"} <= set(status["plugins"]["active"])
    now = client.get("/api/now").json()
    assert now["memory"]["count"] == len(seeded.public_ids) + len(seeded.private_ids)
    assert set(now["desires"])
    assert all(0 <= v <= 1 for v in now["desires"].values())
    assert now["body"]["time_phase"]
    assert [q["text"] for q in now["questions"]] == ["What makes a walk feel calm?"]
    self_view = client.get("/api/self").json()
    curve = self_view["questions"][0]["curve"]
    assert curve[0]["salience"] > curve[-1]["salience"] > 0
    history = client.get("/api/history", params={"range": "24h"}).json()
    assert len(history["buckets"]) == 24
    assert sum(b["memories"] for b in history["buckets"]) == now["memory"]["count"]
    assert client.get("/api/shared").json()["enabled"] is False
    for vendored in ("chart.umd.min.js", "cytoscape.min.js"):
        assert client.get(f"/static/vendor/{vendored}").status_code == 200
    assert client.get("/static/app.js").status_code == 200


def test_search_uses_the_recall_path_and_filters(client: TestClient, seeded: Seeded) -> None:
    found = client.get("/api/memories", params={"q": "octopus book"}).json()
    assert found["mode"] == "recall"
    assert "octopus" in found["results"][0]["content"]
    assert found["results"][0]["score"] is not None
    browsed = client.get("/api/memories").json()
    assert browsed["mode"] == "newest"
    assert len(browsed["results"]) == len(seeded.public_ids) + len(seeded.private_ids)
    only_private = client.get("/api/memories", params={"private": "only"}).json()["results"]
    assert {m["id"] for m in only_private} == set(seeded.private_ids)
    assert all(m["content"] is None for m in only_private)
    hidden = client.get("/api/memories", params={"private": "hide"}).json()["results"]
    assert {m["id"] for m in hidden} == set(seeded.public_ids)
    frustrated = client.get("/api/memories", params={"emotion": "frustrated"}).json()["results"]
    assert [m["emotion"] for m in frustrated] == ["frustrated"]
    assert client.get("/api/memories", params={"min_importance": "5"}).json()["results"] == []


def test_detail_and_neighbourhood_graph(client: TestClient, seeded: Seeded) -> None:
    hub = seeded.public_ids[1]
    detail = client.get(f"/api/memories/{hub}").json()
    targets = {link["target"] for link in detail["links"]}
    assert {seeded.public_ids[0], seeded.public_ids[2], seeded.private_ids[0]} <= targets
    private_target = next(link for link in detail["links"] if link["target"] == seeded.private_ids[0])
    assert private_target["target_card"]["content"] is None
    graph = client.get(f"/api/memories/{seeded.public_ids[0]}/graph", params={"depth": 2}).json()
    ids = {node["id"] for node in graph["nodes"]}
    assert {seeded.public_ids[0], hub, seeded.public_ids[2], seeded.private_ids[0]} <= ids
    assert {node["depth"] for node in graph["nodes"]} == {0, 1, 2}
    one_hop = client.get(f"/api/memories/{seeded.public_ids[0]}/graph", params={"depth": 1}).json()
    assert hub in {node["id"] for node in one_hop["nodes"]}  # remember links similar memories too
    assert {node["depth"] for node in one_hop["nodes"]} == {0, 1}


def test_no_private_text_in_any_answer(client: TestClient, seeded: Seeded) -> None:
    found = {path: leaks(body) for path, body in every_answer(client, seeded).items()}
    assert not {path: runs for path, runs in found.items() if runs}


def test_the_logs_view_is_the_redacted_log(seeded: Seeded) -> None:
    configure_logging(seeded.host.settings.logs_path)
    logging.getLogger("ego.test").warning("the agent wrote: %s", PRIVATE[0][0])
    with owner_client(seeded.host, "http://127.0.0.1") as client:
        answer = client.get("/api/logs", params={"q": "the agent wrote", "limit": 300})
        rows = answer.json()["rows"]
        assert [row["level"] for row in rows] == ["warning"]
        assert not leaks(answer.text)
        assert client.get("/api/logs", params={"level": "error", "q": "the agent wrote"}).json()["rows"] == []


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(min_size=1, max_size=40).filter(lambda s: s.strip() != ""))
def test_property_no_search_reveals_private_text(client: TestClient, query: str) -> None:
    answer = client.get("/api/memories", params={"q": query, "limit": 50})
    assert answer.status_code in (200, 400)
    assert answer.headers["content-type"].startswith("application/json")
    assert not leaks(answer.text)


def test_forget_goes_through_the_tool_and_is_logged(client: TestClient, seeded: Seeded) -> None:
    log_dir = seeded.host.settings.logs_path
    configure_logging(log_dir)
    target = seeded.private_ids[0]
    refused = client.post(f"/api/memories/{target}/forget")
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["error"]
    bad = client.post(f"/api/memories/{target}/forget", headers={"X-Ego-Csrf": "wrong"})
    assert bad.status_code == 403
    csrf = csrf_of(client)
    done = client.post(f"/api/memories/{target}/forget", headers={"X-Ego-Csrf": csrf}, content="{}")
    assert done.status_code == 200, done.text
    assert done.json() == {"ok": True, "tool": "forget"}
    assert not leaks(done.text)
    assert client.get(f"/api/memories/{target}").status_code == 404
    assert target not in client.get("/api/memories").text
    linked = client.get(f"/api/memories/{seeded.public_ids[1]}").json()
    assert target not in {link["target"] for link in linked["links"]}
    again = client.post(f"/api/memories/{target}/forget", headers={"X-Ego-Csrf": csrf})
    assert again.status_code == 422
    assert again.json()["error"]
    records = [json.loads(line) for path in log_dir.glob("*.jsonl") for line in path.read_text().splitlines()]
    calls = [r for r in records if r.get("event") == "tool_call" and r.get("tool") == "forget"]
    assert [c["outcome"] for c in calls] == ["ok", "error"]
    assert all(c["agent"] == "dashboard" for c in calls)
    assert not leaks(json.dumps(records, ensure_ascii=False))
    shown = client.get("/api/logs", params={"q": "forget"}).json()["rows"]
    assert [row["outcome"] for row in shown if row.get("event") == "tool_call"] == ["ok", "error"]
    history = client.get("/api/history", params={"range": "24h"}).json()
    assert history["tools"]["forget"] == 2


def test_resolve_a_question_through_update_self(client: TestClient, seeded: Seeded) -> None:
    csrf = csrf_of(client)
    path = f"/api/questions/{seeded.question_id}/resolve"
    done = client.post(path, headers={"X-Ego-Csrf": csrf}, json={"answer": "Slowness and the river"})
    assert done.status_code == 200, done.text
    assert client.get("/api/self").json()["questions"] == []
    missing = client.post("/api/questions/q_000000000000/resolve", headers={"X-Ego-Csrf": csrf}, json={})
    assert missing.status_code == 422


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/api/memories", {"limit": "0"}),
        ("/api/memories", {"limit": "many"}),
        ("/api/memories", {"private": "maybe"}),
        ("/api/memories", {"date_from": "yesterday"}),
        ("/api/memories", {"q": "walk", "emotion": "glorious"}),
        ("/api/memories", {"q": "walk", "date_from": "2026-02-01", "date_to": "2026-01-01"}),
        ("/api/memories/x/graph", {"depth": "9"}),
        ("/api/history", {"range": "1y"}),
        ("/api/history/desires", {"range": "1y"}),
        ("/api/logs", {"level": "loud"}),
    ],
)
def test_bad_input_is_a_4xx_with_a_json_body(client: TestClient, path: str, params: dict[str, str]) -> None:
    answer = client.get(path, params=params)
    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["error"]


def test_unknown_things_are_json_404_and_405(client: TestClient) -> None:
    for path in ("/api/memories/m_doesnotexist", "/api/nothing", "/nothing"):
        answer = client.get(path)
        assert answer.status_code == 404
        assert answer.json()["error"]
    wrong = client.put("/api/now", headers={"X-Ego-Csrf": csrf_of(client)})
    assert wrong.status_code == 405
    assert wrong.json()["error"]
    csrf = csrf_of(client)
    for body in (b"not json", b"[1, 2]", b"{" * 5000):
        answer = client.post("/api/questions/q_000000000000/resolve", headers={"X-Ego-Csrf": csrf}, content=body)
        assert answer.status_code in (400, 413)
        assert answer.json()["error"]


def test_loopback_answers_only_loopback_host_names_with_its_port(seeded: Seeded) -> None:
    with owner_client(seeded.host, "http://127.0.0.1:8766") as client:
        assert client.get("/api/now").status_code == 200
        assert client.get("/api/now", headers={"Host": "localhost:8766"}).status_code == 200
        for wrong in ("attacker.example:8766", "localhost:8767", "localhost", "127.0.0.1:08766"):
            rebound = client.get("/api/now", headers={"Host": wrong})
            assert rebound.status_code == 421, wrong
            assert rebound.json()["error"]


def test_beyond_loopback_the_owner_token_and_the_csrf_token(seeded: Seeded) -> None:
    agent_token = "ego_test-token-for-the-dashboard"
    owner = issue_owner_token(seeded.host.settings.data_dir)
    app = build_app(seeded.host, bind_host="0.0.0.0", port=8766)
    with TestClient(app, base_url="http://192.0.2.10:8766") as client:
        assert client.get("/").status_code == 200  # the page holds no data: it asks for the login
        agent = {"Authorization": f"Bearer {agent_token}"}
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": owner}, agent):
            refused = client.get("/api/now", headers=headers)
            assert refused.status_code == 401
            assert refused.json()["error"]
        good = {"Authorization": f"Bearer {owner}"}
        assert client.get("/api/now", headers=good).status_code == 200
        forget = client.post(f"/api/memories/{seeded.public_ids[0]}/forget", headers=good)
        assert forget.status_code == 403  # the owner token alone is not enough: the page's CSRF token too
        with_csrf = {**good, "X-Ego-Csrf": csrf_of(client)}
        assert client.post(f"/api/memories/{seeded.public_ids[0]}/forget", headers=with_csrf).status_code == 200
        assert client.get("/api/now", headers={**good, "Host": "192.0.2.11:8766"}).status_code == 421


def test_is_loopback() -> None:
    for address in ("127.0.0.1", "::1", "[::1]", "localhost", "127.0.0.2"):
        assert is_loopback(address), address
    for address in ("0.0.0.0", "::", "192.168.1.4", "example.org"):
        assert not is_loopback(address), address


def test_views_say_when_a_plugin_is_missing(make_host: HostFactory) -> None:
    seeded = build_seeded(make_host, {"memory": MemoryPlugin()})
    with owner_client(seeded.host, "http://127.0.0.1") as client:
        now = client.get("/api/now").json()
        assert now["desires"] is None
        assert now["body"] is None
        assert now["questions"] is None
        assert now["memory"]["count"] == len(seeded.public_ids) + len(seeded.private_ids)
        assert client.get("/api/self").json() == {"questions": None, "notions": None}
        assert client.get("/api/people").json() == {"people": None}
        assert client.get("/api/history/desires").json() == {
            "range": "7d",
            "desires": False,
            "names": [],
            "samples": [],
        }
        assert client.get("/api/status").json()["plugins"]["people"] is False
        csrf = csrf_of(client)
        answer = client.post("/api/questions/q_000000000000/resolve", headers={"X-Ego-Csrf": csrf}, json={})
        assert answer.status_code == 409
        assert "update_self" in answer.json()["error"]


def test_the_desire_history_and_the_people_with_their_trust(client: TestClient, seeded: Seeded) -> None:
    now = datetime.now(UTC)
    week = client.get("/api/history/desires").json()
    assert week["range"] == "7d"
    assert week["desires"] is True
    assert len(week["names"]) == 9
    assert "curiosity" in week["names"]
    times = [datetime.fromisoformat(s["at"]) for s in week["samples"]]
    assert len(times) == len(FELT_HOURS_AGO)  # one sample per introspect, each in its own 15 minutes
    for at, hours in zip(times, FELT_HOURS_AGO, strict=True):
        assert abs(at - (now - timedelta(hours=hours))) < timedelta(minutes=5)
    assert all(set(s["levels"]) == set(week["names"]) for s in week["samples"])
    assert all(0 <= v <= 1 for s in week["samples"] for v in s["levels"].values())
    day = client.get("/api/history/desires", params={"range": "24h"}).json()
    assert day["samples"] == week["samples"]  # all within the last day
    people = client.get("/api/people").json()["people"]
    master = next(p for p in people if p["name"] == "Master")
    assert master["trust"] == TRUST_SEEDED[-1]
    assert master["trust_words"] == "you trust them deeply"
    assert master["shared"] == 1  # the public memory about the garden names Master
    assert [c["trust"] for c in master["trust_history"]] == list(TRUST_SEEDED)  # new with the first, then changed
    moments = [datetime.fromisoformat(c["at"]) for c in master["trust_history"]]
    assert moments == sorted(moments)
    assert client.get("/api/status").json()["plugins"]["people"] is True


def test_works_without_any_feature_plugin(make_host: HostFactory) -> None:
    host = make_host({})
    with owner_client(host, "http://127.0.0.1") as client:
        assert client.get("/api/now").json()["memory"] is None
        assert client.get("/api/memories").json() == {"available": False, "results": []}
        assert client.get("/api/history").json()["memory"] is False
        assert client.get("/api/history/desires").json()["desires"] is False
        assert client.get("/api/people").json() == {"people": None}
        assert client.get(f"/api/memories/m_{datetime.now(UTC):%Y}/graph").status_code == 404


def test_vendored_files_match_their_notice() -> None:
    root = Path(__file__).resolve().parents[1]
    notice = (root / "README.md").read_text(encoding="utf-8")
    vendor = root / "ego_dashboard" / "static" / "vendor"
    for script in sorted(vendor.glob("*.js")):
        digest = hashlib.sha256(script.read_bytes()).hexdigest()
        assert f"| `{script.name}` |" in notice, f"{script.name} is not in dashboard/README.md"
        assert digest in notice, f"{script.name}: its SHA-256 {digest} is not the one dashboard/README.md records"
    for licence in ("LICENSE-chart.js.md", "LICENSE-cytoscape.txt"):
        assert "Permission is hereby granted" in (vendor / licence).read_text(encoding="utf-8")


def test_reveal_is_off_by_default(client: TestClient, seeded: Seeded) -> None:
    assert client.get("/api/status").json()["reveal_private"] is False
    refused = client.post(f"/api/memories/{seeded.private_ids[0]}/reveal", headers={"X-Ego-Csrf": csrf_of(client)})
    assert refused.status_code == 403
    assert "--reveal-private" in refused.json()["error"]
    assert not leaks(refused.text)


def test_reveal_when_allowed_answers_only_the_explicit_request(seeded: Seeded) -> None:
    with owner_client(seeded.host, "http://127.0.0.1", reveal_private=True) as client:
        target = seeded.private_ids[0]
        assert client.post(f"/api/memories/{target}/reveal").status_code == 403  # no CSRF token
        csrf = csrf_of(client)
        shown = client.post(f"/api/memories/{target}/reveal", headers={"X-Ego-Csrf": csrf})
        assert shown.status_code == 200
        assert shown.json()["content"] in {text for text, _emotion in PRIVATE}
        assert shown.headers["cache-control"] == "no-store"
        public = client.post(f"/api/memories/{seeded.public_ids[0]}/reveal", headers={"X-Ego-Csrf": csrf})
        assert public.status_code == 404  # only private memories are revealed; public ones are shown anyway
        found = {path: leaks(body) for path, body in every_answer(client, seeded).items()}
        assert not {path: runs for path, runs in found.items() if runs}  # every other answer stays redacted


PRIVATE_TEXT = st.text(
    alphabet=st.sampled_from(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789 .,!?朝川散歩桜手紙雨電車友達音楽夢光夏冬静かな本海山空"
    ),
    min_size=24,
    max_size=90,
).filter(lambda text: len(text.strip()) >= 24 and len(set(text)) >= 8)


@settings(max_examples=8, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(texts=st.lists(PRIVATE_TEXT, min_size=1, max_size=2))
def test_property_no_view_serves_a_run_of_any_private_text(
    client: TestClient, seeded: Seeded, texts: list[str]
) -> None:
    """Arbitrary private texts (Latin, digits, Japanese): no 12-character run of any of them appears in the HTML or
    JSON of any view, search, detail or neighbourhood."""
    for text in texts:  # twice: a pair of private near-duplicates for the merge candidates
        for _copy in range(2):
            call(seeded.host, "remember", {"content": text, "emotion": "anxious", "private": True, "force": True})
    listed = client.get("/api/memories", params={"private": "only", "limit": 50}).json()["results"]
    ids = [m["id"] for m in listed]
    episode = {"memory_ids": [*ids[:3], seeded.public_ids[0]], "summary": "Remembering: " + " ".join(texts)}
    call(seeded.host, "create_episode", episode)
    kept = client.post(
        "/api/merge-candidates/keep", json={"a": ids[0], "b": ids[1]}, headers={"X-Ego-Csrf": csrf_of(client)}
    )
    assert kept.status_code == 200  # a kept pair of private memories is listed by its cards
    bodies = [client.get(path).text for path in VIEWS]
    for memory_id in ids:
        bodies.append(client.get(f"/api/memories/{memory_id}").text)
        bodies.append(client.get(f"/api/memories/{memory_id}/graph", params={"depth": 2}).text)
    for text in texts:
        bodies.append(client.get("/api/memories", params={"q": text, "limit": 50}).text)
    served = "\n".join(bodies)
    decoded = json.dumps([json.loads(b) for b in bodies[1:]], ensure_ascii=False)
    runs = {text[i : i + 12] for text in texts for i in range(len(text) - 11)}
    found = sorted(run for run in runs if run.strip() and (run in served or run in decoded))
    assert not found


def test_a_private_card_holds_only_id_emotion_and_date() -> None:
    memory = Memory(
        id="mem_0123456789ab",
        content=PRIVATE[0][0],
        timestamp=datetime(2026, 1, 2, tzinfo=UTC),
        tags=("keiko",),
        is_private=True,
        links=(MemoryLink(target_id="mem_ba9876543210", note="about the sonnet"),),
    )
    card = memory_card(memory, detail=True)
    assert set(card) == {"id", "private", "timestamp", "emotion", "valence", "arousal", "intensity", "content"}
    assert card["content"] is None


def test_the_self_view_lists_notions_when_the_plugin_is_enabled(make_host: HostFactory) -> None:
    from ego_notions.plugin import NotionsPlugin

    seeded = build_seeded(make_host, {"memory": MemoryPlugin(), "notions": NotionsPlugin()})
    # public 0, 1 and 2 all linked to each other: a clique, which consolidate makes a notion
    call(seeded.host, "link_memories", {"source_id": seeded.public_ids[0], "target_id": seeded.public_ids[2]})
    call(seeded.host, "consolidate", {})
    service = seeded.host.services.get("notions.store")
    assert service is not None
    expected = [n.id for n in service.notions(limit=200)]
    with owner_client(seeded.host, "http://127.0.0.1") as client:
        assert client.get("/api/status").json()["plugins"]["notions"] is True
        listed = client.get("/api/self").json()["notions"]
        assert [n["id"] for n in listed] == expected
        assert len(listed) >= 1
        assert all(0 <= n["confidence"] <= 1 for n in listed)
        assert not leaks(json.dumps(listed, ensure_ascii=False))
        csrf = {"X-Ego-Csrf": csrf_of(client)}
        first = listed[0]["id"]
        renamed = client.post(f"/api/notions/{first}/relabel", headers=csrf, json={"label": "歩くこと & calm"})
        assert renamed.status_code == 200, renamed.text
        assert client.get("/api/self").json()["notions"][0]["label"] == "歩くこと & calm"
        assert service.notions(limit=200)[0].label == "歩くこと & calm"
        for payload in ({}, {"label": ""}, {"label": 7}):
            bad = client.post(f"/api/notions/{first}/relabel", headers=csrf, json=payload)
            assert bad.status_code == 400
            assert "label" in bad.json()["error"]
        missing = client.post("/api/notions/notion_000000000000/merge", headers=csrf, json={"into": first})
        assert missing.status_code == 422
        assert "not found" in missing.json()["error"]
        assert client.post(f"/api/notions/{first}/relabel", json={"label": "x"}).status_code == 403
