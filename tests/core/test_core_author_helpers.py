"""The small helpers a plugin author would otherwise write by hand: a plugin's SQLite database, the session
marker, ``Tool(needs=...)``; and what the host tells an author who got something wrong (a hook parameter with a
default, a misspelt hook, a plugin that failed before it served)."""

from __future__ import annotations

import os
import sqlite3
import stat
import tempfile
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ego_core import Check, Clock, PluginContext, Section, Tool, hookimpl
from ego_core.kernel.storage import DatabaseVersionError, open_database, private_directory, read_database
from ego_core.testing import call_ok, export_file, mcp_client, tool_text

if TYPE_CHECKING:
    from ego_core.testing import FakeDistFactory, HostFactory

pytestmark = pytest.mark.anyio

MIGRATIONS = (
    "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL);",
    "ALTER TABLE notes ADD COLUMN created REAL NOT NULL DEFAULT 0;\nCREATE INDEX notes_created ON notes(created);",
)


# --------------------------------------------------------------------------------------------------
# A plugin's database


def test_a_database_is_private_in_wal_mode_and_migrated(tmp_path: Path) -> None:
    path = tmp_path / "dream" / "dream.sqlite3"
    with open_database(path, MIGRATIONS[:1]) as first:
        assert first.version == 1
        with first.write() as db:
            db.execute("INSERT INTO notes(text) VALUES ('夢を見た')")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with open_database(path, MIGRATIONS) as second:  # a release that adds a migration
        assert second.version == 2
        assert second.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert second.db.execute("SELECT text, created FROM notes").fetchall() == [("夢を見た", 0)]
    with pytest.raises(DatabaseVersionError, match="newer than this plugin knows"):
        open_database(path, MIGRATIONS[:1])  # an older release never touches a newer file


def test_a_migration_may_put_statements_on_one_line_and_semicolons_in_strings_and_triggers(tmp_path: Path) -> None:
    migrations = (
        "CREATE TABLE a (x TEXT DEFAULT 'a;b'); CREATE TABLE b (y TEXT); -- done; really\n",
        "CREATE TRIGGER a_copy AFTER INSERT ON a BEGIN INSERT INTO b(y) VALUES (new.x); END; "
        "INSERT INTO a DEFAULT VALUES;",
    )
    with open_database(tmp_path / "d.sqlite3", migrations) as database:
        assert database.version == 2
        assert database.db.execute("SELECT x FROM a").fetchall() == [("a;b",)]
        assert database.db.execute("SELECT y FROM b").fetchall() == [("a;b",)]


_names = st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), min_size=1, max_size=6, unique=True)
_defaults = st.text(alphabet="ab;'-\n 夢", max_size=8)
_gaps = st.sampled_from(["", " ", "\n", "\n\n", " -- a; note\n", " /* x; y */ "])


