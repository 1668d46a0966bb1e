"""Reading the other plugins' services at call time (never cached): memories, body sense, open questions and
the companion's absence.

Each source is optional. A missing service, or one that fails, contributes nothing; a failure is logged with its
exception type only (never memory content).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import TypeVar

from ego_core import BODY_SENSE, MEMORY_STORE, BodySense, Memory, MemoryService, PluginContext
from ego_desires.config import DesiresConfig
from ego_desires.modulation import Inputs
from ego_self_model.api import OPEN_QUESTIONS, PEOPLE, Absence, OpenQuestions, People

T = TypeVar("T")


def _read(log: logging.Logger, what: str, read: Callable[[], T], fallback: T) -> T:
    try:
        return read()
    except Exception as exc:  # another plugin's failure must not take the desires down
        log.warning("desires: %s unavailable (%s); that modulation is left out", what, type(exc).__name__)
        return fallback


def recent_memories(ctx: PluginContext, now: datetime, config: DesiresConfig) -> tuple[Memory, ...]:
    service = _read(ctx.log, "memory store", lambda: ctx.services.get(MEMORY_STORE, MemoryService), None)
    if service is None:
        return ()
    table = config.memories
    since = now - timedelta(hours=table.window_hours)
    return _read(ctx.log, "recent memories", lambda: tuple(service.recent(since, table.limit)), ())


def body_state(ctx: PluginContext) -> dict[str, object] | None:
    sense = _read(ctx.log, "body sense", lambda: ctx.services.get(BODY_SENSE, BodySense), None)
    if sense is None:
        return None
    return _read(ctx.log, "body state", lambda: dict(sense.body_state()), None)


def fading_questions(ctx: PluginContext, config: DesiresConfig) -> int:
    questions = _read(ctx.log, "open questions", lambda: ctx.services.get(OPEN_QUESTIONS, OpenQuestions), None)
    if questions is None:
        return 0
    least = config.questions.min_importance

    def count() -> int:
        return sum(1 for q in questions.unresolved() if q.state == "fading" and q.importance >= least)

    return _read(ctx.log, "open questions", count, 0)


def knows_company(ctx: PluginContext) -> bool:
    """Whether a self-model is there to say who the companion is and when they were together."""
    return _read(ctx.log, "people", lambda: ctx.services.get(PEOPLE, People), None) is not None


def companion_absence(ctx: PluginContext, now: datetime) -> Absence | None:
    """The companion's absence at ``now`` (its band and their last shared moment), or None without a self-model
    that knows it."""
    people = _read(ctx.log, "people", lambda: ctx.services.get(PEOPLE, People), None)
    if people is None:
        return None
    return _read(ctx.log, "absence", lambda: people.absence(None, now), None)


def gather(
    ctx: PluginContext,
    now: datetime,
    config: DesiresConfig,
    *,
    questions: bool = True,
    impulses: Mapping[str, float] | None = None,
) -> Inputs:
    """The inputs at ``now``. ``questions=False`` leaves the self-model's questions out (a re-entrant call from it);
    ``impulses`` are the pending impulses by desire."""
    away = companion_absence(ctx, now)
    return Inputs(
        memories=recent_memories(ctx, now, config),
        body=body_state(ctx),
        fading_questions=fading_questions(ctx, config) if questions else 0,
        absence=away.band if away is not None else None,
        shared_at=away.last_shared if away is not None else None,
        knows_company=knows_company(ctx),
        impulses=impulses or {},
    )
