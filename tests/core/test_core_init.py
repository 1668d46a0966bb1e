"""``ego init``: the first run's answers written to ``ego.toml`` (atomically, other lines kept, nothing changed
twice), the client configs printed with the real paths, bad answers refused with exit code 2, questions asked on
a terminal; and the ``language`` setting it writes."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ego_core.kernel.config import ConfigError, load_settings
from ego_core.mcp.init_command import ego_command, set_keys, toml_string

Run = Callable[..., Any]  # the run_cli fixture (tests/core/conftest.py); its CliRun has code, out, err
JAPANESE = ("--language", "ja", "--companion", "マスター", "--timezone", "Asia/Tokyo", "--no-input")


def printed_config(out: str, client: str) -> dict[str, Any]:
    """The JSON printed under ``client``'s heading."""
    start = out.index(client)
    body = out[out.index("{", start) :]
    value, _end = json.JSONDecoder().raw_decode(body)
    assert isinstance(value, dict)
    return value


def test_a_japanese_owner_gets_ego_toml_and_the_client_configs(run_cli: Run, clean_env: Path) -> None:
    done = run_cli("init", *JAPANESE)
    assert done.code == 0, done.err
    path = clean_env / "ego.toml"
    assert tomllib.loads(path.read_text(encoding="utf-8")) == {
        "language": "ja",
        "companion_name": "マスター",
        "timezone": "Asia/Tokyo",
    }
    settings = load_settings(env={"EGO_DATA_DIR": str(clean_env)})
    assert (settings.language, settings.companion_name, settings.timezone) == ("ja", "マスター", "Asia/Tokyo")
    assert settings.config_path == path
    desktop = printed_config(done.out, "Claude Desktop")
    entry = desktop["mcpServers"]["ego"]
    assert [entry["command"], *entry["args"]] == [*ego_command(), "serve"]
    assert Path(entry["command"]).is_absolute()
    assert entry["env"] == {"EGO_DATA_DIR": str(clean_env)}
    assert printed_config(done.out, "OpenClaw") == {"mcp": {"servers": {"ego": entry}}}
    assert f"Next: {ego_command()[0]} --data-dir {clean_env} doctor" in done.out


def test_running_it_twice_changes_nothing(run_cli: Run, clean_env: Path) -> None:
    assert run_cli("init", *JAPANESE).code == 0
    path = clean_env / "ego.toml"
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    again = run_cli("init", *JAPANESE)
    assert again.code == 0
    assert f"{path} already says this; nothing changed" in again.out
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    no_options = run_cli("init", "--no-input")  # the file's values are the defaults
    assert no_options.code == 0
    assert path.read_bytes() == before[0]


def test_a_change_is_listed_and_written_only_with_force_keeping_other_lines(run_cli: Run, clean_env: Path) -> None:
    clean_env.mkdir(parents=True)
    path = clean_env / "ego.toml"
    original = (
        "# my own notes\n"
        'timezone = "Asia/Tokyo"  # home\n'
        "log_level = 'DEBUG'\n\n"
        "[plugins.memory]\n"
        'embedder = "use"\n\n'
        "[server.tokens]\n"
        f'claude = "sha256:{"a" * 64}"\n'
    )
    path.write_text(original, encoding="utf-8")
    refused = run_cli("init", "--timezone", "Europe/Berlin", "--language", "en", "--companion", "Aiko", "--no-input")
    assert refused.code == 1
    assert 'timezone: "Asia/Tokyo" -> "Europe/Berlin"' in refused.err
    assert 'companion_name: (not set) -> "Aiko"' in refused.err
    assert "run again with --force" in refused.out
    assert path.read_text(encoding="utf-8") == original
    forced = run_cli(
        "init", "--timezone", "Europe/Berlin", "--language", "en", "--companion", "Aiko", "--no-input", "--force"
    )
    assert forced.code == 0, forced.err
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# my own notes\n")
    document = tomllib.loads(text)
    assert document["timezone"] == "Europe/Berlin"
    assert (document["language"], document["companion_name"], document["log_level"]) == ("en", "Aiko", "DEBUG")
    assert document["plugins"] == {"memory": {"embedder": "use"}}
    assert document["server"]["tokens"] == {"claude": f"sha256:{'a' * 64}"}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--timezone", "Mars/Base"), "time zone: unknown 'Mars/Base'; expected an IANA name such as Asia/Tokyo"),
        (("--language", "fr"), "language: expected one of en, ja, got 'fr'"),
        (("--companion", " "), "companion: expected 1 to 80 characters"),
        (("--companion", "x" * 81), "companion: expected 1 to 80 characters"),
        (("--companion", "Aiko", "--alias", "aiko"), "alias 'aiko': that is the companion's name itself"),
    ],
)
def test_a_bad_answer_exits_2_and_writes_nothing(
    run_cli: Run, clean_env: Path, options: tuple[str, ...], message: str
) -> None:
    done = run_cli("init", "--no-input", *options)
    assert done.code == 2
    assert f"ego: error: {message}" in done.err
    assert not (clean_env / "ego.toml").exists()


