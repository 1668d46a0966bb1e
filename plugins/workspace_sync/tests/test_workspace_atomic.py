"""Crash safety and concurrency: failed writes leave files intact; concurrent writers lose no line."""

from __future__ import annotations

import errno
import logging
import os
import subprocess
import sys
import textwrap
import threading
import zoneinfo
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import attrs
import pytest
from workspace_helpers import MOMENT, SyncHostFactory, call, lines_of, remember, sample_memory

from ego_core import Clock, PluginHost, Settings
from ego_core.testing import HostFactory
from ego_memory.plugin import MemoryPlugin
from ego_workspace_sync import SYNC_FAILED_NOTE, WorkspaceSyncPlugin, WorkspaceWriteError, WorkspaceWriter

TOKYO = zoneinfo.ZoneInfo("Asia/Tokyo")


def fail_once(monkeypatch: pytest.MonkeyPatch, name: str, applies: Callable[..., bool], *, times: int = 1) -> list[Any]:
    """Make ``os.<name>`` raise ENOSPC for the next ``times`` calls that ``applies`` to; others go through."""
    original = getattr(os, name)
    failures: list[Any] = []

    def patched(*args: Any, **kwargs: Any) -> Any:
        if len(failures) < times and applies(*args):
            failures.append(args)
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(*args, **kwargs)

    monkeypatch.setattr(os, name, patched)
    return failures


def in_workspace(workspace: Path) -> Callable[..., bool]:
    return lambda _src, dst, *_rest: Path(dst).is_relative_to(workspace)


def temporaries(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".ego-tmp")]


def writer_of(host: PluginHost) -> WorkspaceWriter:
    plugin = host.pm.get_plugin("workspace_sync")
    assert isinstance(plugin, WorkspaceSyncPlugin)
    assert plugin.writer is not None
    return plugin.writer


def doctor(host: PluginHost) -> dict[str, tuple[bool, str]]:
    found = {plugin: list(result) for plugin, result in host.hooks.doctor_checks()}
    return {check.name: (check.ok, check.detail) for check in found["workspace_sync"]}


def test_a_failed_replace_leaves_the_file_intact_and_the_remember_succeeds(
    sync_host: SyncHostFactory, workspace: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock(MOMENT)
    host = sync_host(workspace, clock=clock)
    host.start()
    daily = workspace / "memory" / "2025-03-14.md"
    first = remember(host, "The first memory of the day", importance=5)
    daily_before = daily.read_bytes()
    curated_before = (workspace / "MEMORY.md").read_bytes()

    failures = fail_once(monkeypatch, "replace", in_workspace(workspace), times=2)
    clock.set(MOMENT + timedelta(minutes=1))
    with caplog.at_level(logging.WARNING, logger="ego.plugin.workspace_sync"):
        data = call(host, "remember", content="A second memory while the disk is full", importance=5)
    second = data.split("(id: ", 1)[1].split(")", 1)[0]

    assert len(failures) == 2  # the daily log and MEMORY.md were both attempted
    assert data.startswith(f"Saved (id: {second}).")
    assert SYNC_FAILED_NOTE in data
    assert daily.read_bytes() == daily_before
    assert (workspace / "MEMORY.md").read_bytes() == curated_before
    assert temporaries(workspace) == []
    assert f"workspace sync of {second} failed" in caplog.text
    assert "disk is full" not in caplog.text
    assert "No space left on device" in caplog.text
    assert writer_of(host).pending_syncs == (second,)
    assert doctor(host)["pending writes"][0] is False
    assert [f for f in host.failures if f.plugin == "workspace_sync"] == []

    # The disk has room again: the next write first completes the pending one.
    clock.set(MOMENT + timedelta(minutes=2))
    third = remember(host, "A third memory, the disk has room again")
    assert [line.rsplit("[id:", 1)[1][:-1] for line in lines_of(daily) if line.startswith("- ")] == [
        first,
        second,
        third,
    ]
    assert sum(line.endswith(f"[id:{second}]") for line in lines_of(workspace / "MEMORY.md")) == 1
    assert not writer_of(host).pending_syncs
    assert "pending writes" not in doctor(host)


def test_a_failure_while_writing_the_temporary_file_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text)
    writer.sync(sample_memory("mem_aaaaaaaaaaaa", "Already there"))
    daily = root / "memory" / "2025-03-14.md"
    before = daily.read_bytes()

    fail_once(monkeypatch, "fsync", lambda _fd: True)
    with pytest.raises(WorkspaceWriteError, match="No space left on device"):
        writer.append_daily(sample_memory("mem_bbbbbbbbbbbb", "Will not fit"))
    assert daily.read_bytes() == before
    assert temporaries(root) == []


