"""Modulation with stand-in services: negative and
positive memories, surprise, topics, time of day and load; every factor degrades to nothing without its source."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from datetime import timedelta

import pytest
from desires_support import (
    AFTERNOON,
    LATE_NIGHT,
    NINE,
    BrokenBody,
    DesireHostFactory,
    FixedBody,
    FixedMemories,
    FixedQuestions,
    memory,
    question,
)

from ego_core import Memory, PluginContext, hookimpl
from ego_desires import DesiresConfig, Inputs, modulate
from ego_desires.api import DESIRE_LEVELS, DesireLevels
from ego_desires.config import PHASES, TIME_PHASE
from ego_self_model.api import OpenQuestion

INTROSPECTIVE = ("cognitive_coherence", "pattern_seeking")


def sad(n: int, hours_ago: float = 1.0) -> Memory:
    return memory(n, AFTERNOON - timedelta(hours=hours_ago), emotion="sad", valence=-0.7, arousal=0.3, intensity=0.6)


def happy(n: int, hours_ago: float = 1.0) -> Memory:
    return memory(n, AFTERNOON - timedelta(hours=hours_ago), emotion="happy", valence=0.8, arousal=0.6, intensity=0.6)


def test_negative_memories_raise_social_thirst_positive_ones_curiosity(desire_host: DesireHostFactory) -> None:
    negative = desire_host(name="negative", others={"memory": FixedMemories([sad(n) for n in range(4)])})
    positive = desire_host(name="positive", others={"memory": FixedMemories([happy(n) for n in range(4)])})
    neg, pos = negative.levels(), positive.levels()
    assert neg["social_thirst"] > pos["social_thirst"]
    assert neg["cognitive_coherence"] > pos["cognitive_coherence"]
    assert pos["curiosity"] > neg["curiosity"]
    assert pos["expression"] > neg["expression"]


def test_without_memories_nothing_changes(desire_host: DesireHostFactory) -> None:
    alone = desire_host(name="alone")
    empty = desire_host(name="empty", others={"memory": FixedMemories([])})
    assert alone.levels() == empty.levels() == dict.fromkeys(NINE, 0.5)


def test_older_memories_weigh_less_and_the_window_ends_them(desire_host: DesireHostFactory) -> None:
    fresh = desire_host(name="fresh", others={"memory": FixedMemories([sad(n, 0.5) for n in range(3)])})
    older = desire_host(name="older", others={"memory": FixedMemories([sad(n, 12) for n in range(3)])})
    gone = desire_host(name="gone", others={"memory": FixedMemories([sad(n, 25) for n in range(3)])})
    levels = [dh.levels()["social_thirst"] for dh in (fresh, older, gone)]
    assert levels[0] > levels[1] > levels[2] == 0.5


def test_a_surprise_raises_curiosity_sharply_and_fades(desire_host: DesireHostFactory) -> None:
    calm = [memory(n, AFTERNOON - timedelta(hours=3), arousal=0.3) for n in range(3)]
    surprised = memory(9, AFTERNOON - timedelta(minutes=10), emotion="surprised", valence=0.0, arousal=0.3)
    aroused = memory(9, AFTERNOON - timedelta(minutes=10), emotion="anxious", valence=0.0, arousal=0.9)
    base = desire_host(name="base", others={"memory": FixedMemories(calm)}).levels()["curiosity"]
    by_label = desire_host(name="label", others={"memory": FixedMemories([*calm, surprised])})
    by_arousal = desire_host(name="arousal", others={"memory": FixedMemories([*calm, aroused])})
    assert by_label.levels()["curiosity"] - base > 0.25
    assert by_arousal.levels()["curiosity"] - base > 0.25
    surprise = by_label.plugin.snapshot().modulation.factors["surprise"]["curiosity"]
    by_label.clock.set(AFTERNOON + timedelta(hours=6))
    faded = by_label.plugin.snapshot().modulation.factors["surprise"]["curiosity"]
    assert surprise > 0.25
    assert faded < 0.05  # half-life 2 h


def test_arousal_like_the_others_is_no_surprise() -> None:
    config = DesiresConfig()
    busy = [memory(n, AFTERNOON - timedelta(hours=1), arousal=0.85) for n in range(4)]
    assert modulate(Inputs(memories=tuple(busy)), AFTERNOON, config).factors["surprise"] == {}


def test_a_topic_raises_its_related_desires(desire_host: DesireHostFactory) -> None:
    musing = [memory(n, AFTERNOON - timedelta(hours=1), category="philosophical") for n in range(3)]
    daily = [memory(n, AFTERNOON - timedelta(hours=1), category="daily") for n in range(3)]
    philosophical = desire_host(name="phil", others={"memory": FixedMemories(musing)}).levels()
    plain = desire_host(name="daily", others={"memory": FixedMemories(daily)}).levels()
    assert philosophical["cognitive_coherence"] > plain["cognitive_coherence"] == 0.5
    assert philosophical["curiosity"] > plain["curiosity"]
    assert philosophical["social_thirst"] == plain["social_thirst"]


def test_private_memories_colour_desires_but_are_never_shown(desire_host: DesireHostFactory) -> None:
    secret = memory(1, AFTERNOON - timedelta(hours=1), emotion="sad", valence=-0.9, intensity=0.9, private=True)
    dh = desire_host(others={"memory": FixedMemories([secret])})
    snap = dh.plugin.snapshot()
    assert snap.reading("social_thirst").level > 0.5
    response = dh.plugin.feel_desires({}, dh.host.context("desires"))
    assert "memory number" not in response.data


def test_late_night_raises_the_introspective_desires(desire_host: DesireHostFactory) -> None:
    night = desire_host(name="night", at=LATE_NIGHT, others={"body": FixedBody("late_night")})
    noon = desire_host(name="noon", at=LATE_NIGHT, others={"body": FixedBody("afternoon")})
    at_night, at_noon = night.levels(), noon.levels()
    for name in INTROSPECTIVE:
        assert at_night[name] > at_noon[name]
    assert at_night["cognitive_coherence"] == pytest.approx(0.5 + TIME_PHASE["late_night"]["cognitive_coherence"])


def test_high_load_lowers_expression(desire_host: DesireHostFactory) -> None:
    busy = desire_host(name="busy", others={"body": FixedBody(system_load="high")}).levels()
    calm = desire_host(name="calm", others={"body": FixedBody(system_load="low")}).levels()
    assert busy["expression"] < calm["expression"]
    full = desire_host(name="full", others={"body": FixedBody(memory_pressure="high")}).levels()
    assert full["information_hunger"] < calm["information_hunger"]


def test_unknown_body_values_change_nothing(desire_host: DesireHostFactory) -> None:
    odd = desire_host(others={"body": FixedBody("teatime", "unknown", "unknown")})
    assert odd.levels() == dict.fromkeys(NINE, 0.5)


def test_a_failing_service_is_left_out_and_reported(
    desire_host: DesireHostFactory, caplog: pytest.LogCaptureFixture
) -> None:
    dh = desire_host(others={"body": BrokenBody()})
    with caplog.at_level(logging.WARNING):
        assert dh.levels() == dict.fromkeys(NINE, 0.5)
    assert "body state unavailable (OSError)" in caplog.text


def test_the_body_tables_are_configurable(desire_host: DesireHostFactory) -> None:
    dh = desire_host(
        others={"body": FixedBody("morning", system_load="high")},
        desires={"body": {"time_phase": {"morning": {"recognition": 0.2}}, "system_load": {"high": {}}}},
    )
    levels = dh.levels()
    assert levels["recognition"] == pytest.approx(0.7)
    assert levels["information_hunger"] == 0.5  # the morning entry was replaced, not merged
    assert levels["expression"] == 0.5  # high load switched off


def test_every_phase_has_an_entry() -> None:
    assert set(TIME_PHASE) == set(PHASES)


def test_modulation_is_additive_and_only_approaches_one(desire_host: DesireHostFactory) -> None:
    """Above soft_from (0.8) what modulation adds is compressed: stacked pushes approach 1 without pinning it;
    soft_from = 1 gives the plain clamp."""
    crowd = [sad(n, 0.1) for n in range(30)]
    table = {"memories": {"negative_cognitive_coherence": 1.0}, "initial_position": 3.0}
    dh = desire_host(
        at=LATE_NIGHT, others={"memory": FixedMemories(crowd), "body": FixedBody("late_night")}, desires=table
    )
    coherence = dh.plugin.snapshot().reading("cognitive_coherence")
    raw = coherence.base + coherence.modulation
    assert raw > 1.0
    assert coherence.level == pytest.approx(0.8 + 0.2 * (1 - math.exp(-(raw - 0.8) / 0.2)))
    assert coherence.base < coherence.level < 1.0
    clamped = desire_host(
        name="clamped",
        at=LATE_NIGHT,
        others={"memory": FixedMemories(crowd), "body": FixedBody("late_night")},
        desires={**table, "soft_from": 1.0},
    )
    assert clamped.plugin.snapshot().reading("cognitive_coherence").level == 1.0


class CuriousQuestions(FixedQuestions):
    """A self-model whose questions read the desire levels (as resurfacing does)."""

    def __init__(self) -> None:
        super().__init__([question(1)])
        self.seen: list[float] = []
        self.ctx: PluginContext | None = None

    def unresolved(self) -> Sequence[OpenQuestion]:
        assert self.ctx is not None
        service = self.ctx.services.get(DESIRE_LEVELS, DesireLevels)
        assert service is not None
        self.seen.append(service.levels()["cognitive_coherence"])
        return super().unresolved()

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        self.ctx = ctx
        super().on_startup(ctx)


def test_a_self_model_that_reads_the_levels_while_asked_for_questions_does_not_loop(
    desire_host: DesireHostFactory,
) -> None:
    questions = CuriousQuestions()
    dh = desire_host(others={"questions": questions})
    assert dh.levels()["cognitive_coherence"] == pytest.approx(0.54)
    assert questions.seen == [0.5]  # the inner reading left the questions out
