"""The ``ego`` command line, run in-process (``ego_core.mcp.cli.main``) with a clean environment."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ego_core.kernel.config import load_settings
from ego_core.mcp.http_transport import hash_token

if TYPE_CHECKING:
    from conftest import CliRun
    from ego_core.testing import FakeDistFactory

Run = Callable[..., "CliRun"]

VERSION = importlib.metadata.version("ego-core")
REAL = sorted({ep.name for ep in importlib.metadata.entry_points(group="ego")})
NO_REAL = ["--disable", ",".join(REAL)] if REAL else []

TOOL_PLUGIN = """
from ego_core import Tool, hookimpl

@hookimpl
def register_tools(register):
    register(Tool(name="t_hello_tool", description="Hi.", input_schema={"type": "object"}, handler=lambda a, ctx: "hi"))
"""

COMMAND_PLUGIN = """
from ego_core import Check, Command, hookimpl

STATE = {}

def configure(parser):
    parser.add_argument("--name", default="world")

def run(args, host):
    STATE["started"] = host.started
    print(f"hello {args.name}")
    return 3

@hookimpl
def register_commands(register):
    register(Command(name="hello", help="greet", configure=configure, run=run, group="greet"))
    register(Command(name="wave", help="wave", configure=lambda p: None, run=lambda a, h: 0))

@hookimpl
def doctor_checks():
    return [Check("store", True, "3 memories"), Check("model", FAIL, "model directory missing")]

FAIL = True
"""


def test_version_through_the_console_script() -> None:
    script = Path(sys.executable).with_name("ego")
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0
    assert done.stdout.strip() == f"ego {VERSION}"


def test_version(run_cli: Run) -> None:
    result = run_cli("--version")
    assert (result.code, result.out.strip()) == (0, f"ego {VERSION}")


@pytest.mark.parametrize("argv", [["bogus"], ["serve", "--bogus"], []])
def test_usage_errors_exit_2(run_cli: Run, argv: list[str]) -> None:
    result = run_cli(*argv, *NO_REAL)
    assert result.code == 2
    assert result.out == ""  # stdout carries only results
    assert "usage: ego" in result.err


def test_no_command_shows_the_usage_and_says_what_is_missing(run_cli: Run) -> None:
    result = run_cli(*NO_REAL)
    assert result.code == 2
    assert result.err.rstrip().endswith("ego: error: a command is required, e.g. `ego serve`")


def test_export_to_a_directory_or_a_missing_directory_is_a_usage_error(run_cli: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    directory = run_cli("export", str(out), *NO_REAL)
    assert directory.code == 2
    assert f"ego: error: {out}: is a directory; name the file to write" in directory.err
    missing = out / "no" / "such" / "dir" / "export.jsonl"
    result = run_cli("export", str(missing), *NO_REAL)
    assert result.code == 2
    assert f"the directory {missing.parent} does not exist" in result.err
    assert sorted(out.iterdir()) == []


def test_export_with_only_the_core_writes_the_header(run_cli: Run, tmp_path: Path) -> None:
    target = tmp_path / "export.jsonl"
    result = run_cli("export", str(target), *NO_REAL)
    assert result.code == 0, result.err
    [header, end] = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert (header["format"], header["include_private"], header["plugins"]) == ("ego-export", False, {})
    assert end == {"format": "ego-export", "end": True, "records": {}}
    assert "exported 0 records" in result.out


BROKEN_STATE_PLUGIN = """
from ego_core import hookimpl

@hookimpl
def on_startup(ctx):
    raise OSError("the diary file is locked by another program")

@hookimpl
def export_records(include_private):
    return [{"type": "note", "text": "never reached"}]