def test_a_forgotten_memory_waiting_to_be_written_is_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text)
    fail_once(monkeypatch, "replace", in_workspace(root))
    with pytest.raises(WorkspaceWriteError):
        writer.sync(sample_memory("mem_aaaaaaaaaaaa", "Never to be seen"))
    assert writer.pending_syncs == ("mem_aaaaaaaaaaaa",)
    writer.forget("mem_aaaaaaaaaaaa")
    writer.sync(sample_memory("mem_bbbbbbbbbbbb", "Another one"))
    assert "Never to be seen" not in (root / "memory" / "2025-03-14.md").read_text(encoding="utf-8")
    assert not writer.pending_syncs


def test_a_failed_forget_is_retried_before_the_next_write(
    sync_host: SyncHostFactory, workspace: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    host = sync_host(workspace)
    host.start()
    daily = workspace / "memory" / "2025-03-14.md"
    target = remember(host, "Something to forget later")
    keep = remember(host, "Something to keep")
    before = daily.read_bytes()

    fail_once(monkeypatch, "replace", in_workspace(workspace))
    with caplog.at_level(logging.ERROR, logger="ego.plugin.workspace_sync"):
        data = call(host, "forget", memory_id=target)
    assert data.startswith(f"Forgot (id: {target}")  # the memory itself is gone
    assert daily.read_bytes() == before  # the file was left whole
    assert f"workspace cleanup of {target} failed" in caplog.text
    assert writer_of(host).pending_removals == (target,)
    assert doctor(host)["pending removals"][0] is False

    newest = remember(host, "The next memory")
    text = daily.read_text(encoding="utf-8")
    assert target not in text
    assert "Something to forget later" not in text
    assert f"[id:{keep}]" in text
    assert f"[id:{newest}]" in text
    assert not writer_of(host).pending_removals


def test_an_unexpected_error_in_the_plugin_is_isolated_by_the_core(
    sync_host: SyncHostFactory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = sync_host(workspace)
    host.start()

    def broken(_memory: object) -> list[Path]:
        raise RuntimeError("unexpected")

    monkeypatch.setattr(writer_of(host), "sync", broken)
    data = call(host, "remember", content="Still saved")
    assert data.startswith("Saved (id: mem_")
    assert [(f.plugin, f.hook) for f in host.failures] == [("workspace_sync", "on_remember")]
    assert host.is_active("workspace_sync")


# --------------------------------------------------------------------------------------------------
# Concurrency


def test_two_writers_in_two_threads_lose_no_line(tmp_path: Path) -> None:
    """Two writers (two thread locks: only the file lock keeps them apart) append 100 lines each."""
    root = tmp_path / "ws"
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def work(prefix: str) -> None:
        writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text)
        barrier.wait()
        try:
            for n in range(100):
                memory_id = f"mem_{prefix}{n:011x}"
                writer.sync(sample_memory(memory_id, f"line {n} from {prefix}", importance=4 + n % 2))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(prefix,)) for prefix in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    expected = {f"mem_{prefix}{n:011x}" for prefix in ("a", "b") for n in range(100)}
    for path in (root / "memory" / "2025-03-14.md", root / "MEMORY.md"):
        ids = [line.rsplit("[id:", 1)[1][:-1] for line in lines_of(path) if line.startswith("- ")]
        assert sorted(ids) == sorted(expected)
    assert temporaries(root) == []


