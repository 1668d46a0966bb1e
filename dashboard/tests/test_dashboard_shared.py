"""The Shared view over a real gateway: events by scope, pins, conflicts and the audit trail as the configured agent
(claude) may read them; cleanup plans proposed and confirmed through the gateway's two steps; the guards; and no run
of another agent's private scope in any answer."""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from datetime import timedelta

from dashboard_support import csrf_of, owner_client
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from shared_gateway import GEMINI_PRIVATE, OLD_NOTE, OWN_NOTE, SeededGateway, shared_host_plugins
from starlette.testclient import TestClient

from ego_core.testing import HostFactory
from ego_dashboard.app import build_app
from ego_dashboard.owner import issue_owner_token


def dashboard(
    make_host: HostFactory, gateway: SeededGateway, *, operator: bool = True
) -> AbstractContextManager[TestClient]:
    host = make_host(shared_host_plugins(), config={"shared_memory": gateway.plugin_config()})
    return owner_client(host, gateway_operator_token=gateway.operator if operator else None)


def private_runs(width: int = 12) -> set[str]:
    return {GEMINI_PRIVATE[i : i + width] for i in range(len(GEMINI_PRIVATE) - width + 1)}


def leaked(body: str) -> list[str]:
    decoded = json.dumps(json.loads(body), ensure_ascii=False) if body.lstrip().startswith("{") else body
    return sorted(run for run in private_runs() if run in body or run in decoded)


def test_the_view_shows_events_by_scope_pins_conflicts_and_audit(
    make_host: HostFactory, gateway: SeededGateway
) -> None:
    with dashboard(make_host, gateway) as client:
        view = client.get("/api/shared").json()
    assert view["enabled"]
    assert view["configured"]
    assert view["reachable"]
    assert view["operator"]
    assert view["agent_id"] == "claude"
    assert view["scopes"] == ["global", "project:ego", "agent:claude"]
    assert view["mode"] == "gateway"
    assert view["where"] == f"gateway {gateway.url}"
    by_scope = {scope: [e["event_id"] for e in events] for scope, events in view["events_by_scope"].items()}
    assert set(by_scope) == {"global", "project:ego", "agent:claude"}
    assert gateway.events["pref"] in by_scope["global"]
    assert gateway.events["old"] in by_scope["global"]
    assert by_scope["agent:claude"] == [gateway.events["own"]]
    assert view["events_by_scope"]["agent:claude"][0]["content_md"] == OWN_NOTE
    assert gateway.events["conflict_b"] in by_scope["project:ego"]  # the newer of the two is read
    assert gateway.events["pref"] in view["pinned_event_ids"]
    assert "answer_style" in view["pinned_md"]
    assert view["entries"]["global"] == 2
    assert view["open_conflicts"] == 1
    conflict = view["conflicts"][0]
    assert (conflict["scope"], conflict["dedupe_key"]) == ("project:ego", "release_branch")
    assert {conflict["event_id"], conflict["previous_event_id"]} == {
        gateway.events["conflict_a"],
        gateway.events["conflict_b"],
    }
    assert any(row["action"] == "janitor" for row in view["audit"])
    assert not leaked(json.dumps(view, ensure_ascii=False))


def test_without_the_operator_token_only_the_agents_part(make_host: HostFactory, gateway: SeededGateway) -> None:
    with dashboard(make_host, gateway, operator=False) as client:
        view = client.get("/api/shared").json()
        assert view["reachable"]
        assert not view["operator"]
        assert view["conflicts"] is None
        assert view["audit"] is None
        assert view["open_conflicts"] == 1
        refused = client.post(
            "/api/shared/cleanup", json={"older_than": "30d"}, headers={"X-Ego-Csrf": csrf_of(client)}
        )
        assert refused.status_code == 409
        assert "EGO_DASHBOARD_GATEWAY_TOKEN" in refused.json()["error"]


def test_other_scopes_and_another_agents_scope(make_host: HostFactory, gateway: SeededGateway) -> None:
    with dashboard(make_host, gateway) as client:
        only_global = client.get("/api/shared", params={"scopes": "global"}).json()
        assert list(only_global["events_by_scope"]) == ["global"]
        refused = client.get("/api/shared", params={"scopes": "global,agent:gemini"})
        assert refused.status_code == 400
        assert not leaked(refused.text)
        assert client.get("/api/shared", params={"scopes": "../v1/janitor"}).status_code == 400


def propose(client: TestClient, csrf: str, **body: object) -> dict[str, object]:
    answer = client.post("/api/shared/cleanup", json=body, headers={"X-Ego-Csrf": csrf})
    assert answer.status_code == 200, answer.text
    plan: dict[str, object] = answer.json()
    return plan


