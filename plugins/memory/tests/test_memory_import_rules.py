"""``ego import`` obeys the data model like ``remember``: values outside the model are
normalised exactly as remember normalises them; a value of the wrong JSON type refuses the whole file, naming
the record and the field, before anything is written."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ego_core import EMOTIONS, RecallQuery
from ego_core.testing import PortableError, export_file, import_file
from ego_memory.arguments import remember_draft as draft_of
from ego_memory.config import MemoryConfig
from ego_memory.exchange.portable import check_records
from ego_memory.record.emotions import CATEGORIES
from ego_memory.record.model import RecordError, read_memory_record
from ego_memory.store.filters import Filters

if TYPE_CHECKING:
    from conftest import EgoChild, MemoryHosts

HEADER = {"format": "ego-export", "version": 1, "include_private": True, "plugins": {"memory": "0.1.0"}}
META = {"plugin": "memory", "type": "meta", "record_version": 1, "embedding_model": "onnx:all-MiniLM-L6-v2"}
BASE: dict[str, Any] = {
    "id": "mem_0123456789ab",
    "content": "The harbour lights came on one by one.",
    "timestamp": "2026-05-01T09:30:00+00:00",
}
CRAFTED: dict[str, Any] = {
    **BASE,
    "emotional_trace": {"primary": "Furious", "secondary": ["sad", "bored", "SAD "], "intensity": 7.0, "valence": -9},
    "importance": 99,
    "category": "bogus",
    "tags": [" work", "work", "", "infra"],
    "links": [
        {"target_id": "mem_ba9876543210", "link_type": "similar", "confidence": 4.5},
        {"target_id": "mem_0123456789ab", "link_type": "related", "confidence": 0.5},  # to itself
    ],
    "access_count": -3,
}


def remember_draft(args: dict[str, Any]) -> Any:
    """What remember's own normalisation (:func:`~ego_memory.arguments.remember_draft`) makes of ``args``,
    without a store."""
    ctx = SimpleNamespace(services=SimpleNamespace(get=lambda *a: None))
    draft, _notes = draft_of(
        {"content": "x", "body_state": {"kept": True}, **args}, ctx, MemoryConfig().max_content_chars
    )  # type: ignore[arg-type]
    return draft


def export_text(*records: dict[str, Any]) -> str:
    body = [META, *({"plugin": "memory", "type": "memory", **r} for r in records)]
    end = {"format": "ego-export", "end": True, "records": {"memory": len(body)}}
    return "".join(json.dumps(line) + "\n" for line in [HEADER, *body, end])


# ---------------------------------------------------------------------------------------------------
# Normalisation: the same as remember's


def test_a_crafted_record_is_normalised_as_remember_would_store_it() -> None:
    memory, changed = read_memory_record(CRAFTED)
    trace = memory.emotional_trace
    assert (trace.primary, trace.secondary) == ("neutral", ("sad",))
    assert (trace.intensity, trace.valence, trace.arousal) == (1.0, -1.0, 0.3)
    assert (memory.importance, memory.category, memory.tags) == (5, "daily", ("work", "infra"))
    assert memory.links[0].confidence == 1.0
    assert memory.access_count == 0
    assert set(changed) >= {"importance", "category", "tags", "emotional_trace.primary", "emotional_trace.valence"}
    draft = remember_draft(
        {
            "emotion": "Furious",
            "secondary": ["sad", "bored", "SAD "],
            "intensity": 7.0,
            "valence": -9,
            "importance": 99,
            "category": "bogus",
            "tags": [" work", "work", "", "infra"],
        }
    )
    assert (draft.emotion, draft.secondary, draft.intensity, draft.valence) == ("neutral", ("sad",), 1.0, -1.0)
    assert (draft.importance, draft.category, draft.tags) == (5, "daily", ("work", "infra"))


def test_a_well_formed_record_is_unchanged() -> None:
    record = {
        **BASE,
        "emotional_trace": {"primary": "moved", "secondary": ["nostalgic"], "intensity": 0.9, "valence": 0.7},
        "importance": 4,
        "category": "relationship",
        "tags": ["sunset"],
    }
    _memory, changed = read_memory_record(record)
    assert changed == []


LABEL = st.one_of(st.sampled_from([*EMOTIONS, *CATEGORIES]), st.text(max_size=12)).map(
    lambda s: s.upper() if len(s) % 3 == 0 else s
)
NUMBER = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6) | st.integers(-100, 100)


@settings(max_examples=300, deadline=None)
@given(
    emotion=LABEL,
    secondary=st.lists(LABEL, max_size=4),
    category=LABEL,
    tags=st.lists(st.text(max_size=8), max_size=4),
    intensity=NUMBER,
    valence=NUMBER,
    arousal=NUMBER,
    importance=st.integers(-(10**6), 10**6),
)
def test_import_normalises_exactly_as_remember(
    emotion: str,
    secondary: list[str],
    category: str,
    tags: list[str],
    intensity: float,
    valence: float,
    arousal: float,
    importance: int,
) -> None:
    record = {
        **BASE,
        "emotional_trace": {
            "primary": emotion,
            "secondary": secondary,
            "intensity": intensity,
            "valence": valence,
            "arousal": arousal,
        },
        "importance": importance,
        "category": category,
        "tags": tags,
    }
    memory, _changed = read_memory_record(record)
    trace = memory.emotional_trace
    draft = remember_draft(
        {
            "emotion": emotion,
            "secondary": secondary,
            "intensity": intensity,
            "valence": valence,
            "arousal": arousal,
            "importance": importance,
            "category": category,
            "tags": tags,
        }
    )
    assert (trace.primary, trace.secondary, memory.category, memory.tags) == (
        draft.emotion,
        draft.secondary,
        draft.category,
        draft.tags,
    )
    assert (trace.intensity, trace.valence, trace.arousal, memory.importance) == (
        draft.intensity,
        draft.valence,
        draft.arousal,
        draft.importance,
    )
    # ... and that is inside the data model
    assert trace.primary in EMOTIONS
    assert set(trace.secondary) <= set(EMOTIONS)
    assert memory.category in CATEGORIES
    assert 1 <= memory.importance <= 5
    assert 0 <= trace.intensity <= 1
    assert -1 <= trace.valence <= 1
    assert 0 <= trace.arousal <= 1
    # normalising is idempotent: an export of the imported memory imports unchanged
    assert read_memory_record(json.loads(json.dumps(memory_record(memory))))[1] == []


def memory_record(memory: Any) -> dict[str, Any]:
    from ego_memory.record.model import memory_to_dict

    return memory_to_dict(memory)


# ---------------------------------------------------------------------------------------------------
# Wrong types: refused, naming the field

WRONG: dict[str, tuple[tuple[str, ...], st.SearchStrategy[Any]]] = {
    # field path -> (how it must be named, values of a wrong JSON type)
    "tags": (("`tags`", "list"), st.text() | st.integers() | st.dictionaries(st.text(), st.text(), max_size=2)),
    "emotional_trace.secondary": (("`emotional_trace.secondary`", "list"), st.text() | st.booleans()),
    "emotional_trace.intensity": (
        ("`emotional_trace.intensity`", "number"),
        st.text() | st.booleans() | st.lists(st.integers(), max_size=2) | st.just(math.nan) | st.just(math.inf),
    ),
    "emotional_trace.primary": (("`emotional_trace.primary`", "string"), st.integers() | st.lists(st.text())),
    "emotional_trace": (("`emotional_trace`", "object"), st.text() | st.lists(st.integers(), max_size=2)),
    "emotional_trace.body_state": (("`emotional_trace.body_state`", "object"), st.text() | st.lists(st.text())),
    "importance": (("`importance`", "integer"), st.text() | st.booleans() | st.just(3.5) | st.just(None)),
    "category": (("`category`", "string"), st.integers() | st.lists(st.text(), max_size=2)),
    "content": (("`content`", "string"), st.integers() | st.lists(st.text(), max_size=2)),
    "is_private": (("`is_private`", "true or false"), st.text() | st.integers()),
    "links": (("`links`", "list"), st.text() | st.dictionaries(st.text(), st.text(), max_size=2)),
}


def put(record: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(record))
    *parents, leaf = path.split(".")
    target = data
    for key in parents:
        target = target.setdefault(key, {})
    target[leaf] = value
    return data


@settings(max_examples=300, deadline=None)
@given(data=st.data(), path=st.sampled_from(sorted(WRONG)))
def test_a_value_of_the_wrong_type_is_refused_naming_the_field(data: st.DataObject, path: str) -> None:
    expected, values = WRONG[path]
    record = put(CRAFTED, path, data.draw(values))
    with pytest.raises(RecordError) as refused:
        read_memory_record(record)
    problems = refused.value.problems
    assert any(all(part in problem for part in expected) for problem in problems), problems
    found = check_records([{"type": "meta", "record_version": 1}, {"type": "memory", **record}])
    assert any(problem.startswith("record 2 (memory mem_0123456789ab): `") for problem in found), found


def test_strings_for_lists_are_never_split_into_characters() -> None:
    record = put(put(CRAFTED, "emotional_trace.secondary", "sad,happy"), "tags", "work,infra")
    with pytest.raises(RecordError) as refused:
        read_memory_record(record)
    assert refused.value.problems == [
        "`emotional_trace.secondary`: expected a list, not a string",
        "`tags`: expected a list, not a string",
    ]


# ---------------------------------------------------------------------------------------------------
# Through import_file and the CLI


def test_import_stores_the_normalised_values_and_recall_gets_no_outsized_boost(
    memory_hosts: MemoryHosts, tmp_path: Path
) -> None:
    path = tmp_path / "crafted.jsonl"
    path.write_text(export_text(CRAFTED), encoding="utf-8")
    host, plugin = memory_hosts(tmp_path / "data")
    assert import_file(host, path).added == {"memory": 1}
    memories = plugin._require()
    plugin._tools()
    stored = memories.store.get_one(CRAFTED["id"])
    assert stored is not None
    assert (stored.importance, stored.category, stored.emotional_trace.primary) == (5, "daily", "neutral")
    assert (stored.emotional_trace.intensity, stored.emotional_trace.valence) == (1.0, -1.0)
    assert stored.emotional_trace.secondary == ("sad",)
    assert stored.tags == ("work", "infra")
    assert stored.links == ()  # the self-link is dropped, the link to an unknown memory too
    assert stored.access_count == 0  # not -3: recall's log1p of it would fail
    hits, _pool, _lines = memories.search(RecallQuery(context="harbour lights", n_results=1), Filters(), touch=False)
    assert [hit.memory.importance for hit in hits] == [5]
    host.stop()


def test_a_wrongly_typed_record_refuses_the_whole_file_and_changes_nothing(
    memory_hosts: MemoryHosts, tmp_path: Path
) -> None:
    good = {**BASE, "id": "mem_00000000beef", "content": "A record that is fine on its own."}
    bad = put(CRAFTED, "emotional_trace.secondary", "sad,happy")
    path = tmp_path / "bad.jsonl"
    path.write_text(export_text(good, bad), encoding="utf-8")
    host, plugin = memory_hosts(tmp_path / "data")
    ctx = host.context("memory")
    plugin._tools().remember({"content": "Here before the import.", "force": True}, ctx)
    export_file(host, tmp_path / "before.jsonl", include_private=True)
    with pytest.raises(PortableError) as refused:
        import_file(host, path)
    message = str(refused.value)
    assert "nothing was imported" in message
    assert "record 3 (memory mem_0123456789ab): `emotional_trace.secondary`: expected a list" in message
    export_file(host, tmp_path / "after.jsonl", include_private=True)
    assert (tmp_path / "after.jsonl").read_text() == (tmp_path / "before.jsonl").read_text()
    assert plugin._require().store.count() == 1
    host.stop()


@pytest.mark.slow
def test_the_cli_refuses_a_wrongly_typed_file_with_exit_2(ego_child: EgoChild, tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ego_child.command("--plugins", "memory", *args),
            env=ego_child.env(),
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )

    path = tmp_path / "bad.jsonl"
    path.write_text(export_text({**BASE, "id": "mem_00000000beef"}, put(CRAFTED, "tags", "work,infra")), "utf-8")
    refused = run("import", str(path))
    assert refused.returncode == 2, refused.stderr
    assert "record 3 (memory mem_0123456789ab): `tags`: expected a list, not a string" in refused.stderr
    assert "nothing was imported" in refused.stderr
    after = run("export", str(tmp_path / "after.jsonl"))
    assert after.returncode == 0, after.stderr
    assert "exported 0 records to" in after.stdout  # the meta record only: no memory was written
