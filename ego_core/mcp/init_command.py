"""``ego init``: the first run. The owner's language, the companion's name and aliases, the time zone, the data
directory and the workspace go into ``ego.toml``; the client configs that start ego on that file are printed.

Options give the answers (for scripts); with stdin a terminal, what no option gives is asked. An existing
``ego.toml`` is edited in place (its other keys and comments kept) and only with ``--force`` when a value would
change; otherwise the changes are listed and nothing is written. The file is replaced atomically. The
companion's aliases are kept where every other alias is, in the self_model plugin's people
(``update_relationship``), so ``ego init`` adds them through that tool.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import stat
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ego_core.errors import UsageError
from ego_core.kernel.config import (
    CONFIG_FILE_NAME,
    DEFAULT_DATA_DIR,
    LANGUAGES,
    ConfigError,
    Settings,
    _system_timezone,
    _valid_zone,
    load_settings,
)
from ego_core.kernel.host import PluginHost
from ego_core.kernel.storage import write_atomically

NAME_MAX = 80
"""A companion name or alias: 1 to 80 characters, as ``update_relationship`` takes them."""
DEFAULT_COMPANION = {"en": "Master", "ja": "マスター"}
WORKSPACE_TABLE = "plugins.workspace_sync"
OVERRIDING_VARIABLES = {
    "EGO_LANGUAGE": "language",
    "EGO_COMPANION_NAME": "companion_name",
    "EGO_TIMEZONE": "timezone",
    "EGO_WORKSPACE_DIR": "workspace_dir",
}
"""Variables that outrank what ``ego init`` writes (a warning names them when they are set)."""


@attrs.frozen
class Answers:
    language: str
    companion: str
    aliases: tuple[str, ...]
    timezone: str
    data_dir: Path
    config_path: Path
    workspace: Path | None

    def keys(self) -> dict[str, Any]:
        """``ego.toml``'s keys that ``ego init`` sets, dotted (``plugins.workspace_sync.workspace_dir``)."""
        found: dict[str, Any] = {
            "language": self.language,
            "companion_name": self.companion,
            "timezone": self.timezone,
        }
        if self.config_path != self.data_dir / CONFIG_FILE_NAME:  # the file is not where the data dir finds it
            found["data_dir"] = str(self.data_dir)
        if self.workspace is not None:
            found[f"{WORKSPACE_TABLE}.workspace_dir"] = str(self.workspace)
        return found


# --------------------------------------------------------------------------------------------------
# Checks: each returns the problem in words, or None


def language_problem(value: str) -> str | None:
    return None if value in LANGUAGES else f"language: expected one of {', '.join(LANGUAGES)}, got {value!r}"


def timezone_problem(value: str) -> str | None:
    if _valid_zone(value):
        return None
    return f"time zone: unknown {value!r}; expected an IANA name such as Asia/Tokyo or Europe/Berlin"


def name_problem(value: str, what: str) -> str | None:
    if not value.strip() or len(value) > NAME_MAX or value != value.strip():
        return f"{what}: expected 1 to {NAME_MAX} characters, without spaces at either end"
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        return f"{what}: control characters are not allowed"
    return None


def directory_problem(path: Path, what: str) -> str | None:
    for candidate in (path, *path.parents):
        if candidate.exists():
            if candidate.is_dir():
                return None
            return f"{what}: {candidate} is a file, not a directory"
    return None


def _absolute(value: str) -> Path:
    return Path(os.path.expandvars(value)).expanduser().absolute()