def test_a_cleanup_plan_is_proposed_then_confirmed(make_host: HostFactory, gateway: SeededGateway) -> None:
    with dashboard(make_host, gateway) as client:
        csrf = csrf_of(client)
        plan = propose(client, csrf, older_than="30d", where="shared")
        assert plan["state"] == "open"
        assert plan["confirmable"] is True
        assert plan["counts"] == {"global": 1}
        assert plan["total"] == 1
        assert [e["event_id"] for e in plan["events"]] == [gateway.events["old"]]  # type: ignore[index]
        assert OLD_NOTE in json.dumps(plan)
        assert gateway.store.get(gateway.events["old"]) is not None  # proposing deletes nothing
        plan_id = str(plan["plan_id"])
        assert client.get(f"/api/shared/cleanup/{plan_id}").json()["plan_id"] == plan_id
        confirm = f"/api/shared/cleanup/{plan_id}/confirm"
        assert client.post(confirm).status_code == 403  # no CSRF token
        assert client.post(confirm, headers={"X-Ego-Csrf": "wrong"}).status_code == 403
        assert gateway.store.get(gateway.events["old"]) is not None
        done = client.post(confirm, headers={"X-Ego-Csrf": csrf})
        assert done.status_code == 200, done.text
        assert done.json()["deleted"] == 1
        assert gateway.store.get(gateway.events["old"]) is None
        again = client.post(confirm, headers={"X-Ego-Csrf": csrf})
        assert again.status_code == 409  # a plan is confirmed once
        audit = client.get("/api/shared").json()["audit"]
        assert any(row["action"] == "cleanup_confirm" and plan_id in row["detail"] for row in audit)


def test_the_agents_own_scope_and_bad_plans(make_host: HostFactory, gateway: SeededGateway) -> None:
    with dashboard(make_host, gateway) as client:
        csrf = csrf_of(client)
        own = propose(client, csrf, older_than="1h", where="own")
        assert own["total"] == 0  # the agent's own note is new
        headers = {"X-Ego-Csrf": csrf}
        for body in ({}, {"older_than": "soon"}, {"older_than": "30d", "where": "agent:gemini"}, {"expired": "yes"}):
            assert client.post("/api/shared/cleanup", json=body, headers=headers).status_code == 400
        assert client.get("/api/shared/cleanup/plan_nope").status_code == 400
        assert client.get(f"/api/shared/cleanup/plan_{'0' * 24}").status_code == 404


def test_a_plan_covering_another_agents_scope_is_not_confirmed_here(
    make_host: HostFactory, gateway: SeededGateway
) -> None:
    with gateway.http(gateway.operator) as ops:
        proposed = ops.post("/v1/janitor/cleanup", json={"older_than": "30d", "scopes": ["agent:*"]})
    assert proposed.status_code == 201, proposed.text
    plan_id = proposed.json()["plan_id"]
    with dashboard(make_host, gateway) as client:
        shown = client.get(f"/api/shared/cleanup/{plan_id}")
        assert shown.status_code == 200
        assert shown.json()["confirmable"] is False
        assert shown.json()["counts"] == {"agent:gemini": 1}
        refused = client.post(f"/api/shared/cleanup/{plan_id}/confirm", headers={"X-Ego-Csrf": csrf_of(client)})
        assert refused.status_code == 403
        audit = client.get("/api/shared").json()["audit"]
        for body in (shown.text, refused.text, json.dumps(audit, ensure_ascii=False)):
            assert not leaked(body)
        assert "poem_draft" not in shown.text
    assert gateway.store.get(gateway.events["gemini_private_old"]) is not None


def test_beyond_loopback_the_owner_token_is_needed(make_host: HostFactory, gateway: SeededGateway) -> None:
    host = make_host(shared_host_plugins(), config={"shared_memory": gateway.plugin_config()})
    owner = issue_owner_token(host.settings.data_dir)
    anywhere = "0.0.0.0"
    app = build_app(host, bind_host=anywhere, gateway_operator_token=gateway.operator)
    with TestClient(app, base_url="http://192.0.2.1:8766") as client:
        csrf = csrf_of(client)
        assert client.get("/api/shared").status_code == 401
        with gateway.http(gateway.operator) as ops:
            plan_id = ops.post("/v1/janitor/cleanup", json={"older_than": "30d"}).json()["plan_id"]
        confirm = f"/api/shared/cleanup/{plan_id}/confirm"
        assert client.post(confirm, headers={"X-Ego-Csrf": csrf}).status_code == 401
        agent = {"Authorization": f"Bearer {gateway.claude}"}  # the agent's gateway token is no owner's either
        assert client.post(confirm, headers={**agent, "X-Ego-Csrf": csrf}).status_code == 401
        bearer = {"Authorization": f"Bearer {owner}"}
        assert client.post(confirm, headers={**bearer, "X-Ego-Csrf": "wrong"}).status_code == 403
        assert gateway.store.get(gateway.events["old"]) is not None
        assert client.post(confirm, headers={**bearer, "X-Ego-Csrf": csrf}).status_code == 200
    assert gateway.store.get(gateway.events["old"]) is None


