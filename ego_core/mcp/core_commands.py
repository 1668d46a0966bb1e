"""The core's own commands (``ego init|serve|connect|plugins|doctor|export|import|token``), registered by the core
plugin through ``register_commands`` like any plugin's.

Usage and configuration errors raise :class:`UsageError` (exit code 2 with the message on stderr); stdout
carries only results (and, for ``ego serve`` over stdio, only the MCP protocol).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ego_core.errors import UsageError
from ego_core.kernel.config import Settings, valid_agent_id
from ego_core.kernel.host import PluginHost
from ego_core.kernel.logs import log_file_problem
from ego_core.mcp.portable import ExportFile, PortableError, export_file, import_file, read_export_file
from ego_core.types import Check, Command
from ego_core.version import __version__

if TYPE_CHECKING:
    from ego_core.mcp.foreign import ForeignSource


def plural(count: int, noun: str) -> str:
    """``1 record``, ``2 records``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _import_from(args: argparse.Namespace, host: PluginHost) -> int:
    """``ego import --from FORMAT PATH`` and ``ego import --dry-run``."""
    from ego_core.importing import ImportFormatError
    from ego_core.mcp.foreign import check_source, dry_run_lines, import_source, read_source

    if args.private and args.from_format is None:
        raise UsageError("--private applies with --from FORMAT (an export file says itself what is private)")
    export = None
    if args.from_format is None:
        try:
            export = read_export_file(args.file)
        except PortableError as exc:
            raise UsageError(str(exc)) from None
    host.start()
    try:
        try:
            if export is not None:  # --dry-run of an export file: read and checked, nothing written
                check_source(host, _as_source(export))
                print(f"would import from {args.file} (an ego export), nothing written:")
                for plugin_id, held in sorted(export.grouped.items()):
                    data = sum(1 for r in held if r.get("type") != "meta")
                    print(f"  {plugin_id}: {plural(data, 'record')}")
                return 0
            source = read_source(host, args.from_format, args.file, private=args.private)
            if args.dry_run:
                check_source(host, source)
                print("\n".join(dry_run_lines(source)))
                return 0
            imported = import_source(host, source)
        except (PortableError, ImportFormatError) as exc:
            raise UsageError(str(exc)) from None
        for plugin_id in sorted(imported.records):
            records = plural(imported.records[plugin_id], "record")
            print(f"{plugin_id}: {imported.added.get(plugin_id, 0)} new of {records}")
        return 0
    finally:
        host.stop()


def _as_source(export: ExportFile) -> ForeignSource:
    from ego_core.mcp.foreign import ForeignSource

    return ForeignSource(format="ego-export", path=export.path, grouped=export.grouped)


def _portable(args: argparse.Namespace, host: PluginHost) -> int:
    if args.command == "import" and (args.from_format is not None or args.dry_run or args.private):
        return _import_from(args, host)
    if args.command == "import":
        try:  # the whole file is read and checked before any store is opened (or created)
            export = read_export_file(args.file)
        except PortableError as exc:
            raise UsageError(str(exc)) from None
    host.start()
    try:
        if args.command == "export":
            try:
                summary = export_file(host, args.file, include_private=args.include_private)
            except PortableError as exc:
                raise UsageError(str(exc)) from None
            for plugin_id in summary.unexported:
                print(
                    f"ego: warning: plugin {plugin_id} keeps files in {host.settings.data_dir / plugin_id} but does "
                    "not implement export_records: its state is not in the export",
                    file=sys.stderr,
                )
            kind = "including private memories" if args.include_private else "private memories left out"
            detail = f" ({summary.describe()})" if summary.records else ""
            print(f"exported {plural(summary.records, 'record')}{detail} to {args.file} ({kind})")
            if summary.masked:
                print(
                    f"{plural(summary.masked, 'record')} had secrets or private passages masked; importing this "
                    "file restores the masked text, not the original (use --include-private for a full backup)"
                )
            return 0
        try:
            imported = import_file(host, export)
        except PortableError as exc:
            raise UsageError(str(exc)) from None
        for plugin_id in sorted(imported.records):
            records = plural(imported.records[plugin_id], "record")
            print(f"{plugin_id}: {imported.added.get(plugin_id, 0)} new of {records}")
        return 0
    finally:
        host.stop()


def _serve(args: argparse.Namespace, host: PluginHost) -> int:
    from ego_core.mcp.http_transport import serve_http  # the MCP SDK only for the command that serves
    from ego_core.mcp.stdio import serve_stdio

    settings = host.settings
    wire = args.stdio_wire

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