@given(names=_names, defaults=st.lists(_defaults, min_size=6, max_size=6), gaps=st.lists(_gaps, min_size=6, max_size=6))
def test_every_statement_of_a_migration_runs_once_in_order(
    names: list[str], defaults: list[str], gaps: list[str]
) -> None:
    statements = [
        f"CREATE TABLE t_{name} (v TEXT DEFAULT '{default.replace(chr(39), chr(39) * 2)}');"
        for name, default in zip(names, defaults, strict=False)
    ]
    script = "".join(statement + gap for statement, gap in zip(statements, gaps, strict=False))
    with tempfile.TemporaryDirectory() as tmp, open_database(Path(tmp) / "d.sqlite3", (script,)) as database:
        tables = [row[0] for row in database.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        assert tables == [f"t_{name}" for name in names]
        for name, default in zip(names, defaults, strict=False):
            database.db.execute(f"INSERT INTO t_{name} DEFAULT VALUES")
            assert database.db.execute(f"SELECT v FROM t_{name}").fetchone() == (default,)


def test_a_failing_write_changes_nothing_and_writers_take_turns(tmp_path: Path) -> None:
    database = open_database(tmp_path / "d.sqlite3", MIGRATIONS)

    def crash() -> None:
        with database.write() as db:
            db.execute("INSERT INTO notes(text) VALUES ('half')")
            raise RuntimeError("crash in the middle")

    with pytest.raises(RuntimeError):
        crash()
    assert database.db.execute("SELECT count(*) FROM notes").fetchone()[0] == 0

    def add(n: int) -> None:
        for i in range(20):
            with database.write() as db:
                (count,) = db.execute("SELECT count(*) FROM notes").fetchone()
                db.execute("INSERT INTO notes(id, text) VALUES (?, ?)", (count + 1, f"{n}-{i}"))

    threads = [threading.Thread(target=add, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert database.db.execute("SELECT count(*) FROM notes").fetchone()[0] == 80
    database.close()


def test_a_read_only_open_creates_and_migrates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "d.sqlite3"
    assert read_database(path) is None
    assert not path.exists()
    open_database(path, MIGRATIONS[:1]).close()
    reader = read_database(path)
    assert reader is not None
    assert reader.version == 1  # not migrated
    with pytest.raises(sqlite3.OperationalError), reader.write():
        pass
    with pytest.raises(sqlite3.OperationalError):
        reader.db.execute("INSERT INTO notes(text) VALUES ('x')")
    reader.close()


class Journal:
    """A plugin keeping its state with ``ctx.database``, its doctor check reading it with ``ctx.read_database``."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        ctx.database(MIGRATIONS).close()
        if self.fail:
            raise OSError("the journal is damaged")

    @hookimpl
    def doctor_checks(self, ctx: PluginContext) -> list[Check]:
        reader = ctx.read_database()
        if reader is None:
            return [Check("journal", False, "no journal yet")]
        with reader:
            return [Check("journal", not self.fail, f"schema version {reader.version}")]


def test_ctx_opens_the_plugins_database_in_its_data_dir(make_host: HostFactory) -> None:
    host = make_host({"journal": Journal()})
    host.start()
    path = host.settings.data_dir / "journal" / "journal.sqlite3"
    assert path.is_file()
    assert host.hooks.doctor_checks() == [("journal", [Check("journal", True, "schema version 2")])]


def test_a_plugins_directory_is_its_owners_only(make_host: HostFactory) -> None:
    host = make_host({"journal": Journal()})
    data_dir = host.settings.data_dir
    older = data_dir / "journal"
    older.mkdir(parents=True, mode=0o755)  # as a release before this one left it
    os.chmod(older, 0o755)
    host.start()
    assert stat.S_IMODE(older.stat().st_mode) == 0o700
    assert stat.S_IMODE((older / "journal.sqlite3").stat().st_mode) == 0o600


def test_a_private_directory_creates_its_missing_parents_private_and_tightens_only_when_asked(tmp_path: Path) -> None:
    nested = tmp_path / "fresh" / "ego" / "memory"
    assert private_directory(nested) == nested
    assert stat.S_IMODE((tmp_path / "fresh").stat().st_mode) == 0o700
    assert stat.S_IMODE(nested.stat().st_mode) == 0o700
    named = tmp_path / "shared-logs"
    named.mkdir()
    os.chmod(named, 0o755)
    private_directory(named, tighten=False)  # a directory the user named keeps its mode
    assert stat.S_IMODE(named.stat().st_mode) == 0o755
    private_directory(named)
    assert stat.S_IMODE(named.stat().st_mode) == 0o700


def test_doctor_asks_a_plugin_that_failed_to_start(make_host: HostFactory) -> None:
    host = make_host({"journal": Journal(fail=True)})
    host.start()
    assert not host.is_active("journal")
    assert host.hooks.doctor_checks() == []  # withdrawn: not called among the running plugins
    assert host.withdrawn_doctor_checks() == [("journal", [Check("journal", False, "schema version 2")])]


# --------------------------------------------------------------------------------------------------
# The session marker


class SinceLastTime:
    @hookimpl
    def on_wake_up(self, ctx: PluginContext) -> Section:
        previous = ctx.previous_session()
        return Section(key="since", text=f"previous: {previous.isoformat() if previous else 'none'}", order=900)


async def test_wake_up_records_when_each_session_began(make_host: HostFactory) -> None:
    first = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    clock = Clock(first)
    host = make_host({"since": SinceLastTime()}, clock=clock)
    assert host.context("since").previous_session() is None
    async with mcp_client(host) as client:
        assert "previous: none" in await call_ok(client, "wake_up")
        clock.set(first + timedelta(hours=5))
        assert f"previous: {first.isoformat()}" in await call_ok(client, "wake_up")
    assert host.context("since").previous_session() == first
    other = make_host({"since": SinceLastTime()}, clock=clock)  # another process on the same data dir
    assert other.context("since").previous_session() == first + timedelta(hours=5)


# --------------------------------------------------------------------------------------------------
# Tool(needs=...)


def _tool(name: str, needs: tuple[str, ...] = ()) -> Tool:
    return Tool(name=name, description="d", input_schema={"type": "object"}, handler=lambda a, ctx: "ok", needs=needs)


class Dreams:
    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(_tool("dream", needs=("memory",)))
        register(_tool("sleep"))


INSTALLED_DREAM = """
from ego_core import Tool, hookimpl

@hookimpl
def register_tools(register):
    register(Tool(name="installed_only", description="d", input_schema={"type": "object"}, handler=lambda a, ctx: "x"))
"""


class FakeMemory:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    @hookimpl
    def on_startup(self) -> None:
        if self.fail:
            raise OSError("no model")


def test_a_tool_is_served_only_while_the_plugins_it_needs_are(make_host: HostFactory) -> None:
    alone = make_host({"dreams": Dreams()})
    alone.start()
    assert {t.name for _p, t in alone.tools()} >= {"sleep"}
    assert alone.tool("dream") is None
    with_memory = make_host({"dreams": Dreams(), "memory": FakeMemory()})
    with_memory.start()
    assert with_memory.tool("dream") is not None
    broken = make_host({"dreams": Dreams(), "memory": FakeMemory(fail=True)})
    broken.start()
    assert broken.tool("dream") is None
    assert broken.tool("sleep") is not None


# --------------------------------------------------------------------------------------------------
# What the host tells an author


class DefaultParameter:
    @hookimpl
    def on_wake_up(self, ctx: Any = None) -> str:
        return "never"


class Misspelt:
    @hookimpl
    def on_wakeup(self) -> str:
        return "never"


class FailingTools:
    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        raise ValueError("schema typo")


def reasons(host: Any) -> dict[str, str]:
    return {status.id: status.reason for status in host.statuses()}


async def test_refused_plugins_are_named_with_why_and_wake_up_names_the_stage(make_host: HostFactory) -> None:
    host = make_host({"defaults": DefaultParameter(), "misspelt": Misspelt(), "tools": FailingTools()})
    found = reasons(host)
    assert "[validate] implements 'on_wake_up' with a default value for ctx" in found["defaults"]
    assert "[validate] implements unknown hook 'on_wakeup' (did you mean 'on_wake_up'?)" in found["misspelt"]
    assert "docs/hooks.md" not in found["misspelt"]  # pip users have no such file
    assert "[register:register_tools]" in found["tools"]
    async with mcp_client(host) as client:
        text = tool_text(await client.call_tool("wake_up", {}))
    assert (
        "Not working right now: defaults (refused: invalid hook implementations), misspelt (refused: invalid hook "
        "implementations), tools (failed to register its tools); whoever runs ego can see why with `ego doctor`."
    ) in text


class Stateful:
    """Keeps a file in its data directory, exports nothing."""

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        (ctx.data_dir / "state.json").write_text("{}", encoding="utf-8")


def test_an_export_names_a_plugin_whose_state_it_leaves_out(make_host: HostFactory, tmp_path: Path) -> None:
    host = make_host({"stateful": Stateful()})
    host.start()
    summary = export_file(host, tmp_path / "export.jsonl", include_private=False)
    assert summary.unexported == ["stateful"]


def test_hook_names_suggested_for_a_misspelling(tmp_path: Path) -> None:
    """Only close names are suggested; otherwise every hook is listed."""

    class Far:
        @hookimpl
        def zzz_unrelated(self) -> None:
            return None

    from ego_core import Settings, build_host

    host = build_host(Settings(data_dir=tmp_path / "data"), autoload=False, plugins={"far": Far()})
    reason = reasons(host)["far"]
    listed = reason.split("ego's hooks: ")[1].split(";")[0].split(", ")
    assert {"register_tools", "on_wake_up", "on_startup"} <= set(listed)


# --------------------------------------------------------------------------------------------------
# ego plugin new (tests/e2e/test_e2e_plugin_new.py runs what it writes: tox, mypy --strict, ego serve)


def test_ego_plugin_new_writes_a_small_plugin(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import ast

    from ego_core.mcp.cli import main

    assert main(["plugin", "new", "night_notes", "--dir", str(tmp_path / "ego-night-notes")]) == 0
    root = tmp_path / "ego-night-notes"
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert files == [
        "README.md",
        "ego_night_notes/__init__.py",
        "ego_night_notes/plugin.py",
        "ego_night_notes/py.typed",
        "pyproject.toml",
        "tests/test_night_notes.py",
        "tox.ini",
    ]
    for path in root.rglob("*.py"):
        ast.parse(path.read_text(encoding="utf-8"))
    assert 'night_notes = "ego_night_notes:NightNotesPlugin"' in (root / "pyproject.toml").read_text()
    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / "ego-hello"
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in root.rglob("*") if p.is_file())
    hello = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in example.rglob("*.py"))
    assert lines < hello  # smaller than the example plugin's code alone
    assert f"deps =\n    {{env:EGO_CORE:{Path(__file__).resolve().parents[2]}}}" in (root / "tox.ini").read_text()
    assert "wrote the plugin 'night_notes' (7 files)" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["Dream", "1dream", "dream-notes", "core", "dream_", "a__b"])
def test_ego_plugin_new_refuses_a_bad_id(tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    from ego_core.mcp.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["plugin", "new", name, "--dir", str(tmp_path / "x")])
    assert exit_info.value.code == 2
    assert "ego: error: plugin id" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_ego_plugin_new_never_writes_over_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ego_core.mcp.cli import main

    (tmp_path / "ego-dream").mkdir()
    (tmp_path / "ego-dream" / "mine.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["plugin", "new", "dream", "--dir", str(tmp_path / "ego-dream")])
    assert "already exists and is not empty" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "ego-dream").iterdir()) == ["mine.txt"]


# --------------------------------------------------------------------------------------------------
# The test kit: a given plugin object replaces the installed one; the JSON log; ids already taken


def test_a_given_plugin_replaces_the_installed_one_of_its_id(
    make_host: HostFactory, fake_dist: FakeDistFactory
) -> None:
    fake_dist("egotest-dream", "egotest_dream", INSTALLED_DREAM, ep_name="t_dream")
    host = make_host({"t_dream": Dreams()}, enabled=["t_dream"], autoload=True)
    host.start()
    assert isinstance(host.plugin("t_dream"), Dreams)
    assert host.tool("sleep") is not None
    assert host.tool("installed_only") is None
    assert reasons(host)["t_dream"] == ""


def test_an_id_taken_twice_is_a_clear_error(make_host: HostFactory) -> None:
    with pytest.raises(ValueError, match=r"^the plugin id 'core' is already registered, by the core; choose another"):
        make_host({"core": Dreams()})
    host = make_host({"one": Dreams()})
    with pytest.raises(ValueError, match=r"^this plugin object is already registered as 'one'"):
        host.add_plugin("two", host.plugin("one"))


async def test_make_host_can_write_the_json_log(make_host: HostFactory) -> None:
    from ego_core.testing import read_log

    host = make_host({"dreams": Dreams()}, log=True)
    async with mcp_client(host) as client:
        await call_ok(client, "sleep")
    calls = [r for r in read_log(host) if r.get("event") == "tool_call"]
    assert [(r["tool"], r["plugin"], r["outcome"]) for r in calls] == [("sleep", "dreams", "ok")]


STATEFUL = """
from ego_core import hookimpl

@hookimpl
def on_startup(ctx):
    (ctx.data_dir / "state.json").write_text("{}", encoding="utf-8")
"""


def test_ego_export_warns_about_state_it_cannot_export(
    run_cli: Any, fake_dist: FakeDistFactory, tmp_path: Path
) -> None:
    fake_dist("egotest-stateful", "egotest_stateful", STATEFUL, ep_name="t_stateful")
    done = run_cli("export", str(tmp_path / "export.jsonl"), "--plugins", "t_stateful")
    assert done.code == 0, done.err
    assert "ego: warning: plugin t_stateful keeps files in" in done.err
    assert "does not implement export_records: its state is not in the export" in done.err
    assert (tmp_path / "export.jsonl").is_file()


def test_a_plugin_that_says_why_its_files_are_local_is_not_warned_about(make_host: HostFactory, tmp_path: Path) -> None:
    class Cache(Stateful):
        local_state = "a cache, rebuilt from the memories"

    host = make_host({"cache": Cache()})
    host.start()
    assert export_file(host, tmp_path / "export.jsonl", include_private=False).unexported == []


def test_a_session_start_that_cannot_be_recorded_does_not_stop_wake_up(tmp_path: Path) -> None:
    from ego_core.kernel.context import SessionMarker

    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory", encoding="utf-8")
    marker = SessionMarker(blocked / "core" / "session.json")
    assert marker.begin(datetime(2026, 3, 1, tzinfo=UTC)) is None
    assert marker.previous() is None


def test_ego_plugin_new_from_a_wheel_says_where_ego_core_comes_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import ego_core.mcp.plugin_template
    from ego_core.mcp.cli import main

    monkeypatch.setattr(ego_core.mcp.plugin_template, "ego_core_source", lambda: "ego-core")
    assert main(["plugin", "new", "dream", "--dir", str(tmp_path / "ego-dream")]) == 0
    assert "EGO_CORE=/path/to/ego_core-" in capsys.readouterr().out
    assert "{env:EGO_CORE:ego-core}" in (tmp_path / "ego-dream" / "tox.ini").read_text(encoding="utf-8")
