"""Deletion takes two steps on both backends: a cleanup plan stored in the store (ids, counts per scope, an
expiry), then confirming that plan's id, which deletes exactly its events, once, audited. Through the store,
the gateway and the CLI, which see the same plans."""

from __future__ import annotations

import argparse
import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from shared_support import OpenApi, ThreadGateway, event

from ego_core.testing import HostFactory
from ego_shared_memory import SharedMemoryPlugin
from ego_shared_memory.events import parse_event
from ego_shared_memory.janitor import PLAN_TTL, confirm_cleanup, find_plan, propose_cleanup
from ego_shared_memory.store import CleanupPlanError, SqlStore, open_store

NOW = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
OLD = NOW - timedelta(days=45)


def put(store: SqlStore, agent: str = "claude", when: datetime = OLD, **fields: Any) -> str:
    draft, _warnings = parse_event(event(**fields), agent_id=agent, max_chars=4000)
    return store.append(draft, when).event.event_id


def propose(store: SqlStore, *scopes: str, now: datetime = NOW, **options: Any) -> Any:
    return propose_cleanup(
        store,
        now,
        older_than=options.pop("older_than", timedelta(days=30)),
        scope_patterns=scopes,
        expired_only=options.pop("expired_only", False),
        actor="test",
        **options,
    )


def test_a_plan_deletes_nothing_and_confirming_it_deletes_exactly_its_events(store: SqlStore) -> None:
    first = put(store, content_md="Old one.", dedupe_key="fact:a")
    second = put(store, content_md="Old two.", dedupe_key="fact:b")
    plan = propose(store)
    assert set(plan.event_ids) == {first, second}
    assert plan.counts == {"global": 2}
    assert plan.state(NOW) == "open"
    assert plan.expires_at == NOW + PLAN_TTL
    assert store.event_count() == 2
    # appended after the plan, and matching its criteria: not in the plan, never deleted by it
    later = put(store, content_md="Old three, appended after the plan.", dedupe_key="fact:c")
    done = confirm_cleanup(store, plan.plan_id, actor="ops", now=NOW + timedelta(minutes=5))
    assert set(done.deleted) == {first, second}
    assert done.already_gone == ()
    assert done.plan.state(NOW) == "confirmed"
    assert (done.plan.confirmed_by, done.plan.deleted) == ("ops", 2)
    assert store.get(first) is None
    assert store.get(second) is None
    assert store.get(later) is not None
    records = store.audit()
    deletions = [r for r in records if r.action == "delete"]
    assert {r.event_id for r in deletions} == {first, second}
    assert all(f"plan={plan.plan_id}" in r.detail and r.actor == "ops" for r in deletions)
    assert [r.action for r in records if r.action.startswith("cleanup_")] == ["cleanup_confirm", "cleanup_plan"]


def test_a_plan_runs_once_and_an_expired_or_unknown_one_deletes_nothing(store: SqlStore) -> None:
    kept = put(store, content_md="Old.")
    expired = propose(store)
    with pytest.raises(CleanupPlanError) as late:
        confirm_cleanup(store, expired.plan_id, actor="ops", now=NOW + PLAN_TTL)
    assert late.value.problem == "expired"
    assert find_plan(store, expired.plan_id).state(NOW + PLAN_TTL) == "expired"
    for unknown in ("plan_" + "0" * 24, "plan_nope", "'; DROP TABLE sm_events; --"):
        with pytest.raises(CleanupPlanError) as missing:
            confirm_cleanup(store, unknown, actor="ops", now=NOW)
        assert missing.value.problem == "unknown"
    assert store.get(kept) is not None
    plan = propose(store)
    assert len(confirm_cleanup(store, plan.plan_id, actor="ops", now=NOW).deleted) == 1
    with pytest.raises(CleanupPlanError) as again:
        confirm_cleanup(store, plan.plan_id, actor="ops", now=NOW)
    assert again.value.problem == "confirmed"


def test_private_scopes_are_reached_only_when_named_and_counted_apart(store: SqlStore) -> None:
    shared = put(store, content_md="Old global.")
    project = put(store, scope="project:x", content_md="Old project.")
    claude = put(store, scope="agent:claude", content_md="Old private note.")
    gemini = put(store, "gemini", scope="agent:gemini", content_md="Old private note.")
    for patterns in ((), ("*",)):
        plan = propose(store, *patterns)
        assert set(plan.event_ids) == {shared, project}
        assert plan.counts == {"global": 1, "project:x": 1}
    only_claude = propose(store, "agent:claude")
    assert (only_claude.event_ids, only_claude.counts) == ((claude,), {"agent:claude": 1})
    everything = propose(store, "*", "agent:*")
    assert set(everything.event_ids) == {shared, project, claude, gemini}
    assert everything.counts == {"agent:claude": 1, "agent:gemini": 1, "global": 1, "project:x": 1}
    expired = propose(store, older_than=None, expired_only=True)
    assert expired.event_ids == ()