def data_dir_problem(settings: Settings) -> str | None:
    """Why the data directory cannot be used (``None`` when it can or does not exist yet)."""
    data_dir = settings.data_dir.expanduser()
    for path in (data_dir, *data_dir.parents):
        if path.exists():
            if path.is_dir():
                return None
            what = "is a file, not a directory" if path == data_dir else f"cannot be created: {path} is a file"
            return f"the data directory {data_dir} {what}; choose another with --data-dir or EGO_DATA_DIR"
    return None


def log_dir_hint(settings: Settings) -> str:
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


def _plugins(args: argparse.Namespace, host: PluginHost) -> int:
    settings = host.settings
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
            "owner_tools": {tool.name: plugin for plugin, tool in host.tools(owner=True) if tool.tier == "owner"},
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
    for plugin, tool in host.tools(owner=True):
        tools_by_plugin.setdefault(plugin, []).append(f"{tool.name} (owner)" if tool.tier == "owner" else tool.name)
    print("tools:")
    for plugin, names in sorted(tools_by_plugin.items()):
        print(f"  {plugin}: {', '.join(names)}")
    if logged:
        print("recent failures in the log (other processes):")
        for entry in logged:
            hook = f":{entry['hook']}" if entry.get("hook") else ""
            print(f"  {entry.get('ts', '?')} {entry.get('plugin')} [{entry.get('stage')}{hook}] {entry.get('reason')}")
    return 0


def _doctor(args: argparse.Namespace, host: PluginHost) -> int:
    settings = host.settings
    checks: list[Check] = [
        Check("config", True, str(settings.config_path) if settings.config_path else "defaults (no ego.toml)"),
        Check(
            "owner",
            True,
            f"language {settings.language}, time zone {settings.timezone}, companion {settings.companion_name}",
        ),
    ]
    data_dir = settings.data_dir.expanduser()
    problem = data_dir_problem(settings)
    try:
        if problem:
            raise NotADirectoryError(problem)
        data_dir.mkdir(parents=True, exist_ok=True)
        probe = data_dir / ".doctor-probe"
        probe.write_text("ok")
        probe.unlink()
        checks.append(Check("data dir", True, f"{data_dir} (writable)"))
    except OSError as exc:
        checks.append(Check("data dir", False, problem or f"{data_dir}: {exc.strerror}"))
    log_problem = log_file_problem()
    if log_problem:
        checks.append(Check("log dir", False, f"{log_problem}; {log_dir_hint(settings)}"))
    else:
        checks.append(Check("log dir", True, f"{settings.logs_path} (writable)"))
    plugin_checks: list[Check] = []
    host.start()
    try:
        # a plugin withdrawn at startup is asked too: its own checks are the ones that say why
        for plugin_id, result in [*host.hooks.doctor_checks(), *host.withdrawn_doctor_checks()]:
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


def _token(args: argparse.Namespace, host: PluginHost | None = None) -> int:
    from ego_core.mcp.http_transport import hash_token, new_token

    agent = args.agent_id.strip()
    if not valid_agent_id(agent):
        raise UsageError("agent id must be letters, digits, '-', '_' or '.' (1-64, starting with a letter or digit)")
    token = new_token()
    print(f"token for {agent} (give it to the agent; it is shown only once):")
    print(f"  {token}")
    print("add to ego.toml:")
    print("  [server.tokens]")
    print(f'  {agent} = "{hash_token(token)}"')
    return 0


def _plugin_new(args: argparse.Namespace, host: PluginHost | None = None) -> int:
    from ego_core.mcp.plugin_template import check_plugin_id, ego_core_source, write_plugin

    plugin_id = check_plugin_id(args.plugin_id.strip())
    directory = Path(args.dir).expanduser() if args.dir else Path.cwd() / f"ego-{plugin_id.replace('_', '-')}"
    core = ego_core_source()
    written = write_plugin(plugin_id, directory, core)
    print(f"wrote the plugin {plugin_id!r} ({len(written)} files) to {directory}")
    if core == "ego-core":  # this ego was installed from a wheel, not run from a clone
        print(f"  cd {directory} && EGO_CORE=/path/to/ego_core-{__version__}-py3-none-any.whl tox   # (or a clone)")
    else:
        print(f"  cd {directory} && tox        # its tests and mypy --strict; ego-core from {core} (or $EGO_CORE)")
    print(f"  pip install {directory}      # into the environment that runs ego; then `ego plugins` lists it")
    return 0


