"""How present an open question is: salience = (importance / 5) · 2^(−age_days / (14 · importance)).

The age counts from the moment the question last came to mind (created, or brought back by a related memory).
Salience above ``active_above`` (0.3) is active, at or below ``dormant_at_or_below`` (0.1) dormant, fading
between. Half-lives: importance 5 ≈ 70 days, 3 ≈ 42 days, 1 ≈ 14 days.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from ego_self_model.api import QuestionState
from ego_self_model.config import SelfModelConfig

MAX_IMPORTANCE = 5
DAY_SECONDS = 86400.0


def age_days(since: datetime, now: datetime) -> float:
    """Days from ``since`` to ``now``; a moment in the future (a clock set back) counts as age 0."""
    return max(0.0, (now - since).total_seconds() / DAY_SECONDS)


def salience(importance: int, days: float, config: SelfModelConfig) -> float:
    """(importance / 5) · 2^(−days / (half_life_days_per_importance · importance)), in [0, 1]."""
    half_life = config.half_life_days_per_importance * importance
    return (importance / MAX_IMPORTANCE) * math.pow(2.0, -max(0.0, days) / half_life)


def state_of(value: float, config: SelfModelConfig) -> QuestionState:
    if value > config.active_above:
        return "active"
    if value > config.dormant_at_or_below:
        return "fading"
    return "dormant"


def left_mind_at(surfaced: datetime, importance: int, config: SelfModelConfig) -> datetime:
    """When the question's salience fell to the active threshold (``surfaced`` if it never was above it)."""
    start = importance / MAX_IMPORTANCE
    if start <= config.active_above:
        return surfaced
    if config.active_above <= 0:
        return datetime.max.replace(tzinfo=surfaced.tzinfo)
    days = config.half_life_days_per_importance * importance * math.log2(start / config.active_above)
    return surfaced + timedelta(days=days)


def dormant_days(surfaced: datetime, importance: int, now: datetime, config: SelfModelConfig) -> int:
    """Whole days the question has been out of mind (below the active threshold) at ``now``."""
    left = left_mind_at(surfaced, importance, config)
    if left >= now:
        return 0
    return int((now - left).total_seconds() // DAY_SECONDS)
