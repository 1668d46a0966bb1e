"""``ego import --from`` with every built-in plugin: an OpenClaw workspace (the bench generator's, smaller) is
recallable with its original dates and a second run adds nothing; an ego-mcp data directory brings memories,
notions, the self-model, people and desires, each plugin reading its own part; malformed ego-mcp files are refused
at their file and line with nothing written; the CLI's dry run writes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ego_core import ImportFormatError, PluginHost
from ego_core.mcp.foreign import import_source, read_source
from ego_memory.plugin import MemoryPlugin

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from make_openclaw_workspace import write_workspace  # noqa: E402


def recall(host: PluginHost, context: str, **args: object) -> str:
    served = host.tool("recall")
    assert served is not None
    reply = served[1].handler({"context": context, "n_results": 3, **args}, host.context(served[0]))
    return str(getattr(reply, "data", ""))


def test_an_openclaw_workspace_is_recallable_by_its_dates_and_comes_in_once(
    combo_host: Callable[..., PluginHost], tmp_path: Path
) -> None:
    source = tmp_path / "openclaw"
    files, entries = write_workspace(source, days=12, memory_lines=40)
    host = combo_host("memory", "dedup", "workspace_sync")
    host.start()
    first = import_source(host, read_source(host, "openclaw", source, private=False))
    assert first.added == {"memory": entries}
    first_day = (source / "memory" / "2026-01-01.md").read_text(encoding="utf-8").splitlines()[2].removeprefix("- ")
    found = recall(host, first_day, date_from="2026-01-01", date_to="2026-01-01")
    assert first_day in found
    assert recall(host, first_day, date_from="2025-01-01", date_to="2025-12-31").count(first_day) == 0
    assert import_source(host, read_source(host, "openclaw", source, private=False)).added == {"memory": 0}
    assert files == 13


def ego_mcp_dir(root: Path) -> Path:
    import chromadb

    client = chromadb.PersistentClient(path=str(root / "chroma"))
    memories = client.get_or_create_collection(name="ego_memories", embedding_function=None)
    memories.add(
        ids=["mem_0000000000a1", "mem_0000000000a2", "mem_0000000000a3"],
        documents=["マスターと星を見た", "Master laughed at my joke", "星の話をまたした"],
        metadatas=[
            {"emotion": "love", "intensity": 0.8, "timestamp": "2025-07-07T22:00:00+09:00", "category": "relationship"},
            {"emotion": "happy", "intensity": 0.6, "timestamp": "2025-07-08T10:00:00+09:00"},
            {"emotion": "nostalgic", "intensity": 0.5, "timestamp": "2025-07-09T21:00:00", "is_private": True},
        ],
        embeddings=np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]], dtype=np.float32),
    )
    episodes = client.get_or_create_collection(name="ego_episodes", embedding_function=None)
    episodes.add(
        ids=["ep_0000000000e1"],
        documents=["七夕の夜"],
        metadatas=[
            {
                "memory_ids": json.dumps(["mem_0000000000a1", "mem_0000000000a3"]),
                "start_time": "2025-07-07T22:00:00+09:00",
                "end_time": "2025-07-09T21:00:00+09:00",
                "importance": 4,
            }
        ],
        embeddings=np.array([[0.5, 0.5]], dtype=np.float32),
    )
    notion = {
        "notion_0000000000a1": {
            "id": "notion_0000000000a1",
            "label": "星 & 夜 (moved)",
            "emotion_tone": "moved",
            "valence": 0.7,
            "confidence": 0.8,
            "source_memory_ids": ["mem_0000000000a1", "mem_0000000000a3"],
            "tags": ["星"],
            "created": "2025-07-10T09:00:00+09:00",
            "last_reinforced": "2025-07-12T09:00:00+09:00",
            "reinforcement_count": 2,
            "person_id": "Master",
            "meta_fields": {"note": {"type": "text", "value": "夏の記憶"}, "file": {"type": "file_path", "path": "x"}},
        }
    }
    (root / "notions.json").write_text(json.dumps(notion, ensure_ascii=False), encoding="utf-8")
    self_model = {
        "preferences": {"quiet mornings": 0.9, "long walks": 0.4},
        "discovered_values": {"honesty": True},
        "current_goals": ["星座を覚える"],
        "identity_narratives": ["I am someone who notices the sky"],
        "skill_confidence": {"poetry": 0.6},
        "growth_log": [{"timestamp": "2025-07-11T08:00:00+09:00", "entry": "Learned to say less"}],
        "unresolved_questions": ["q_0123456789"],
        "question_log": [
            {"id": "q_0123456789", "question": "Why do stars feel close?", "importance": 4, "created_at": "2025-07-08"}
        ],
        "last_updated": "2025-07-12T09:00:00+09:00",
    }
    (root / "self_model.json").write_text(json.dumps(self_model, ensure_ascii=False), encoding="utf-8")
    (root / "relationships").mkdir()
    people = {
        "master": {
            "name": "Master",
            "trust_level": 0.9,
            "known_facts": ["星が好き"],
            "communication_style": {"warm": 5.0, "playful": 2.0},
            "aliases": ["マスター"],
            "first_interaction": "2025-06-01T09:00:00+09:00",
            "last_interaction": "2025-07-09T21:00:00+09:00",
        }
    }
    (root / "relationships" / "models.json").write_text(json.dumps(people, ensure_ascii=False), encoding="utf-8")
    desires = {
        "curiosity": {"last_satisfied": "2025-07-12T08:00:00+09:00", "satisfaction_quality": 0.7},
        "be_with_someone": {"is_emergent": True, "created": "2025-07-12T08:00:00+09:00"},
    }
    (root / "desire_state.json").write_text(json.dumps(desires), encoding="utf-8")
    return root


def test_an_ego_mcp_directory_comes_in_part_by_part_and_once(
    combo_host: Callable[..., PluginHost], tmp_path: Path
) -> None:
    source = ego_mcp_dir(tmp_path / "ego-mcp")
    host = combo_host()
    host.start()
    summary = import_source(host, read_source(host, "ego-mcp", source, private=False))
    assert summary.added["memory"] == 4  # three memories and the episode
    assert summary.added["notions"] == 1
    assert summary.added["desires"] == 1
    assert summary.added["self_model"] >= 7  # five fields, one growth entry, one question, the person
    again = import_source(host, read_source(host, "ego-mcp", source, private=False))
    assert set(again.added.values()) == {0}
    found = recall(host, "星を見た")
    assert "マスターと星を見た" in found


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("notions.json", '{\n  "n": {\n    "label": oops\n  }\n}', r"notions\.json:3: not valid JSON"),
        ("self_model.json", "[1, 2]", r"self_model\.json:1: expected an object"),
        ("desire_state.json", '{"curiosity": {"last_satisfied": "soon"}}', r"desire_state\.json: curiosity"),
    ],
)
def test_a_malformed_ego_mcp_file_is_refused_and_nothing_is_written(
    combo_host: Callable[..., PluginHost], tmp_path: Path, name: str, text: str, message: str
) -> None:
    source = ego_mcp_dir(tmp_path / "ego-mcp")
    (source / name).write_text(text, encoding="utf-8")
    host = combo_host()
    host.start()
    with pytest.raises(ImportFormatError, match=message):
        read_source(host, "ego-mcp", source, private=False)
    memory = host.plugin("memory")
    assert isinstance(memory, MemoryPlugin)
    assert memory.memories is not None
    assert memory.memories.store.count() == 0


def test_the_cli_dry_run_writes_nothing_and_bad_input_exits_2(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "2026-12-03.md").write_text("- 朝の散歩\n- An evening walk\n", encoding="utf-8")
    env = {"EGO_DATA_DIR": str(tmp_path / "data"), "EGO_PLUGINS": "memory,dedup", "PATH": "/usr/bin:/bin"}
    ego = [sys.executable, "-m", "ego_core.mcp.cli"]
    dry = subprocess.run(
        [*ego, "import", "--from", "markdown", str(notes), "--dry-run"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert dry.returncode == 0, dry.stderr
    assert "memory: 2 memory records" in dry.stdout
    assert "朝の散歩 (2026-12-03.md:1)" in dry.stdout
    real = subprocess.run(
        [*ego, "import", "--from", "markdown", str(notes)], env=env, capture_output=True, text=True, check=False
    )
    assert real.stdout.strip() == "memory: 2 new of 2 records", real.stderr
    (notes / "bad.md").write_bytes(b"- \xff\n")
    bad = subprocess.run(
        [*ego, "import", "--from", "markdown", str(notes)], env=env, capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2
    assert "bad.md:1: not UTF-8 text" in bad.stderr
