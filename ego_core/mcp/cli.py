"""The ``ego`` command line.

Every command comes from a plugin's ``register_commands``: the core plugin's (``serve``, ``plugins``, ``doctor``,
``export``, ``import``, ``token new``) and any other's (``ego memory reindex``, ``ego bench locomo``, ...). Usage
and configuration errors exit with code 2 and a message on stderr; stdout carries only results (and, for
``ego serve``, only the MCP protocol).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from ego_core.embedding import EmbeddingError
from ego_core.errors import UsageError
from ego_core.kernel.config import ConfigError, Settings, load_settings
from ego_core.kernel.discovery import SelectionError
from ego_core.kernel.logs import configure_logging, log_file_problem
from ego_core.kernel.registries import ToolConflictError
from ego_core.kernel.status import CORE_PLUGIN_ID
from ego_core.mcp.agents import UnknownAgentError, known_agent_settings
from ego_core.mcp.core_commands import core_commands, data_dir_problem, log_dir_hint
from ego_core.mcp.factory import build_host
from ego_core.types import Command
from ego_core.version import __version__


def _split(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]


class _Parser(argparse.ArgumentParser):
    """argparse with one change: an unknown option is named as such, with the nearest option of the command it
    was given to, under that command's usage."""

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            unknown = [arg for arg in extras if arg.startswith("-") and arg != "-"]
            used: argparse.ArgumentParser = getattr(parsed, _PARSER_KEY, self)
            used.print_usage(sys.stderr)
            if unknown:
                _die(unknown_option(unknown[0], _option_strings(used)))
            _die(f"unrecognized arguments: {' '.join(extras)}")
        if hasattr(parsed, _PARSER_KEY):
            delattr(parsed, _PARSER_KEY)
        return parsed


_PARSER_KEY = "_command_parser"
"""The namespace attribute naming the parser of the (sub)command that was used."""


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """The options of ``parser`` itself (not of its subcommands: a suggestion must work where it is given)."""
    return {option for action in parser._actions for option in action.option_strings}


def unknown_option(given: str, known: set[str]) -> str:
    """``unknown option --data (did you mean --data-dir?)``; options are never abbreviated, so a prefix of a
    known option is suggested first, then the closest spelling (never the option given itself)."""
    name = given.split("=", 1)[0]
    known = known - {name}
    longer = sorted(option for option in known if option.startswith(name))
    close = longer[:1] or difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f"unknown option {name}" + (f" (did you mean {close[0]}?)" if close else "")


def _global_parser(add_help: bool) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ego",
        description="ego: memory, desires and a sense of self for LLM agents, served over MCP.",
        add_help=add_help,
        allow_abbrev=False,  # `--data` must not silently mean `--data-dir` (a plugin command may have `--data`)
    )
    parser.add_argument("--version", action="version", version=f"ego {__version__}")
    parser.add_argument("--config", type=Path, help="config file (default: $EGO_CONFIG or <data dir>/ego.toml)")
    parser.add_argument("--data-dir", type=Path, help="data directory (default: $EGO_DATA_DIR or ~/.ego)")
    parser.add_argument("--agent", help="use this agent's own space, <data dir>/agents/AGENT (as HTTP serves it)")
    parser.add_argument("--plugins", help="use exactly these plugins (comma-separated ids); overrides EGO_PLUGINS")
    parser.add_argument("--disable", help="plugins to leave out (comma-separated ids); adds to EGO_DISABLE_PLUGINS")
    return parser


def _selection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plugins", default=argparse.SUPPRESS, help="use exactly these plugins (comma-separated)")
    parser.add_argument("--disable", default=argparse.SUPPRESS, help="plugins to leave out (comma-separated)")
    parser.add_argument("--config", type=Path, default=argparse.SUPPRESS, help="config file")
    parser.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS, help="data directory")
    parser.add_argument("--agent", default=argparse.SUPPRESS, help="use this agent's own space")


def build_parser(commands: Sequence[tuple[str, Command]]) -> argparse.ArgumentParser:
    parser = _global_parser(add_help=True)
    sub = parser.add_subparsers(dest="command", metavar="command")
    groups: dict[str, Any] = {}
    for plugin_id, command in commands:
        if command.group is None:
            target = sub
        else:
            if command.group not in groups:
                group_parser = sub.add_parser(command.group, allow_abbrev=False, help=f"{command.group} commands")
                group_parser.set_defaults(**{_PARSER_KEY: group_parser})
                groups[command.group] = group_parser.add_subparsers(
                    dest=f"{command.group}_command", metavar="action", required=True
                )
            target = groups[command.group]
        shown = command.help if plugin_id == CORE_PLUGIN_ID else f"{command.help} [{plugin_id}]"
        command_parser = target.add_parser(command.name, allow_abbrev=False, help=shown)
        standalone = command.group in _STANDALONE or (command.group is None and command.name in _STANDALONE_COMMANDS)
        if not standalone:  # `ego token new` reads no configuration and loads no plugin
            _selection_options(command_parser)
        command.configure(command_parser)
        command_parser.set_defaults(_plugin_command=command, **{_PARSER_KEY: command_parser})
    return parser