"""


def test_export_refuses_when_a_plugin_that_holds_state_failed_to_start(
    run_cli: Run, fake_dist: FakeDistFactory, tmp_path: Path
) -> None:
    fake_dist("egotest-diary", "egotest_diary", BROKEN_STATE_PLUGIN, ep_name="diary")
    target = tmp_path / "export.jsonl"
    result = run_cli("export", str(target), "--plugins", "diary")
    assert result.code == 2
    assert "diary" in result.err
    assert "the diary file is locked" in result.err
    assert "--disable" in result.err
    assert not target.exists()
    # leaving it out on purpose exports the rest
    assert run_cli("export", str(target), "--plugins", "core").code == 0


def test_a_data_dir_that_is_a_file_is_a_clear_usage_error(run_cli: Run, tmp_path: Path) -> None:
    afile = tmp_path / "not-a-dir"
    afile.write_text("x")
    refused = run_cli("--data-dir", str(afile), "plugins")
    assert refused.code == 2
    assert f"the data directory {afile} is a file, not a directory" in refused.err
    below = run_cli("--data-dir", str(afile / "sub"), "plugins")
    assert below.code == 2
    assert f"cannot be created: {afile} is a file" in below.err
    doctor = run_cli("--data-dir", str(afile), "doctor")
    assert doctor.code == 1
    assert "[FAIL] data dir: the data directory" in doctor.out
    assert "File exists" not in doctor.out


def test_core_can_be_named_in_plugins_but_not_disabled(run_cli: Run) -> None:
    assert run_cli("plugins", "--plugins", "core").code == 0
    refused = run_cli("plugins", "--disable", "core")
    assert refused.code == 2
    assert "cannot be disabled" in refused.err


def test_an_unwritable_log_dir_stops_commands_and_fails_doctor(
    run_cli: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("")
    monkeypatch.setenv("EGO_LOG_DIR", str(not_a_dir / "logs"))
    for argv in (("plugins",), ("serve", "--http")):
        result = run_cli(*argv, *NO_REAL)
        assert result.code == 2, argv
        assert result.err.strip() == (
            f"ego: error: cannot write logs to {not_a_dir / 'logs'} (Not a directory); "
            "set log_dir in ego.toml (or EGO_LOG_DIR) to a writable directory"
        )
    doctor = run_cli("doctor", *NO_REAL)
    assert doctor.code == 1
    assert f"[FAIL] log dir: cannot write logs to {not_a_dir / 'logs'} (Not a directory)" in doctor.out
    assert run_cli("--version").code == 0


def test_a_config_table_for_no_installed_plugin_is_reported(run_cli: Run, clean_env: Path) -> None:
    clean_env.mkdir(parents=True, exist_ok=True)
    (clean_env / "ego.toml").write_text('[plugins.memroy]\nembedder = "onnx"\n', encoding="utf-8")
    plugins = run_cli("plugins", *NO_REAL)
    assert plugins.code == 0
    assert "config_unknown_plugin table=[plugins.memroy]" in plugins.err
    doctor = run_cli("doctor", *NO_REAL)
    assert doctor.code == 1
    assert "[FAIL] config [plugins.memroy]: no installed plugin has this id (installed: " in doctor.out


def test_token_new_prints_a_token_and_its_hashed_config_line(run_cli: Run, clean_env: Path) -> None:
    result = run_cli(*NO_REAL, "token", "new", "claude")
    assert result.code == 0
    token = re.search(r"^\s+(ego_\S+)$", result.out, re.MULTILINE)
    line = re.search(r'^\s+claude = "(sha256:[0-9a-f]{64})"$', result.out, re.MULTILINE)
    assert token is not None
    assert line is not None
    assert hash_token(token.group(1)) == line.group(1)
    assert "[server.tokens]" in result.out
    # the printed lines are a valid configuration
    clean_env.mkdir(parents=True, exist_ok=True)
    (clean_env / "ego.toml").write_text(f'[server.tokens]\nclaude = "{line.group(1)}"\n', encoding="utf-8")
    assert load_settings().server.tokens == {"claude": line.group(1)}
    # a second token is different
    assert token.group(1) not in run_cli(*NO_REAL, "token", "new", "claude").out


def test_token_new_refuses_a_bad_agent_id(run_cli: Run) -> None:
    result = run_cli(*NO_REAL, "token", "new", "my agent!")
    assert result.code == 2
    assert "agent id must be letters, digits" in result.err


def test_invalid_configuration_exits_2_naming_the_key(run_cli: Run, clean_env: Path) -> None:
    clean_env.mkdir(parents=True)
    (clean_env / "ego.toml").write_text('[server]\nport = "eighty"\n', encoding="utf-8")
    result = run_cli("plugins", *NO_REAL)
    assert result.code == 2
    assert result.err.startswith("ego: error: invalid configuration:")
    assert "server.port" in result.err


def test_unknown_plugin_exits_2_listing_the_installed_ones(run_cli: Run, fake_dist: FakeDistFactory) -> None:
    fake_dist("egotest-hello", "egotest_hello", TOOL_PLUGIN, ep_name="t_hello")
    result = run_cli("serve", "--plugins", "nosuch")
    assert result.code == 2
    assert "unknown plugin 'nosuch'; installed plugins: " in result.err
    assert ", ".join(sorted([*REAL, "t_hello"])) in result.err


def test_doctor_is_ok_with_only_the_core(run_cli: Run, clean_env: Path) -> None:
    result = run_cli("doctor", *NO_REAL)
    assert result.code == 0, result.out
    assert "[ok] config: defaults (no ego.toml)" in result.out
    assert f"[ok] data dir: {clean_env} (writable)" in result.out
    assert "[ok] plugins: core" in result.out
    assert "FAIL" not in result.out


def test_doctor_fails_on_a_failing_check_or_plugin(run_cli: Run, fake_dist: FakeDistFactory) -> None:
    fake_dist("egotest-cmd", "egotest_cmd", COMMAND_PLUGIN, ep_name="t_cmd")
    fake_dist("egotest-broken", "egotest_broken", "raise RuntimeError('half installed')\n", ep_name="t_broken")
    ok = run_cli("doctor", "--plugins", "t_cmd")
    assert ok.code == 0, ok.out
    assert "[ok] t_cmd: store: 3 memories" in ok.out
    broken = run_cli("doctor", "--plugins", "t_cmd,t_broken")
    assert broken.code == 1
    assert "[FAIL] plugin t_broken: [load] import failed: RuntimeError: half installed" in broken.out


def test_doctor_fails_when_a_plugin_check_fails(run_cli: Run, fake_dist: FakeDistFactory) -> None:
    fake_dist("egotest-cmd", "egotest_cmd", COMMAND_PLUGIN.replace("FAIL = True", "FAIL = False"), ep_name="t_cmd")
    result = run_cli("doctor", "--plugins", "t_cmd")
    assert result.code == 1
    assert "[FAIL] t_cmd: model: model directory missing" in result.out


def test_plugin_commands_run_with_a_started_host(run_cli: Run, fake_dist: FakeDistFactory) -> None:
    fake_dist("egotest-cmd", "egotest_cmd", COMMAND_PLUGIN, ep_name="t_cmd")
    result = run_cli("greet", "hello", "--name", "Aiko", "--plugins", "t_cmd")
    assert (result.code, result.out) == (3, "hello Aiko\n")
    assert sys.modules["egotest_cmd"].STATE == {"started": True}
    assert run_cli("wave", "--plugins", "t_cmd").code == 0
    helped = run_cli("--help", "--plugins", "t_cmd")
    assert "greet" in helped.out
    assert "wave [t_cmd]" in helped.out


DATA_OPTION_PLUGIN = """
from ego_core import Command, hookimpl

