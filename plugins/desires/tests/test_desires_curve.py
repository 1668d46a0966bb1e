"""The curve of one desire: a stable sigmoid, satisfaction by quality, the pace of the rise, clock jumps."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ego_desires import Anchor, base_level, blended_quality, pace, position, satisfied_position, sigmoid
from ego_desires.config import SettleSettings
from ego_desires.curve import logit, max_position
from ego_desires.levels import combined

HOUR = 3600.0
K = 4.0
GAIN = 0.8
finite = st.floats(allow_nan=False, allow_infinity=False)


def test_sigmoid_is_stable_at_any_magnitude() -> None:
    assert sigmoid(0.0) == 0.5
    assert sigmoid(1e308) == 1.0
    assert 0.0 <= sigmoid(-1e308) < 1e-300
    assert sigmoid(math.inf) == 1.0
    assert 0.0 <= sigmoid(-math.inf) < 1e-300
    assert sigmoid(-745.0) >= 0.0
    with pytest.raises(ValueError, match="NaN"):
        sigmoid(math.nan)


@given(st.floats(min_value=1e-6, max_value=1 - 1e-6))
def test_logit_inverts_the_sigmoid(p: float) -> None:
    assert sigmoid(logit(p)) == pytest.approx(p, rel=1e-9)


def test_logit_of_the_ends_is_infinite() -> None:
    assert logit(0.0) == -math.inf
    assert logit(1.0) == math.inf


def test_one_period_after_a_full_satisfaction_the_level_is_half() -> None:
    anchor = Anchor(anchored_at=0.0, start=0.0, quality=0.5)  # pace 1
    assert base_level(position(anchor, 0.0, 12.0, K, GAIN), K) == pytest.approx(sigmoid(-K))
    assert base_level(position(anchor, 12 * HOUR, 12.0, K, GAIN), K) == pytest.approx(0.5)
    assert base_level(position(anchor, 24 * HOUR, 12.0, K, GAIN), K) == pytest.approx(sigmoid(K))


def test_the_level_rises_monotonically_with_time() -> None:
    anchor = Anchor(anchored_at=0.0, start=0.2, quality=0.7)
    levels = [base_level(position(anchor, h * HOUR, 18.0, K, GAIN), K) for h in range(0, 200, 3)]
    assert levels == sorted(levels)
    assert levels[-1] == pytest.approx(1.0)


def test_a_good_satisfaction_drops_further_than_a_poor_one() -> None:
    at = 1.3
    good, poor, none = (satisfied_position(at, q, K) for q in (1.0, 0.2, 0.0))
    assert good == 0.0
    assert base_level(poor, K) == pytest.approx(0.8 * base_level(at, K))
    assert none == at
    assert good < poor < none


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 5.0))
def test_satisfaction_never_raises_a_desire_and_better_quality_lowers_it_more(q1: float, q2: float, at: float) -> None:
    low, high = sorted((q1, q2))
    after_low, after_high = satisfied_position(at, low, K), satisfied_position(at, high, K)
    assert 0.0 <= after_high <= after_low <= min(at, max_position(K))


def test_a_good_satisfaction_makes_the_next_rise_slower() -> None:
    assert pace(1.0, GAIN) > pace(0.7, GAIN) > pace(0.5, GAIN) == pace(None, GAIN) == 1.0 > pace(0.2, GAIN)
    good = Anchor(anchored_at=0.0, start=0.5, quality=1.0)
    poor = Anchor(anchored_at=0.0, start=0.5, quality=0.2)
    hours = 10 * HOUR
    assert position(good, hours, 12.0, K, GAIN) < position(poor, hours, 12.0, K, GAIN)


def test_the_pace_remembers_the_previous_satisfaction_when_little_was_left_to_satisfy() -> None:
    assert blended_quality(0.2, 1.0, level_before=1.0) == pytest.approx(0.2)
    assert blended_quality(0.2, 1.0, level_before=0.0) == pytest.approx(1.0)
    assert blended_quality(0.2, None, level_before=0.5) == pytest.approx(0.35)


def test_a_satisfaction_in_the_future_counts_as_now() -> None:
    ten_years = 10 * 365.25 * 24 * HOUR
    anchor = Anchor(anchored_at=ten_years, start=0.3, quality=0.9)
    assert position(anchor, 0.0, 12.0, K, GAIN) == 0.3


@given(
    anchored_at=finite,
    start=finite,
    quality=st.none() | st.floats(0.0, 1.0),
    now=finite,
    period=st.floats(1e-3, 1e5),
    steepness=st.floats(0.5, 50.0),
    gain=st.floats(0.0, 1.8),
)
def test_any_state_and_clock_give_a_level_in_the_unit_interval(
    anchored_at: float, start: float, quality: float | None, now: float, period: float, steepness: float, gain: float
) -> None:
    anchor = Anchor(anchored_at=anchored_at, start=start, quality=quality)
    at = position(anchor, now, period, steepness, gain)
    assert 0.0 <= at <= max_position(steepness)
    assert 0.0 <= base_level(at, steepness) <= 1.0
    assert 0.0 <= satisfied_position(at, 0.5, steepness) <= at


# --------------------------------------------------------------------------------------------------
# Rise, saturate, settle (a lived month: desires nothing met stayed at 1.00 for a month)

SETTLE = SettleSettings()  # peak 0.98, plateau 0.55, settling by e every 4 periods


def test_a_desire_nothing_meets_rises_to_its_peak_then_settles_toward_its_plateau() -> None:
    anchor = Anchor(anchored_at=0.0, start=0.0, quality=0.5)
    days = [base_level(position(anchor, d * 24 * HOUR, 24.0, K, GAIN), K, SETTLE) for d in range(31)]
    peak = max(days)
    assert peak == pytest.approx(0.98, abs=0.01)
    assert all(level <= SETTLE.peak + 1e-12 for level in days)  # never above its peak, never pinned at 1
    top = days.index(peak)
    assert top <= 3  # two periods after a full satisfaction
    assert days[top:] == sorted(days[top:], reverse=True)  # then it settles, day after day
    assert days[7] < 0.9
    assert days[30] == pytest.approx(SETTLE.plateau, abs=0.01)  # and rests at its plateau
    assert base_level(max_position(K), K, SETTLE) == pytest.approx(SETTLE.plateau)


def test_without_a_settle_the_curve_is_the_plain_sigmoid() -> None:
    for at in (0.0, 0.7, 1.0, 1.9, 3.0, 8.0):
        assert base_level(at, K) == sigmoid(K * (at - 1.0))
        assert base_level(at, K, SETTLE) <= max(base_level(at, K), SETTLE.plateau) + 1e-12


def test_a_satisfaction_of_a_settled_desire_lowers_it_and_it_rises_again() -> None:
    settled = 6.0  # well past its peak: about 0.6
    level = base_level(settled, K, SETTLE)
    light = satisfied_position(settled, 0.05, K, SETTLE)  # still above the plateau: it settles on from there
    assert light > settled
    assert base_level(light, K, SETTLE) == pytest.approx(level * 0.95)
    deep = satisfied_position(settled, 0.8, K, SETTLE)  # below the plateau: back on the rise
    assert base_level(deep, K, SETTLE) == pytest.approx(level * 0.2)
    assert deep < 1.0
    assert satisfied_position(settled, 0.0, K, SETTLE) == settled  # quality 0 changes nothing


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 60.0))
def test_with_a_settle_satisfaction_never_raises_a_desire_and_better_quality_lowers_it_more(
    q1: float, q2: float, at: float
) -> None:
    low, high = sorted((q1, q2))
    before = base_level(at, K, SETTLE)
    after_low = base_level(satisfied_position(at, low, K, SETTLE), K, SETTLE)
    after_high = base_level(satisfied_position(at, high, K, SETTLE), K, SETTLE)
    assert after_high <= after_low + 1e-9
    assert after_low <= before + 1e-9
    assert after_low == pytest.approx(max(before * (1 - low), base_level(0.0, K)), abs=1e-9)  # 0.02 at the bottom


@given(st.floats(0.0, 1.0), st.floats(-1.0, 2.0), st.floats(0.0, 1.0))
def test_modulation_never_lowers_below_the_base_nor_reaches_one_softly(base: float, change: float, soft: float) -> None:
    level = combined(base, change, soft)
    assert 0.0 <= level <= 1.0
    if change >= 0:
        assert base <= level <= base + change + 1e-12
    if soft <= 0.8 and base <= SETTLE.peak and base + change <= 1.3:
        assert level < 0.99  # stacked pushes on a desire at its peak do not pin it at the top
    assert combined(base, 0.0, soft) == pytest.approx(base)


def test_below_soft_from_modulation_adds_as_it_is_and_above_it_is_compressed() -> None:
    assert combined(0.5, 0.2, 0.8) == pytest.approx(0.7)
    assert combined(0.5, -0.6, 0.8) == 0.0
    assert combined(0.7, 0.3, 0.8) == pytest.approx(0.8 + 0.2 * (1 - math.exp(-1.0)))
    assert combined(0.7, 0.3, 1.0) == 1.0  # soft_from 1: the plain clamp
    assert combined(0.97, 0.05, 0.8) == 0.97  # a desire at its peak can hardly feel stronger
