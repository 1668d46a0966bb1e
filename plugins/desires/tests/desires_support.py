"""Stand-ins for the services and tools of other plugins, and helpers shared by the desires tests.

The stand-ins implement the public contracts of ``ego_core`` (``BodySense``, ``MemoryService``,
``OpenQuestions``) so that these tests run with the core and the desires plugin alone; the tests under
``with_plugins/`` use the real memory and interoception plugins.
"""

from __future__ import annotations

import os
import re
import sqlite3
import sys
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import numpy as np
from mcp import StdioServerParameters

from ego_core import (
    BODY_SENSE,
    MEMORY_STORE,
    Clock,
    EmbedRole,
    EmotionalTrace,
    EmotionTally,
    Memory,
    PluginContext,
    PluginHost,
    Response,
    SimilarityProfile,
    Tool,
    ToolError,
    Vectors,
    hookimpl,
)
from ego_core.testing import SEPARATOR
from ego_desires import DesiresPlugin
from ego_self_model.api import OPEN_QUESTIONS, PEOPLE, Absence, KnownPerson, OpenQuestion, TrustChange

# Wednesday 4 March 2026, 15:00 UTC: afternoon in UTC.
AFTERNOON = datetime(2026, 3, 4, 15, 0, tzinfo=UTC)
LATE_NIGHT = datetime(2026, 3, 4, 2, 0, tzinfo=UTC)

NINE = (
    "information_hunger",
    "social_thirst",
    "cognitive_coherence",
    "pattern_seeking",
    "predictability",
    "recognition",
    "resonance",
    "expression",
    "curiosity",
)
TAG = re.compile(r"^([a-z_]+)\[(\d\.\d\d)/(low|mid|high)\]$")


EGO = [sys.executable, "-m", "ego_core.mcp.cli"]
REPO = Path(__file__).resolve().parents[3]


@attrs.define
class DesireHost:
    """A started host serving the desires plugin, its clock and its data dir."""

    host: PluginHost
    plugin: DesiresPlugin
    clock: Clock
    data_dir: Path

    def levels(self) -> dict[str, float]:
        return dict(self.plugin.levels())


DesireHostFactory = Callable[..., DesireHost]


def parse_levels(text: str) -> list[tuple[str, float, str]]:
    """The ``name[0.xx/band]`` line of a feel_desires response as (name, level, band), in the shown order."""
    data = text.split(SEPARATOR, maxsplit=1)[0].strip()
    line = data.splitlines()[0]
    found = []
    for part in line.split(" "):
        match = TAG.match(part)
        assert match, f"not in the documented form: {part!r} in {line!r}"
        found.append((match[1], float(match[2]), match[3]))
    return found


def level_map(text: str) -> dict[str, float]:
    return {name: level for name, level, _band in parse_levels(text)}


def scaffold_of(text: str) -> list[str]:
    _data, sep, scaffold = text.partition(SEPARATOR)
    return scaffold.strip().splitlines() if sep else []


def store_rows(data_dir: Path) -> list[tuple[Any, ...]]:
    """The raw rows of the desires store (read-only; works while a server has it open)."""
    path = data_dir / "desires" / "desires.sqlite3"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute("SELECT name, anchored_at, start, quality, source FROM desires ORDER BY name").fetchall()


# --------------------------------------------------------------------------------------------------
# Stand-in services


class FixedBody:
    """Provides ``interoception.body`` with a body state the test sets."""

    def __init__(self, time_phase: str = "afternoon", system_load: str = "low", memory_pressure: str = "calm"):
        self.state: dict[str, Any] = {
            "time_phase": time_phase,
            "system_load": system_load,
            "memory_pressure": memory_pressure,
            "uptime_hours": 1.0,
        }

    def body_state(self) -> Mapping[str, Any]:
        return dict(self.state)

    def time_phase(self) -> str:
        return str(self.state["time_phase"])

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        ctx.provide(BODY_SENSE, self)


