"""``[plugins.emotion_trend]``: the documented defaults, every number and phrase configurable, bad values refused
with the key and the accepted form."""

from __future__ import annotations

from typing import Any

import pytest

from ego_core import ConfigError
from ego_core.testing import structure_plugin_config
from ego_emotion_trend import EmotionTrendConfig


def load(table: dict[str, Any]) -> EmotionTrendConfig:
    return structure_plugin_config("emotion_trend", EmotionTrendConfig, table, {})


def test_defaults_are_the_spec() -> None:
    config = load({})
    assert (config.recent_days, config.week_days, config.month_days) == (3, 7, 30)
    assert (config.primary_weight, config.secondary_weight) == (1.0, 0.4)
    assert (config.positive_valence, config.negative_valence, config.high_arousal, config.numb_arousal) == (
        0.3,
        -0.3,
        0.5,
        0.3,
    )
    assert (config.recent_from, config.week_from, config.month_from) == (5, 15, 30)
    assert config.fading_strength == 0.5


def test_everything_is_configurable() -> None:
    config = load(
        {"recent_days": 2, "week_days": 10, "secondary_weight": 0.5, "phrases": {"numb": "a grey, quiet month"}}
    )
    assert (config.recent_days, config.week_days, config.secondary_weight) == (2, 10, 0.5)
    assert config.phrases.numb == "a grey, quiet month"
    assert config.phrases.mixed == "a month of mixed feelings"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"recent_days": 0}, "plugins.emotion_trend.recent_days: expected a whole number from 1 to 366"),
        ({"recent_days": "three"}, "plugins.emotion_trend.recent_days: expected an integer"),
        (
            {"secondary_weight": float("nan")},
            "plugins.emotion_trend.secondary_weight: expected a number in [0.0, 100.0]",
        ),
        ({"fading_strength": 1}, "plugins.emotion_trend.fading_strength: expected a number in (0.0, 1.0)"),
        ({"phrases": {"numb": ""}}, "plugins.emotion_trend.phrases.numb: expected a phrase of 1 to 80 characters"),
        ({"week_days": 2}, "plugins.emotion_trend: recent_days, week_days, month_days: expected recent_days ≤"),
        ({"month_from": 10}, "plugins.emotion_trend: recent_from, week_from, month_from: expected recent_from ≤"),
        ({"negative_valence": 0.5}, "plugins.emotion_trend.negative_valence: expected at most positive_valence"),
        ({"fading_lookback_days": 3}, "plugins.emotion_trend.fading_lookback_days: expected at least week_days"),
        ({"windows": 3}, "plugins.emotion_trend: unknown key(s) windows"),
    ],
)
def test_bad_values_name_the_key_and_the_accepted_form(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(table)
    assert message in str(info.value)