# --------------------------------------------------------------------------------------------------
# The TOML text: ego.toml edited in place, keeping every other line


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string (non-ASCII kept as it is)."""
    escaped = []
    for char in value:
        if char in '"\\':
            escaped.append("\\" + char)
        elif ord(char) < 32 or ord(char) == 127:
            escaped.append(f"\\u{ord(char):04X}")
        else:
            escaped.append(char)
    return '"' + "".join(escaped) + '"'


_HEADER = re.compile(r"^\s*\[")
_ASSIGNMENT = re.compile(r"^\s*[A-Za-z0-9_\-\"'.]+\s*=")


def _key_pattern(key: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*(?:{re.escape(key)}|\"{re.escape(key)}\")\s*=")


def _table_pattern(table: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*\[\s*{re.escape(table)}\s*\]\s*(?:#.*)?$")


def _set_in_section(lines: list[str], start: int, end: int, key: str, line: str, *, fallback: int) -> None:
    """Replace ``key``'s line in ``lines[start:end]``, or add it after the section's last assignment (at
    ``fallback`` in a section with none)."""
    pattern = _key_pattern(key)
    last = None
    for index in range(start, end):
        if pattern.match(lines[index]):
            lines[index] = line
            return
        if _ASSIGNMENT.match(lines[index]):
            last = index
    lines.insert(last + 1 if last is not None else fallback, line)


def set_keys(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each dotted key of ``values`` set (top-level keys, or keys of one ``[table]``)."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    for dotted, value in values.items():
        table, _, key = dotted.rpartition(".")
        line = f"{key} = {toml_string(value)}\n"
        if not table:
            end = next((i for i, text_line in enumerate(lines) if _HEADER.match(text_line)), len(lines))
            _set_in_section(lines, 0, end, key, line, fallback=end)
            continue
        header = next((i for i, text_line in enumerate(lines) if _table_pattern(table).match(text_line)), None)
        if header is None:
            if lines and lines[-1].strip():
                lines.append("\n")
            lines += [f"[{table}]\n", line]
            continue
        end = next((i for i in range(header + 1, len(lines)) if _HEADER.match(lines[i])), len(lines))
        _set_in_section(lines, header + 1, end, key, line, fallback=header + 1)
    return "".join(lines)


def dotted_value(document: Mapping[str, Any], dotted: str) -> Any:
    node: Any = document
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def new_file_text(answers: Answers) -> str:
    header = (
        "# ego's settings, written by `ego init` (docs/configuration.md has every key).\n"
        "# `ego init --force` changes what it set here and keeps every other line.\n"
    )
    return header + set_keys("", {k: v for k, v in answers.keys().items() if isinstance(v, str)})


def write_config(path: Path, text: str) -> None:
    """Replace the settings file atomically, keeping an existing file's permission bits (a new one is 0600)."""
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    write_atomically(path, text, mode=mode)


# --------------------------------------------------------------------------------------------------
# The answers: options, else questions (a terminal), else the file's values, else the defaults

Ask = Callable[[str, str, Callable[[str], str | None]], str]


def ask_on_terminal(question: str, default: str, check: Callable[[str], str | None]) -> str:
    """Ask on stderr (stdout carries the result), read a line from stdin; ask again after a bad answer."""
    while True:
        shown = f" [{default}]" if default else ""
        print(f"{question}{shown}: ", end="", file=sys.stderr, flush=True)
        line = sys.stdin.readline()
        if not line:
            raise UsageError("no answer (end of input); give the values as options instead (ego init --help)")
        answer = line.strip() or default
        problem = check(answer)
        if problem is None:
            return answer
        print(f"  {problem}", file=sys.stderr)


def _given(args: argparse.Namespace, name: str) -> Any:
    return getattr(args, name, None)


def _read_existing(path: Path) -> tuple[str | None, dict[str, Any] | None, str | None]:
    """The file's text, its parsed document and, when it cannot be read as TOML, why."""
    if not path.exists():
        return None, None, None
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None, None, "not UTF-8 text"
    except OSError as exc:
        raise UsageError(f"cannot read {path} ({exc.strerror})") from None
    try:
        return text, tomllib.loads(text), None
    except tomllib.TOMLDecodeError as exc:
        return text, None, f"not valid TOML ({exc})"


