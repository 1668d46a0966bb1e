"""ego export / ego import: round trip exact, recall unchanged, idempotent, refusals."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ego_core import PRIVATE_MARK, Clock, RecallQuery
from ego_core.testing import PortableError, export_file, import_file
from ego_memory.store.filters import Filters
from ego_memory.tools.lifecycle import Lifecycle

if TYPE_CHECKING:
    from conftest import EgoChild, MemoryHosts

START = datetime(2026, 5, 1, 9, 30, 15, 123456, tzinfo=UTC)
TEXTS = [
    ("Master showed me the violet sunset from the balcony.", {"emotion": "moved", "intensity": 0.9, "importance": 4}),
    ("We fixed the heartbeat interval: seconds, not minutes.", {"emotion": "happy", "tags": ["work", "ops"]}),
    ("A quiet evening; nobody wrote and I felt small.", {"emotion": "sad", "secondary": ["anxious"], "private": True}),
    ("The API key sk-live-abcdefghijklmnopqrstuvwx1234 is in the vault.", {"category": "technical"}),
    ("今日は夕焼けを一緒に見た", {"emotion": "nostalgic"}),
    ("Grandma's letter arrived, smelling of lavender.", {"body_state": {"time_phase": "morning"}}),
]
QUERIES = ["the sunset on the balcony", "heartbeat interval", "a lonely evening", "夕焼け", "a letter from grandma"]


def populate(memory_hosts: MemoryHosts, data_dir: Path) -> list[str]:
    clock = Clock(START)
    host, plugin = memory_hosts(data_dir, clock=clock)
    ctx = host.context("memory")
    memories = plugin.memories
    tools = plugin._tools()
    assert memories is not None
    ids = []
    for index, (content, fields) in enumerate(TEXTS):
        clock.set(START + timedelta(hours=index * 5, seconds=0.123 * index))
        response = tools.remember({"content": content, "force": True, **fields}, ctx)
        ids.append(response.data.split("(id: ")[1].split(")")[0])
    lifecycle = Lifecycle(memories)
    lifecycle.link({"source_id": ids[0], "target_id": ids[4], "link_type": "related"}, ctx)
    lifecycle.create_episode({"memory_ids": ids[:3], "summary": "An evening and a morning."}, ctx)
    for query in QUERIES[:3]:
        memories.search(RecallQuery(context=query, n_results=3), Filters())  # access statistics
    host.stop()
    return ids


def rankings(memory_hosts: MemoryHosts, data_dir: Path) -> list[list[tuple[str, float]]]:
    host, plugin = memory_hosts(data_dir, clock=Clock(START + timedelta(days=3)))
    assert plugin.memories is not None
    result = []
    for query in QUERIES:
        hits, _pool, _lines = plugin.memories.search(RecallQuery(context=query, n_results=5), Filters(), touch=False)
        result.append([(hit.memory.id, round(hit.score, 6)) for hit in hits])
    host.stop()
    return result


def exported(memory_hosts: MemoryHosts, data_dir: Path, path: Path, *, include_private: bool) -> str:
    host, _plugin = memory_hosts(data_dir)
    export_file(host, path, include_private=include_private)
    host.stop()
    return path.read_text(encoding="utf-8")


def test_export_import_export_is_identical_and_recall_is_unchanged(memory_hosts: MemoryHosts, tmp_path: Path) -> None:
    source = tmp_path / "source"
    populate(memory_hosts, source)
    before = rankings(memory_hosts, source)
    first = exported(memory_hosts, source, tmp_path / "one.jsonl", include_private=True)

    target = tmp_path / "target"
    host, _plugin = memory_hosts(target)
    summary = import_file(host, tmp_path / "one.jsonl")
    host.stop()
    assert summary.added == {"memory": len(TEXTS) + 1}  # six memories and one episode

    second = exported(memory_hosts, target, tmp_path / "two.jsonl", include_private=True)
    assert second == first
    after = rankings(memory_hosts, target)
    assert [[m for m, _ in hits] for hits in after] == [[m for m, _ in hits] for hits in before]
    # the same scores up to float32 rounding (the import embeds every text again, in other batches)
    assert [s for hits in after for _, s in hits] == pytest.approx([s for hits in before for _, s in hits], abs=1e-5)
    lines = [json.loads(line) for line in first.splitlines()]
    assert lines[0] == {"format": "ego-export", "include_private": True, "plugins": {"memory": "0.1.0"}, "version": 1}
    kinds = [line["type"] for line in lines[1:-1]]
    assert kinds == ["meta"] + ["memory"] * len(TEXTS) + ["episode"]
    assert lines[-1] == {"format": "ego-export", "end": True, "records": {"memory": len(TEXTS) + 2}}


def test_import_is_idempotent(memory_hosts: MemoryHosts, tmp_path: Path) -> None:
    populate(memory_hosts, tmp_path / "source")
    exported(memory_hosts, tmp_path / "source", tmp_path / "all.jsonl", include_private=True)
    host, plugin = memory_hosts(tmp_path / "target")
    assert import_file(host, tmp_path / "all.jsonl").added == {"memory": len(TEXTS) + 1}
    assert import_file(host, tmp_path / "all.jsonl").added == {"memory": 0}
    assert plugin.memories is not None
    assert plugin.memories.store.count() == len(TEXTS)
    assert plugin.memories.store.integrity_problems() == []
    host.stop()


def test_a_public_export_leaves_private_memories_out_and_masks_secrets(
    memory_hosts: MemoryHosts, tmp_path: Path
) -> None:
    ids = populate(memory_hosts, tmp_path / "source")
    text = exported(memory_hosts, tmp_path / "source", tmp_path / "public.jsonl", include_private=False)
    private_id = ids[2]
    assert private_id not in text  # neither the memory, nor a link to it, nor an episode member
    assert "nobody wrote" not in text
    assert "sk-live-abcdefghijklmnopqrstuvwx1234" not in text
    assert "[REDACTED]" in text
    assert PRIVATE_MARK not in text  # left out, not masked in place
    records = [json.loads(line) for line in text.splitlines()[1:-1]]
    assert sum(r["type"] == "memory" for r in records) == len(TEXTS) - 1
    episode = next(r for r in records if r["type"] == "episode")
    assert episode["memory_ids"] == [ids[0], ids[1]]


def with_record(good: list[str], record: str) -> list[str]:
    """``good`` with ``record`` added before the end line, whose counts are updated to match."""
    end = json.loads(good[-1])
    plugin = json.loads(record)["plugin"]
    end["records"][plugin] = end["records"].get(plugin, 0) + 1
    return [*good[:-1], record, json.dumps(end)]


BAD_FILES: list[tuple[str, Any]] = [
    ("not json", lambda good: [*good[:1], "{not json", *good[1:]]),
    ("not an export", lambda good: ['{"hello": 1}', *good[1:]]),
    ("future version", lambda good: [good[0].replace('"version":1', '"version":9'), *good[1:]]),
    ("unknown record type", lambda good: with_record(good, '{"plugin":"memory","type":"mystery"}')),
    ("unknown plugin", lambda good: with_record(good, '{"plugin":"nobody","type":"x"}')),
    (
        "bad timestamp",
        lambda good: with_record(
            good, good[2].replace('"timestamp":"', '"timestamp":"yesterday').replace('"id":"mem_', '"id":"mem_f')
        ),
    ),
    ("empty", lambda good: []),
    ("cut short at a line break", lambda good: good[:4]),
    ("only the header", lambda good: good[:1]),
    ("a record dropped", lambda good: [*good[:3], *good[4:]]),
    ("text after the end", lambda good: [*good, good[2]]),
]


@pytest.mark.parametrize(("case", "corrupt"), BAD_FILES, ids=[case for case, _ in BAD_FILES])
def test_an_unreadable_file_is_refused_and_changes_nothing(
    memory_hosts: MemoryHosts, tmp_path: Path, case: str, corrupt: Any
) -> None:
    populate(memory_hosts, tmp_path / "source")
    good = exported(memory_hosts, tmp_path / "source", tmp_path / "good.jsonl", include_private=True).splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(corrupt(good)) + "\n", encoding="utf-8")
    host, plugin = memory_hosts(tmp_path / "target")
    ctx = host.context("memory")
    assert plugin.memories is not None
    plugin._tools().remember({"content": "Something that was here before the import.", "force": True}, ctx)
    before = exported_text(host, tmp_path / "before.jsonl")
    with pytest.raises(PortableError):
        import_file(host, bad)
    assert exported_text(host, tmp_path / "after.jsonl") == before
    host.stop()


def exported_text(host: Any, path: Path) -> str:
    export_file(host, path, include_private=True)
    return path.read_text(encoding="utf-8")


def test_the_cli_round_trip_and_refusal(ego_child: EgoChild, tmp_path: Path) -> None:
    """What a user runs: `ego export` / `ego import` in separate processes, exit codes and messages."""
    target = tmp_path / "target-data"

    def run(*args: str, data: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ego_child.command("--plugins", "memory", *args),
            env=ego_child.env(**({"EGO_DATA_DIR": str(data)} if data else {})),
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )

    # An empty store exports just the header, the memory plugin's meta record and the end line.
    empty = run("export", str(tmp_path / "empty.jsonl"))
    assert empty.returncode == 0, empty.stderr
    assert "exported 0 records to" in empty.stdout  # the meta record describes the store; it is not data
    (tmp_path / "broken.jsonl").write_text('{"format": "ego-export", "version": 1}\n{broken\n', encoding="utf-8")
    refused = run("import", str(tmp_path / "broken.jsonl"), data=target)
    assert refused.returncode == 2
    assert "broken.jsonl:2: not valid JSON" in refused.stderr
    assert not (target / "memory").exists()  # the file is checked before any store is opened or created
    missing = run("import", str(tmp_path / "no-such.jsonl"), data=target)
    assert (missing.returncode, missing.stderr.strip()) == (
        2,
        f"ego: error: cannot read {tmp_path / 'no-such.jsonl'}: No such file or directory",
    )
    assert not (target / "memory").exists()
    imported = run("import", str(tmp_path / "empty.jsonl"), data=target)
    assert imported.returncode == 0, imported.stderr
    assert "memory: 0 new of 0 records" in imported.stdout  # the meta record is not data
