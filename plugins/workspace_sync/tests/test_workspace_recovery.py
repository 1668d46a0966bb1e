"""Pending work survives a restart (the journal), ``ego doctor`` sees it, startup cleans stale temporary files."""

from __future__ import annotations

import json
import os
import zoneinfo
from pathlib import Path

import pytest
from workspace_helpers import SAVED, SyncHostFactory, call, forget, lines_of, remember, sample_memory

from ego_core import PluginHost, Settings
from ego_core.testing import mcp_client, tool_text
from ego_workspace_sync import FORGET_PENDING_NOTE, JOURNAL_NAME, WorkspaceWriter

TOKYO = zoneinfo.ZoneInfo("Asia/Tokyo")


def doctor(host: PluginHost) -> dict[str, tuple[bool, str]]:
    found = {plugin: list(result) for plugin, result in host.hooks.doctor_checks()}
    return {check.name: (check.ok, check.detail) for check in found["workspace_sync"]}


def block_the_lock(workspace: Path) -> Path:
    """Replace the lock file by a directory: every write and removal fails until it is put back."""
    lock = workspace / ".ego-workspace.lock"
    lock.unlink(missing_ok=True)
    lock.mkdir(parents=True)
    return lock


def ids_in(path: Path) -> list[str]:
    return [line.rsplit("[id:", 1)[1][:-1] for line in lines_of(path) if line.startswith("- ")]


@pytest.mark.anyio
async def test_a_failed_removal_is_journalled_reported_and_done_after_a_restart(
    sync_host: SyncHostFactory, workspace: Path, ego_settings: Settings
) -> None:
    daily, curated = workspace / "memory" / "2025-03-14.md", workspace / "MEMORY.md"
    journal = ego_settings.data_dir / "workspace_sync" / JOURNAL_NAME
    host = sync_host(workspace)
    async with mcp_client(host) as client:
        ids = []
        for content in ("A plan I will regret", "A plan worth keeping"):
            result = await client.call_tool("remember", {"content": content, "importance": 5})
            found = SAVED.search(tool_text(result))
            assert found is not None
            ids.append(found.group(1))
        target, keep = ids
        lock = block_the_lock(workspace)

        result = await client.call_tool("forget", {"memory_id": target})
        assert not result.is_error
        text = tool_text(result)
        assert text.startswith(f"Forgot (id: {target}")
        note = FORGET_PENDING_NOTE.format(reason="IsADirectoryError: Is a directory")
        assert note == (
            "The workspace files could not be updated yet (IsADirectoryError: Is a directory); "
            "the lines will be removed at the next write or restart."
        )
        assert note in text.split("\n---\n")[0]
    host.stop()

    # The pending removal is on disk, and the lines are still there.
    assert json.loads(journal.read_text(encoding="utf-8"))["workspaces"][str(workspace)]["removals"] == [target]
    assert target in ids_in(daily)
    assert target in ids_in(curated)

    # Another process (ego doctor) starts the plugins: the retry at startup fails again, and it reports it.
    second = sync_host(workspace)
    second.start()
    ok, detail = doctor(second)["pending removals"]
    assert not ok
    assert target in detail
    second.stop()
    assert target in ids_in(daily)

    # The workspace can be written again: the next start completes the removal and clears the journal.
    lock.rmdir()
    third = sync_host(workspace)
    third.start()
    assert ids_in(daily) == [keep]
    assert ids_in(curated) == [keep]
    assert not journal.exists()
    assert "pending removals" not in doctor(third)
    assert [f for f in third.failures if f.plugin == "workspace_sync"] == []


def test_a_failed_write_is_journalled_and_done_after_a_restart(
    sync_host: SyncHostFactory, workspace: Path, ego_settings: Settings
) -> None:
    daily = workspace / "memory" / "2025-03-14.md"
    journal = ego_settings.data_dir / "workspace_sync" / JOURNAL_NAME
    host = sync_host(workspace)
    host.start()
    first = remember(host, "Written at once")
    lock = block_the_lock(workspace)
    data = call(host, "remember", content="Written only after the restart", importance=5)
    assert "could not be updated" in data
    late = data.split("(id: ", 1)[1].split(")", 1)[0]
    host.stop()

    entry = json.loads(journal.read_text(encoding="utf-8"))["workspaces"][str(workspace)]
    assert entry == {"removals": [], "writes": {late: ["curated", "daily"]}}
    assert "Written only after" not in journal.read_text(encoding="utf-8")  # ids only, never content

    lock.rmdir()
    again = sync_host(workspace)
    again.start()  # the memory is found again through the memory plugin's service
    assert ids_in(daily) == [first, late]
    assert ids_in(workspace / "MEMORY.md") == [late]
    assert not journal.exists()
    assert "pending writes" not in doctor(again)


