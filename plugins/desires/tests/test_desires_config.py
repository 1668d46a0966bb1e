"""Configuration: every number in ``[plugins.desires]``, checked at startup, and documented in one table."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from typing import Any

import attrs
import pytest
from desires_support import REPO

from ego_core import ConfigError
from ego_core.testing import structure_plugin_config
from ego_desires import DesiresConfig

DOC = REPO / "docs" / "plugins" / "desires.md"
ROW = re.compile(r"^\| `\[plugins\.desires(?P<table>(?:\.[a-z_]+)*)\]` \| `(?P<key>[a-z_]+)` \| `(?P<value>[^`]*)` \|")


def load(table: dict[str, Any]) -> DesiresConfig:
    return structure_plugin_config("desires", DesiresConfig, table, {}, env={})


def documented() -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            dotted = ".".join(part for part in (match["table"].lstrip("."), match["key"]) if part)
            rows[dotted] = tomllib.loads(f"v = {match['value']}")["v"]
    return rows


def defaults(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Every leaf of the default configuration by dotted key (table entries included)."""
    found: dict[str, Any] = {}
    for field in attrs.fields(type(obj)):
        value = getattr(obj, field.name)
        key = prefix + field.name
        if attrs.has(type(value)):
            found.update(defaults(value, key + "."))
        elif isinstance(value, Mapping):
            for entry, inner in value.items():
                if hasattr(inner, "items"):
                    found[f"{key}.{entry}"] = dict(inner)
                else:
                    found[f"{key}.{entry}"] = list(inner) if isinstance(inner, list | tuple) else inner
        else:
            found[key] = value
    return found


def test_the_documented_table_holds_every_number_with_its_default() -> None:
    expected, rows = defaults(DesiresConfig()), documented()
    assert rows.keys() == expected.keys()
    for key, value in expected.items():
        assert rows[key] == value, key


def test_an_empty_table_gives_the_defaults() -> None:
    assert load({}) == DesiresConfig()


def test_overrides_are_merged_over_the_keyed_tables() -> None:
    config = load(
        {
            "steepness": 5,
            "periods": {"curiosity": 8},
            "implicit": {"emotion_trend": ["pattern_seeking"], "search_memories": []},
            "body": {"time_phase": {"morning": {"curiosity": 0.1}}},
            "memories": {"topics": {"daily": ["predictability"]}, "half_life_hours": "3"},
        }
    )
    assert config.steepness == 5.0
    assert config.periods.curiosity == 8.0
    assert config.periods.social_thirst == 24.0
    assert config.implicit["emotion_trend"] == ["pattern_seeking"]
    assert config.implicit["search_memories"] == []
    assert config.implicit["recall"] == ["information_hunger", "curiosity"]
    assert dict(config.body.time_phase["morning"]) == {"curiosity": 0.1}
    assert dict(config.body.time_phase["late_night"])["cognitive_coherence"] == 0.1
    assert config.memories.topics["daily"] == ["predictability"]
    assert config.memories.half_life_hours == 3.0


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"steepness": 0}, "plugins.desires.steepness: expected a number from 0.5 to 50"),
        ({"steepness": "steep"}, "plugins.desires.steepness: expected a number"),
        ({"periods": {"curiosity": 0}}, "plugins.desires.periods.curiosity: expected a number above 0"),
        ({"periods": {"curiosity": float("inf")}}, "plugins.desires.periods.curiosity"),
        ({"periods": {"boredom": 3}}, "plugins.desires.periods: unknown key(s) boredom"),
        ({"mid_from": 0.8}, "high_from: expected a number above mid_from"),
        ({"implicit": {"recall": ["boredom"]}}, "implicit.recall: unknown desire(s) boredom"),
        ({"implicit": {"recall": "curiosity"}}, "expected a list"),
        ({"implicit": {"x" * 101: []}}, "implicit: a key must be 1 to 100 characters without control characters"),
        ({"memories": {"topics": {"dream": ["sleep"]}}}, "topics.dream: unknown desire(s) sleep"),
        ({"memories": {"limit": 0}}, "plugins.desires.memories.limit: expected a number from 1 to 1000"),
        ({"memories": {"negative_social_thirst": 2}}, "negative_social_thirst: expected a number from -1 to 1"),
        ({"body": {"time_phase": {"teatime": {}}}}, "time_phase: unknown key(s) teatime"),
        ({"body": {"system_load": {"high": {"expression": -3}}}}, "system_load.high.expression: expected a number"),
        ({"body": {"memory_pressure": {"high": {"hunger": 0.1}}}}, "memory_pressure.high: unknown desire(s) hunger"),
        ({"questions": {"min_importance": 9}}, "plugins.desires.questions.min_importance: expected a number from 1"),
        ({"colour": "blue"}, "plugins.desires: unknown key(s) colour"),
        ({"settle": {"plateau": 0.99}}, "settle.plateau: expected a number below settle.peak"),
        ({"settle": {"peak": 1.0}}, "plugins.desires.settle.peak: expected a number from 0.5 to 0.999"),
        ({"settle": {"periods": 0}}, "plugins.desires.settle.periods: expected a number above 0"),
        ({"company": {"shared": {"boredom": 0.5}}}, "shared: unknown desire(s) boredom"),
        ({"company": {"shared": {"social_thirst": 1.5}}}, "shared.social_thirst: expected a number from 0 to 1"),
        ({"soft_from": 2}, "plugins.desires.soft_from: expected a number from 0 to 1"),
        ({"variety": {"answers": -1}}, "plugins.desires.variety.answers: expected a number from 0 to 20"),
    ],
)
def test_a_bad_value_is_an_error_naming_the_key(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        load(table)


def test_a_bad_value_stops_the_host(make_host: Any) -> None:
    from ego_desires import DesiresPlugin

    with pytest.raises(ConfigError, match=r"plugins\.desires\.steepness"):
        make_host({"desires": DesiresPlugin()}, config={"desires": {"steepness": -1}})


def test_the_docs_name_every_key_of_every_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    pending: list[type[Any]] = [DesiresConfig]
    while pending:
        cls = pending.pop()
        for field in attrs.fields(attrs.resolve_types(cls)):
            assert f"`{field.name}`" in text, field.name
            if isinstance(field.type, type) and attrs.has(field.type):
                pending.append(field.type)