def test_the_plan_is_in_the_store_so_another_process_confirms_it(store_url: str) -> None:
    proposer, confirmer = open_store(store_url), open_store(store_url)
    try:
        newer = put(proposer, when=OLD + timedelta(days=1), dedupe_key="fact:b", content_md="Old, the later one.")
        old = put(proposer, content_md="Old.")
        plan = propose(proposer)
        assert plan.event_ids == (newer, old)  # in the order they were appended
        proposer.close()
        seen = find_plan(confirmer, plan.plan_id)
        assert (seen.event_ids, seen.counts, seen.expires_at) == (plan.event_ids, plan.counts, plan.expires_at)
        assert seen.criteria == {"older_than": "30d", "created_before": "2026-10-25T09:00:00.000000Z"} | {
            "expired": False,
            "scopes": ["global", "project:*"],
        }
        assert confirm_cleanup(confirmer, plan.plan_id, actor="ops", now=NOW).deleted == (newer, old)
    finally:
        proposer.close()
        confirmer.close()


def test_two_confirmations_at_once_delete_once(store_url: str) -> None:
    setup = open_store(store_url)
    try:
        for index in range(20):
            put(setup, dedupe_key=f"fact:k{index}", content_md=f"Old {index}.")
        plan = propose(setup)
    finally:
        setup.close()
    results: list[object] = []
    lock = threading.Lock()
    start = threading.Barrier(2)

    def confirm() -> None:
        own = open_store(store_url)
        try:
            start.wait()
            try:
                outcome: object = len(confirm_cleanup(own, plan.plan_id, actor="ops", now=NOW).deleted)
            except CleanupPlanError as exc:
                outcome = exc.problem
            with lock:
                results.append(outcome)
        finally:
            own.close()

    threads = [threading.Thread(target=confirm) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(results, key=str) == [20, "confirmed"]


def test_a_plan_holds_at_most_its_limit_and_says_so(store: SqlStore) -> None:
    for index in range(3):
        put(store, dedupe_key=f"fact:k{index}", content_md=f"Old {index}.")
    plan = propose(store, limit=2)
    assert len(plan.event_ids) == 2
    assert plan.truncated
    assert not propose(store).truncated


# -- the gateway -----------------------------------------------------------------------------------


def test_the_gateway_proposes_then_confirms_and_approve_is_refused(
    gateway: ThreadGateway, store: SqlStore, token_for: Callable[..., str]
) -> None:
    openapi = OpenApi()
    admin = {"Authorization": f"Bearer {token_for('ops', admin=True)}"}
    agent = {"Authorization": f"Bearer {token_for('claude')}"}
    old = put(store, content_md="Old.", when=datetime.now(UTC) - timedelta(days=2))
    private = put(store, scope="agent:claude", content_md="Old private.", when=datetime.now(UTC) - timedelta(days=2))
    with httpx.Client(base_url=gateway.url) as client:
        # the audit's request: one boolean deleted everything
        refused = client.post("/v1/janitor/cleanup", json={"older_than": "0d", "approve": True}, headers=admin)
        assert refused.status_code == 422
        assert openapi.check(refused, "/v1/janitor/cleanup", "post")["field"] == "approve"
        assert store.event_count() == 2
        forbidden = client.post("/v1/janitor/cleanup", json={"older_than": "0d"}, headers=agent)
        assert forbidden.status_code == 403
        proposed = client.post("/v1/janitor/cleanup", json={"older_than": "1d"}, headers=admin)
        assert proposed.status_code == 201
        plan = openapi.check(proposed, "/v1/janitor/cleanup", "post")
        assert (plan["event_ids"], plan["counts"], plan["state"], plan["total"]) == ([old], {"global": 1}, "open", 1)
        assert store.event_count() == 2
        path = f"/v1/janitor/cleanup/{plan['plan_id']}"
        shown = openapi.check(client.get(path, headers=admin), "/v1/janitor/cleanup/{plan_id}", "get")
        assert shown["event_ids"] == [old]
        assert client.post(path + "/confirm", headers=agent).status_code == 403
        done = client.post(path + "/confirm", headers=admin)
        assert done.status_code == 200
        body = openapi.check(done, "/v1/janitor/cleanup/{plan_id}/confirm", "post")
        assert (body["deleted_event_ids"], body["state"], body["deleted"]) == ([old], "confirmed", 1)
        assert store.get(old) is None
        assert store.get(private) is not None
        again = client.post(path + "/confirm", headers=admin)
        assert again.status_code == 409
        assert openapi.check(again, "/v1/janitor/cleanup/{plan_id}/confirm", "post")["error"] == "plan_confirmed"
        unknown = client.post(f"/v1/janitor/cleanup/plan_{'a' * 24}/confirm", headers=admin)
        assert unknown.status_code == 404
        openapi.check(unknown, "/v1/janitor/cleanup/{plan_id}/confirm", "post")
        assert client.get(f"/v1/janitor/cleanup/plan_{'a' * 24}", headers=admin).status_code == 404
        stale = store.create_cleanup_plan(
            [private],
            criteria={"older_than": "1d"},
            truncated=False,
            actor="test",
            now=datetime.now(UTC) - timedelta(hours=2),
            expires_at=datetime.now(UTC) - timedelta(hours=1),
        )
        gone = client.post(f"/v1/janitor/cleanup/{stale.plan_id}/confirm", headers=admin)
        assert gone.status_code == 410
        assert openapi.check(gone, "/v1/janitor/cleanup/{plan_id}/confirm", "post")["error"] == "plan_expired"
        assert store.get(private) is not None
        audit = openapi.check(client.get("/v1/janitor/audit", headers=admin), "/v1/janitor/audit", "get")
        actions = [r["action"] for r in audit["audit"]]
        assert actions[:4] == ["cleanup_plan", "cleanup_confirm", "delete", "cleanup_plan"]  # the stale plan first


# -- the CLI ---------------------------------------------------------------------------------------


@pytest.fixture
def ego(make_host: HostFactory, capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    host = make_host({"shared_memory": SharedMemoryPlugin()})
    command = next(c for _plugin, c in host.commands() if (c.group, c.name) == ("shared", "cleanup"))

    def run(*args: str) -> tuple[int, str, str]:
        parser = argparse.ArgumentParser(prog="ego shared cleanup", allow_abbrev=False)
        command.configure(parser)
        code = command.run(parser.parse_args(list(args)), host)
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_the_cli_proposes_shows_and_confirms_a_plan_the_gateway_also_sees(
    ego: Callable[..., tuple[int, str, str]],
    store_url: str,
    store: SqlStore,
    gateway: ThreadGateway,
    token_for: Callable[..., str],
) -> None:
    recent = datetime.now(UTC) - timedelta(days=45)
    old = put(store, "gemini", recent, scope="agent:gemini", content_md="Old note.")
    shared = put(store, "gemini", recent, content_md="Old but global.")
    code, out, err = ego("--older-than", "30d", "--scope", "agent:*", "--db", store_url)
    assert code == 0
    assert old in out
    assert len(out.splitlines()) == 1
    assert "agent:gemini: 1" in err
    assert "nothing was deleted" in err
    plan_id = err.split("--confirm ")[1].split()[0]
    assert store.event_count() == 2
    code, out, _err = ego("--show", plan_id, "--json", "--db", store_url)
    assert json.loads(out)["event_ids"] == [old]
    admin = {"Authorization": f"Bearer {token_for('ops', admin=True)}"}
    seen = httpx.get(f"{gateway.url}/v1/janitor/cleanup/{plan_id}", headers=admin)
    assert (seen.status_code, seen.json()["event_ids"], seen.json()["state"]) == (200, [old], "open")
    assert seen.json()["counts"] == {"agent:gemini": 1}
    code, _out, err = ego("--older-than", "30d", "--yes", "--db", store_url)
    assert code == 2
    assert "two steps" in err
    assert store.event_count() == 2
    code, out, _err = ego("--confirm", plan_id, "--db", store_url)
    assert code == 0
    assert "deleted 1 event(s)" in out
    assert store.get(old) is None
    assert store.event_count() == 1
    code, _out, err = ego("--confirm", plan_id, "--db", store_url)
    assert code == 2
    assert "confirmed" in err
    again = httpx.post(f"{gateway.url}/v1/janitor/cleanup/{plan_id}/confirm", headers=admin)
    assert (again.status_code, again.json()["error"]) == (409, "plan_confirmed")
    # and the other way round: proposed through the gateway, confirmed with the CLI
    other = put(store, "gemini", recent, dedupe_key="fact:other", content_md="Another old one.")
    proposed = httpx.post(f"{gateway.url}/v1/janitor/cleanup", json={"older_than": "30d"}, headers=admin).json()
    assert proposed["event_ids"] == [shared, other]
    code, out, _err = ego("--confirm", proposed["plan_id"], "--db", store_url)
    assert code == 0
    assert "deleted 2 event(s)" in out
    assert store.event_count() == 0
    code, _out, err = ego("--confirm", "plan_" + "b" * 24, "--db", store_url)
    assert code == 2
    assert "no cleanup plan" in err
    code, _out, err = ego("--db", store_url)
    assert code == 2
    assert "--older-than AGE and/or --expired" in err