def run(args, host):
    print(f"data={args.data} data_dir={host.settings.data_dir}")
    return 0

@hookimpl
def register_commands(register):
    register(Command(name="load", help="load", configure=lambda p: p.add_argument("--data"), run=run, group="t"))
"""


def test_options_are_never_abbreviated(
    run_cli: Run, fake_dist: FakeDistFactory, clean_env: Path, tmp_path: Path
) -> None:
    """`--data` (a plugin command's own option, as `ego bench locomo --data`) is never taken for `--data-dir`."""
    fake_dist("egotest-data", "egotest_data", DATA_OPTION_PLUGIN, ep_name="t_data")
    dataset = tmp_path / "dataset"
    result = run_cli("t", "load", "--data", str(dataset), "--plugins", "t_data")
    assert (result.code, result.out) == (0, f"data={dataset} data_dir={clean_env}\n")
    assert not dataset.exists()
    refused = run_cli("doctor", "--data", str(dataset), *NO_REAL)
    assert refused.code == 2
    assert "unknown option --data (did you mean --data-dir?)" in refused.err
    assert not dataset.exists()


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--data", "x", "doctor"], "unknown option --data (did you mean --data-dir?)"),
        (["--data=x", "doctor"], "unknown option --data (did you mean --data-dir?)"),
        (["--agnet", "claude", "doctor"], "unknown option --agnet (did you mean --agent?)"),
        (["doctor", "--data", "x"], "unknown option --data (did you mean --data-dir?)"),
        (["--frobnicate", "doctor"], "unknown option --frobnicate"),
    ],
)
def test_an_unknown_option_is_named_with_the_nearest_known_one(run_cli: Run, argv: list[str], said: str) -> None:
    """A new user found: `ego --data x doctor` said `invalid choice: 'x'` (argparse took `x` for the command)."""
    result = run_cli(*argv, *NO_REAL)
    assert result.code == 2
    assert result.out == ""
    assert f"ego: error: {said}\n" in result.err
    assert "invalid choice" not in result.err