@pytest.mark.slow
def test_two_hosts_on_one_workspace_in_two_threads_lose_no_line(
    make_host: HostFactory, ego_settings: Settings, tmp_path: Path
) -> None:
    workspace = tmp_path / "shared-workspace"
    hosts = []
    for name in ("one", "two"):
        host = make_host(
            {"memory": MemoryPlugin(), "workspace_sync": WorkspaceSyncPlugin()},
            config={"workspace_sync": {"workspace_dir": str(workspace)}},
            settings=attrs.evolve(ego_settings, data_dir=tmp_path / f"data-{name}", timezone="Asia/Tokyo"),
            clock=Clock(MOMENT),
        )
        host.start()
        hosts.append(host)
    barrier = threading.Barrier(2)
    saved: dict[str, list[str]] = {"one": [], "two": []}
    errors: list[BaseException] = []

    def work(name: str, host: PluginHost) -> None:
        barrier.wait()
        try:
            for n in range(100):
                saved[name].append(remember(host, f"Host {name} remembers item number {n}"))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n, h)) for n, h in zip(("one", "two"), hosts, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    lines = [line for line in lines_of(workspace / "memory" / "2025-03-14.md") if line.startswith("- ")]
    assert len(lines) == 200
    assert sorted(line.rsplit("[id:", 1)[1][:-1] for line in lines) == sorted(saved["one"] + saved["two"])
    for host in hosts:
        assert [f for f in host.failures if f.plugin == "workspace_sync"] == []


WORKER = textwrap.dedent(
    """
    import sys, time, zoneinfo
    from datetime import UTC, datetime
    from pathlib import Path
    from ego_core import Memory
    from ego_workspace_sync import WorkspaceWriter

    root, prefix, go = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    writer = WorkspaceWriter(root, tz=zoneinfo.ZoneInfo("Asia/Tokyo"), redact=lambda text: text)
    while not go.exists():
        time.sleep(0.001)
    for n in range(100):
        writer.sync(Memory(id=f"mem_{prefix}{n:011x}", content=f"process {prefix} line {n}",
                           timestamp=datetime(2025, 3, 14, 5, 5, tzinfo=UTC), importance=5))
    """
)


def test_two_processes_on_one_workspace_lose_no_line(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    go = tmp_path / "go"
    env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
    workers = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(root), prefix, str(go)], env=env) for prefix in ("c", "d")
    ]
    go.write_text("go", encoding="utf-8")
    assert [worker.wait(timeout=120) for worker in workers] == [0, 0]

    expected = sorted(f"mem_{prefix}{n:011x}" for prefix in ("c", "d") for n in range(100))
    for path in (root / "memory" / "2025-03-14.md", root / "MEMORY.md"):
        ids = [line.rsplit("[id:", 1)[1][:-1] for line in lines_of(path) if line.startswith("- ")]
        assert sorted(ids) == expected


def test_a_rewritten_file_keeps_its_permissions(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text)
    writer.sync(sample_memory("mem_aaaaaaaaaaaa", "First"))
    daily = root / "memory" / "2025-03-14.md"
    assert daily.stat().st_mode & 0o777 == 0o644
    daily.chmod(0o600)
    writer.sync(sample_memory("mem_bbbbbbbbbbbb", "Second"))
    assert daily.stat().st_mode & 0o777 == 0o600
    writer.forget("mem_aaaaaaaaaaaa")
    assert daily.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("umask", [0o077, 0o002])
def test_new_files_honour_the_umask(tmp_path: Path, umask: int) -> None:
    root = tmp_path / "ws"
    previous = os.umask(umask)
    try:
        writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text)
        writer.sync(sample_memory("mem_aaaaaaaaaaaa", "Looking inward", category="introspection"))
    finally:
        os.umask(previous)
    for path in (root / "memory" / "2025-03-14.md", root / "MEMORY.md", root / "memory" / "inner-monologue-latest.md"):
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask, path


