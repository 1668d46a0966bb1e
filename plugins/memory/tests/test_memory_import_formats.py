"""``ego import --from markdown`` and the memories of ``--from ego-mcp``: original dates, privacy, the duplicate
guard, idempotence, and malformed sources refused at their file and line with nothing written."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from ego_core import ImportFormatError
from ego_core.testing import PortableError, import_source, read_source

if TYPE_CHECKING:
    from conftest import MemoryHosts

NOTES = {
    "2026-12-03.md": "# 2026-12-03\n\n- 朝、駅まで歩いた\n- 14:05 Talked with Aoi about the heartbeat config\n",
    "journal/日記.md": (
        "# 2026年11月1日（日）\n\n・雨の中で詩を読んだ #詩\n\n"
        "## 2026-11-02\n\nA long walk by the river.\nThe light was violet.\n\n"
        "- 誰にも言えない気持ち #非公開\n- 朝、駅まで歩いた\n"
    ),
}


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def stored(plugin: Any) -> dict[str, Any]:
    return {m.content: m for m in plugin.memories.store.iter_memories()}


def test_markdown_notes_keep_their_dates_privacy_and_come_in_once(memory_hosts: MemoryHosts, tmp_path: Path) -> None:
    notes = write(tmp_path / "notes", NOTES)
    host, plugin = memory_hosts(timezone="Asia/Tokyo")
    first = import_source(host, read_source(host, "markdown", notes, private=False))
    assert first.added == {"memory": 5}  # 朝、駅まで歩いた twice: the same text is stored once
    memories = stored(plugin)
    local = {text: m.timestamp.astimezone(host.settings.tz) for text, m in memories.items()}
    assert local["朝、駅まで歩いた"] == datetime(2026, 12, 3, 12, 0, tzinfo=host.settings.tz)
    assert local["Talked with Aoi about the heartbeat config"].strftime("%Y-%m-%d %H:%M") == "2026-12-03 14:05"
    assert local["雨の中で詩を読んだ #詩"].date().isoformat() == "2026-11-01"
    assert local["A long walk by the river. The light was violet."].date().isoformat() == "2026-11-02"
    assert memories["雨の中で詩を読んだ #詩"].tags == ("詩",)
    assert memories["誰にも言えない気持ち"].is_private  # the mark taken out of the words
    assert not memories["A long walk by the river. The light was violet."].is_private
    again = import_source(host, read_source(host, "markdown", notes, private=False))
    assert again.added == {"memory": 0}
    assert plugin.memories.store.count() == 5


def test_private_flag_makes_every_note_private(memory_hosts: MemoryHosts, tmp_path: Path) -> None:
    notes = write(tmp_path / "notes", {"a.md": "- one thought\n- もう一つの考え\n"})
    host, plugin = memory_hosts()
    import_source(host, read_source(host, "markdown", notes / "a.md", private=True))
    assert all(m.is_private for m in stored(plugin).values())
    assert len(stored(plugin)) == 2


def test_a_note_already_remembered_is_not_added_again(memory_hosts: MemoryHosts, tmp_path: Path) -> None:
    host, plugin = memory_hosts()
    ctx = host.context("memory")
    plugin._tools().remember({"content": "朝、駅まで歩いた"}, ctx)
    notes = write(tmp_path / "notes", {"2026-12-03.md": "- 朝、駅まで歩いた\n- 夜は静かだった\n"})
    summary = import_source(host, read_source(host, "markdown", notes, private=False))
    assert summary.added == {"memory": 1}


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"ok.md": "- fine\n", "bad.md": "- 一行目\n"}, None),
        ({"ok.md": "- fine\n", "2026-02-30.md": "- x\n"}, r"2026-02-30\.md: the file name names a date"),
        ({"ok.md": "- fine\n", "x.md": "- a\n\n## 2026年13月1日\n"}, r"x\.md:3: the heading names a date"),
        ({"ok.md": "- fine\n", "y.md": "---\ntitle: open\n- a\n"}, r"y\.md:1: the front matter"),
        ({"ok.md": "- fine\n", "long.md": "- " + "長" * 9000 + "\n"}, r"long\.md:1: an entry of 9000 characters"),
    ],
)
def test_a_malformed_markdown_file_is_refused_at_its_line_and_nothing_is_written(
    memory_hosts: MemoryHosts, tmp_path: Path, files: dict[str, str], message: str | None
) -> None:
    notes = write(tmp_path / "notes", files)
    if message is None:  # a byte that is not UTF-8, on the second line
        (notes / "bad.md").write_bytes("- 一行目\n".encode() + b"- \xff\xfe\n")
        message = r"bad\.md:2: not UTF-8 text"
    host, plugin = memory_hosts()
    with pytest.raises(ImportFormatError, match=message):
        import_source(host, read_source(host, "markdown", notes, private=False))
    assert plugin.memories.store.count() == 0


def test_an_empty_folder_is_refused(memory_hosts: MemoryHosts, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    host, _plugin = memory_hosts()
    with pytest.raises(ImportFormatError, match="no Markdown"):
        read_source(host, "markdown", tmp_path / "empty", private=False)
    with pytest.raises(PortableError, match="no such file"):
        read_source(host, "markdown", tmp_path / "missing", private=False)


# --------------------------------------------------------------------------------------------------
# ego-mcp: a real Chroma store in ego-mcp's layout


def ego_mcp_store(root: Path, memories: list[tuple[str, str, dict[str, Any]]]) -> Path:
    """Write ``root/chroma`` as ego-mcp does: collection ``ego_memories``, its metadata fields (vectors given,
    so no embedding function runs)."""
    import chromadb

    client = chromadb.PersistentClient(path=str(root / "chroma"))
    collection = client.get_or_create_collection(name="ego_memories", embedding_function=None)
    collection.add(
        ids=[ident for ident, _text, _meta in memories],
        documents=[text for _ident, text, _meta in memories],
        metadatas=[meta for _ident, _text, meta in memories],
        embeddings=np.array([[float(i + 1), 0.5, 0.25] for i in range(len(memories))], dtype=np.float32),
    )
    return root


def meta(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "emotion": "neutral",
        "secondary": "",
        "intensity": 0.5,
        "importance": 3,
        "category": "daily",
        "timestamp": "2025-08-01T21:30:00+09:00",
        "valence": 0.0,
        "arousal": 0.5,
        "body_state": "",
        "tags": "",
        "linked_ids": "[]",
        "is_private": False,
        "access_count": 0,
        "last_accessed": "",
        "involved_person_ids": "",
        "anticipated_at": "",
        "anticipation_surfaced": False,
    }
    return {**base, **fields}


def test_ego_mcp_memories_keep_emotions_links_privacy_and_times(memory_hosts: MemoryHosts, tmp_path: Path) -> None:
    link = json.dumps([{"target_id": "mem_00000000000b", "link_type": "caused_by", "confidence": 0.8, "note": ""}])
    source = ego_mcp_store(
        tmp_path / "ego-mcp",
        [
            (
                "mem_00000000000a",
                "マスターと花火を見た",
                meta(
                    emotion="grateful",
                    secondary="warm,happy",
                    intensity=0.9,
                    importance=5,
                    category="relationship",
                    tags="花火,夏",
                    linked_ids=link,
                    valence=0.8,
                    body_state=json.dumps({"time_phase": "night"}),
                    access_count=4,
                    last_accessed="2025-08-02T09:00:00+09:00",
                ),
            ),
            ("mem_00000000000b", "The summer festival was announced", meta(emotion="excited", category="dream")),
            ("mem_00000000000c", "A fear I keep to myself", meta(emotion="afraid", is_private=True)),
        ],
    )
    host, plugin = memory_hosts()
    summary = import_source(host, read_source(host, "ego-mcp", source, private=False))
    assert summary.added == {"memory": 3}
    fireworks, festival, fear = plugin.memories.store.get(["mem_00000000000a", "mem_00000000000b", "mem_00000000000c"])
    assert fireworks.timestamp == datetime(2025, 8, 1, 12, 30, tzinfo=UTC)
    trace = fireworks.emotional_trace
    assert (trace.primary, trace.secondary, trace.intensity, trace.valence) == ("moved", ("happy",), 0.9, 0.8)
    assert dict(trace.body_state) == {"time_phase": "night"}
    assert (fireworks.importance, fireworks.category, fireworks.tags) == (5, "relationship", ("花火", "夏"))
    assert fireworks.access_count == 4
    assert [(link.target_id, link.link_type) for link in fireworks.links] == [("mem_00000000000b", "caused_by")]
    assert festival.category == "dream"
    assert fear.is_private
    assert fear.emotional_trace.primary == "anxious"
    assert import_source(host, read_source(host, "ego-mcp", source, private=False)).added == {"memory": 0}


def test_a_malformed_ego_mcp_memory_is_refused_by_id_and_nothing_is_written(
    memory_hosts: MemoryHosts, tmp_path: Path
) -> None:
    source = ego_mcp_store(
        tmp_path / "ego-mcp",
        [
            ("mem_00000000000a", "fine", meta()),
            ("mem_00000000000b", "broken time", meta(timestamp="last tuesday")),
        ],
    )
    host, plugin = memory_hosts()
    with pytest.raises(ImportFormatError, match=r"chroma\.sqlite3: memory mem_00000000000b: .*last tuesday"):
        read_source(host, "ego-mcp", source, private=False)
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(ImportFormatError, match="not an ego-mcp data directory"):
        read_source(host, "ego-mcp", tmp_path / "elsewhere", private=False)
    assert plugin.memories.store.count() == 0
