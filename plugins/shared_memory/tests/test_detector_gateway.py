"""Detection never holds up the gateway (an audit found a ReDoS): over real HTTP, /v1/health is answered while an
append's content is being checked, and a check that overruns its budget is a 503 JSON answer, not a hang. The
agent tool and the janitor check the same way, off any event loop.

Japanese too (an audit stored 20 of 32 Japanese secrets and personal data): every Japanese form of the case table
(kanji and full-width numerals, Japanese separators, spelt-out e-mail signs, My Numbers, postal codes without 〒,
buildings after a block number, passwords after パスは) is refused over HTTP and masked by the janitor's scan
when it is already stored; harmless Japanese numbers (ordinals, dates, prices, counts, chapters) are stored."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import httpx
import pytest
from sensitive_cases import JAPANESE_CASES, JAPANESE_STORED, Case
from shared_support import ThreadGateway, event

from ego_shared_memory import detector
from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.detector import Finding, find_sensitive
from ego_shared_memory.events import EventDraft, Source
from ego_shared_memory.gateway import build_app
from ego_shared_memory.janitor import scan
from ego_shared_memory.store import EventFilter, SqlStore

APPEND = "/v1/memory/append"
MARK = "slow-to-check-marker"


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class SlowRule:
    """A detector rule that holds any text with MARK until released (or until ``hold`` seconds pass)."""

    def __init__(self, hold: float = 30.0) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.hold = hold

    def __call__(self, text: str) -> Iterator[Finding]:
        if MARK in text:
            self.entered.set()
            self.release.wait(self.hold)
        yield from ()


@pytest.fixture
def slow_rule(monkeypatch: pytest.MonkeyPatch) -> Iterator[SlowRule]:
    rule = SlowRule()
    monkeypatch.setattr(detector, "RULES", (*detector.RULES, rule))
    try:
        yield rule
    finally:
        rule.release.set()


def serve(store: SqlStore, settings: GatewaySettings, *, budget: float) -> ThreadGateway:
    running = ThreadGateway(store, settings)
    running.server.config.app = build_app(store, settings, detection_budget_seconds=budget)
    return running.start()


def test_health_is_answered_while_an_append_is_being_checked(
    store: SqlStore, settings: GatewaySettings, token_for: Callable[..., str], slow_rule: SlowRule
) -> None:
    gateway = serve(store, settings, budget=60.0)
    answers: list[httpx.Response] = []
    try:
        with httpx.Client(base_url=gateway.url, timeout=60) as client:
            headers = auth(token_for("claude"))
            sender = threading.Thread(
                target=lambda: answers.append(
                    client.post(APPEND, json=event(content_md=f"notes {MARK}"), headers=headers)
                )
            )
            sender.start()
            assert slow_rule.entered.wait(30), "the append never reached the detector"
            with httpx.Client(base_url=gateway.url, timeout=10) as probe:
                health = probe.get("/v1/health")
                assert health.status_code == 200
                snapshot = probe.get("/v1/memory/snapshot", headers=headers)
                assert snapshot.status_code == 200
            assert not answers, "the append was answered before its check finished"
            slow_rule.release.set()
            sender.join(30)
    finally:
        gateway.stop()
    assert [a.status_code for a in answers] == [201]


def test_a_check_past_its_budget_is_a_503_json_answer_and_nothing_is_stored(
    store: SqlStore, settings: GatewaySettings, token_for: Callable[..., str], slow_rule: SlowRule
) -> None:
    slow_rule.hold = 1.0  # past the budget below; the detector stops at the next rule
    gateway = serve(store, settings, budget=0.2)
    try:
        with httpx.Client(base_url=gateway.url, timeout=30) as client:
            headers = auth(token_for("claude"))
            refused = client.post(APPEND, json=event(content_md=f"notes {MARK}"), headers=headers)
            assert refused.status_code == 503
            body = refused.json()
            assert body["error"] == "busy"
            assert MARK not in body["message"]
            assert store.events_after(0, 10) == []
            accepted = client.post(APPEND, json=event(), headers=headers)
            assert accepted.status_code == 201
    finally:
        gateway.stop()


def test_the_reported_append_is_answered_at_once_and_health_meanwhile(
    store: SqlStore, settings: GatewaySettings, token_for: Callable[..., str]
) -> None:
    """The audit's append (``"pwd." * 1000``) took 111.7 s, and every health probe timed out meanwhile."""
    gateway = serve(store, settings, budget=10.0)
    answers: list[int] = []
    try:
        with httpx.Client(base_url=gateway.url, timeout=30) as client:
            headers = auth(token_for("claude"))
            bodies = [
                event(dedupe_key="config:pwd", content_md="pwd." * 1000),
                event(dedupe_key="config:tokens", content_md="token_" * 600),
                event(dedupe_key="config:assign", content_md="a:" * 2000),
                event(dedupe_key="config:pwd2", content_md="pwd." * 999 + "pwd=hunter22"),
            ]
            sender = threading.Thread(
                target=lambda: answers.extend(client.post(APPEND, json=b, headers=headers).status_code for b in bodies)
            )
            sender.start()
            with httpx.Client(base_url=gateway.url, timeout=10) as probe:
                for _ in range(5):
                    assert probe.get("/v1/health").status_code == 200
            sender.join(60)
    finally:
        gateway.stop()
    assert answers == [201, 201, 201, 422]


