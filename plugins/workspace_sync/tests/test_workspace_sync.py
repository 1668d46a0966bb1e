"""What remember writes into the workspace: the daily line, curated MEMORY.md, the inner monologue; config."""

from __future__ import annotations

import importlib.metadata
import logging
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from workspace_helpers import (
    MOMENT,
    SAVED,
    SyncHostFactory,
    all_files_text,
    call,
    lines_of,
    remember,
)

from ego_core import Clock, ConfigError, RememberDraft, Response, Settings, hookimpl
from ego_core.testing import HostFactory, mcp_client, tool_text
from ego_workspace_sync import CONFIG_ENV, WorkspaceSyncConfig, WorkspaceSyncPlugin

ENTRY = re.compile(
    r"^- (?P<time>\d\d:\d\d) \[(?P<category>[a-z_]+)\] (?P<content>.*) "
    r"\(emotion: (?P<emotion>[a-z]+), intensity: (?P<intensity>\d\.\d\d)\) \[id:(?P<id>mem_[0-9a-f]{12})\]$"
)


@pytest.mark.anyio
async def test_remember_through_mcp_writes_the_daily_line_in_local_time(
    sync_host: SyncHostFactory, workspace: Path
) -> None:
    clock = Clock(MOMENT)  # 14:05 in Tokyo
    host = sync_host(workspace, clock=clock)
    async with mcp_client(host) as client:
        result = await client.call_tool(
            "remember",
            {"content": "Talked about the heartbeat config\nwith Master", "emotion": "curious", "intensity": 0.6},
        )
        assert not result.is_error, tool_text(result)
        found = SAVED.search(tool_text(result))
        assert found is not None
        memory_id = found.group(1)

    daily = workspace / "memory" / "2025-03-14.md"
    assert lines_of(daily) == [
        "# 2025-03-14",
        "",
        f"- 14:05 [daily] Talked about the heartbeat config with Master (emotion: curious, intensity: 0.60) "
        f"[id:{memory_id}]",
    ]
    assert not (workspace / "MEMORY.md").exists()  # importance 3, daily: not curated
    assert not (workspace / "memory" / "inner-monologue-latest.md").exists()


def test_the_local_date_decides_the_file_not_the_utc_date(sync_host: SyncHostFactory, workspace: Path) -> None:
    clock = Clock(datetime(2025, 3, 13, 23, 30, tzinfo=UTC))  # 08:30 on the 14th in Tokyo
    host = sync_host(workspace, clock=clock)
    host.start()
    first = remember(host, "Morning tea before work", emotion="contentment")
    clock.set(datetime(2025, 3, 14, 15, 10, tzinfo=UTC))  # 00:10 on the 15th in Tokyo
    second = remember(host, "Could not sleep, thinking about the project", emotion="anxious")

    assert not (workspace / "memory" / "2025-03-13.md").exists()
    day14 = lines_of(workspace / "memory" / "2025-03-14.md")
    day15 = lines_of(workspace / "memory" / "2025-03-15.md")
    assert day14[:2] == ["# 2025-03-14", ""]
    assert day15[:2] == ["# 2025-03-15", ""]
    assert day14[2].startswith("- 08:30 [daily] Morning tea before work (emotion: contentment, intensity: ")
    assert day14[2].endswith(f"[id:{first}]")
    assert day15[2].startswith("- 00:10 [daily] Could not sleep")
    assert day15[2].endswith(f"[id:{second}]")


def test_lines_append_to_the_same_day_and_keep_what_was_there(sync_host: SyncHostFactory, workspace: Path) -> None:
    daily = workspace / "memory" / "2025-03-14.md"
    daily.parent.mkdir(parents=True)
    daily.write_text("# My own notes\n\nwritten by OpenClaw, no trailing newline", encoding="utf-8")
    clock = Clock(MOMENT)
    host = sync_host(workspace, clock=clock)
    host.start()
    ids = []
    for minute, text in enumerate(["First thing today", "Second thing today", "Third thing today"]):
        clock.set(MOMENT + timedelta(minutes=minute))
        ids.append(remember(host, text))

    lines = lines_of(daily)
    assert lines[:3] == ["# My own notes", "", "written by OpenClaw, no trailing newline"]
    entries = [ENTRY.match(line) for line in lines[3:]]
    assert [m["id"] for m in entries if m] == ids
    assert [m["time"] for m in entries if m] == ["14:05", "14:06", "14:07"]
    assert len(lines) == 6


@pytest.mark.parametrize(
    ("category", "importance", "curated"),
    [
        ("daily", 3, False),
        ("technical", 1, False),
        ("daily", 4, True),
        ("conversation", 5, True),
        ("introspection", 1, True),
        ("relationship", 2, True),
        ("self_discovery", 3, True),
        ("lesson", 1, True),
        ("philosophical", 3, False),
    ],
)
def test_curated_rules(
    sync_host: SyncHostFactory, workspace: Path, category: str, importance: int, curated: bool
) -> None:
    host = sync_host(workspace)
    host.start()
    memory_id = remember(host, f"Something about {category} at {importance}", category=category, importance=importance)

    curated_lines = [line for line in lines_of(workspace / "MEMORY.md") if line.endswith(f"[id:{memory_id}]")]
    assert len(curated_lines) == (1 if curated else 0)
    if curated:
        assert lines_of(workspace / "MEMORY.md")[0] == "# MEMORY"
        assert curated_lines[0] == (
            f"- 2025-03-14 14:05 [{category}] Something about {category} at {importance} "
            f"(emotion: neutral, intensity: 0.30) [id:{memory_id}]"
        )
    daily = [line for line in lines_of(workspace / "memory" / "2025-03-14.md") if line.endswith(f"[id:{memory_id}]")]
    assert len(daily) == 1