def test_a_file_that_is_not_toml_is_kept_unless_forced_then_backed_up(run_cli: Run, clean_env: Path) -> None:
    clean_env.mkdir(parents=True)
    path = clean_env / "ego.toml"
    path.write_text("timezone = \n", encoding="utf-8")
    refused = run_cli("init", *JAPANESE)
    assert refused.code == 2
    assert "is not valid TOML" in refused.err
    assert path.read_text(encoding="utf-8") == "timezone = \n"
    forced = run_cli("init", *JAPANESE, "--force")
    assert forced.code == 0, forced.err
    assert (clean_env / "ego.toml.bak").read_text(encoding="utf-8") == "timezone = \n"
    assert tomllib.loads(path.read_text(encoding="utf-8"))["companion_name"] == "マスター"


def test_a_config_elsewhere_and_a_workspace(run_cli: Run, clean_env: Path, tmp_path: Path) -> None:
    data = tmp_path / "elsewhere" / "data"
    config = tmp_path / "etc" / "ego.toml"
    workspace = tmp_path / "openclaw" / "workspace"
    done = run_cli(
        "init", "--language", "en", "--data-dir", str(data), "--config", str(config), "--workspace", str(workspace),
        "--no-input",
    )  # fmt: skip
    assert done.code == 0, done.err
    document = tomllib.loads(config.read_text(encoding="utf-8"))
    assert document["data_dir"] == str(data)
    assert document["companion_name"] == "Master"
    assert document["plugins"] == {"workspace_sync": {"workspace_dir": str(workspace)}}
    assert data.is_dir()
    entry = printed_config(done.out, "Claude Desktop")["mcpServers"]["ego"]
    assert entry["env"] == {"EGO_DATA_DIR": str(data), "EGO_CONFIG": str(config)}
    settings = load_settings(env={"EGO_CONFIG": str(config)})
    assert settings.data_dir == data
    assert settings.plugin_tables["workspace_sync"] == {"workspace_dir": str(workspace)}


def test_a_data_dir_that_is_a_file_is_refused(run_cli: Run, tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    done = run_cli("init", "--data-dir", str(afile / "data"), "--no-input")
    assert done.code == 2
    assert f"data directory: {afile} is a file, not a directory" in done.err


def test_doctor_reports_what_init_set(run_cli: Run, clean_env: Path) -> None:
    assert run_cli("init", *JAPANESE).code == 0
    doctor = run_cli("doctor", "--plugins", "")
    assert f"[ok] config: {clean_env / 'ego.toml'}" in doctor.out
    assert "[ok] owner: language ja, time zone Asia/Tokyo, companion マスター" in doctor.out


def test_on_a_terminal_it_asks_and_asks_again_after_a_bad_answer(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ego_core.mcp.cli", "init", "--data-dir", str(data)],
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        # language, companion (default), aliases (none), a bad time zone then a good one, workspace (none)
        os.write(leader, b"ja\n\n\nMars/Base\nAsia/Tokyo\n\n")
        out, err = proc.communicate(timeout=120)
    finally:
        os.close(leader)
        os.close(follower)
    assert proc.returncode == 0, err.decode()
    questions = err.decode()
    assert "Your language (en/ja) [en]: " in questions
    assert "What the companion calls you (your name as the agent should say it) [マスター]: " in questions
    assert "time zone: unknown 'Mars/Base'" in questions
    assert tomllib.loads((data / "ego.toml").read_text(encoding="utf-8")) == {
        "language": "ja",
        "companion_name": "マスター",
        "timezone": "Asia/Tokyo",
    }
    assert "Claude Desktop" in out.decode()


def test_the_language_setting_and_its_variable() -> None:
    assert load_settings(env={"EGO_DATA_DIR": "/nonexistent-ego", "EGO_LANGUAGE": "ja"}).language == "ja"
    assert load_settings(env={"EGO_DATA_DIR": "/nonexistent-ego"}).language == "en"
    with pytest.raises(ConfigError, match=r"EGO_LANGUAGE \(language\): expected one of en, ja"):
        load_settings(env={"EGO_DATA_DIR": "/nonexistent-ego", "EGO_LANGUAGE": "fr"})


NAMES = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)
OTHER = st.dictionaries(st.from_regex(r"[a-z]{1,8}", fullmatch=True), st.integers(), max_size=4)


@given(companion=NAMES, workspace=NAMES, other=OTHER, comment=st.text(st.characters(blacklist_categories=("Cs", "Cc"))))
def test_set_keys_writes_any_value_and_keeps_everything_else(
    companion: str, workspace: str, other: dict[str, int], comment: str
) -> None:
    keys = {f"x_{k}": v for k, v in other.items()}
    existing = f"# {comment}\n" + "".join(f"{k} = {v}\n" for k, v in keys.items()) + "[server]\nport = 8765\n"
    wanted = {"companion_name": companion, "plugins.workspace_sync.workspace_dir": workspace}
    once = set_keys(existing, wanted)
    document = tomllib.loads(once)
    assert document["companion_name"] == companion
    assert document["plugins"]["workspace_sync"]["workspace_dir"] == workspace
    assert document["server"] == {"port": 8765}
    assert {k: document[k] for k in keys} == keys
    assert once.startswith(f"# {comment}\n")
    assert set_keys(once, wanted) == once  # idempotent
    assert tomllib.loads(f"v = {toml_string(companion)}")["v"] == companion
