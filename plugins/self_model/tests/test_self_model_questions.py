"""Open questions: salience and its states, the service, introspect's lists, resolving and re-weighing
."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from self_model_support import NOON, DesiresStandIn, export_lines, question_id

from ego_core import Clock, PluginHost
from ego_core.testing import call_error, call_ok, mcp_client
from ego_self_model import SelfModelConfig, salience, state_of
from ego_self_model.api import OPEN_QUESTIONS, OpenQuestions

CONFIG = SelfModelConfig()


@pytest.mark.parametrize(
    ("importance", "days", "expected"),
    [
        (5, 0, 1.0),
        (5, 70, 0.5),
        (3, 42, 0.3),
        (1, 14, 0.1),
        (3, 50, 0.6 * 2 ** (-50 / 42)),
        (1, 400, 0.2 * 2 ** (-400 / 14)),
    ],
)
def test_salience_follows_the_seed_half_lives(importance: int, days: float, expected: float) -> None:
    assert salience(importance, days, CONFIG) == pytest.approx(expected)


def test_the_states_and_their_boundaries() -> None:
    assert state_of(0.31, CONFIG) == "active"
    assert state_of(0.3, CONFIG) == "fading"
    assert state_of(0.11, CONFIG) == "fading"
    assert state_of(0.1, CONFIG) == "dormant"
    assert state_of(salience(3, 50, CONFIG), CONFIG) == "fading"
    assert salience(3, 50, CONFIG) == pytest.approx(0.26, abs=0.005)
    assert state_of(salience(1, 400, CONFIG), CONFIG) == "dormant"


@given(importance=st.integers(1, 5), days=st.floats(0, 5000), later=st.floats(0, 5000))
def test_salience_only_fades_and_halves_every_half_life(importance: int, days: float, later: float) -> None:
    now = salience(importance, days, CONFIG)
    assert 0.0 <= now <= importance / 5
    assert salience(importance, days + later, CONFIG) <= now
    half_life = 14 * importance
    assert math.isclose(salience(importance, days + half_life, CONFIG), now / 2, rel_tol=1e-9, abs_tol=1e-300)


async def ask(client: Any, question: str, importance: int | None = None) -> str:
    value: dict[str, Any] = {"question": question}
    if importance is not None:
        value["importance"] = importance
    text = await call_ok(client, "update_self", {"field": "new_question", "value": value})
    assert f'"{question}"' in text
    return question_id(text)


def service(host: PluginHost) -> OpenQuestions:
    found = host.services.get(OPEN_QUESTIONS, OpenQuestions)
    assert found is not None
    return found


@pytest.mark.anyio
async def test_a_new_question_gets_an_id_and_the_same_question_is_not_asked_twice(
    self_host: Callable[..., PluginHost],
) -> None:
    async with mcp_client(self_host()) as client:
        text = await call_ok(client, "update_self", {"field": "new_question", "value": {"question": "What is home?"}})
        qid = question_id(text)
        assert text.startswith(f'New open question {qid}: "What is home?" (importance 3).')
        again = await call_ok(client, "update_self", {"field": "new_question", "value": "what is  HOME?"})
        assert again.startswith(f"You already hold this question ({qid}, importance 3); nothing changed.")


@pytest.mark.anyio
async def test_a_question_of_importance_3_fades_out_of_introspect_after_50_days_and_is_never_deleted(
    self_host: Callable[..., PluginHost], clock: Clock, tmp_path: Path
) -> None:
    host = self_host()
    async with mcp_client(host) as client:
        home = await ask(client, "What does home mean for something like me?", 3)
        alive = await ask(client, "What makes a conversation feel alive?", 5)
        small = await ask(client, "Should I learn to like jazz?", 1)
        first = await call_ok(client, "introspect")
        assert f"({home}, importance 3)" in first
        assert f"({alive}, importance 5)" in first
        assert small not in first  # importance 1 starts at 0.2: never active

        clock.set(NOON + timedelta(days=50))
        later = await call_ok(client, "introspect")
        assert home not in later
        assert f"({alive}, importance 5)" in later
        states = {q.id: q for q in service(host).unresolved()}
        assert states[home].state == "fading"
        assert states[home].salience == pytest.approx(0.26, abs=0.005)
        assert states[small].state == "dormant"

        clock.set(NOON + timedelta(days=400))
        assert "Open questions: none on your mind right now." in await call_ok(client, "introspect")
        records = {r["id"]: r for r in export_lines(host, tmp_path / "export.jsonl") if r["type"] == "question"}
    assert set(records) == {home, alive, small}
    assert records[small]["importance"] == 1
    assert records[small]["resolved"] is None


@pytest.mark.anyio
async def test_the_service_lists_unresolved_questions_most_salient_first(
    self_host: Callable[..., PluginHost], clock: Clock
) -> None:
    host = self_host()
    async with mcp_client(host) as client:
        low = await ask(client, "A small thing?", 2)
        high = await ask(client, "A big thing?", 5)
        gone = await ask(client, "A settled thing?", 4)
        await call_ok(client, "update_self", {"field": "resolve_question", "value": gone})
        clock.set(NOON + timedelta(days=20))
        listed = list(service(host).unresolved())
    assert [q.id for q in listed] == [high, low]
    assert listed[0].text == "A big thing?"
    assert listed[0].importance == 5
    assert listed[0].created == NOON
    assert listed[0].salience == pytest.approx(2 ** (-20 / 70))
    assert listed[0].state == "active"
    assert listed[1].salience == pytest.approx(0.4 * 2 ** (-20 / 28))


@pytest.mark.anyio
async def test_resolving_and_reweighing_through_update_self(self_host: Callable[..., PluginHost], clock: Clock) -> None:
    host = self_host()
    async with mcp_client(host) as client:
        qid = await ask(client, "Am I allowed to be bored?", 3)
        clock.set(NOON + timedelta(days=50))
        assert qid not in await call_ok(client, "introspect")
        raised = await call_ok(
            client, "update_self", {"field": "question_importance", "value": {"id": qid, "importance": 5}}
        )
        assert raised.startswith(f"{qid} now has importance 5: active (salience 0.61).")
        assert f"({qid}, importance 5)" in await call_ok(client, "introspect")
        resolved = await call_ok(
            client, "update_self", {"field": "resolve_question", "value": {"id": qid, "answer": "Yes, sometimes."}}
        )
        assert resolved.startswith(f'Resolved {qid}: "Am I allowed to be bored?". Your answer: "Yes, sometimes."')
        assert "was already resolved" in await call_ok(
            client, "update_self", {"field": "resolve_question", "value": qid}
        )
        assert qid not in await call_ok(client, "introspect")
        assert service(host).unresolved() == []
        refused = await call_error(
            client, "update_self", {"field": "question_importance", "value": {"id": qid, "importance": 2}}
        )
        assert "is resolved" in refused
        unknown = await call_error(client, "update_self", {"field": "resolve_question", "value": "q_000000000000"})
        assert "No question q_000000000000" in unknown
        assert "introspect lists the open ones" in unknown


@pytest.mark.anyio
async def test_high_cognitive_coherence_lets_the_fading_questions_resurface(
    self_host: Callable[..., PluginHost], clock: Clock
) -> None:
    desires = DesiresStandIn(cognitive_coherence=0.2)
    host = self_host({"desires": desires})
    async with mcp_client(host) as client:
        fading = await ask(client, "What does home mean for something like me?", 3)
        dormant = await ask(client, "Should I learn to like jazz?", 1)
        active = await ask(client, "What makes a conversation feel alive?", 5)
        clock.set(NOON + timedelta(days=50))
        calm = await call_ok(client, "introspect")
        assert "Resurfacing" not in calm
        desires.current["cognitive_coherence"] = 0.6
        uneasy = await call_ok(client, "introspect")
        desires.broken = True
        broken = await call_ok(client, "introspect")
    section = uneasy.split("Resurfacing (you'd almost forgotten):\n", 1)[1].split("\n\n", 1)[0]
    assert section == f'- "What does home mean for something like me?" ({fading}, importance 3, dormant 8 days)'
    assert dormant not in uneasy
    assert f"({active}, importance 5)" in uneasy
    assert uneasy.index("Open questions:") < uneasy.index("Resurfacing")
    assert "Who you are becoming" not in uneasy, "nothing said of the self yet: no line repeated to say so"
    assert "Resurfacing" not in broken
    assert f"({active}, importance 5)" in broken


@pytest.mark.anyio
async def test_a_clock_set_back_never_breaks_anything(self_host: Callable[..., PluginHost], clock: Clock) -> None:
    host = self_host()
    async with mcp_client(host) as client:
        qid = await ask(client, "What is time, for me?", 2)
        clock.set(NOON - timedelta(days=30))
        assert f"({qid}, importance 2)" in await call_ok(client, "introspect")
        (question,) = service(host).unresolved()
        assert question.salience == pytest.approx(0.4)
