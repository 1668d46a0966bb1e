"""Property tests of the desire catalog: any valid catalog survives a write and a read unchanged; any edit of one
place is either accepted (and then the catalog reads back with exactly that value there) or refused with an
error located inside the edited place, and a refused edit leaves the file byte for byte as it was; the
life-stage and expiry rules of emergent desires hold at every moment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ego_desires.catalog import DESIRES
from ego_desires.config import EmergentSettings
from ego_desires.emergent import DIRECTIONS, EMERGENT, EmergentRow, alive, called_up, life_stage
from ego_desires.wording import (
    DEFAULT,
    CatalogError,
    CatalogFile,
    assign,
    default_json,
    lookup,
    parse,
    split_path,
    to_json,
)

line = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=40).filter(
    lambda s: bool(s.strip())
)
json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-2, 2, allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3),
    max_leaves=8,
)


def places(raw: Any, prefix: str = "") -> list[str]:
    """Every place of a catalog's layout, as configure_desires names it."""
    found = [prefix] if prefix else []
    if isinstance(raw, dict):
        for key, value in raw.items():
            found += places(value, f"{prefix}.{key}" if prefix else key)
    elif isinstance(raw, list):
        for index, value in enumerate(raw):
            found += places(value, f"{prefix}[{index}]")
    return found


PLACES = places(default_json())


@st.composite
def catalogs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid catalog: the built-in one with any words, signals, cascade qualities and rules."""
    raw = default_json()
    for name in DESIRES:
        entry = raw["desires"][name]
        entry["display_name"] = draw(st.none() | line)
        entry["sentence"] = {d: draw(line) for d in DIRECTIONS}
        entry["satisfaction_signals"] = draw(st.lists(line, max_size=3))
        entry["implicit_emergent_satisfaction"] = draw(
            st.dictionaries(st.sampled_from(EMERGENT), st.floats(0.5, 1.0), max_size=2)
        )
    for name in EMERGENT:
        raw["emergent_desires"][name]["sentence"]["rising"] = draw(line)
    raw["implicit_rules"] = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "tool": line,
                    "when": st.just({}) | st.fixed_dictionaries({"category": line}),
                    "effects": st.lists(
                        st.fixed_dictionaries({"desire": st.sampled_from(DESIRES), "quality": st.floats(0.01, 1.0)}),
                        min_size=1,
                        max_size=3,
                    ),
                }
            ),
            max_size=3,
        )
    )
    return raw


def strip(raw: Any) -> Any:
    """What parse keeps of a text (surrounding whitespace is trimmed)."""
    if isinstance(raw, str):
        return raw.strip()
    if isinstance(raw, dict):
        return {k: strip(v) for k, v in raw.items()}
    if isinstance(raw, list):
        return [strip(v) for v in raw]
    return raw


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=catalogs())
def test_a_valid_catalog_is_written_and_read_back_unchanged(raw: dict[str, Any], tmp_path: Path) -> None:
    catalog = parse(raw)
    assert parse(to_json(catalog)) == catalog
    assert to_json(catalog) == to_json(parse(strip(raw)))
    file = CatalogFile(tmp_path / "desires")
    file.write(raw)
    assert file.load() == catalog
    assert json.loads(file.path.read_text(encoding="utf-8")) == raw


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(place=st.sampled_from(PLACES), value=json_value)
def test_an_edit_is_applied_whole_or_refused_inside_its_place(place: str, value: Any, tmp_path: Path) -> None:
    file = CatalogFile(tmp_path / "desires")
    file.write(default_json())
    before = file.path.read_bytes()
    refused: CatalogError | None = None
    try:
        file.write(assign(json.loads(before), place, value))
    except CatalogError as exc:
        refused = exc
    if refused is not None:
        assert refused.path == place or refused.path.startswith((f"{place}.", f"{place}[")), (refused.path, place)
        assert file.path.read_bytes() == before
        assert file.load() == DEFAULT
    else:
        assert lookup(json.loads(file.path.read_text(encoding="utf-8")), place) == value
        assert to_json(file.load()) == to_json(parse(json.loads(file.path.read_text(encoding="utf-8"))))


@given(text=st.text(max_size=30))
def test_a_path_either_splits_into_keys_and_indexes_or_is_refused(text: str) -> None:
    parts: list[str | int] = []
    refused: CatalogError | None = None
    try:
        parts = split_path(text)
    except CatalogError as exc:
        refused = exc
    if refused is not None:
        assert refused.path == text
    else:
        assert parts
        assert all(isinstance(p, int) or (isinstance(p, str) and p) for p in parts)


@given(
    created=st.floats(0, 1e6),
    satisfied=st.none() | st.floats(0, 2e6),
    now=st.floats(0, 3e6),
    expiry=st.floats(1, 200),
    ttl=st.floats(1, 400),
)
def test_an_emergent_desire_lives_and_settles_by_its_clock(
    created: float, satisfied: float | None, now: float, expiry: float, ttl: float
) -> None:
    settings_ = EmergentSettings(expiry_hours=expiry, satisfied_ttl_hours=ttl)
    row = EmergentRow(name="feel_safe", created=created, anchored_at=created, start=2.0, satisfied_at=satisfied)
    stage = life_stage(row, now, settings_)
    if satisfied is not None:
        assert stage == "settling"
        assert alive(row, now, settings_) == (now < satisfied + ttl * 3600)
    else:
        assert alive(row, now, settings_) == (now < created + expiry * 3600)
        if now - created >= 0.6 * expiry * 3600:
            assert stage == "settling"
        if now - created < 0.25 * expiry * 3600:
            assert stage == "rising"


@given(
    emotion=st.text(max_size=12) | st.sampled_from(["sad", "curious", "nostalgic", "happy"]), valence=st.floats(-1, 1)
)
def test_only_the_listed_emotions_call_up_a_desire(emotion: str, valence: float) -> None:
    called = called_up(emotion, valence)
    assert called is None or called in EMERGENT
    if emotion == "curious":
        assert called is None
    if emotion == "nostalgic":
        assert called == "go_back_to_something"