@pytest.mark.parametrize("argv", [["plugins", "--json"], ["plugins"], ["doctor"]])
def test_a_reader_that_stops_reading_ends_any_command_quietly(clean_env: Path, argv: list[str]) -> None:
    """A new user found: `ego plugins --json | head` ended in a BrokenPipeError traceback. The shared entry point
    ends every command quietly when stdout's reader is gone, with SIGPIPE's conventional exit code."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte (as `head` after its lines)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ego_core.mcp.cli", *argv, *NO_REAL],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == 141


def test_plugins_lists_installed_enabled_and_failed(run_cli: Run, fake_dist: FakeDistFactory) -> None:
    fake_dist("egotest-hello", "egotest_hello", TOOL_PLUGIN, ep_name="t_hello")
    fake_dist("egotest-broken", "egotest_broken", "raise ImportError('no chromadb')\n", ep_name="t_broken")
    result = run_cli("plugins", *NO_REAL)
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0].startswith(f"ego {VERSION}; data dir ")
    assert re.search(r"^\s+t_hello\s+enabled\s+egotest-hello 0\.1\.0$", result.out, re.MULTILINE)
    assert re.search(r"^\s+t_broken\s+failed\s+egotest-broken 0\.1\.0$", result.out, re.MULTILINE)
    assert "why: [load] import failed: ImportError: no chromadb" in result.out
    assert "  core: attune, introspect, wake_up" in lines
    assert "  t_hello: t_hello_tool" in lines
    for real in REAL:
        assert re.search(rf"^\s+{real}\s+disabled", result.out, re.MULTILINE)

    payload = json.loads(run_cli("plugins", "--json", *NO_REAL).out)
    by_id = {p["id"]: p for p in payload["plugins"]}
    assert by_id["t_hello"]["state"] == "enabled"
    assert by_id["t_hello"]["distribution"] == "egotest-hello"
    assert by_id["t_hello"]["hooks"] == ["register_tools"]
    assert by_id["t_broken"]["state"] == "failed"
    assert "import failed" in by_id["t_broken"]["reason"]
    assert by_id["core"]["version"] == VERSION
    assert payload["tools"] == {"attune": "core", "introspect": "core", "wake_up": "core", "t_hello_tool": "t_hello"}
    assert payload["recent_failures"] == []


def test_serve_options_that_need_http(run_cli: Run) -> None:
    result = run_cli("serve", "--port", "9999", *NO_REAL)
    assert result.code == 2
    assert "--host, --port and --path only apply with --http" in result.err


def test_serve_http_without_tokens_points_at_token_new(run_cli: Run) -> None:
    result = run_cli("serve", "--http", "--port", "9", *NO_REAL)
    assert result.code == 2
    assert "ego token new" in result.err


def test_serve_http_refuses_a_bad_port(run_cli: Run) -> None:
    result = run_cli("serve", "--http", "--port", "70000", *NO_REAL)
    assert result.code == 2
    assert "--port must be from 1 to 65535" in result.err


# --------------------------------------------------------------------------------------------------
# Configuration errors, doctor failures, command clashes, hostless commands and `token new`

CONFIGURED_PLUGIN = """
import attrs
from ego_core import hookimpl

@attrs.frozen
class Config:
    limit: int = 3

class Plugin:
    config_class = Config
    config_env = {"EGO_TCONF_LIMIT": "limit"}

    @hookimpl
    def on_startup(self):
        return None