class BrokenBody(FixedBody):
    def body_state(self) -> Mapping[str, Any]:
        raise OSError("no /proc")


class FixedQuestions:
    """Provides ``self_model.questions`` with the questions the test sets."""

    def __init__(self, questions: Sequence[OpenQuestion] = ()) -> None:
        self.questions = list(questions)

    def unresolved(self) -> Sequence[OpenQuestion]:
        return list(self.questions)

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        ctx.provide(OPEN_QUESTIONS, self)


def question(n: int, state: str = "fading", importance: int = 5) -> OpenQuestion:
    return OpenQuestion(
        id=f"q_{n:012x}",
        text=f"Question {n}?",
        importance=importance,
        salience=0.2 if state == "fading" else (0.6 if state == "active" else 0.05),
        state=state,  # type: ignore[arg-type]
        created=AFTERNOON - timedelta(days=30),
    )


class FixedMemories:
    """Provides ``memory.store`` with memories the test sets (only ``recent`` is used by the desires)."""

    def __init__(self, memories: Sequence[Memory] = ()) -> None:
        self.memories = list(memories)

    @property
    def embedding_model(self) -> str:
        return "none"

    @property
    def similarity_profile(self) -> SimilarityProfile:
        return SimilarityProfile(model_id="none", duplicate=0.95, merge=0.9, link=0.7, related=0.4, floor=0.3)

    def embed(self, texts: Sequence[str], role: EmbedRole = "document") -> Vectors:
        return np.zeros((len(texts), 3), dtype=np.float32)

    def contrast(self, first: str, second: str) -> str | None:
        return None

    def count(self) -> int:
        return len(self.memories)

    def get(self, memory_ids: Sequence[str]) -> list[Memory]:
        return [m for m in self.memories if m.id in memory_ids]

    def find_exact(self, content: str) -> Memory | None:
        return next((m for m in self.memories if m.content == content), None)

    def nearest(self, text: str, k: int = 1) -> list[tuple[Memory, float]]:
        return []

    def recent(self, since: datetime, limit: int = 500) -> list[Memory]:
        found = sorted((m for m in self.memories if m.timestamp >= since), key=lambda m: m.timestamp)
        return found[-limit:]

    def strongest(
        self, since: datetime, limit: int = 10, *, min_intensity: float = 0.0, until: datetime | None = None
    ) -> list[Memory]:
        found = [
            m
            for m in self.memories
            if m.timestamp >= since
            and (until is None or m.timestamp < until)
            and m.emotional_trace.intensity >= min_intensity
        ]
        return sorted(found, key=lambda m: (m.emotional_trace.intensity, m.timestamp), reverse=True)[:limit]

    def embeddings(self, memory_ids: Sequence[str]) -> dict[str, Vectors]:
        return {}

    def tally(self, since: datetime, until: datetime) -> EmotionTally:
        chosen = [m for m in self.memories if since <= m.timestamp < until]
        if not chosen:
            return EmotionTally()
        return EmotionTally(
            count=len(chosen),
            valence=sum(m.emotional_trace.valence for m in chosen) / len(chosen),
            arousal=sum(m.emotional_trace.arousal for m in chosen) / len(chosen),
            primary=Counter(m.emotional_trace.primary for m in chosen),
            secondary=Counter(e for m in chosen for e in m.emotional_trace.secondary),
            peak_id=max(chosen, key=lambda m: (m.emotional_trace.intensity, m.timestamp)).id,
            last_id=max(chosen, key=lambda m: m.timestamp).id,
        )

    def faded_emotions(
        self,
        emotions: Collection[str],
        before: datetime,
        at: datetime,
        *,
        since: datetime | None = None,
        strength: float = 0.5,
    ) -> dict[str, datetime]:
        """These stand-in memories never fade (the desires read only ``recent``)."""
        return {}

    def protected(self, memory_ids: Sequence[str], at: datetime) -> set[str]:
        return set()

    def dormant_near(self, text: str, k: int = 5, *, at: datetime) -> list[tuple[Memory, float]]:
        return []

    def similar_pairs(
        self, memory_ids: Sequence[str], threshold: float, limit: int | None = None
    ) -> list[tuple[str, str, float]]:
        return []

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        ctx.provide(MEMORY_STORE, self)