def test_an_unreachable_gateway_is_said(make_host: HostFactory, gateway: SeededGateway) -> None:
    config = {**gateway.plugin_config(), "gateway_url": "http://127.0.0.1:9", "timeout_seconds": 0.5}
    host = make_host(shared_host_plugins(), config={"shared_memory": config})
    with owner_client(host, "http://127.0.0.1:8766") as client:
        view = client.get("/api/shared").json()
    assert view["configured"]
    assert view["reachable"] is False
    assert "cannot connect" in view["error"]


OTHER_AGENTS_TEXT = st.text(
    alphabet=st.sampled_from(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ .,!?朝川散歩桜手紙雨電車友達音楽夢光夏冬静かな本海山空"
    ),
    min_size=24,
    max_size=90,
).filter(lambda text: len(text.strip()) >= 24 and len(set(text)) >= 8)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(OTHER_AGENTS_TEXT, min_size=1, max_size=2))
def test_property_no_answer_serves_a_run_of_another_agents_scope(
    make_host: HostFactory, gateway: SeededGateway, texts: list[str]
) -> None:
    """Arbitrary texts gemini keeps in its own scope (two hours old by the gateway's clock): no 12-character run of
    any of them appears in any answer of the Shared view, a plan that covers them, or its refused confirmation."""
    gateway.offset[0] = timedelta(hours=-2)
    written = []
    with gateway.http(gateway.gemini) as gemini:
        for number, text in enumerate(texts):
            body = {"agent_id": "gemini", "run_id": "run_2026_11_26_002", "scope": "agent:gemini", "kind": "fact",
                    "dedupe_key": f"note_{len(text)}_{number}", "confidence": "high", "content_md": text,
                    "source": {"system": "other"}, "supersedes": None, "ttl_days": 0}  # fmt: skip
            answer = gemini.post("/v1/memory/append", json=body)
            if answer.status_code in (200, 201):
                written.append(text)
    gateway.offset[0] = timedelta(0)
    assume(written)
    with gateway.http(gateway.operator) as ops:
        plan_id = ops.post("/v1/janitor/cleanup", json={"older_than": "1h", "scopes": ["*", "agent:*"]}).json()[
            "plan_id"
        ]
    with dashboard(make_host, gateway) as client:
        csrf = {"X-Ego-Csrf": csrf_of(client)}
        bodies = [
            client.get("/").text,
            client.get("/api/shared").text,
            client.get("/api/shared", params={"scopes": "global,project:ego"}).text,
            client.get("/api/shared", params={"scopes": "agent:gemini"}).text,
            client.get(f"/api/shared/cleanup/{plan_id}").text,
            client.post(f"/api/shared/cleanup/{plan_id}/confirm", headers=csrf).text,
            client.post("/api/shared/cleanup", json={"older_than": "1h", "where": "shared"}, headers=csrf).text,
        ]
    assert json.loads(bodies[4])["counts"]["agent:gemini"] >= len(written)  # the plan holds them
    assert json.loads(bodies[3]).get("error")  # the agent's token may not read gemini's scope
    served = "\n".join(bodies)
    decoded = json.dumps([json.loads(body) for body in bodies[1:]], ensure_ascii=False)
    runs = {text[i : i + 12] for text in written for i in range(len(text) - 11)}
    assert not sorted(run for run in runs if run.strip() and (run in served or run in decoded))


def test_an_agent_with_a_local_store_is_read_through_the_local_client(
    make_host: HostFactory, gateway: SeededGateway
) -> None:
    config = {"db": gateway.store_url, "agent_id": "claude"}
    host = make_host(shared_host_plugins(), config={"shared_memory": config})
    with owner_client(host, "http://127.0.0.1", gateway_operator_token=gateway.operator) as client:
        view = client.get("/api/shared").json()
        refused = client.post(
            "/api/shared/cleanup", json={"older_than": "30d"}, headers={"X-Ego-Csrf": csrf_of(client)}
        )
    assert view["mode"] == "local"
    assert view["operator"] is False
    assert view["agent_id"] == "claude"
    assert [e["event_id"] for e in view["events_by_scope"]["agent:claude"]] == [gateway.events["own"]]
    assert not leaked(json.dumps(view, ensure_ascii=False))
    assert refused.status_code == 409
    assert gateway.store.get(gateway.events["old"]) is not None