def test_a_pending_write_of_a_memory_forgotten_meanwhile_is_dropped(
    sync_host: SyncHostFactory, workspace: Path, ego_settings: Settings
) -> None:
    host = sync_host(workspace)
    host.start()
    lock = block_the_lock(workspace)
    memory_id = remember(host, "Never to reach the workspace")
    assert doctor(host)["pending writes"][0] is False
    data = forget(host, memory_id)
    assert "could not be updated yet" in data  # the removal could not run either (nothing to remove, though)
    lock.rmdir()
    remember(host, "Another memory")
    assert "Never to reach" not in (workspace / "memory" / "2025-03-14.md").read_text(encoding="utf-8")
    assert set(doctor(host)) == {"workspace"}
    assert not (ego_settings.data_dir / "workspace_sync" / JOURNAL_NAME).exists()


def test_forget_says_so_when_the_pending_removal_cannot_be_saved(
    sync_host: SyncHostFactory, workspace: Path, ego_settings: Settings
) -> None:
    host = sync_host(workspace)
    host.start()
    memory_id = remember(host, "Something to forget")
    block_the_lock(workspace)
    (ego_settings.data_dir / "workspace_sync").mkdir(parents=True, exist_ok=True)
    (ego_settings.data_dir / "workspace_sync" / JOURNAL_NAME).mkdir()  # the journal cannot be written
    data = forget(host, memory_id)
    assert "the lines will be removed at the next write by this server (the pending removal could not be saved" in data
    checks = doctor(host)
    assert checks["pending journal"][0] is False
    assert checks["pending removals"][0] is False  # kept in memory, still reported


def test_stale_temporary_files_are_removed_at_startup(sync_host: SyncHostFactory, workspace: Path) -> None:
    host = sync_host(workspace)
    host.start()
    remember(host, "A line that a killed writer was copying", importance=5)
    host.stop()
    memory_dir = workspace / "memory"
    # What a writer killed between writing its temporary file and the replace leaves behind (this version's
    # names and the earlier mkstemp ones), and files of the user's that merely look alike.
    ours = [
        workspace / ".MEMORY.md.0123456789ab.ego-tmp",
        memory_dir / ".2025-03-14.md.abcdef012345.ego-tmp",
        memory_dir / ".2025-03-14.md.k2_x9abc.ego-tmp",
    ]
    theirs = [
        workspace / "MEMORY.md.ego-tmp",
        workspace / ".notes.ego-tmp",
        workspace / ".MEMORY.md.backup.ego-tmp-old",
        memory_dir / ".2025-03-14.md.0123456789ab.ego-tmp.bak",
    ]
    for path in [*ours, *theirs]:
        path.write_text("a full copy of a workspace file", encoding="utf-8")
    linked = workspace / ".x.0123456789ab.ego-tmp"  # a link is never ours
    linked.symlink_to(workspace / "MEMORY.md")

    again = sync_host(workspace)
    again.start()
    assert [p for p in ours if p.exists()] == []
    assert all(p.exists() for p in theirs)
    assert linked.is_symlink()


def test_startup_creates_nothing_without_pending_work(sync_host: SyncHostFactory, workspace: Path) -> None:
    workspace.mkdir(parents=True)
    host = sync_host(workspace)
    host.start()
    assert list(workspace.iterdir()) == []
    assert host.is_active("workspace_sync")


def test_the_journal_keeps_removals_of_a_writer_used_on_its_own(tmp_path: Path) -> None:
    root, journal = tmp_path / "ws", tmp_path / "data" / JOURNAL_NAME
    writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text, journal=journal)
    writer.sync(sample_memory("mem_aaaaaaaaaaaa", "Goes"))
    writer.sync(sample_memory("mem_bbbbbbbbbbbb", "Stays"))
    lock = block_the_lock(root)
    with pytest.raises(OSError, match="will be retried"):
        writer.forget("mem_aaaaaaaaaaaa")
    assert writer.pending_removals == ("mem_aaaaaaaaaaaa",)

    restarted = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text, journal=journal)
    assert restarted.pending_removals == ("mem_aaaaaaaaaaaa",)
    lock.rmdir()
    restarted.recover()
    assert ids_in(root / "memory" / "2025-03-14.md") == ["mem_bbbbbbbbbbbb"]
    assert restarted.pending_removals == ()
    assert not journal.exists()
    assert os.listdir(journal.parent) == ["pending.lock"]