def memory(
    n: int,
    when: datetime,
    *,
    emotion: str = "neutral",
    valence: float = 0.0,
    arousal: float = 0.3,
    intensity: float = 0.5,
    category: str = "daily",
    private: bool = False,
    secondary: Sequence[str] = (),
) -> Memory:
    trace = EmotionalTrace(
        primary=emotion, secondary=tuple(secondary), intensity=intensity, valence=valence, arousal=arousal
    )
    return Memory(
        id=f"mem_{n:012x}",
        content=f"memory number {n}",
        timestamp=when,
        emotional_trace=trace,
        category=category,
        is_private=private,
    )


# --------------------------------------------------------------------------------------------------
# Stand-in tools of other plugins


STAND_IN_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"fail": {"type": "boolean"}, "decline": {"type": "boolean"}, "crash": {"type": "boolean"}},
    "additionalProperties": False,
}


class StandInTools:
    """Tools named like other plugins' tools: ``{"fail": true}`` is a ToolError, ``{"decline": true}`` a declined
    answer, ``{"crash": true}`` an internal error; otherwise they succeed."""

    NAMES = (
        "recall",
        "search_memories",
        "consider_them",
        "remember",
        "forget",
        "am_i_being_genuine",
        "consolidate",
        "update_self",
        "emotion_trend",
    )

    def __init__(self, names: Sequence[str] = NAMES) -> None:
        self.names = tuple(names)

    @staticmethod
    def _handler(name: str) -> Callable[[Mapping[str, Any], PluginContext], Response]:
        def handle(args: Mapping[str, Any], _ctx: PluginContext) -> Response:
            if args.get("crash"):
                raise RuntimeError("boom")
            if args.get("fail"):
                raise ToolError(f"{name} failed")
            return Response(f"{name} done", declined=bool(args.get("decline")))

        return handle

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        for name in self.names:
            register(
                Tool(
                    name=name,
                    description=f"Stand-in {name}.",
                    input_schema=STAND_IN_SCHEMA,
                    handler=self._handler(name),
                )
            )


# --------------------------------------------------------------------------------------------------
# ego child processes


def child_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """A clean environment for ``ego serve``: no inherited ``EGO_*`` except what is set here."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
    env.update(
        {
            "EGO_DATA_DIR": str(data_dir),
            "EGO_TIMEZONE": "UTC",
            "EGO_COMPANION_NAME": "Aiko",
        }
    )
    env.update(extra)
    data_dir.mkdir(parents=True, exist_ok=True)
    config = data_dir / "ego.toml"
    if not config.exists():  # the numeric feel_desires is opt-in
        config.write_text("[plugins.desires]\nfeel_desires_tool = true\n", encoding="utf-8")
    return env


def stdio(data_dir: Path, plugins: str) -> StdioServerParameters:
    """``ego serve --plugins <plugins>`` over stdio with a clean environment."""
    env = child_env(data_dir)
    keep = {k: v for k, v in env.items() if k.startswith("EGO_") or k == "PYTHONPATH"}
    return StdioServerParameters(command=EGO[0], args=[*EGO[1:], "serve", "--plugins", plugins], env=keep)


class PeopleStandIn:
    """Provides ``self_model.people`` with no one known and nothing shared; a test's subclass says how long the
    companion has been away (``absence``)."""

    def sharing(self, memory_ids: Sequence[str]) -> Mapping[str, Sequence[str]]:
        return {}

    def absence(self, person: str | None, at: datetime) -> Absence | None:
        return None

    def known(self) -> Sequence[KnownPerson]:
        return ()

    def trust_history(self, person: str) -> Sequence[TrustChange]:
        return ()

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        ctx.provide(PEOPLE, self)
