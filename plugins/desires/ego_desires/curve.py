"""The rise of one desire: a numerically stable sigmoid of the time since its last satisfaction.

A desire's state is an :class:`Anchor`: when it was last satisfied (``anchored_at``, UTC seconds), where it was
left then (``start``, the *position*) and how well (``quality``). The position grows by one per satisfaction
period (stretched by the quality, see :func:`pace`), and the base level is σ(k · (position − 1)): 0.5 one
period after a full satisfaction, near 0 right after it. With a :class:`Settle`, a desire nothing meets rises to
its ``peak`` at most and then settles toward its ``plateau`` (it saturates, then habituates) instead of staying
pinned at the top. A satisfaction of quality q multiplies the base level by (1 − q) and re-anchors the position
there.

Everything here is a pure function of its arguments: no clock, no I/O.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Final, Protocol

import attrs

SIGMOID_SPAN: Final = 40.0
"""Positions are kept within 1 ± SIGMOID_SPAN / k: beyond that the sigmoid is 0 or 1 in floating point."""
SETTLED_BY: Final = 200.0
"""Positions are also kept up to this many periods, so that a settling desire reaches its plateau (with any
settling time a configuration allows, e^(−200 / 20) of the way is left)."""

EARLIEST: Final = datetime(1, 1, 2, tzinfo=UTC).timestamp()
LATEST: Final = datetime(9999, 12, 30, tzinfo=UTC).timestamp()
"""Satisfaction times are kept within the range of dates Python can show."""

INITIAL: Final = "initial"
EXPLICIT: Final = "explicit"
TOOL_PREFIX: Final = "tool:"
SHARED: Final = "shared"
"""The source of a satisfaction by a moment shared with the companion."""


@attrs.frozen
class Anchor:
    """The stored state of one desire."""

    anchored_at: float
    """UTC seconds since the epoch of the last satisfaction (or of the store's creation)."""
    start: float
    """The position at ``anchored_at``, in satisfaction periods (0 = just fully satisfied)."""
    quality: float | None = None
    """The quality of that satisfaction; ``None`` for a desire that was never satisfied."""
    source: str = INITIAL
    """``initial``, ``explicit`` (satisfy_desire), ``tool:<name>`` (implicit satisfaction) or ``shared`` (a moment
    shared with the companion)."""


def sigmoid(z: float) -> float:
    """1 / (1 + e^−z) without overflow for any finite or infinite ``z``."""
    if math.isnan(z):
        raise ValueError("sigmoid of NaN")
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-min(z, 700.0)))
    e = math.exp(max(z, -700.0))
    return e / (1.0 + e)


def logit(p: float) -> float:
    """The inverse of :func:`sigmoid`; ±inf at 1 and 0."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return math.log(p) - math.log1p(-p)


class Settle(Protocol):
    """How a desire nothing meets saturates and settles (``[plugins.desires.settle]``)."""

    @property
    def peak(self) -> float:
        """The highest the base level rises (below 1)."""
        ...

    @property
    def plateau(self) -> float:
        """Where it settles when nothing meets it for long (below ``peak``)."""
        ...

    @property
    def periods(self) -> float:
        """How slowly it settles: the distance to the plateau shrinks by e every this many periods."""
        ...


def max_position(steepness: float) -> float:
    return max(1.0 + SIGMOID_SPAN / steepness, SETTLED_BY)


def peak_position(steepness: float, settle: Settle) -> float:
    """The position at which the rise reaches ``settle.peak`` (and settling begins)."""
    return 1.0 + logit(settle.peak) / steepness


def pace(quality: float | None, recovery_gain: float) -> float:
    """How much a satisfaction of ``quality`` stretches the next rise: 1 + gain · (q − 0.5).

    A good satisfaction (q > 0.5) makes the desire rise more slowly, a poor one sooner; a desire that was never
    satisfied rises at the plain pace (1).
    """
    if quality is None:
        return 1.0
    return 1.0 + recovery_gain * (quality - 0.5)


def position(anchor: Anchor, now: float, period_hours: float, steepness: float, recovery_gain: float) -> float:
    """The position at ``now`` (UTC seconds).

    A satisfaction time in the future (the clock was ahead when it was written, or has been set back) counts as
    now: the desire stays where that satisfaction left it until the clock passes it.
    """
    elapsed = max(0.0, now - anchor.anchored_at)
    span = period_hours * 3600.0 * pace(anchor.quality, recovery_gain)
    return clamp_position(anchor.start + elapsed / span, steepness)


def clamp_position(value: float, steepness: float) -> float:
    if math.isnan(value):
        return 0.0
    return min(max(value, 0.0), max_position(steepness))


def base_level(at: float, steepness: float, settle: Settle | None = None) -> float:
    """The level of a desire at position ``at``, before modulation.

    Without ``settle`` the plain sigmoid. With it, the rise stops at ``settle.peak`` and the level then eases
    toward ``settle.plateau`` by e every ``settle.periods`` periods: rise, saturate, settle.
    """
    if settle is None:
        return sigmoid(steepness * (at - 1.0))
    top = peak_position(steepness, settle)
    if at <= top:
        return sigmoid(steepness * (at - 1.0))
    return settle.plateau + (settle.peak - settle.plateau) * math.exp(-(at - top) / settle.periods)


def blended_quality(given: float, previous: float | None, level_before: float) -> float:
    """The quality that sets the pace after a satisfaction: the given one in proportion to how strong the desire
    was (its base level), the previous one for the rest — a snack after a full meal does not make you hungry
    sooner. A desire never satisfied counts as previous quality 0.5 (the plain pace)."""
    earlier = 0.5 if previous is None else previous
    return level_before * given + (1.0 - level_before) * earlier


def satisfied_position(current: float, quality: float, steepness: float, settle: Settle | None = None) -> float:
    """The position after a satisfaction of ``quality`` at position ``current``.

    The base level drops to (1 − quality) times what it was: quality 1 to (nearly) nothing, quality 0 not at
    all; it never rises. On the rise the position moves back to where the rise has that level. A settling desire
    (past its peak) that stays above its plateau settles on from there (further along, lower); one taken below
    its plateau is back on the rise.
    """
    before = base_level(current, steepness, settle)
    level = before * (1.0 - quality)
    if level >= before:
        return clamp_position(current, steepness)
    if settle is not None and current > peak_position(steepness, settle) and level > settle.plateau:
        along = math.log((settle.peak - settle.plateau) / (level - settle.plateau)) * settle.periods
        return clamp_position(max(current, peak_position(steepness, settle) + along), steepness)
    target = 1.0 + logit(level) / steepness
    return clamp_position(min(current, target), steepness)
