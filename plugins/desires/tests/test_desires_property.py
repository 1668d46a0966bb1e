"""Property test: for any sequence of satisfy calls, other tools' calls (succeeding,
failing, declined), clock moves (also years back and forth), body states, memories and questions, every level
stays in [0, 1], and two stores given the same sequence have exactly the same levels after every step; reading the
levels changes nothing."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from desires_support import (
    AFTERNOON,
    NINE,
    FixedBody,
    FixedMemories,
    FixedQuestions,
    StandInTools,
    memory,
    question,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ego_core import EMOTIONS, Clock, PluginHost, Settings
from ego_core.testing import HostFactory, ToolRunner
from ego_desires import DesiresPlugin

EMOTION_LABELS = (*EMOTIONS, "nonsense")  # every emotion remember accepts and one it does not
CATEGORIES = ("daily", "philosophical", "technical", "relationship", "dream", "unknown")
PHASES = ("late_night", "early_morning", "morning", "afternoon", "evening", "night", "unknown")
LOADS = ("low", "moderate", "high", "unknown")

satisfy = st.tuples(
    st.just("satisfy"), st.sampled_from([*NINE, "Curiosity", "boredom"]), st.floats(-0.5, 1.5) | st.just(0.7)
)
tool = st.tuples(
    st.just("tool"),
    st.sampled_from([*StandInTools.NAMES, "introspect", "wake_up", "feel_desires"]),
    st.sampled_from([{}, {}, {"fail": True}, {"decline": True}, {"unknown": 1}]),
)
move = st.tuples(
    st.just("move"),
    st.sampled_from([60.0, 3600.0, 6 * 3600.0, 86400.0, -86400.0, 3653 * 86400.0, -3653 * 86400.0])
    | st.floats(-4e8, 4e8),
)
body = st.tuples(st.just("body"), st.sampled_from(PHASES), st.sampled_from(LOADS))
memories = st.tuples(
    st.just("memories"),
    st.lists(
        st.tuples(
            st.floats(-48.0, 48.0),  # hours before now (negative: from the future)
            st.sampled_from(EMOTION_LABELS),
            st.floats(-1.0, 1.0),
            st.floats(0.0, 1.0),
            st.floats(0.0, 1.0),
            st.sampled_from(CATEGORIES),
        ),
        max_size=6,
    ),
)
questions = st.tuples(
    st.just("questions"),
    st.lists(st.tuples(st.sampled_from(["active", "fading", "dormant"]), st.integers(1, 5)), max_size=5),
)
steps = st.lists(st.one_of(satisfy, tool, move, body, memories, questions), min_size=1, max_size=12)

counter = itertools.count()


class World:
    """One store with its stand-ins; the test drives two of them with the same steps."""

    def __init__(self, make_host: HostFactory, data_dir: Path, clock: Clock) -> None:
        self.clock = clock
        self.body = FixedBody()
        self.memories = FixedMemories()
        self.questions = FixedQuestions()
        self.plugin = DesiresPlugin()
        plugins = {
            "desires": self.plugin,
            "tools": StandInTools(),
            "body": self.body,
            "memory": self.memories,
            "questions": self.questions,
        }
        settings = Settings(data_dir=data_dir, timezone="Asia/Tokyo")
        self.host: PluginHost = make_host(plugins, settings=settings, clock=clock)
        self.host.start()
        self.runner = ToolRunner(self.host)

    def apply(self, step: tuple[Any, ...]) -> None:
        kind = step[0]
        now = self.clock.now()
        if kind == "satisfy":
            anyio.run(self.runner.call, "satisfy_desire", {"name": step[1], "quality": step[2]})
        elif kind == "tool":
            anyio.run(self.runner.call, step[1], dict(step[2]))
        elif kind == "move":
            moved = now + timedelta(seconds=step[1])
            self.clock.set(min(max(moved, datetime(1971, 1, 1, tzinfo=UTC)), datetime(9000, 1, 1, tzinfo=UTC)))
        elif kind == "body":
            self.body.state.update(time_phase=step[1], system_load=step[2])
        elif kind == "memories":
            self.memories.memories = [
                memory(
                    n,
                    now - timedelta(hours=hours),
                    emotion=emotion,
                    valence=valence,
                    arousal=arousal,
                    intensity=intensity,
                    category=category,
                )
                for n, (hours, emotion, valence, arousal, intensity, category) in enumerate(step[1])
            ]
        elif kind == "questions":
            self.questions.questions = [question(n, state, importance) for n, (state, importance) in enumerate(step[1])]

    def levels(self) -> dict[str, float]:
        return dict(self.plugin.levels())

    def close(self) -> None:
        while self.host.started:
            self.host.stop()


@pytest.fixture
def worlds(make_host: HostFactory, tmp_path: Path) -> Callable[[], tuple[World, World]]:
    """Two fresh worlds per example (the factory is shared by the examples; each call makes new stores)."""

    def make() -> tuple[World, World]:
        run = next(counter)
        return (
            World(make_host, tmp_path / f"run-{run}-a", Clock(AFTERNOON)),
            World(make_host, tmp_path / f"run-{run}-b", Clock(AFTERNOON)),
        )

    return make


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=steps)
def test_levels_stay_in_range_and_are_deterministic(
    worlds: Callable[[], tuple[World, World]], steps: list[tuple[Any, ...]]
) -> None:
    first, second = worlds()
    try:
        for step in steps:
            first.apply(step)
            second.apply(step)
            levels = first.levels()
            assert set(levels) == set(NINE)
            assert all(0.0 <= value <= 1.0 for value in levels.values()), (step, levels)
            assert second.levels() == levels, step
            assert first.levels() == levels  # reading changes nothing
    finally:
        first.close()
        second.close()