"""


def test_serve_reports_a_bad_variable_as_invalid_configuration(run_cli: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EGO_HTTP_PORT", "eighty")
    result = run_cli("serve", *NO_REAL)
    assert result.code == 2
    assert result.err == "ego: error: invalid configuration: EGO_HTTP_PORT (server.port): expected an integer\n"


def test_a_plugin_config_error_is_invalid_configuration_exit_2(
    run_cli: Run, fake_dist: FakeDistFactory, monkeypatch: pytest.MonkeyPatch, clean_env: Path
) -> None:
    fake_dist("egotest-conf", "egotest_conf", CONFIGURED_PLUGIN, ep_name="t_conf", ep_object="Plugin")
    monkeypatch.setenv("EGO_TCONF_LIMIT", "lots")
    result = run_cli("serve", "--plugins", "t_conf")
    assert result.code == 2
    assert result.err == (
        "ego: error: invalid configuration: EGO_TCONF_LIMIT (plugins.t_conf.limit): expected an integer\n"
    )
    monkeypatch.delenv("EGO_TCONF_LIMIT")
    clean_env.mkdir(parents=True, exist_ok=True)
    (clean_env / "ego.toml").write_text("[plugins.t_conf]\nlimit = 2.5\n", encoding="utf-8")
    result = run_cli("serve", "--plugins", "t_conf")
    assert result.code == 2
    assert result.err == "ego: error: invalid configuration: plugins.t_conf.limit: expected an integer\n"


RAISING_CHECKS = """
from ego_core import Check, hookimpl

@hookimpl
def doctor_checks():
    raise OSError("store file vanished")
"""


def test_doctor_shows_a_raising_doctor_check_as_a_failure(run_cli: Run, fake_dist: FakeDistFactory) -> None:
    fake_dist("egotest-checks", "egotest_checks", RAISING_CHECKS, ep_name="t_checks")
    result = run_cli("doctor", "--plugins", "t_checks")
    assert result.code == 1
    assert "[FAIL] plugin t_checks: [call:doctor_checks] raised OSError: store file vanished" in result.out
    assert "[ok] plugins: core, t_checks" in result.out


CLASHING_COMMANDS = """
from ego_core import Command, hookimpl

@hookimpl
def register_commands(register):
    register(Command(name="serve", help="my own serve", configure=lambda p: None, run=lambda a, h: 0))
    register(Command(name="hello", help="another hello", configure=lambda p: None, run=lambda a, h: 5, group="greet"))
    register(Command(name="wave", help="another wave", configure=lambda p: None, run=lambda a, h: 5, group="wave"))
    register(Command(name="bow", help="bow", configure=lambda p: None, run=lambda a, h: 4, group="greet"))
"""


def test_a_clashing_plugin_command_is_skipped_and_recorded(run_cli: Run, fake_dist: FakeDistFactory) -> None:
    fake_dist("egotest-cmd", "egotest_cmd", COMMAND_PLUGIN, ep_name="t_cmd")
    fake_dist("egotest-zclash", "egotest_zclash", CLASHING_COMMANDS, ep_name="t_zclash")
    helped = run_cli("--help", "--plugins", "t_cmd,t_zclash")
    assert helped.code == 0, helped.err
    assert "Traceback" not in helped.err
    # the first plugin keeps its commands; a plugin may add to another plugin's group
    assert run_cli("greet", "hello", "--plugins", "t_cmd,t_zclash").code == 3
    assert run_cli("greet", "bow", "--plugins", "t_cmd,t_zclash").code == 4
    assert run_cli("wave", "--plugins", "t_cmd,t_zclash").code == 0
    payload = json.loads(run_cli("plugins", "--json", "--plugins", "t_cmd,t_zclash").out)
    by_id = {p["id"]: p for p in payload["plugins"]}
    assert by_id["t_cmd"]["reason"] == ""
    reason = by_id["t_zclash"]["reason"]
    assert by_id["t_zclash"]["state"] == "enabled"
    assert "[register:register_commands] command 'ego serve' clashes with the core command 'ego serve'" in reason
    assert "command 'ego greet hello' is already registered by plugin 't_cmd'; it was skipped" in reason
    assert "command 'ego wave wave' clashes with plugin 't_cmd''s command 'ego wave'" in reason


HOSTLESS_COMMAND = """
from ego_core import Command, hookimpl

STATE = {"started": 0}

def run(args, host):
    STATE["during"] = host.started
    return 0