def test_the_janitor_masks_an_adversarial_event_without_stalling(store: SqlStore) -> None:
    now = datetime.now(UTC)
    content = "pwd." * 16_000 + "pwd=hunter22"
    draft = EventDraft(
        agent_id="claude",
        run_id="run_test",
        scope="global",
        kind="config",
        dedupe_key="config:pwd",
        confidence="high",
        content_md=content,
        source=Source("cli", None, None),
        supersedes=None,
        ttl_days=0,
    )
    store.append(draft, now)
    report = scan(store, now, full=True)
    assert [item["kinds"] for item in report["redacted"]] == [["password"]]
    assert find_sensitive(store.events_after(0, 10)[0].content_md) == []


# --------------------------------------------------------------------------------------------------
# Japanese secrets and personal data


@pytest.mark.parametrize("case", JAPANESE_CASES, ids=lambda case: f"{case.ident}-{case.kind}")
def test_a_japanese_form_is_refused_over_http_and_never_echoed(
    store: SqlStore, gateway: ThreadGateway, token_for: Callable[..., str], case: Case
) -> None:
    with httpx.Client(base_url=gateway.url, timeout=30) as client:
        refused = client.post(
            APPEND, json=event(dedupe_key=f"case:{case.ident}", content_md=case.text), headers=auth(token_for("claude"))
        )
    assert refused.status_code == 422, (case.text, refused.text)
    body = refused.json()
    assert body["field"] == "content_md"
    assert case.kind in body["kinds"]
    assert not any(needle in refused.text for needle in case.needles)
    assert store.event_count() == 0


def test_harmless_japanese_numbers_are_stored_over_http(
    store: SqlStore, gateway: ThreadGateway, token_for: Callable[..., str]
) -> None:
    headers = auth(token_for("claude"))
    with httpx.Client(base_url=gateway.url, timeout=30) as client:
        answers = {
            text: client.post(APPEND, json=event(dedupe_key=f"note:{i}", content_md=text), headers=headers).status_code
            for i, text in enumerate(JAPANESE_STORED)
        }
    assert {text: code for text, code in answers.items() if code != 201} == {}
    stored = {e.content_md for e in store.list_events(EventFilter(include_deprecated=True, limit=1000))}
    assert stored == set(JAPANESE_STORED)


def test_the_janitor_masks_japanese_forms_stored_before_the_filter_read_them(store: SqlStore) -> None:
    now = datetime.now(UTC)
    for case in JAPANESE_CASES:
        store.append(
            EventDraft(
                agent_id="claude",
                run_id="run_test",
                scope="global",
                kind="fact",
                dedupe_key=f"case:{case.ident}",
                confidence="high",
                content_md=case.text,
                source=Source("cli", None, None),
                supersedes=None,
                ttl_days=0,
            ),
            now,
        )
    report = scan(store, now, full=True)
    assert len(report["redacted"]) == len(JAPANESE_CASES)
    kept = "\n".join(e.content_md for e in store.list_events(EventFilter(include_deprecated=True, limit=1000)))
    leaks = [(case.ident, needle) for case in JAPANESE_CASES for needle in case.needles if needle in kept]
    assert leaks == []
    assert all(find_sensitive(e.content_md) == [] for e in store.events_after(0, 1000))