def _configure_plugin_new(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("plugin_id", metavar="name", help="the plugin id (snake_case, e.g. dream)")
    parser.add_argument("--dir", default=None, help="where to write it (default: ./ego-NAME; must not exist)")


def _agent_new(args: argparse.Namespace, host: PluginHost) -> int:
    from ego_core.mcp.agents import create_space

    agent = args.agent_id.strip()
    if not valid_agent_id(agent):
        raise UsageError("agent id must be letters, digits, '-', '_' or '.' (1-64, starting with a letter or digit)")
    space, created = create_space(host.settings, agent)
    print(f"{'created' if created else 'already there:'} {space}")
    print(f"use it with `ego --agent {agent} <command>` (e.g. `ego --agent {agent} serve` for a stdio client);")
    print(f"to serve it over HTTP, give it a token: `ego token new {agent}`")
    return 0


def _agent_list(args: argparse.Namespace, host: PluginHost) -> int:
    from ego_core.mcp.agents import AGENTS_DIR, known_agents

    settings = host.settings
    for agent in known_agents(settings):
        token = "token configured" if agent in settings.server.tokens else "no token (stdio only)"
        space = settings.data_dir.expanduser() / AGENTS_DIR / agent
        print(f"{agent}  {token}  {space if space.is_dir() else 'no space yet (made when first served)'}")
    return 0


def _configure_serve(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    parser.add_argument("--host", default=None, help="HTTP bind address (default 127.0.0.1; [server] host)")
    parser.add_argument("--port", type=int, default=None, help="HTTP port (default 8765; [server] port)")
    parser.add_argument("--path", default=None, help="HTTP path of the MCP endpoint (default /mcp)")


def _configure_plugins(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def _configure_export(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="the file to write (replaced atomically)")
    parser.add_argument(
        "--include-private", action="store_true", help="include private memories (a full backup, not redacted)"
    )


def _configure_import(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", type=Path, metavar="path", help="a file written by `ego export`, or with --from the source to read"
    )
    parser.add_argument(
        "--from",
        dest="from_format",
        default=None,
        metavar="FORMAT",
        help="read PATH as this format (openclaw, markdown, ego-mcp; docs/importing.md) instead of an ego export",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="read and check, print counts and a sample; write nothing"
    )
    parser.add_argument("--private", action="store_true", help="with --from: import everything as private")


def _configure_token(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent_id", metavar="agent", help="agent id, e.g. claude")


def _no_options(_parser: argparse.ArgumentParser) -> None:
    return None


def _configure_init(parser: argparse.ArgumentParser) -> None:
    from ego_core.mcp.init_command import configure_init

    configure_init(parser)


def _init(args: argparse.Namespace, host: PluginHost | None = None) -> int:
    from ego_core.mcp.init_command import run_init

    return run_init(args)


def _configure_connect(parser: argparse.ArgumentParser) -> None:
    from ego_core.mcp.bridge import configure_connect

    configure_connect(parser)


def _connect(args: argparse.Namespace, host: PluginHost | None = None) -> int:
    from ego_core.mcp.bridge import run_connect  # the HTTP client only: no plugin, no model

    return run_connect(args)


def core_commands() -> list[Command]:
    """The commands of the core plugin. Each starts the host itself (or never: ``ego token new``)."""
    return [
        Command("serve", "serve the MCP tools (stdio by default)", _configure_serve, _serve, starts_host=False),
        Command(
            "plugins",
            "installed, enabled and failed plugins, with reasons",
            _configure_plugins,
            _plugins,
            starts_host=False,
        ),
        Command(
            "doctor",
            "check config, data dir, plugins, embedding model and stores",
            _no_options,
            _doctor,
            starts_host=False,
        ),
        Command(
            "export",
            "write every plugin's state (memories, ...) to a JSON Lines file",
            _configure_export,
            _portable,
            starts_host=False,
        ),
        Command(
            "import",
            "read an export, or with --from another format (openclaw, markdown, ego-mcp), into this data directory "
            "(idempotent)",
            _configure_import,
            _portable,
            starts_host=False,
        ),
        Command(
            "new",
            "create an agent's own space, <data dir>/agents/ID, for `ego --agent ID`",
            _configure_token,
            _agent_new,
            group="agent",
            starts_host=False,
        ),
        Command(
            "list",
            "the known agents: their token and space",
            _no_options,
            _agent_list,
            group="agent",
            starts_host=False,
        ),
        Command(
            "new",
            "write a minimal, working plugin package to start from (tool, hook, config, storage, tests, tox)",
            _configure_plugin_new,
            _plugin_new,
            group="plugin",
            starts_host=False,
        ),
        Command(
            "new",
            "create a token for an agent and print its config line",
            _configure_token,
            _token,
            group="token",
            starts_host=False,
        ),
        Command(
            "init",
            "first run: write ego.toml (language, companion, time zone, data dir, workspace); print client configs",
            _configure_init,
            _init,
            starts_host=False,
        ),
        Command(
            "connect",
            "bridge a stdio MCP client to a running `ego serve --http` (the agent's token from EGO_TOKEN)",
            _configure_connect,
            _connect,
            starts_host=False,
        ),
    ]