def test_symbolic_links_stay_links(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "ws", tmp_path / "notes"
    (root / "memory").mkdir(parents=True)
    elsewhere.mkdir()
    curated_target, daily_target = elsewhere / "curated.md", elsewhere / "today.md"
    curated_target.write_text("# MEMORY\nmine\n", encoding="utf-8")
    curated_target.chmod(0o600)
    daily_target.write_text("# 2025-03-14\n\nmy own note\n", encoding="utf-8")
    (root / "MEMORY.md").symlink_to(curated_target)
    (root / "memory" / "2025-03-14.md").symlink_to(daily_target)
    monologue_target = elsewhere / "monologue.md"
    (root / "memory" / "inner-monologue-latest.md").symlink_to(monologue_target)  # dangling until written

    writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text)
    writer.sync(sample_memory("mem_aaaaaaaaaaaa", "Through the links", category="introspection"))
    writer.sync(sample_memory("mem_bbbbbbbbbbbb", "A second one", importance=5))
    for link, target in (
        (root / "MEMORY.md", curated_target),
        (root / "memory" / "2025-03-14.md", daily_target),
        (root / "memory" / "inner-monologue-latest.md", monologue_target),
    ):
        assert link.is_symlink(), link
        assert link.resolve() == target
    assert curated_target.read_text(encoding="utf-8").startswith("# MEMORY\nmine\n- 2025-03-14 14:05 [introspection]")
    assert curated_target.stat().st_mode & 0o777 == 0o600
    assert lines_of(daily_target)[2] == "my own note"
    assert "Through the links" in monologue_target.read_text(encoding="utf-8")

    writer.forget("mem_bbbbbbbbbbbb")
    assert (root / "MEMORY.md").is_symlink()
    assert "A second one" not in curated_target.read_text(encoding="utf-8")
    assert "A second one" not in daily_target.read_text(encoding="utf-8")
    assert temporaries(root) == []
    assert temporaries(elsewhere) == []


HUMAN = b"- a line OpenClaw appended itself\n"


def test_an_append_while_the_temporary_file_is_synced_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another program appends while ego's copy is being fsynced (the widest part of the old race): ego sees the
    file changed before its replace and starts over from the new content."""
    root = tmp_path / "ws"
    writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text)
    writer.append_curated(sample_memory("mem_aaaaaaaaaaaa", "First"))
    curated = root / "MEMORY.md"
    original = os.fsync
    appended: list[int] = []

    def fsync(fd: int) -> None:
        if not appended:  # the first fsync is the temporary copy's
            handle = os.open(curated, os.O_WRONLY | os.O_APPEND)
            appended.append(os.write(handle, HUMAN))
            os.close(handle)
        original(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    assert writer.append_curated(sample_memory("mem_bbbbbbbbbbbb", "Second"))
    data = curated.read_bytes()
    assert appended
    assert HUMAN in data
    assert ids_of(curated) == ["mem_aaaaaaaaaaaa", "mem_bbbbbbbbbbbb"]
    assert temporaries(root) == []


def test_a_file_another_program_replaced_meanwhile_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor saves MEMORY.md (its own write-and-rename) while ego's copy is being fsynced: ego sees another
    file at the path before its replace and starts over from the editor's version."""
    root = tmp_path / "ws"
    writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text)
    writer.append_curated(sample_memory("mem_aaaaaaaaaaaa", "First"))
    curated = root / "MEMORY.md"
    edited = curated.read_bytes().replace(b"Curated memories, mirrored by ego.", b"Edited by hand.")
    original_fsync, original_replace = os.fsync, os.replace
    saved: list[bool] = []

    def fsync(fd: int) -> None:
        if not saved:
            saved.append(True)
            (root / "editor-save").write_bytes(edited)
            original_replace(root / "editor-save", curated)
        original_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    writer.append_curated(sample_memory("mem_bbbbbbbbbbbb", "Second"))
    data = curated.read_bytes()
    assert saved
    assert b"Edited by hand." in data
    assert b"mirrored by ego" not in data
    assert ids_of(curated) == ["mem_aaaaaaaaaaaa", "mem_bbbbbbbbbbbb"]