_STANDALONE = frozenset({"token", "plugin"})
"""Command groups that read no configuration and load no plugin."""
_STANDALONE_COMMANDS = frozenset({"init", "connect"})
"""Commands that read the configuration themselves (or none) and load no plugin (``ego init`` writes it)."""

_VALUE_OPTIONS = frozenset({"--config", "--data-dir", "--agent", "--plugins", "--disable"})
_FLAG_OPTIONS = frozenset({"-h", "--help", "--version"})


def _check_global_options(argv: Sequence[str]) -> None:
    """Before the command only ego's own options may come: ``ego --data x doctor`` names ``--data`` as unknown
    (argparse alone would take ``x`` for the command and say ``invalid choice: 'x'``)."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg == "--" or not arg.startswith("-") or arg == "-":
            return
        name = arg.split("=", 1)[0]
        if name in _VALUE_OPTIONS:
            skip = "=" not in arg
        elif name not in _FLAG_OPTIONS:
            _die(unknown_option(arg, set(_VALUE_OPTIONS | _FLAG_OPTIONS)))


def _command_word(argv: Sequence[str]) -> str | None:
    """The first positional argument (the command), skipping the global options and their values."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg == "--":
            return None
        if arg in _VALUE_OPTIONS:
            skip = True
            continue
        if arg.startswith("-"):
            continue
        return arg
    return None


def _die(message: str, code: int = 2) -> NoReturn:
    print(f"ego: error: {message}", file=sys.stderr)
    raise SystemExit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``ego`` command. A reader that stops reading (``ego plugins --json | head``) ends the command
    quietly, with the exit code of a process killed by SIGPIPE (141), as other command-line tools do."""
    try:
        code = _main(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()  # inside the try: a closed pipe must fail here, not at interpreter exit
        return code
    except BrokenPipeError:
        # Nothing more can reach stdout; point it at the null device so the interpreter's own final flush of
        # what is still buffered does not print "Exception ignored ... BrokenPipeError" on stderr.
        with contextlib.suppress(OSError, ValueError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())
            os.close(null)
        return 128 + 13  # SIGPIPE


def _main(argv: list[str]) -> int:
    _check_global_options(argv)
    if _command_word(argv) in _STANDALONE | _STANDALONE_COMMANDS:
        # `ego token new` and `ego plugin new` need neither the configuration, the data dir nor any plugin: they
        # work even when plugin selection or the config file is broken (that is often when a token is being set
        # up, or a plugin written)
        args = build_parser([(CORE_PLUGIN_ID, c) for c in core_commands()]).parse_args(argv)
        if _command_word(argv) == "init":  # --alias keeps the aliases through the plugins' own tool
            from ego_core.mcp.server import ToolRunner

            args.build_host, args.tool_runner = build_host, ToolRunner
        try:
            return int(args._plugin_command.run(args, None))
        except UsageError as exc:
            _die(str(exc))
    if _command_word(argv) == "serve" and not {"--http", "-h", "--help"} & set(argv):
        # stdio: the protocol owns stdout from before any plugin is imported, even at the fd level
        from ego_core.mcp.stdio import protocol_stdout

        with protocol_stdout() as wire:
            return _run(argv, wire)
    return _run(argv, None)


def _load_settings(argv: Sequence[str]) -> tuple[argparse.Namespace, Settings]:
    pre, _rest = _global_parser(add_help=False).parse_known_args(argv)  # options may follow the command
    try:
        settings = load_settings(
            config_path=Path(pre.config) if pre.config else None,
            data_dir=Path(pre.data_dir).expanduser() if pre.data_dir else None,
        )
        if pre.agent is not None:
            settings = known_agent_settings(settings, pre.agent)
    except UnknownAgentError as exc:
        _die(str(exc))
    except ConfigError as exc:
        _die(f"invalid configuration: {exc}")
    return pre, settings


def _run(argv: list[str], wire: TextIO | None) -> int:
    pre, settings = _load_settings(argv)
    problem = data_dir_problem(settings)
    if problem and _command_word(argv) not in ("doctor", None):  # doctor reports it among its checks
        _die(problem)
    configure_logging(settings.logs_path, settings.log_level)
    log_problem = log_file_problem()
    if log_problem and _command_word(argv) not in ("doctor", None):  # doctor reports it among its checks
        _die(f"{log_problem}; {log_dir_hint(settings)}")
    # Loading plugins runs their import-time code: a stray print() must not reach stdout (the MCP protocol).
    with contextlib.redirect_stdout(sys.stderr):
        try:
            host = build_host(settings, enabled=_split(pre.plugins), disabled=_split(pre.disable) or [])
        except ConfigError as exc:  # a plugin's [plugins.<id>] table or its EGO_* variables
            _die(f"invalid configuration: {exc}")
        except (SelectionError, ToolConflictError) as exc:
            _die(str(exc))
        commands = host.commands()
    parser = build_parser(commands)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        _die("a command is required, e.g. `ego serve`")
    args.stdio_wire = wire
    command: Command = args._plugin_command
    try:
        if not command.starts_host:
            return command.run(args, host)
        host.start()
        try:
            return command.run(args, host)
        finally:
            host.stop()
    except UsageError as exc:
        _die(str(exc))
    except ConfigError as exc:
        _die(f"invalid configuration: {exc}")
    except (EmbeddingError, SelectionError) as exc:
        _die(str(exc))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
