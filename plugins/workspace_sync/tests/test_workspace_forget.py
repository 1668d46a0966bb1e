"""forget removes exactly the forgotten memory's lines; content cannot spoof markers or inject lines."""

from __future__ import annotations

import zoneinfo
from datetime import timedelta
from pathlib import Path

import pytest
from workspace_helpers import (
    MOMENT,
    SyncHostFactory,
    all_files_text,
    forget,
    lines_of,
    remember,
    sample_memory,
)

from ego_core import Clock, PluginHost, ToolError
from ego_core.testing import mcp_client, tool_text
from ego_workspace_sync import (
    RenderError,
    WorkspaceSyncPlugin,
    WorkspaceWriteError,
    WorkspaceWriter,
    entry_line,
    fold,
    neutralise,
)

TOKYO = zoneinfo.ZoneInfo("Asia/Tokyo")
SPOOF = "Look: [id:mem_000000000000]\n- 10:00 [daily] fake"


def entries(path: Path) -> list[str]:
    return [line for line in lines_of(path) if line.startswith("- ")]


@pytest.mark.anyio
async def test_forget_through_mcp_removes_exactly_the_memorys_lines(
    sync_host: SyncHostFactory, workspace: Path
) -> None:
    clock = Clock(MOMENT)
    host = sync_host(workspace, clock=clock)
    daily = workspace / "memory" / "2025-03-14.md"
    curated = workspace / "MEMORY.md"
    async with mcp_client(host) as client:
        ids = []
        for minute, (content, importance) in enumerate(
            [("Met a new person at the cafe", 4), ("Fixed the flaky build", 5), ("Watered the plants", 3)]
        ):
            clock.set(MOMENT + timedelta(minutes=minute))
            result = await client.call_tool("remember", {"content": content, "importance": importance})
            ids.append(tool_text(result).split("(id: ", 1)[1].split(")", 1)[0])
        target = ids[1]
        clock.set(MOMENT + timedelta(minutes=5))
        mention = await client.call_tool(
            "remember", {"content": f"I keep thinking of {target} and [id:{target}] there", "importance": 4}
        )
        mention_id = tool_text(mention).split("(id: ", 1)[1].split(")", 1)[0]
        daily_before, curated_before = lines_of(daily), lines_of(curated)

        result = await client.call_tool("forget", {"memory_id": target})
        assert not result.is_error
        assert tool_text(result).startswith(f"Forgot (id: {target}")

    assert lines_of(daily) == [line for line in daily_before if not line.endswith(f"[id:{target}]")]
    assert lines_of(curated) == [line for line in curated_before if not line.endswith(f"[id:{target}]")]
    assert len(lines_of(daily)) == len(daily_before) - 1
    assert len(lines_of(curated)) == len(curated_before) - 1
    assert "Fixed the flaky build" not in all_files_text(workspace)
    # The line whose CONTENT mentions the id is untouched.
    [kept] = [line for line in lines_of(daily) if line.endswith(f"[id:{mention_id}]")]
    assert f"I keep thinking of {target} and (id:{target}] there" in kept
    assert [line.rsplit("[id:", 1)[1] for line in entries(daily)] == [f"{i}]" for i in (ids[0], ids[2], mention_id)]


def test_spoofed_markers_and_injected_lines(sync_host: SyncHostFactory, workspace: Path) -> None:
    host = sync_host(workspace)
    host.start()
    daily = workspace / "memory" / "2025-03-14.md"
    spoofer = remember(host, SPOOF, importance=5)
    other = remember(host, "An honest memory")

    lines = lines_of(daily)
    assert len(entries(daily)) == 2
    assert len(lines) == 4  # header, blank, two entries: the newline in the content injected nothing
    [line] = [line for line in lines if line.endswith(f"[id:{spoofer}]")]
    assert line.count("[id:") == 1
    assert "Look: (id:mem_000000000000] - 10:00 [daily] fake (emotion: neutral" in line
    assert not any(text.startswith("- 10:00") for text in lines)

    # Forgetting the id named in the content (it does not exist) is an error and touches nothing.
    before = all_files_text(workspace)
    with pytest.raises(ToolError, match="Memory not found: mem_000000000000"):
        forget(host, "mem_000000000000")
    writer = _writer(host)
    assert writer.forget("mem_000000000000") == 0
    assert writer.forget("mem_ffffffffffff") == 0
    assert all_files_text(workspace) == before

    forget(host, other)
    assert [line.endswith(f"[id:{spoofer}]") for line in entries(daily)] == [True]
    assert len([line for line in lines_of(workspace / "MEMORY.md") if line.endswith(f"[id:{spoofer}]")]) == 1

    forget(host, spoofer)
    assert entries(daily) == []
    assert entries(workspace / "MEMORY.md") == []
    assert "fake" not in all_files_text(workspace)


def test_forget_keeps_lines_it_did_not_write(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    daily = root / "memory" / "2025-03-14.md"
    daily.parent.mkdir(parents=True)
    original = (
        "# 2025-03-14\r\n"
        "\r\n"
        "- 09:00 my own note about [id:mem_0123456789ab] in the middle\r\n"
        "- 09:30 a note that ends with the marker but in another case [ID:mem_0123456789ab]\r\n"
        "- 09:45 \xff\xfe not utf-8 bytes\n"
    ).encode("latin-1")
    daily.write_bytes(original)
    writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text)
    writer.sync(sample_memory("mem_0123456789ab", "Ours"))
    assert daily.read_bytes().startswith(original)

    assert writer.forget("mem_0123456789ab") == 1
    assert daily.read_bytes() == original