def test_an_append_to_the_old_file_just_after_the_replace_is_carried_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A program that opened the file before ego's replace and writes just after it writes into the replaced
    file: ego copies those bytes into the new one."""
    root = tmp_path / "ws"
    writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text)
    writer.append_curated(sample_memory("mem_aaaaaaaaaaaa", "First"))
    curated = root / "MEMORY.md"
    original = os.replace
    late: list[int] = []

    def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if late or Path(dst) != curated:
            original(src, dst, *args, **kwargs)
            return
        handle = os.open(curated, os.O_WRONLY | os.O_APPEND)  # the other program has the old file open
        original(src, dst, *args, **kwargs)
        late.append(os.write(handle, HUMAN))
        os.close(handle)

    monkeypatch.setattr(os, "replace", replace)
    writer.append_curated(sample_memory("mem_bbbbbbbbbbbb", "Second"))
    assert late
    assert curated.read_bytes().endswith(HUMAN)
    assert ids_of(curated) == ["mem_aaaaaaaaaaaa", "mem_bbbbbbbbbbbb"]


@pytest.mark.parametrize("then", ["the next rewrite", "shutdown"])
def test_an_append_to_the_old_file_well_after_the_replace_is_carried_over(tmp_path: Path, then: str) -> None:
    """A program that opened the file before ego's replace may write to it long after (it was descheduled): the
    bytes reach the file with ego's next rewrite of it, or when ego shuts down."""
    root = tmp_path / "ws"
    writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text)
    writer.append_curated(sample_memory("mem_aaaaaaaaaaaa", "First"))
    curated = root / "MEMORY.md"
    handle = os.open(curated, os.O_WRONLY | os.O_APPEND)  # the other program opens the file ...
    writer.append_curated(sample_memory("mem_bbbbbbbbbbbb", "Second"))  # ... ego replaces it ...
    os.write(handle, HUMAN)  # ... and only then does the other program write
    os.close(handle)
    assert HUMAN not in curated.read_bytes()
    if then == "shutdown":
        writer.close()
    else:
        writer.append_curated(sample_memory("mem_cccccccccccc", "Third"))
    data = curated.read_bytes()
    assert data.count(HUMAN) == 1
    expected = ["mem_aaaaaaaaaaaa", "mem_bbbbbbbbbbbb"] + (["mem_cccccccccccc"] if then != "shutdown" else [])
    assert ids_of(curated) == expected


APPENDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path

    path, go, count = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    while not go.exists():
        time.sleep(0.001)
    for n in range(count):
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"human note {n}\\n")
        time.sleep(0.003)
    """
)


def test_another_program_appending_concurrently_loses_nothing(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    curated, go = root / "MEMORY.md", tmp_path / "go"
    curated.write_text("# MEMORY\n", encoding="utf-8")
    human = subprocess.Popen([sys.executable, "-c", APPENDER, str(curated), str(go), "300"])
    writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text)
    expected = []
    go.write_text("go", encoding="utf-8")
    failures = 0
    try:
        for n in range(150):
            memory_id = f"mem_e{n:011x}"
            expected.append(memory_id)
            try:
                writer.append_curated(sample_memory(memory_id, f"ego line {n}"))
            except WorkspaceWriteError:
                failures += 1  # the file kept changing: kept pending, written with a later line
    finally:
        assert human.wait(timeout=120) == 0
    writer.append_curated(sample_memory("mem_f00000000000", "after the other program stopped"))
    expected.append("mem_f00000000000")

    lines = lines_of(curated)
    assert sorted(line for line in lines if line.startswith("human note")) == sorted(
        f"human note {n}" for n in range(300)
    )
    assert sorted(ids_of(curated)) == sorted(expected)
    assert not writer.pending_syncs
    assert failures < 10
    assert temporaries(root) == []


def ids_of(path: Path) -> list[str]:
    return [line.rsplit("[id:", 1)[1][:-1] for line in lines_of(path) if line.startswith("- 2025")]
