"""The ``ego`` command line.

``ego serve`` (stdio or HTTP), ``ego plugins``, ``ego doctor``, ``ego token new``, and commands contributed
by plugins through ``register_commands`` (``ego memory reindex``, ``ego bench locomo``, ...). Usage and
configuration errors exit with code 2 and a message on stderr; stdout carries only results (and, for
``ego serve``, only the MCP protocol).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NoReturn, TextIO

from ego_core import __version__
from ego_core.config import ConfigError, Settings, load_settings
from ego_core.embedding import EmbeddingError
from ego_core.host import PluginHost, SelectionError, ToolConflictError, build_host
from ego_core.logs import configure_logging, log_file_problem
from ego_core.types import Check, Command


class UsageError(Exception):
    """Exit code 2 with this message."""


def _split(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]


def _global_parser(add_help: bool) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ego",
        description="ego: memory, desires and a sense of self for LLM agents, served over MCP.",
        add_help=add_help,
        allow_abbrev=False,  # `--data` must not silently mean `--data-dir` (a plugin command may have `--data`)
    )
    parser.add_argument("--version", action="version", version=f"ego {__version__}")
    parser.add_argument("--config", type=Path, help="config file (default: $EGO_CONFIG or <data dir>/ego.toml)")
    parser.add_argument("--data-dir", type=Path, help="data directory (default: $EGO_DATA_DIR or ~/.ego)")
    parser.add_argument("--plugins", help="serve exactly these plugins (comma-separated ids); overrides EGO_PLUGINS")
    parser.add_argument("--disable", help="plugins to leave out (comma-separated ids); adds to EGO_DISABLE_PLUGINS")
    return parser


def _selection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plugins", default=argparse.SUPPRESS, help="serve exactly these plugins (comma-separated)")
    parser.add_argument("--disable", default=argparse.SUPPRESS, help="plugins to leave out (comma-separated)")
    parser.add_argument("--config", type=Path, default=argparse.SUPPRESS, help="config file")
    parser.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS, help="data directory")


def build_parser(commands: Sequence[tuple[str, Command]]) -> argparse.ArgumentParser:
    parser = _global_parser(add_help=True)
    sub = parser.add_subparsers(dest="command", metavar="command")

    serve = sub.add_parser("serve", allow_abbrev=False, help="serve the MCP tools (stdio by default)")
    _selection_options(serve)
    serve.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    serve.add_argument("--host", default=None, help="HTTP bind address (default 127.0.0.1; [server] host)")
    serve.add_argument("--port", type=int, default=None, help="HTTP port (default 8765; [server] port)")
    serve.add_argument("--path", default=None, help="HTTP path of the MCP endpoint (default /mcp)")

    plugins = sub.add_parser("plugins", allow_abbrev=False, help="installed, enabled and failed plugins, with reasons")
    _selection_options(plugins)
    plugins.add_argument("--json", action="store_true", help="machine-readable output")

    doctor = sub.add_parser(
        "doctor", allow_abbrev=False, help="check config, data dir, plugins, embedding model and stores"
    )
    _selection_options(doctor)

    export = sub.add_parser(
        "export", allow_abbrev=False, help="write every plugin's state (memories, ...) to a JSON Lines file"
    )
    _selection_options(export)
    export.add_argument("file", type=Path, help="the file to write (replaced atomically)")
    export.add_argument(
        "--include-private", action="store_true", help="include private memories (a full backup, not redacted)"
    )

    import_ = sub.add_parser("import", allow_abbrev=False, help="read an export into this data directory (idempotent)")
    _selection_options(import_)
    import_.add_argument("file", type=Path, help="a file written by `ego export`")

    token = sub.add_parser("token", allow_abbrev=False, help="manage HTTP bearer tokens")
    token_sub = token.add_subparsers(dest="token_command", metavar="action", required=True)
    new = token_sub.add_parser("new", allow_abbrev=False, help="create a token for an agent and print its config line")
    new.add_argument("agent", help="agent id, e.g. claude")

    groups: dict[str, Any] = {}
    for plugin_id, command in commands:
        if command.group is None:
            target = sub
        else:
            if command.group not in groups:
                group_parser = sub.add_parser(command.group, allow_abbrev=False, help=f"{command.group} commands")
                groups[command.group] = group_parser.add_subparsers(
                    dest=f"{command.group}_command", metavar="action", required=True
                )
            target = groups[command.group]
        command_parser = target.add_parser(command.name, allow_abbrev=False, help=f"{command.help} [{plugin_id}]")
        _selection_options(command_parser)
        command.configure(command_parser)
        command_parser.set_defaults(_plugin_command=command)
    return parser


CORE_COMMANDS = ("serve", "plugins", "doctor", "export", "import", "token")
"""Names plugins cannot take for their commands or command groups."""

_VALUE_OPTIONS = frozenset({"--config", "--data-dir", "--plugins", "--disable"})


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


def _make_host(settings: Settings, enabled: list[str] | None, disabled: list[str]) -> PluginHost:
    return build_host(settings, enabled=enabled, disabled=disabled)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if _command_word(argv) == "token":
        # `ego token new` needs neither the configuration, the data dir nor any plugin: it works even when
        # plugin selection or the config file is broken (that is often when a token is being set up)
        args = build_parser([]).parse_args(argv)
        try:
            return _token(args)
        except UsageError as exc:
            _die(str(exc))
    if _command_word(argv) == "serve" and not {"--http", "-h", "--help"} & set(argv):
        # stdio: the protocol owns stdout from before any plugin is imported, even at the fd level
        from ego_core.server import protocol_stdout

        with protocol_stdout() as wire:
            return _run(argv, wire)
    return _run(argv, None)


def _run(argv: list[str], wire: TextIO | None) -> int:
    pre, _rest = _global_parser(add_help=False).parse_known_args(argv)  # options may follow the command
    try:
        settings = load_settings(
            config_path=Path(pre.config) if pre.config else None,
            data_dir=Path(pre.data_dir).expanduser() if pre.data_dir else None,
        )
    except ConfigError as exc:
        _die(f"invalid configuration: {exc}")
    configure_logging(settings.logs_path, settings.log_level)
    log_problem = log_file_problem()
    if log_problem and _command_word(argv) not in ("doctor", None):  # doctor reports it among its checks
        _die(f"{log_problem}; {_log_dir_hint(settings)}")
    disabled = _split(pre.disable) or []
    enabled = _split(pre.plugins)
    # Loading plugins runs their import-time code: a stray print() must not reach stdout (the MCP protocol).
    with contextlib.redirect_stdout(sys.stderr):
        try:
            host = _make_host(settings, enabled, disabled)
        except ConfigError as exc:  # a plugin's [plugins.<id>] table or its EGO_* variables
            _die(f"invalid configuration: {exc}")
        except (SelectionError, ToolConflictError) as exc:
            _die(str(exc))
        commands = host.commands(reserved=CORE_COMMANDS)
    parser = build_parser(commands)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        _die("a command is required, e.g. `ego serve`")
    try:
        if args.command == "serve":
            return _serve(host, settings, args, wire)
        if args.command == "plugins":
            return _plugins(host, settings, args)
        if args.command == "doctor":
            return _doctor(host, settings)
        if args.command in ("export", "import"):
            return _portable(host, args)
        command: Command = args._plugin_command
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


def _portable(host: PluginHost, args: argparse.Namespace) -> int:
    from ego_core.portable import PortableError, export_file, import_file, read_export_file

    if args.command == "import":
        try:  # the whole file is read and checked before any store is opened (or created)
            export = read_export_file(args.file)
        except PortableError as exc:
            raise UsageError(str(exc)) from None
    host.start()
    try:
        if args.command == "export":
            try:
                count = export_file(host, args.file, include_private=args.include_private)
            except PortableError as exc:
                raise UsageError(str(exc)) from None
            kind = "including private memories" if args.include_private else "private memories left out"
            print(f"exported {count} records to {args.file} ({kind})")
            return 0
        try:
            summary = import_file(host, export)
        except PortableError as exc:
            raise UsageError(str(exc)) from None
        for plugin_id in sorted(summary.records):
            print(f"{plugin_id}: {summary.added.get(plugin_id, 0)} new of {summary.records[plugin_id]} records")
        return 0
    finally:
        host.stop()


def _serve(host: PluginHost, settings: Settings, args: argparse.Namespace, wire: TextIO | None) -> int:
    from ego_core.server import serve_http, serve_stdio

    if not args.http:
        if any(v is not None for v in (args.host, args.port, args.path)):
            raise UsageError("--host, --port and --path only apply with --http")
        assert wire is not None, "main() hands serve over stdio the protocol's stdout"
        if sys.stdin.isatty():
            print(
                "ego: serving MCP on stdio: waiting for an MCP client on stdin (an agent's client starts "
                "`ego serve` itself); Ctrl-C stops",
                file=sys.stderr,
            )
        serve_stdio(host, wire)
        return 0
    bind = args.host or settings.server.host
    port = args.port if args.port is not None else settings.server.port
    if not 0 < port < 65536:
        raise UsageError("--port must be from 1 to 65535")
    path = args.path or settings.server.path
    try:
        serve_http(host, bind_host=bind, port=port, path=path, tokens=settings.server.tokens)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return 0


def _log_dir_hint(settings: Settings) -> str:
    if settings.log_dir is not None:
        return "set log_dir in ego.toml (or EGO_LOG_DIR) to a writable directory"
    return "the logs live in the data directory: make it writable, or choose another with EGO_DATA_DIR"


def _recent_logged_failures(settings: Settings, days: int = 2) -> list[dict[str, Any]]:
    """``plugin_failure`` events other ego processes wrote to the JSON log recently."""
    found: list[dict[str, Any]] = []
    today = datetime.now(UTC).date()
    for offset in range(days):
        path = settings.logs_path / f"ego-{today - timedelta(days=offset):%Y-%m-%d}.jsonl"
        if not path.exists():
            continue
        with path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if '"plugin_failure"' not in line:
                    continue
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if entry.get("event") == "plugin_failure" and entry.get("pid") != os.getpid():
                    found.append(entry)
    return found[-20:]


def _plugins(host: PluginHost, settings: Settings, args: argparse.Namespace) -> int:
    host.start()
    host.stop()
    statuses = host.statuses()
    logged = _recent_logged_failures(settings)
    if args.json:
        payload = {
            "plugins": [
                {
                    "id": s.id,
                    "distribution": s.distribution,
                    "version": s.version,
                    "state": s.state,
                    "reason": s.reason,
                    "requires": list(s.requires),
                    "hooks": list(s.hooks),
                }
                for s in statuses
            ],
            "tools": {tool.name: plugin for plugin, tool in host.tools()},
            "recent_failures": logged,
        }
        print(json.dumps(payload, indent=2))
        return 0
    print(f"ego {__version__}; data dir {settings.data_dir}")
    width = max((len(s.id) for s in statuses), default=4)
    for status in statuses:
        dist = f"{status.distribution or '-'} {status.version or ''}".strip()
        line = f"  {status.id:<{width}}  {status.state:<8}  {dist}"
        if status.requires:
            line += f"  (requires {', '.join(status.requires)})"
        print(line)
        if status.reason:
            print(f"  {'':<{width}}  why: {status.reason}")
    tools_by_plugin: dict[str, list[str]] = {}
    for plugin, tool in host.tools():
        tools_by_plugin.setdefault(plugin, []).append(tool.name)
    print("tools:")
    for plugin, names in sorted(tools_by_plugin.items()):
        print(f"  {plugin}: {', '.join(names)}")
    if logged:
        print("recent failures in the log (other processes):")
        for entry in logged:
            hook = f":{entry['hook']}" if entry.get("hook") else ""
            print(f"  {entry.get('ts', '?')} {entry.get('plugin')} [{entry.get('stage')}{hook}] {entry.get('reason')}")
    return 0


def _doctor(host: PluginHost, settings: Settings) -> int:
    checks: list[Check] = [
        Check("config", True, str(settings.config_path) if settings.config_path else "defaults (no ego.toml)"),
    ]
    data_dir = settings.data_dir.expanduser()
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        probe = data_dir / ".doctor-probe"
        probe.write_text("ok")
        probe.unlink()
        checks.append(Check("data dir", True, f"{data_dir} (writable)"))
    except OSError as exc:
        checks.append(Check("data dir", False, f"{data_dir}: {exc.strerror}"))
    log_problem = log_file_problem()
    if log_problem:
        checks.append(Check("log dir", False, f"{log_problem}; {_log_dir_hint(settings)}"))
    else:
        checks.append(Check("log dir", True, f"{settings.logs_path} (writable)"))
    plugin_checks: list[Check] = []
    host.start()
    try:
        for plugin_id, result in host.hooks.notify("doctor_checks"):
            items = [result] if isinstance(result, Check) else result if isinstance(result, list | tuple) else None
            if items is None:
                plugin_checks.append(Check(f"{plugin_id}: doctor_checks", False, _not_checks(result)))
                continue
            for check in items:
                if isinstance(check, Check):
                    plugin_checks.append(Check(f"{plugin_id}: {check.name}", check.ok, check.detail))
                else:
                    plugin_checks.append(Check(f"{plugin_id}: doctor_checks", False, _not_checks(check)))
    finally:
        host.stop()
    # statuses after the checks ran, so that a plugin that failed to start, or whose doctor_checks (or
    # on_shutdown) raised, is reported as well as one that failed to load or register
    statuses = host.statuses()
    for status in statuses:
        if status.reason:
            checks.append(Check(f"plugin {status.id}", False, status.reason))
    checks.extend(plugin_checks)
    for table in host.orphan_config_tables():
        installed = ", ".join(sorted(host.installed)) or "none"
        checks.append(
            Check(f"config [plugins.{table}]", False, f"no installed plugin has this id (installed: {installed})")
        )
    enabled = [s.id for s in statuses if s.state == "enabled"]
    checks.append(Check("plugins", True, ", ".join(enabled)))
    for check in checks:
        print(f"[{'ok' if check.ok else 'FAIL'}] {check.name}: {check.detail}")
    return 0 if all(c.ok for c in checks) else 1


def _not_checks(value: object) -> str:
    return f"returned {type(value).__name__}, expected a list of ego_core.Check"


def _token(args: argparse.Namespace) -> int:
    from ego_core.server import hash_token, new_token

    agent = args.agent.strip()
    if not agent or not all(c.isalnum() or c in "-_." for c in agent):
        raise UsageError("agent id must be letters, digits, '-', '_' or '.'")
    token = new_token()
    print(f"token for {agent} (give it to the agent; it is shown only once):")
    print(f"  {token}")
    print("add to ego.toml:")
    print("  [server.tokens]")
    print(f'  {agent} = "{hash_token(token)}"')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