@hookimpl
def on_startup(ctx):
    STATE["started"] += 1

@hookimpl
def register_commands(register):
    register(Command(name="nohost", help="runs without a host", configure=lambda p: None, run=run,
                     group="bench", starts_host=False))
"""


def test_a_command_with_starts_host_false_runs_without_starting_the_host(
    run_cli: Run, fake_dist: FakeDistFactory
) -> None:
    fake_dist("egotest-hostless", "egotest_hostless", HOSTLESS_COMMAND, ep_name="t_hostless")
    result = run_cli("bench", "nohost", "--plugins", "t_hostless")
    assert result.code == 0, result.err
    assert sys.modules["egotest_hostless"].STATE == {"started": 0, "during": False}


IMPORT_MARKER = """
import os, pathlib
pathlib.Path(os.environ["EGOTEST_MARKER"]).write_text("imported")
"""


def test_token_new_needs_no_plugins_no_data_dir_and_survives_a_bad_selection(
    run_cli: Run, fake_dist: FakeDistFactory, monkeypatch: pytest.MonkeyPatch, clean_env: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "imported"
    monkeypatch.setenv("EGOTEST_MARKER", str(marker))
    fake_dist("egotest-marker", "egotest_marker", IMPORT_MARKER, ep_name="t_marker")
    monkeypatch.setenv("EGO_PLUGINS", "nosuch")
    result = run_cli("token", "new", "claude")
    assert result.code == 0, result.err
    assert re.search(r'^\s+claude = "sha256:[0-9a-f]{64}"$', result.out, re.MULTILINE)
    assert run_cli("token", "new", "my agent!").code == 2
    monkeypatch.delenv("EGO_PLUGINS")
    assert run_cli("--plugins", "t_marker", "token", "new", "gemini").code == 0
    assert not marker.exists()  # no plugin was imported
    assert not clean_env.exists()  # and the data directory was not created
    monkeypatch.setenv("EGO_PLUGINS", "nosuch")
    assert run_cli("plugins").code == 2  # the selection really is broken for other commands


def test_an_unknown_agent_is_an_error_naming_the_known_ones(run_cli: Run, clean_env: Path) -> None:
    """A new user found: `ego --agent nobody doctor` silently created `agents/nobody/`. An agent has a space once
    its token is configured (or its space exists); any other id is a usage error naming the known agents."""
    refused = run_cli("--agent", "nobody", "doctor", *NO_REAL)
    assert refused.code == 2
    assert "unknown agent 'nobody' (no agent has a space yet); create its space with `ego agent new nobody`" in (
        refused.err
    )
    assert "ego token new nobody" in refused.err
    assert not clean_env.exists()
    clean_env.mkdir()
    (clean_env / "ego.toml").write_text(f'[server.tokens]\nclaude = "{hash_token("t-claude")}"\n', encoding="utf-8")
    (clean_env / "agents" / "gemini").mkdir(parents=True)  # served over HTTP before, token since removed
    refused = run_cli("--agent", "nobody", "doctor", *NO_REAL)
    assert refused.code == 2
    assert "unknown agent 'nobody' (known agents: claude, gemini)" in refused.err
    assert sorted(p.name for p in (clean_env / "agents").iterdir()) == ["gemini"]
    for agent in ("claude", "gemini"):  # a configured token, or an existing space
        result = run_cli("--agent", agent, "doctor", *NO_REAL)
        assert result.code == 0, result.err
        assert f"data dir: {clean_env / 'agents' / agent} (writable)" in result.out
    first_run = run_cli("doctor", *NO_REAL)  # without --agent: the data dir itself, as on a new user's first run
    assert first_run.code == 0, first_run.err
    created = run_cli("agent", "new", "nobody", *NO_REAL)  # the explicit step
    assert (created.code, created.out.splitlines()[0]) == (0, f"created {clean_env / 'agents' / 'nobody'}")
    assert run_cli("--agent", "nobody", "doctor", *NO_REAL).code == 0
    listed = run_cli("agent", "list", *NO_REAL)
    assert [line.split()[0] for line in listed.out.splitlines()] == ["claude", "gemini", "nobody"]
    assert "claude  token configured" in listed.out
    assert run_cli("agent", "new", "no body", *NO_REAL).code == 2