def _locations(args: argparse.Namespace, env: Mapping[str, str], ask: Ask | None) -> tuple[Path, Path]:
    data_option = _given(args, "data_dir")
    if data_option is not None:
        data_dir = _absolute(str(data_option))
    elif env.get("EGO_DATA_DIR"):
        data_dir = _absolute(env["EGO_DATA_DIR"])
    elif ask is not None:
        data_dir = _absolute(
            ask("Data directory", str(DEFAULT_DATA_DIR), lambda v: directory_problem(_absolute(v), "data directory"))
        )
    else:
        data_dir = _absolute(str(DEFAULT_DATA_DIR))
    problem = directory_problem(data_dir, "data directory")
    if problem:
        raise UsageError(problem)
    config_option = _given(args, "config")
    if config_option is not None:
        config_path = _absolute(str(config_option))
    elif env.get("EGO_CONFIG"):
        config_path = _absolute(env["EGO_CONFIG"])
    else:
        config_path = data_dir / CONFIG_FILE_NAME
    if config_path.is_dir():
        raise UsageError(f"config file: {config_path} is a directory")
    return data_dir, config_path


def collect(
    args: argparse.Namespace, existing: Mapping[str, Any], data_dir: Path, config_path: Path, ask: Ask | None
) -> Answers:
    """Every answer: an option, else (``ask``) a question whose default is the file's value or ego's default."""

    def choose(option: str, question: str, default: str, check: Callable[[str], str | None]) -> str:
        given = _given(args, option)
        value = str(given) if given is not None else ask(question, default, check) if ask is not None else default
        problem = check(value)
        if problem:
            raise UsageError(problem)
        return value

    language = choose(
        "language", f"Your language ({'/'.join(LANGUAGES)})", str(existing.get("language") or "en"), language_problem
    )
    companion = choose(
        "companion",
        "What the companion calls you (your name as the agent should say it)",
        str(existing.get("companion_name") or DEFAULT_COMPANION[language]),
        lambda v: name_problem(v, "companion"),
    )
    alias_options: Sequence[str] | None = _given(args, "alias")
    if alias_options is None and ask is not None:
        answer = ask("Other names you go by (comma-separated, optional)", "", lambda v: aliases_problem(v, companion))
        alias_options = split_aliases(answer)
    aliases = tuple(dict.fromkeys(alias_options or ()))
    for alias in aliases:
        problem = aliases_problem(alias, companion)
        if problem:
            raise UsageError(problem)
    timezone = choose(
        "timezone", "Time zone (IANA name)", str(existing.get("timezone") or _system_timezone()), timezone_problem
    )
    workspace_value = _given(args, "workspace")
    current = dotted_value(existing, f"{WORKSPACE_TABLE}.workspace_dir")
    if workspace_value is None and ask is not None:
        workspace_value = ask(
            "OpenClaw workspace to mirror public memories into (optional)",
            str(current or ""),
            lambda v: directory_problem(_absolute(v), "workspace") if v else None,
        )
    workspace = _absolute(str(workspace_value)) if workspace_value else None
    if workspace is not None and (problem := directory_problem(workspace, "workspace")):
        raise UsageError(problem)
    return Answers(language, companion, aliases, timezone, data_dir, config_path, workspace)


def split_aliases(value: str) -> list[str]:
    return [part.strip() for part in re.split(r"[,、，]", value) if part.strip()]


def aliases_problem(value: str, companion: str) -> str | None:
    for alias in split_aliases(value) if value else []:
        problem = name_problem(alias, f"alias {alias!r}")
        if problem:
            return problem
        if alias.casefold() == companion.casefold():
            return f"alias {alias!r}: that is the companion's name itself"
    return None


# --------------------------------------------------------------------------------------------------
# The command


def ego_command() -> list[str]:
    """How a client starts this ego: the ``ego`` script beside this interpreter, else on PATH, else
    ``python -m ego_core.mcp.cli``."""
    script = Path(sys.executable).parent / ("ego.exe" if os.name == "nt" else "ego")
    if script.is_file():
        return [str(script.absolute())]
    found = shutil.which("ego")
    if found:
        return [str(Path(found).absolute())]
    return [sys.executable, "-m", "ego_core.mcp.cli"]


