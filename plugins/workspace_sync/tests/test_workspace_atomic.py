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
from workspace_helpers import MODEL_DIR, MOMENT, SyncHostFactory, call, lines_of, remember, sample_memory

from ego_core.config import Settings
from ego_core.host import Clock, PluginHost
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
    found = {plugin: list(result) for plugin, result in host.hooks.notify("doctor_checks")}
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
            config={"memory": {"model_dir": str(MODEL_DIR)}, "workspace_sync": {"workspace_dir": str(workspace)}},
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
    from ego_core.types import Memory
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