def test_introspection_overwrites_the_inner_monologue(sync_host: SyncHostFactory, workspace: Path) -> None:
    clock = Clock(MOMENT)
    host = sync_host(workspace, clock=clock)
    host.start()
    monologue = workspace / "memory" / "inner-monologue-latest.md"
    first = remember(host, "Am I curious, or only trained to look curious?", category="introspection")
    text = monologue.read_text(encoding="utf-8")
    assert text == (
        f"<!-- ego-workspace-sync inner-monologue id={first} -->\n"
        "# Inner monologue (2025-03-14 14:05)\n\n"
        "> Am I curious, or only trained to look curious?\n"
    )

    clock.set(MOMENT + timedelta(hours=2))
    remember(host, "A plain note about lunch")  # not introspection: the monologue stays
    assert monologue.read_text(encoding="utf-8") == text

    clock.set(MOMENT + timedelta(hours=3))
    second = remember(host, "Line one of a thought\n\nline two, after a pause", category="introspection")
    text = monologue.read_text(encoding="utf-8")
    assert text.startswith(f"<!-- ego-workspace-sync inner-monologue id={second} previous={first} -->\n")
    assert text.endswith(
        "# Inner monologue (2025-03-14 17:05)\n\n> Line one of a thought\n>\n> line two, after a pause\n"
    )
    assert "Am I curious" not in text


def test_secrets_in_content_are_masked_in_every_file(sync_host: SyncHostFactory, workspace: Path) -> None:
    host = sync_host(workspace)
    host.start()
    secret = "sk-live-abcdefghijklmnopqrstuvwx1234"
    remember(host, f"Master pasted the key {secret} by mistake", category="introspection", importance=5)

    text = all_files_text(workspace)
    assert secret not in text
    assert "abcdefghijklmnopqrstuvwx1234" not in text
    daily = lines_of(workspace / "memory" / "2025-03-14.md")[2]
    assert "Master pasted the key [REDACTED] by mistake" in daily
    assert "[REDACTED]" in (workspace / "MEMORY.md").read_text(encoding="utf-8")
    assert "[REDACTED]" in (workspace / "memory" / "inner-monologue-latest.md").read_text(encoding="utf-8")