def test_a_hand_written_line_ending_with_the_marker_goes_too(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text)
    writer.sync(sample_memory("mem_0123456789ab", "Ours", importance=5))
    curated = root / "MEMORY.md"
    curated.write_text(curated.read_text(encoding="utf-8") + "- an agent's summary of it [id:mem_0123456789ab]  \n")
    assert writer.forget("mem_0123456789ab") == 3
    assert "mem_0123456789ab" not in all_files_text(root)


def test_forgetting_the_latest_inner_monologue_falls_back_to_the_previous_one(
    sync_host: SyncHostFactory, workspace: Path
) -> None:
    clock = Clock(MOMENT)
    host = sync_host(workspace, clock=clock)
    host.start()
    monologue = workspace / "memory" / "inner-monologue-latest.md"
    first = remember(host, "The first honest question I asked myself", category="introspection")
    clock.set(MOMENT + timedelta(hours=1))
    second = remember(host, "A second thought, later in the day", category="introspection")
    clock.set(MOMENT + timedelta(hours=2))
    third = remember(host, "The third and latest reflection", category="introspection")
    assert f"id={third} previous={second},{first}" in monologue.read_text(encoding="utf-8")

    forget(host, second)  # not the latest: the file keeps its content, the id leaves the chain
    text = monologue.read_text(encoding="utf-8")
    assert text.startswith(f"<!-- ego-workspace-sync inner-monologue id={third} previous={first} -->\n")
    assert second not in text
    assert "The third and latest reflection" in text

    forget(host, third)  # the latest: replaced by the newest earlier one that still exists
    text = monologue.read_text(encoding="utf-8")
    assert text == (
        f"<!-- ego-workspace-sync inner-monologue id={first} -->\n"
        "# Inner monologue (2025-03-14 14:05)\n\n"
        "> The first honest question I asked myself\n"
    )

    forget(host, first)  # nothing earlier: the file goes
    assert not monologue.exists()
    assert "reflection" not in all_files_text(workspace)
    assert "honest question" not in all_files_text(workspace)


def test_forgetting_a_monologue_without_history_removes_the_file(sync_host: SyncHostFactory, workspace: Path) -> None:
    host = sync_host(workspace)
    host.start()
    only = remember(host, "Alone with one thought", category="introspection")
    other = remember(host, "Unrelated daily note")
    monologue = workspace / "memory" / "inner-monologue-latest.md"
    assert monologue.exists()
    forget(host, other)
    assert monologue.exists()
    forget(host, only)
    assert not monologue.exists()
    assert "Alone with one thought" not in all_files_text(workspace)


def test_a_monologue_file_someone_else_wrote_is_left_alone(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    monologue = root / "memory" / "inner-monologue-latest.md"
    monologue.parent.mkdir(parents=True)
    monologue.write_text("# My monologue\n\nwritten by hand mem_0123456789ab\n", encoding="utf-8")
    writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text)
    writer.forget("mem_0123456789ab")
    assert monologue.read_text(encoding="utf-8") == "# My monologue\n\nwritten by hand mem_0123456789ab\n"


def test_the_monologue_cannot_be_spoofed_by_its_content(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text)
    content = (
        "<!-- ego-workspace-sync inner-monologue id=mem_000000000000 -->\n- 10:00 [daily] fake [id:mem_000000000000]"
    )
    writer.sync(sample_memory("mem_0123456789ab", content, category="introspection"))
    monologue = root / "memory" / "inner-monologue-latest.md"
    text = monologue.read_text(encoding="utf-8")
    assert text.splitlines()[0] == "<!-- ego-workspace-sync inner-monologue id=mem_0123456789ab -->"
    assert "> - 10:00 [daily] fake (id:mem_000000000000]" in text
    assert not [line for line in text.splitlines() if line.startswith("- ")]
    writer.forget("mem_000000000000")
    assert monologue.read_text(encoding="utf-8") == text
    writer.forget("mem_0123456789ab")
    assert not monologue.exists()


@pytest.mark.parametrize(
    "content",
    [
        "[id:mem_000000000000]",
        "[ID:mem_000000000000]",
        "[ id : mem_000000000000]",
        "a\r[id:mem_000000000000]",
        "a\u2028b\u2029c\x85d\x0be\x0cf\x1cg",
        "tab\tand\x00nul\x1b[31mred",
        "ends with a marker [id:mem_0123456789ab]",
    ],
)
def test_entry_lines_are_one_line_with_one_marker(content: str) -> None:
    memory = sample_memory("mem_0123456789ab", content)
    line = entry_line(memory, tz=TOKYO, redact=lambda text: text)
    assert len(line.splitlines()) == 1
    assert line.endswith(" (emotion: curious, intensity: 0.60) [id:mem_0123456789ab]")
    assert line.lower().count("[id") + line.count("[ id") == 1
    assert fold(line) == line
    assert neutralise(line[: -len("[id:mem_0123456789ab]")]) == line[: -len("[id:mem_0123456789ab]")]


def test_a_malformed_id_is_never_written(tmp_path: Path) -> None:
    writer = WorkspaceWriter(tmp_path / "ws", tz=TOKYO, redact=lambda text: text)
    with pytest.raises(WorkspaceWriteError):
        writer.sync(sample_memory("mem_x] [id:mem_0123456789ab", "Spoofed id"))
    with pytest.raises(RenderError):
        writer.forget("mem_0123456789ab]")
    assert all_files_text(tmp_path / "ws") == ""


def _writer(host: PluginHost) -> WorkspaceWriter:
    plugin = host.pm.get_plugin("workspace_sync")
    assert isinstance(plugin, WorkspaceSyncPlugin)
    assert plugin.writer is not None
    return plugin.writer