def client_entry(answers: Answers) -> dict[str, Any]:
    command = ego_command()
    env = {"EGO_DATA_DIR": str(answers.data_dir)}
    if answers.config_path != answers.data_dir / CONFIG_FILE_NAME:
        env["EGO_CONFIG"] = str(answers.config_path)
    return {"command": command[0], "args": [*command[1:], "serve"], "env": env}


def client_configs(answers: Answers) -> dict[str, dict[str, Any]]:
    entry = client_entry(answers)
    return {
        "Claude Desktop (claude_desktop_config.json)": {"mcpServers": {"ego": entry}},
        "OpenClaw (its MCP server list)": {"mcp": {"servers": {"ego": entry}}},
    }


def next_command(answers: Answers) -> str:
    where = ["--data-dir", str(answers.data_dir)]
    if answers.config_path != answers.data_dir / CONFIG_FILE_NAME:
        where += ["--config", str(answers.config_path)]
    return shlex.join([*ego_command(), *where, "doctor"])


def _shown(value: Any) -> str:
    return "(not set)" if value is None else json.dumps(value, ensure_ascii=False)


def changes(before: Mapping[str, Any], wanted: Mapping[str, Any]) -> list[str]:
    return [
        f"  {key}: {_shown(dotted_value(before, key))} -> {_shown(value)}"
        for key, value in wanted.items()
        if dotted_value(before, key) != value
    ]