def test_disabled_without_workspace_dir_writes_nothing_and_says_so(
    sync_host: SyncHostFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EGO_WORKSPACE_DIR", raising=False)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    host = sync_host(None)
    host.start()
    memory_id = remember(host, "A day like any other", category="introspection", importance=5)
    data = call(host, "forget", memory_id=memory_id)

    assert data.startswith(f"Forgot (id: {memory_id}")
    assert host.is_active("workspace_sync")
    assert [f for f in host.failures if f.plugin == "workspace_sync"] == []
    created = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert not [p for p in created if p not in before and not str(p).startswith("ego-data")]
    checks = {plugin: list(result) for plugin, result in host.hooks.doctor_checks()}
    [check] = checks["workspace_sync"]
    assert check.ok
    assert "disabled" in check.detail
    assert "EGO_WORKSPACE_DIR" in check.detail


def test_environment_variable_enables_and_wins_over_the_file(
    make_host: HostFactory, ego_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ego_memory.plugin import MemoryPlugin

    target = tmp_path / "from-env"
    monkeypatch.setenv("EGO_WORKSPACE_DIR", str(target))
    host = make_host(
        {"memory": MemoryPlugin(), "workspace_sync": WorkspaceSyncPlugin()},
        config={"workspace_sync": {"workspace_dir": str(tmp_path / "file")}},
        clock=Clock(MOMENT),
    )
    host.start()
    memory_id = remember(host, "Set through the environment")
    assert f"[id:{memory_id}]" in (target / "memory" / "2025-03-14.md").read_text(encoding="utf-8")
    assert not (tmp_path / "file").exists()
    assert CONFIG_ENV == {"EGO_WORKSPACE_DIR": "workspace_dir"}


def test_a_relative_workspace_dir_is_a_config_error(make_host: HostFactory) -> None:
    with pytest.raises(ConfigError, match=r"plugins\.workspace_sync\.workspace_dir.*absolute"):
        make_host({"workspace_sync": WorkspaceSyncPlugin()}, config={"workspace_sync": {"workspace_dir": "ws"}})


def test_home_is_expanded_in_the_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from ego_core.testing import structure_plugin_config

    monkeypatch.setenv("HOME", str(tmp_path))
    config = structure_plugin_config(
        "workspace_sync", WorkspaceSyncConfig, {"workspace_dir": "~/openclaw/workspace"}, CONFIG_ENV, env={}
    )
    assert config.workspace_dir == tmp_path / "openclaw" / "workspace"


def test_doctor_reports_a_writable_workspace(sync_host: SyncHostFactory, workspace: Path) -> None:
    host = sync_host(workspace)
    host.start()
    remember(host, "Something to write")
    checks = {plugin: list(result) for plugin, result in host.hooks.doctor_checks()}
    [check] = checks["workspace_sync"]
    assert check.ok
    assert check.detail == f"{workspace} (writable)"
    assert sorted(p.name for p in workspace.rglob("*")) == [".ego-workspace.lock", "2025-03-14.md", "memory"]


def test_doctor_creates_nothing(sync_host: SyncHostFactory, workspace: Path) -> None:
    """A mistyped workspace path must not be created by ``ego doctor`` (which starts the plugins)."""
    host = sync_host(workspace)
    host.start()
    checks = {plugin: list(result) for plugin, result in host.hooks.doctor_checks()}
    [check] = checks["workspace_sync"]
    assert check.ok
    assert check.detail == f"{workspace} does not exist yet (created at the first write)"
    assert not workspace.exists()
    assert not workspace.parent.exists()

    workspace.mkdir(parents=True)
    [check] = {plugin: list(result) for plugin, result in host.hooks.doctor_checks()}["workspace_sync"]
    assert check.ok
    assert "memory/ does not exist yet" in check.detail
    assert list(workspace.iterdir()) == []  # the probe file is gone, and no memory/ was made


def test_doctor_reports_an_unwritable_workspace(sync_host: SyncHostFactory, workspace: Path) -> None:
    workspace.mkdir(parents=True)
    (workspace / "memory").write_text("not a directory", encoding="utf-8")
    host = sync_host(workspace)
    host.start()
    checks = {plugin: list(result) for plugin, result in host.hooks.doctor_checks()}
    [check] = checks["workspace_sync"]
    assert not check.ok
    assert "not writable" in check.detail
    assert "memory is not a directory" in check.detail


@pytest.mark.parametrize("where", ["itself", "above"])
def test_a_workspace_dir_that_is_a_file_is_a_config_error(
    sync_host: SyncHostFactory, tmp_path: Path, where: str
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    workspace = blocker if where == "itself" else blocker / "workspace"
    host = sync_host(workspace)
    with pytest.raises(ConfigError) as raised:
        host.start()
    message = str(raised.value)
    assert message.startswith("plugins.workspace_sync.workspace_dir (or EGO_WORKSPACE_DIR): ")
    assert f"{blocker} is a file, not a directory" in message
    assert blocker.read_text(encoding="utf-8") == "not a directory"


def test_plugin_requires_memory(make_host: HostFactory, workspace: Path) -> None:
    host = make_host(
        {"workspace_sync": WorkspaceSyncPlugin()}, config={"workspace_sync": {"workspace_dir": str(workspace)}}
    )
    assert not host.is_active("workspace_sync")
    assert any(f.plugin == "workspace_sync" and f.stage == "dependency" for f in host.failures)


def test_entry_point_is_installed() -> None:
    [entry] = [ep for ep in importlib.metadata.entry_points(group="ego") if ep.name == "workspace_sync"]
    assert entry.value == "ego_workspace_sync.plugin:WorkspaceSyncPlugin"
    assert entry.load() is WorkspaceSyncPlugin


def test_a_failed_sync_is_logged_without_content(
    sync_host: SyncHostFactory, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    workspace.mkdir(parents=True)
    (workspace / ".ego-workspace.lock").mkdir()  # the lock cannot be opened: every write fails
    host = sync_host(workspace)
    host.start()
    with caplog.at_level(logging.WARNING, logger="ego.plugin.workspace_sync"):
        data = call(host, "remember", content="Words that should stay out of the log")
    assert data.startswith("Saved (id: mem_")
    assert "could not be updated" in data
    assert "workspace sync of mem_" in caplog.text
    assert "Words that should stay" not in caplog.text


class Guard:
    """A stand-in for the duplicate guard: vetoes every save whose content starts with "Blocked"."""

    @hookimpl(optionalhook=True)
    def before_remember(self, draft: RememberDraft) -> Response | None:
        if draft.content.startswith("Blocked"):
            return Response(data="Not saved — very similar memory already exists.")
        return None


def test_a_vetoed_save_leaves_the_workspace_untouched(
    make_host: HostFactory, ego_settings: Settings, workspace: Path
) -> None:
    from ego_memory.plugin import MemoryPlugin

    host = make_host(
        {"memory": MemoryPlugin(), "workspace_sync": WorkspaceSyncPlugin(), "guard": Guard()},
        config={"workspace_sync": {"workspace_dir": str(workspace)}},
        clock=Clock(MOMENT),
    )
    host.start()
    remember(host, "Saved, the guard let it through", category="introspection", importance=5)
    snapshot = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()}

    data = call(host, "remember", content="Blocked by the guard", category="introspection", importance=5)
    assert data.startswith("Not saved")
    assert {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()} == snapshot
