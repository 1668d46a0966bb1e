"""The gateway over real HTTP on loopback, on SQLite and on PostgreSQL; every response is checked against the
served OpenAPI document."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest
from shared_support import EXAMPLES, OpenApi, ThreadGateway, event

from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.store import EventFilter, SqlStore

SNAPSHOT = "/v1/memory/snapshot"
APPEND = "/v1/memory/append"


@pytest.fixture
def api(gateway: ThreadGateway) -> Iterator[tuple[httpx.Client, OpenApi]]:
    with httpx.Client(base_url=gateway.url, timeout=10) as client:
        document = client.get("/openapi.json").json()
        yield client, OpenApi(document)


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_the_served_document_is_the_one_the_tests_use(api: tuple[httpx.Client, OpenApi]) -> None:
    client, openapi = api
    served = client.get("/openapi.json").json()
    assert served["openapi"].startswith("3.1")
    assert set(served["paths"]) >= {SNAPSHOT, APPEND, "/v1/memory/search", "/v1/memory/events/{event_id}"}
    assert served == openapi.document


def test_scopes_are_enforced_by_the_token(api: tuple[httpx.Client, OpenApi], token_for: Callable[..., str]) -> None:
    client, openapi = api
    claude, gemini = auth(token_for("claude")), auth(token_for("gemini"))

    own = client.post(APPEND, json=event(scope="agent:claude", agent_id="claude"), headers=claude)
    assert openapi.check(own, APPEND, "post")["status"] == "created"
    assert own.status_code == 201

    for response in (
        client.post(APPEND, json=event(scope="agent:gemini"), headers=claude),
        client.get(SNAPSHOT, params={"scopes": "global,agent:gemini"}, headers=claude),
    ):
        assert response.status_code == 403
        body = openapi.check(
            response, SNAPSHOT if response.request.method == "GET" else APPEND, response.request.method
        )
        assert "agent:gemini" in body["message"]

    shared = client.post(APPEND, json=event(dedupe_key="config:shared"), headers=gemini)
    assert shared.status_code == 201
    read = client.get(SNAPSHOT, params={"scopes": "global"}, headers=claude)
    keys = [e["dedupe_key"] for e in openapi.check(read, SNAPSHOT, "get")["recent_events"]]
    assert keys == ["config:shared"]
    gemini_view = openapi.check(client.get(SNAPSHOT, params={"scopes": "global"}, headers=gemini), SNAPSHOT, "get")
    assert [e["dedupe_key"] for e in gemini_view["recent_events"]] == ["config:shared"]
    own_view = openapi.check(client.get(SNAPSHOT, params={"scopes": "agent:claude"}, headers=claude), SNAPSHOT, "get")
    assert [e["scope"] for e in own_view["recent_events"]] == ["agent:claude"]

    anonymous = client.get(SNAPSHOT)
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"] == "Bearer"
    openapi.check(anonymous, SNAPSHOT, "get")
    assert client.post(APPEND, json=event(), headers=auth("egs_not-a-real-token")).status_code == 401

    impostor = client.post(APPEND, json=event(agent_id="gemini", dedupe_key="config:impostor"), headers=claude)
    assert impostor.status_code == 403
    assert "token" in openapi.check(impostor, APPEND, "post")["message"]
    asked_as_other = client.get(SNAPSHOT, params={"agent_id": "gemini"}, headers=claude)
    assert asked_as_other.status_code == 403


def test_operator_and_agent_tokens_do_not_mix(api: tuple[httpx.Client, OpenApi], token_for: Callable[..., str]) -> None:
    client, openapi = api
    agent, admin = auth(token_for("claude")), auth(token_for("ops", admin=True))
    refused = client.post(APPEND, json=event(), headers=admin)
    assert refused.status_code == 403
    openapi.check(refused, APPEND, "post")
    assert client.post("/v1/janitor/run", json={}, headers=agent).status_code == 403
    report = client.post("/v1/janitor/run", json={"steps": ["consolidate"]}, headers=admin)
    assert openapi.check(report, "/v1/janitor/run", "post")["steps"] == ["consolidate"]


def test_the_notes_examples_are_accepted_as_written(
    api: tuple[httpx.Client, OpenApi], token_for: Callable[..., str]
) -> None:
    client, openapi = api
    for example in EXAMPLES:
        response = client.post(APPEND, json=example, headers=auth(token_for(example["agent_id"])))
        body = openapi.check(response, APPEND, "post")
        assert response.status_code == 201, body
        assert body["status"] == "created"
        assert body["event"]["content_md"] == example["content_md"]
        assert body["warnings"] == []


SENSITIVE = {
    "API key": [
        "The key is sk-proj-4fQ2b9Kx7LmN3pR8sT1vW6yZ0aBc.",
        "AWS: AKIAQ3EGRT7YHJKL2MNB is the deploy user.",
        "token ghp_9aZ3kL7mN2pQ5rS8tU1vW4xY6zA0bC3dE5fG",
    ],
    "JWT": ["session eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpM"],
    "e-mail address": ["Ask taro.yamada@gmail.com about it."],
    "phone number": ["Call +81 90-1234-5678 after six.", "Call (555) 123-4567."],
    "card number": ["Paid with 4111 1111 1111 1111."],
}


@pytest.mark.parametrize(("kind", "text"), [(k, t) for k, texts in SENSITIVE.items() for t in texts])
def test_sensitive_data_is_refused_never_echoed_never_stored(
    api: tuple[httpx.Client, OpenApi], token_for: Callable[..., str], store: SqlStore, kind: str, text: str
) -> None:
    client, openapi = api
    response = client.post(APPEND, json=event(content_md=text), headers=auth(token_for("claude")))
    assert response.status_code == 422
    body = openapi.check(response, APPEND, "post")
    assert body["field"] == "content_md"
    assert kind in body["kinds"]
    assert kind in body["message"]
    secret_part = text.split(" ", 2)[-1].rstrip(".")
    assert secret_part not in response.text
    assert text not in response.text
    assert store.event_count() == 0
    assert store.list_events(EventFilter(terms=(text.rsplit(maxsplit=1)[-1],), include_deprecated=True)) == []


def test_where_a_secret_lives_may_be_said(api: tuple[httpx.Client, OpenApi], token_for: Callable[..., str]) -> None:
    client, openapi = api
    text = "The bot token is in ~/.env (TELEGRAM_BOT_TOKEN); the API key is rotated monthly by ops."
    response = client.post(APPEND, json=event(content_md=text), headers=auth(token_for("claude")))
    assert response.status_code == 201, openapi.check(response, APPEND, "post")


def test_idempotency_supersedes_and_last_write_wins(
    api: tuple[httpx.Client, OpenApi], token_for: Callable[..., str]
) -> None:
    client, openapi = api
    claude, gemini = auth(token_for("claude")), auth(token_for("gemini"))

    first = openapi.check(client.post(APPEND, json=event(), headers=claude), APPEND, "post")
    again = client.post(APPEND, json=event(), headers=claude)
    assert again.status_code == 200
    repeated = openapi.check(again, APPEND, "post")
    assert (repeated["status"], repeated["event_id"]) == ("duplicate", first["event_id"])

    lower = openapi.check(
        client.post(
            APPEND,
            json=event(
                run_id="run_gemini", confidence="low", content_md="The example setting moved to ~/example.toml."
            ),
            headers=gemini,
        ),
        APPEND,
        "post",
    )
    assert lower["status"] == "created"
    assert any("confidence dropped from high to low" in w for w in lower["warnings"])
    assert any("conflict" in w for w in lower["warnings"])

    snap = openapi.check(client.get(SNAPSHOT, params={"scopes": "global"}, headers=claude), SNAPSHOT, "get")
    assert [e["event_id"] for e in snap["recent_events"]] == [lower["event_id"]]
    assert snap["open_conflicts"] == 1

    fix = openapi.check(
        client.post(
            APPEND,
            json=event(
                run_id="run_fix", content_md="The example setting is in ~/example.toml.", supersedes=lower["event_id"]
            ),
            headers=claude,
        ),
        APPEND,
        "post",
    )
    assert fix["status"] == "superseded_previous"
    snap = openapi.check(client.get(SNAPSHOT, params={"scopes": "global"}, headers=claude), SNAPSHOT, "get")
    shown = [e["event_id"] for e in snap["recent_events"]]
    assert shown == [fix["event_id"]]
    assert lower["event_id"] not in snap["pinned_md"]
    assert fix["event_id"] in snap["pinned_md"]
    looked_up = client.get(f"/v1/memory/events/{lower['event_id']}", headers=claude)
    assert openapi.check(looked_up, "/v1/memory/events/{event_id}", "get")["deprecated"] is True


def test_snapshot_latest_per_key_and_a_pinned_summary_within_budget(
    store: SqlStore, token_for: Callable[..., str]
) -> None:
    settings = GatewaySettings(pin_budget_tokens=120)
    running = ThreadGateway(store, settings).start()
    try:
        with httpx.Client(base_url=running.url, timeout=10) as client:
            openapi = OpenApi(client.get("/openapi.json").json())
            claude = auth(token_for("claude"))
            for index in range(12):
                for version in range(2):
                    body = event(
                        run_id=f"run_{version}",
                        dedupe_key=f"decision:topic_{index:02d}",
                        kind="decision",
                        content_md=f"Topic {index} settled, version {version}: see docs/topic-{index}.md.",
                    )
                    assert client.post(APPEND, json=body, headers=claude).status_code == 201
            response = client.get(SNAPSHOT, params={"scopes": "global", "limit_recent": 50}, headers=claude)
            snap = openapi.check(response, SNAPSHOT, "get")
    finally:
        running.stop()
    recent = snap["recent_events"]
    assert len(recent) == 12
    assert {e["dedupe_key"] for e in recent} == {f"decision:topic_{i:02d}" for i in range(12)}
    assert all("version 1" in e["content_md"] for e in recent)
    assert snap["entries"] == {"global": 12}
    assert 0 < snap["pinned_tokens"] <= 120
    assert snap["pinned_event_ids"]
    assert len(snap["pinned_event_ids"]) < 12
    assert "more entries in the log" in snap["pinned_md"]
    assert all(event_id in snap["pinned_md"] for event_id in snap["pinned_event_ids"])


def test_search_and_lookup_respect_scopes(api: tuple[httpx.Client, OpenApi], token_for: Callable[..., str]) -> None:
    client, openapi = api
    claude, gemini = auth(token_for("claude")), auth(token_for("gemini"))
    mine = openapi.check(
        client.post(
            APPEND, json=event(scope="agent:gemini", content_md="Heartbeat interval is 30 minutes."), headers=gemini
        ),
        APPEND,
        "post",
    )
    client.post(APPEND, json=event(content_md="Heartbeat dashboard lives at docs/heartbeat.md."), headers=claude)
    found = openapi.check(
        client.get("/v1/memory/search", params={"q": "heartbeat"}, headers=claude), "/v1/memory/search", "get"
    )
    assert [e["scope"] for e in found["events"]] == ["global"]
    both = openapi.check(
        client.get("/v1/memory/search", params={"q": "HEARTBEAT"}, headers=gemini), "/v1/memory/search", "get"
    )
    assert len(both["events"]) == 2
    hidden = client.get(f"/v1/memory/events/{mine['event_id']}", headers=claude)
    assert hidden.status_code == 403
    openapi.check(hidden, "/v1/memory/events/{event_id}", "get")
    missing = client.get("/v1/memory/events/evt_000000000000000000000000", headers=claude)
    assert missing.status_code == 404
    openapi.check(missing, "/v1/memory/events/{event_id}", "get")
    bad_kind = client.get("/v1/memory/search", params={"q": "heartbeat", "kind": "opinion"}, headers=claude)
    assert bad_kind.status_code == 422
    assert openapi.check(bad_kind, "/v1/memory/search", "get")["field"] == "kind"
    only = client.get("/v1/memory/search", params={"q": "heartbeat", "kind": "config"}, headers=gemini)
    assert len(openapi.check(only, "/v1/memory/search", "get")["events"]) == 2
    empty = client.get("/v1/memory/search", params={"q": " "}, headers=claude)
    assert empty.status_code == 422
    assert openapi.check(empty, "/v1/memory/search", "get")["field"] == "q"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (event(kind="opinion"), "kind"),
        (event(dedupe_key="CONFIG:FOO"), "dedupe_key"),
        (event(dedupe_key="決定_20260202"), "dedupe_key"),
        (event(dedupe_key="this-is-a-very-long-key-that-exceeds-sixty-four-characters-limit-bad"), "dedupe_key"),
        (event(scope="team:x"), "scope"),
        (event(confidence="certain"), "confidence"),
        (event(content_md="   "), "content_md"),
        (event(content_md="x" * 5000), "content_md"),
        (event(ttl_days=-1), "ttl_days"),
        (event(ttl_days=1.5), "ttl_days"),
        (event(supersedes="not-an-id"), "supersedes"),
        (event(supersedes="evt_000000000000000000000000"), "supersedes"),
        (event(source={"system": "fax"}), "source.system"),
        (event(run_id=""), "run_id"),
    ],
)
def test_invalid_events_name_the_field_and_the_rule(
    api: tuple[httpx.Client, OpenApi],
    token_for: Callable[..., str],
    store: SqlStore,
    body: dict[str, object],
    field: str,
) -> None:
    client, openapi = api
    response = client.post(APPEND, json=body, headers=auth(token_for("claude")))
    assert response.status_code == 422
    problem = openapi.check(response, APPEND, "post")
    assert problem["field"] == field
    assert problem["rule"]
    assert store.event_count() == 0


def test_bodies_that_are_not_events(api: tuple[httpx.Client, OpenApi], token_for: Callable[..., str]) -> None:
    client, openapi = api
    claude = auth(token_for("claude"))
    for raw in (b"{not json", b'{"ttl_days": NaN}', b"[1, 2"):
        response = client.post(APPEND, content=raw, headers={**claude, "content-type": "application/json"})
        assert response.status_code == 400
        openapi.check(response, APPEND, "post")
    huge = client.post(APPEND, content=b"{" + b" " * 70_000 + b"}", headers=claude)
    assert huge.status_code == 413
    openapi.check(huge, APPEND, "post")
    bad_limit = client.get(SNAPSHOT, params={"limit_recent": "many"}, headers=claude)
    assert bad_limit.status_code == 422
    assert openapi.check(bad_limit, SNAPSHOT, "get")["field"] == "limit_recent"
    warned = openapi.check(client.post(APPEND, json=event(colour="blue"), headers=claude), APPEND, "post")
    assert warned["warnings"] == ["ignored unknown field(s): colour"]
    assert client.get("/nowhere").json()["error"] == "http"


def test_janitor_endpoints(api: tuple[httpx.Client, OpenApi], token_for: Callable[..., str], store: SqlStore) -> None:
    client, openapi = api
    claude, gemini, admin = auth(token_for("claude")), auth(token_for("gemini")), auth(token_for("ops", admin=True))
    client.post(APPEND, json=event(ttl_days=1), headers=claude)
    client.post(APPEND, json=event(run_id="r2", content_md="Setting moved to ~/example.toml."), headers=gemini)
    report = openapi.check(client.post("/v1/janitor/run", headers=admin), "/v1/janitor/run", "post")
    assert report["conflicts"]["resolution_events"] == 1
    assert report["consolidate"][0]["scope"] == "global"
    conflicts = openapi.check(client.get("/v1/janitor/conflicts", headers=admin), "/v1/janitor/conflicts", "get")
    assert len(conflicts["conflicts"]) == 1
    assert conflicts["conflicts"][0]["resolution_event_id"]
    candidates = openapi.check(client.get("/v1/janitor/candidates", headers=admin), "/v1/janitor/candidates", "get")
    assert candidates["candidates"] == []
    plan = client.post("/v1/janitor/cleanup", json={"older_than": "0d", "scopes": ["global"]}, headers=admin)
    planned = openapi.check(plan, "/v1/janitor/cleanup", "post")
    assert (planned["state"], planned["deleted"], planned["counts"]) == ("open", None, {"global": 3})
    assert len(planned["event_ids"]) == 3
    assert store.event_count() == 3
    bad = client.post("/v1/janitor/cleanup", json={"older_than": "soon"}, headers=admin)
    assert bad.status_code == 422
    assert openapi.check(bad, "/v1/janitor/cleanup", "post")["field"] == "older_than"
    refused = client.post("/v1/janitor/cleanup", json={"older_than": "0d", "approve": True}, headers=admin)
    assert openapi.check(refused, "/v1/janitor/cleanup", "post")["field"] == "approve"
    assert store.event_count() == 3
    done = client.post(f"/v1/janitor/cleanup/{planned['plan_id']}/confirm", headers=admin)
    assert openapi.check(done, "/v1/janitor/cleanup/{plan_id}/confirm", "post")["deleted"] == 3
    assert store.event_count() == 0
    audit = openapi.check(client.get("/v1/janitor/audit", headers=admin), "/v1/janitor/audit", "get")
    assert [r["action"] for r in audit["audit"]].count("delete") == 3
    health = client.get("/v1/health")
    assert openapi.check(health, "/v1/health", "get")["backend"] == store.backend