def check_written(text: str, answers: Answers) -> None:
    """The new text holds exactly the answers and is a configuration ego accepts (else nothing is written)."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(
            f"{answers.config_path}: the edited file would not be valid TOML ({exc}); edit it by hand"
        ) from None
    for key, value in answers.keys().items():
        if dotted_value(document, key) != value:
            raise UsageError(
                f"{answers.config_path}: {key} is written in a form ego init does not edit; set it by hand"
            )
    probe = answers.config_path.with_name(f".{answers.config_path.name}.{os.getpid()}.check")
    try:
        write_atomically(probe, text)
        load_settings(config_path=probe, data_dir=answers.data_dir, env={})
    except ConfigError as exc:
        raise UsageError(f"{answers.config_path}: the result would be an invalid configuration: {exc}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            probe.unlink()


def add_aliases(
    answers: Answers, env: Mapping[str, str], build_host: Callable[[Settings], PluginHost], runner: Callable[..., Any]
) -> list[str]:
    """Give the companion ``answers.aliases`` through ``update_relationship`` (a host made by ``build_host``, its
    tools called by ``runner``, a ``ToolRunner``: handed in by the CLI, which sits above the host's modules); the
    aliases newly added."""
    import anyio

    from ego_core.kernel.logs import configure_logging

    kept = {k: v for k, v in env.items() if k not in OVERRIDING_VARIABLES}
    kept["EGO_DATA_DIR"] = str(answers.data_dir)
    try:
        settings: Settings = load_settings(config_path=answers.config_path, data_dir=answers.data_dir, env=kept)
    except ConfigError as exc:
        raise UsageError(f"invalid configuration: {exc}") from None
    configure_logging(settings.logs_path, settings.log_level)
    with contextlib.redirect_stdout(sys.stderr):  # plugins' import-time prints never reach the result
        host = build_host(settings)
        host.start()
    try:
        if not host.tool_served("update_relationship"):
            raise UsageError(
                "the companion's aliases are kept by the self_model plugin, which is not enabled here; "
                "enable it, or leave out --alias"
            )
        tools = runner(host)
        added: list[str] = []
        for alias in answers.aliases:
            arguments = {"person": answers.companion, "field": "aliases", "value": alias}
            result = anyio.run(tools.call, "update_relationship", arguments)
            text = "".join(getattr(block, "text", "") for block in result.content).split("\n\n---", 1)[0]
            if result.is_error:
                raise UsageError(f"alias {alias!r} not added: {text}")
            if "nothing changed" not in text:
                added.append(alias)
        return added
    finally:
        with contextlib.redirect_stdout(sys.stderr):
            host.stop()


def run_init(args: argparse.Namespace, _host: object = None) -> int:
    env = os.environ
    interactive = not args.no_input and sys.stdin.isatty()
    ask: Ask | None = ask_on_terminal if interactive else None
    data_dir, config_path = _locations(args, env, ask)
    text, document, unreadable = _read_existing(config_path)
    if unreadable and not args.force:
        raise UsageError(
            f"{config_path} is {unreadable}; fix it, or run again with --force to write a new one "
            f"(the old file is kept as {config_path.name}.bak)"
        )
    answers = collect(args, document or {}, data_dir, config_path, ask)
    wanted = answers.keys()
    if unreadable or text is None:
        new_text = new_file_text(answers)
    else:
        new_text = set_keys(text, {k: v for k, v in wanted.items() if isinstance(v, str)})
    check_written(new_text, answers)
    listed = changes(document or {}, wanted)
    if text is not None and not unreadable and not listed:
        new_text = text  # the values are already there: the file is left as it is, byte for byte
    if text is not None and not unreadable and new_text != text and not args.force:
        print(f"{config_path} exists and ego init would change:", file=sys.stderr)
        print("\n".join(listed), file=sys.stderr)
        print("nothing was written; run again with --force to write these changes (other lines are kept)")
        return 1
    if new_text == text:
        print(f"{config_path} already says this; nothing changed")
    else:
        if unreadable:
            shutil.copy2(config_path, config_path.with_name(config_path.name + ".bak"))
        write_config(config_path, new_text)
        verb = "updated" if text is not None else "wrote"
        print(f"{verb} {config_path}")
        for line in listed:
            print(line)
    data_dir.mkdir(parents=True, exist_ok=True)
    if answers.aliases:
        building = getattr(args, "build_host", None)
        runner = getattr(args, "tool_runner", None)
        if building is None or runner is None:
            raise UsageError("--alias needs the ego command line (ego init), which opens the plugins to keep it")
        added = add_aliases(answers, env, building, runner)
        if added:
            print(f"the companion {answers.companion} now also answers to: {', '.join(added)}")
        else:
            print(f"the companion {answers.companion} already answers to: {', '.join(answers.aliases)}")
    for variable, key in OVERRIDING_VARIABLES.items():
        if env.get(variable):
            print(
                f"ego: warning: {variable} is set in this environment and outranks {key} in ego.toml", file=sys.stderr
            )
    print()
    for client, config in client_configs(answers).items():
        print(f"{client}:")
        print(json.dumps(config, indent=2, ensure_ascii=False))
        print()
    print("Several clients at once: run one `ego serve --http` and `ego connect` per client (docs/connect.md).")
    print(f"Next: {next_command(answers)}")
    return 0


def configure_init(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--language", default=None, help=f"the owner's language: {', '.join(LANGUAGES)}")
    parser.add_argument("--companion", default=None, help="the companion's name: what the agent calls its owner")
    parser.add_argument(
        "--alias", action="append", default=None, help="another name the companion goes by (repeat for several)"
    )
    parser.add_argument("--timezone", default=None, help="IANA time zone, e.g. Asia/Tokyo (default: the system's)")
    parser.add_argument(
        "--data-dir", default=argparse.SUPPRESS, help="data directory (default: $EGO_DATA_DIR or ~/.ego)"
    )
    parser.add_argument(
        "--config", default=argparse.SUPPRESS, help="where to write ego.toml (default: <data dir>/ego.toml)"
    )
    parser.add_argument("--workspace", default=None, help="an OpenClaw workspace to mirror public memories into")
    parser.add_argument("--force", action="store_true", help="change an existing ego.toml's values")
    parser.add_argument("--no-input", action="store_true", help="ask nothing, even on a terminal (defaults apply)")
