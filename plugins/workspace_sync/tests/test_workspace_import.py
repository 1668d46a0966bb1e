"""``ego import --from openclaw``: a workspace ego wrote comes back without duplicates (into the same store and into
a fresh one), the agent's own notes around ego's lines are memories with their dates, and a malformed workspace
is refused at its file and line with nothing written."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import attrs
import pytest
from workspace_helpers import MOMENT, SyncHostFactory, remember

from ego_core import Clock, ImportFormatError, MemoryService, PluginHost, Settings
from ego_core.testing import HostFactory, import_source, read_source
from ego_memory.plugin import MemoryPlugin
from ego_workspace_sync import WorkspaceSyncPlugin


def service(host: PluginHost) -> MemoryService:
    found = host.services.get("memory.store", MemoryService)
    assert found is not None
    return found


def contents(host: PluginHost) -> list[str]:
    plugin = host.plugin("memory")
    assert isinstance(plugin, MemoryPlugin)
    assert plugin.memories is not None
    return sorted(m.content for m in plugin.memories.store.iter_memories())


def test_an_ego_written_workspace_round_trips_without_duplicates(
    sync_host: SyncHostFactory, make_host: HostFactory, ego_settings: Settings, workspace: Path, tmp_path: Path
) -> None:
    clock = Clock(MOMENT)
    host = sync_host(workspace, clock=clock)
    host.start()
    ids = [remember(host, "夕焼けを一緒に見た", emotion="moved", intensity=0.9)]
    clock.set(MOMENT + timedelta(days=1, hours=2))
    ids.append(remember(host, "Small commits are easier to review", category="lesson"))  # daily + MEMORY.md
    assert "[id:" in (workspace / "MEMORY.md").read_text(encoding="utf-8")
    daily = workspace / "memory" / "2025-03-15.md"
    daily.write_text(daily.read_text(encoding="utf-8") + "- 散歩の途中で猫に会った\n", encoding="utf-8")

    again = import_source(host, read_source(host, "openclaw", workspace, private=False))
    assert again.added == {"memory": 1}  # only the agent's own note; ego's lines are memories already
    assert service(host).count() == 3
    assert import_source(host, read_source(host, "openclaw", workspace, private=False)).added == {"memory": 0}

    fresh = make_host(
        {"memory": MemoryPlugin(), "workspace_sync": WorkspaceSyncPlugin()},
        settings=attrs.evolve(ego_settings, data_dir=tmp_path / "fresh", timezone="Asia/Tokyo"),
    )
    fresh.start()
    summary = import_source(fresh, read_source(fresh, "openclaw", workspace, private=False))
    assert summary.added == {"memory": 3}  # the lesson is in the daily file and MEMORY.md: one memory
    assert contents(fresh) == contents(host)
    sunset, lesson = service(fresh).get(ids)
    original = service(host).get(ids)
    assert sunset.timestamp == original[0].timestamp.replace(second=0, microsecond=0)
    assert (sunset.emotional_trace.primary, sunset.emotional_trace.intensity) == ("moved", 0.9)
    assert (lesson.category, lesson.importance) == ("lesson", 4)
    cat = next(m for m, _ in service(fresh).nearest("散歩の途中で猫に会った", 1))
    assert cat.timestamp.astimezone(fresh.settings.tz) == datetime(2025, 3, 15, 12, 0, tzinfo=fresh.settings.tz)


def test_notes_in_memory_md_are_curated_and_dated_by_headings(sync_host: SyncHostFactory, workspace: Path) -> None:
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text(
        "# MEMORY\n\n## 2024年5月6日\n\n- Aoi prefers tea to coffee\n- 青い傘を貸した\n", encoding="utf-8"
    )
    (workspace / "memory" / "inner-monologue-latest.md").write_text("> not a memory\n", encoding="utf-8")
    host = sync_host(None)
    host.start()
    summary = import_source(host, read_source(host, "openclaw", workspace, private=True))
    assert summary.added == {"memory": 2}
    found = service(host).nearest("Aoi prefers tea to coffee", 1)[0][0]
    assert found.importance == 4
    assert found.is_private
    assert found.timestamp.astimezone(host.settings.tz).date().isoformat() == "2024-05-06"


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"memory/2025-02-30.md": "- x\n"}, r"memory/2025-02-30\.md: the file name names a date"),
        (
            {"MEMORY.md": "- a\n- 99:99 [daily] x (emotion: calm, intensity: 0.50) [id:mem_000000000001]\n"},
            r"MEMORY\.md:2: an ego entry line with a date or time that does not exist",
        ),
        ({"memory/2025-03-01.md": "- ok\n\n## 2025-13-01\n"}, r"memory/2025-03-01\.md:3: the heading names a date"),
        ({"notes.md": "- not a workspace\n"}, r"not an OpenClaw workspace"),
    ],
)
def test_a_malformed_workspace_is_refused_at_its_line_and_nothing_is_written(
    sync_host: SyncHostFactory, workspace: Path, files: dict[str, str], message: str
) -> None:
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text, encoding="utf-8")
    host = sync_host(None)
    host.start()
    with pytest.raises(ImportFormatError, match=message):
        read_source(host, "openclaw", workspace, private=False)
    assert service(host).count() == 0


def test_a_workspace_file_that_is_not_utf8_is_named_with_its_line(sync_host: SyncHostFactory, workspace: Path) -> None:
    (workspace / "memory").mkdir(parents=True)
    (workspace / "memory" / "2025-03-01.md").write_bytes("# 2025-03-01\n\n- 一つ\n".encode() + b"- \x81\x82\n")
    host = sync_host(None)
    host.start()
    with pytest.raises(ImportFormatError, match=r"memory/2025-03-01\.md:4: not UTF-8 text"):
        read_source(host, "openclaw", workspace, private=False)
    assert service(host).count() == 0
