"""``ego gateway …`` and ``ego shared …``: serve the gateway, make tokens, and look after the store.

Every command works on the store named by ``--db URL`` or ``EGO_GATEWAY_DB`` and needs no plugin startup.
Usage errors print ``ego: error: …`` on stderr and return 2.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import socket
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ego_core import Command, PluginContext
from ego_shared_memory.config import GATEWAY_DB_ENV, GatewaySettings, SharedMemoryConfig
from ego_shared_memory.events import KINDS, Event, EventError, check_scope
from ego_shared_memory.janitor import (
    STEPS,
    confirm_cleanup,
    consolidate,
    find_plan,
    parse_duration,
    plan_view,
    propose_cleanup,
    run_janitor,
)
from ego_shared_memory.markdown import export_markdown
from ego_shared_memory.pins import first_line
from ego_shared_memory.portable import PortableError, export_store, import_store, summary_line
from ego_shared_memory.store import (
    URL_FORMS,
    CleanupPlan,
    CleanupPlanError,
    EventFilter,
    SqlStore,
    StoreError,
    open_store,
)
from ego_shared_memory.store.base import Role
from ego_shared_memory.tokens import create_token

DEFAULT_PORT = 8787


class UsageError(Exception):
    """Exit code 2 with this message."""


def _settings(ctx: PluginContext) -> GatewaySettings:
    config: SharedMemoryConfig = ctx.config
    return GatewaySettings.of(config)


def _db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="URL", default=None, help=f"the store ({URL_FORMS}); default ${GATEWAY_DB_ENV}")


def _open(args: argparse.Namespace) -> SqlStore:
    url = args.db or os.environ.get(GATEWAY_DB_ENV)
    if not url:
        raise UsageError(f"no store: give --db URL or set {GATEWAY_DB_ENV} ({URL_FORMS})")
    try:
        return open_store(url)
    except StoreError as exc:
        raise UsageError(str(exc)) from None


def _command(
    name: str,
    group: str,
    help: str,
    configure: Callable[[argparse.ArgumentParser], None],
    run: Callable[[argparse.Namespace, SqlStore], int],
    *,
    db_option: bool = True,
) -> Command:
    def setup(parser: argparse.ArgumentParser) -> None:
        if db_option:  # `ego gateway token` puts it on each action instead
            _db_option(parser)
        configure(parser)

    def execute(args: argparse.Namespace, _host: Any) -> int:
        store: SqlStore | None = None
        try:
            store = _open(args)
            return run(args, store)
        except UsageError as exc:
            print(f"ego: error: {exc}", file=sys.stderr)
            return 2
        except (StoreError, ValueError) as exc:
            print(f"ego: error: {exc}", file=sys.stderr)
            return 2
        finally:
            if store is not None:
                store.close()

    return Command(name=name, group=group, help=help, configure=setup, run=execute, starts_host=False)


def _now() -> datetime:
    return datetime.now(UTC)


def _event_line(event: Event) -> str:
    flags = "".join(f" ({word})" for word, on in (("deprecated", event.deprecated), ("redacted", event.redacted)) if on)
    return (
        f"{event.created_at:%Y-%m-%d %H:%M}  {event.event_id}  {event.scope}  {event.kind}  {event.dedupe_key}  "
        f"{event.agent_id} ({event.confidence}){flags}: {first_line(event.content_md, 100)}"
    )


def _print_events(events: Sequence[Event], as_json: bool) -> None:
    if as_json:
        now = _now()
        print(json.dumps([e.as_dict(now) for e in events], ensure_ascii=False, indent=2))
        return
    for event in events:
        print(_event_line(event))
    if not events:
        print("no events", file=sys.stderr)


def _scopes(values: Sequence[str] | None) -> tuple[str, ...]:
    """Scopes or patterns ending in ``*`` (``agent:*``, ``project:*``)."""
    result = []
    for value in values or ():
        if value.endswith("*"):
            if value not in ("*", "agent:*", "project:*"):
                raise UsageError("--scope patterns: *, agent:* or project:* (or an exact scope)")
        else:
            try:
                check_scope(value)
            except EventError as exc:
                raise UsageError(f"--scope: expected {exc.rule}") from None
        result.append(value)
    return tuple(result)


def _limit(value: str) -> int:
    number = int(value)
    if not 1 <= number <= 100_000:
        raise argparse.ArgumentTypeError("expected an integer from 1 to 100000")
    return number


# --------------------------------------------------------------------------------------------------
# ego gateway serve


def _serve_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT})")
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a name clients reach the gateway by (repeatable; the Host header must give one of these, the "
        "--host address or a loopback name). Default with a wildcard --host (0.0.0.0, ::): any name",
    )
    parser.add_argument(
        "--janitor-every",
        type=float,
        default=0,
        metavar="SECONDS",
        help="run the janitor (never deleting) every SECONDS in the background (default 0: off)",
    )


def _check_bind(host: str, port: int) -> None:
    if not 0 < port < 65536:
        raise UsageError("--port must be from 1 to 65535")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError):
        raise UsageError(f"--host: {host!r} is not an IP address or a resolvable host name") from None
    family, kind, proto, _name, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise UsageError(f"cannot listen on {host}:{port} ({exc.strerror}); choose another --port") from None


def _allowed_hosts(bind: str, extra: Sequence[str]) -> tuple[str, ...]:
    """The Host names the gateway answers to: the loopback names, the bind address and ``--allowed-host``; a
    wildcard bind without ``--allowed-host`` answers to any (the operator did not say which names reach it)."""
    from ego_shared_memory.gateway import LOOPBACK_HOSTS

    try:
        wildcard = not bind or ipaddress.ip_address(bind).is_unspecified
    except ValueError:
        wildcard = False
    if wildcard and not extra:
        return ("*",)
    return (*LOOPBACK_HOSTS, bind, *extra)


def _serve(ctx: PluginContext) -> Callable[[argparse.Namespace, SqlStore], int]:
    def run(args: argparse.Namespace, store: SqlStore) -> int:
        import uvicorn

        from ego_shared_memory.gateway import build_app

        _check_bind(args.host, args.port)
        if args.janitor_every < 0:
            raise UsageError("--janitor-every must be 0 (off) or a number of seconds")
        app = build_app(
            store,
            _settings(ctx),
            janitor_every=args.janitor_every or None,
            allowed_hosts=_allowed_hosts(args.host, args.allowed_host),
        )
        shown = f"[{args.host}]" if ":" in args.host else args.host
        print(
            f"ego: shared memory gateway at http://{shown}:{args.port} ({store.display_url}); Ctrl-C stops",
            file=sys.stderr,
        )
        config = uvicorn.Config(app, host=args.host, port=args.port, log_config=None, access_log=False)
        uvicorn.Server(config).run()
        return 0

    return run


# --------------------------------------------------------------------------------------------------
# ego gateway token create | list | revoke


def _token_options(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="action", required=True)
    create = actions.add_parser("create", help="make a token for an agent and print it once")
    create.add_argument("agent_id", help="the agent, e.g. claude (one of [plugins.shared_memory] agents)")
    create.add_argument("--admin", action="store_true", help="an operator token for the janitor endpoints instead")
    _db_option(create)
    listing = actions.add_parser("list", help="tokens by agent (fingerprints, never the tokens)")
    _db_option(listing)
    revoke = actions.add_parser("revoke", help="revoke every token of an agent")
    revoke.add_argument("agent_id", help="the agent whose tokens stop working")
    _db_option(revoke)


def _token(ctx: PluginContext) -> Callable[[argparse.Namespace, SqlStore], int]:
    def run(args: argparse.Namespace, store: SqlStore) -> int:
        now = _now()
        if args.action == "create":
            role: Role = "admin" if args.admin else "agent"
            token = create_token(store, args.agent_id, role=role, agents=_settings(ctx).agents, now=now)
            kind = "operator token" if args.admin else "token"
            print(f"{kind} for {args.agent_id} (shown only once; only its hash is stored):", file=sys.stderr)
            print(token)
            if not args.admin:
                print("give it to the agent, e.g. EGO_SHARED_TOKEN=<token> with EGO_SHARED_URL", file=sys.stderr)
            return 0
        if args.action == "list":
            for info in store.tokens():
                state = f"revoked {info.revoked_at:%Y-%m-%d}" if info.revoked_at else "active"
                print(f"{info.agent_id}  {info.role}  {info.fingerprint}…  created {info.created_at:%Y-%m-%d}  {state}")
            return 0
        revoked = store.revoke_tokens(args.agent_id, now)
        print(f"revoked {revoked} token(s) of {args.agent_id}")
        return 0

    return run


# --------------------------------------------------------------------------------------------------
# ego shared list | search | cleanup | consolidate | janitor | conflicts | audit | export-md


def _list_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scope", action="append", help="a scope, or agent:* / project:* (repeatable)")
    parser.add_argument("--kind", choices=[*KINDS, "conflict_resolution"], help="only this kind")
    parser.add_argument("--writer", metavar="AGENT", help="only events written by this agent")
    parser.add_argument("--key", help="only this dedupe_key")
    parser.add_argument("--limit", type=_limit, default=50, help="at most this many, newest first (default 50)")
    parser.add_argument("--include-deprecated", action="store_true", help="also superseded events")
    parser.add_argument("--json", action="store_true", help="JSON instead of one line per event")


def _list(args: argparse.Namespace, store: SqlStore) -> int:
    events = store.list_events(
        EventFilter(
            scope_patterns=_scopes(args.scope),
            kinds=(args.kind,) if args.kind else (),
            agent_id=args.writer,
            dedupe_key=args.key,
            include_deprecated=args.include_deprecated,
            limit=args.limit,
        )
    )
    _print_events(events, args.json)
    return 0


def _search_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("words", nargs="+", help="every word must occur in the content or the dedupe_key")
    parser.add_argument("--scope", action="append", help="a scope, or agent:* / project:* (repeatable)")
    parser.add_argument("--limit", type=_limit, default=20, help="at most this many, newest first (default 20)")
    parser.add_argument("--include-deprecated", action="store_true", help="also superseded events")
    parser.add_argument("--json", action="store_true", help="JSON instead of one line per event")


def _search(args: argparse.Namespace, store: SqlStore) -> int:
    events = store.list_events(
        EventFilter(
            scope_patterns=_scopes(args.scope),
            terms=tuple(word for word in args.words if word.strip()),
            include_deprecated=args.include_deprecated,
            limit=args.limit,
        )
    )
    _print_events(events, args.json)
    return 0


def _cleanup_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--older-than", metavar="AGE", help="propose: events created more than AGE ago (30d, 12h, 2w)")
    parser.add_argument("--expired", action="store_true", help="propose: events whose ttl_days have run out")
    parser.add_argument(
        "--scope",
        action="append",
        help="propose: a scope, or * / agent:* / project:* (repeatable; default global and every project: an "
        "agent's private scope is cleaned only when named, agent:<id> or agent:*)",
    )
    parser.add_argument("--show", metavar="PLAN_ID", help="show a proposed plan and its state")
    parser.add_argument(
        "--confirm", metavar="PLAN_ID", help="delete exactly the events of this plan (before it expires)"
    )
    parser.add_argument("--yes", action="store_true", help=argparse.SUPPRESS)
    _json_option(parser)


def _cleanup_actor() -> str:
    return f"cli:{os.environ.get('USER', 'operator')}"


def _print_plan(store: SqlStore, plan: CleanupPlan, *, events: bool) -> None:
    now = _now()
    if events:
        for event_id in plan.event_ids:
            found = store.get(event_id)
            print(_event_line(found) if found is not None else f"{event_id}  (already gone)")
    per_scope = ", ".join(f"{scope}: {count}" for scope, count in plan.counts.items()) or "none"
    print(f"plan {plan.plan_id}: {len(plan.event_ids)} event(s) ({per_scope}); {plan.state(now)}", file=sys.stderr)
    if plan.truncated:
        print("more events match than one plan holds: confirm this one, then propose again", file=sys.stderr)


def _cleanup(args: argparse.Namespace, store: SqlStore) -> int:
    selecting = bool(args.older_than or args.expired or args.scope)
    if args.yes:
        raise UsageError(
            "--yes no longer deletes: deletion takes two steps. Run without it to propose a plan (nothing is "
            "deleted), review it, then `ego shared cleanup --confirm PLAN_ID` deletes exactly its events"
        )
    if sum((selecting, args.show is not None, args.confirm is not None)) != 1:
        raise UsageError(
            "give one of: --older-than AGE and/or --expired (propose a plan), --show PLAN_ID, --confirm PLAN_ID"
        )
    now = _now()
    try:
        if args.confirm is not None:
            done = confirm_cleanup(store, args.confirm, actor=_cleanup_actor(), now=now)
            if args.json:
                view = {**plan_view(done.plan, now), "deleted_event_ids": list(done.deleted)}
                print(json.dumps({**view, "already_gone": list(done.already_gone)}, indent=2))
                return 0
            gone = f"; {len(done.already_gone)} were already gone" if done.already_gone else ""
            print(
                f"deleted {len(done.deleted)} event(s) of plan {done.plan.plan_id}{gone}; each deletion is in the "
                "audit trail (ego shared audit)"
            )
            return 0
        if args.show is not None:
            plan = find_plan(store, args.show)
            if args.json:
                print(json.dumps(plan_view(plan, now), indent=2))
                return 0
            _print_plan(store, plan, events=True)
            return 0
    except CleanupPlanError as exc:
        raise UsageError(str(exc)) from None
    try:
        older = parse_duration(args.older_than) if args.older_than else None
    except ValueError as exc:
        raise UsageError(f"--older-than: {exc}") from None
    if older is None and not args.expired:
        raise UsageError("say what to clean up: --older-than AGE and/or --expired")
    plan = propose_cleanup(
        store,
        now,
        older_than=older,
        scope_patterns=_scopes(args.scope),
        expired_only=args.expired,
        actor=_cleanup_actor(),
    )
    if args.json:
        print(json.dumps(plan_view(plan, now), indent=2))
        return 0
    _print_plan(store, plan, events=True)
    if plan.event_ids:
        print(
            f"nothing was deleted. Review the list, then delete exactly these events (until "
            f"{plan.expires_at:%H:%M} UTC) with: ego shared cleanup --confirm {plan.plan_id}",
            file=sys.stderr,
        )
    else:
        print("nothing matches; nothing was changed", file=sys.stderr)
    return 0


def _json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="the report as JSON")


def _consolidate(ctx: PluginContext) -> Callable[[argparse.Namespace, SqlStore], int]:
    def run(args: argparse.Namespace, store: SqlStore) -> int:
        report = consolidate(store, _settings(ctx), _now())
        if args.json:
            print(json.dumps(report, indent=2))
            return 0
        for line in report:
            print(f"{line['scope']}: {line['pinned']} pinned of {line['entries']} entries ({line['tokens']} tokens)")
        if not report:
            print("the store holds no entries yet", file=sys.stderr)
        return 0

    return run


def _janitor_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--steps", default=",".join(STEPS), help=f"comma-separated, from {', '.join(STEPS)} (default: all)"
    )
    parser.add_argument("--full-scan", action="store_true", help="scan every event, not only the new ones")
    _json_option(parser)


def _janitor(ctx: PluginContext) -> Callable[[argparse.Namespace, SqlStore], int]:
    def run(args: argparse.Namespace, store: SqlStore) -> int:
        steps = [step.strip() for step in args.steps.split(",") if step.strip()]
        report = run_janitor(store, _settings(ctx), _now(), steps=steps, full_scan=args.full_scan)
        if args.json:
            print(json.dumps(report, indent=2, ensure_ascii=False))
            return 0
        if "scan" in report:
            scan = report["scan"]
            print(f"scan: {scan['scanned']} event(s) scanned, {len(scan['redacted'])} redacted")
            for item in scan["redacted"]:
                print(f"  {item['event_id']}: masked {', '.join(item['kinds'])} in {', '.join(item['fields'])}")
            for item in scan["flagged"]:
                print(
                    f"  {item['event_id']}: {', '.join(item['kinds'])} in its {item['field']} (an agent's id: rename "
                    "the agent; left as it is)"
                )
        if "conflicts" in report:
            c = report["conflicts"]
            print(
                f"conflicts: {c['detected']} newly detected, {c['resolution_events']} conflict_resolution event(s) "
                f"written, {c['settled']} settled"
            )
        if "ttl" in report:
            t = report["ttl"]
            print(
                f"ttl: {t['expired']} expired event(s) are cleanup candidates ({t['newly_marked']} new); delete "
                "them with `ego shared cleanup --expired` (a plan to review) and then `--confirm PLAN_ID`"
            )
        for line in report.get("consolidate", []):
            print(f"pins: {line['scope']}: {line['pinned']} of {line['entries']} entries ({line['tokens']} tokens)")
        return 0

    return run


def _conflicts(args: argparse.Namespace, store: SqlStore) -> int:
    conflicts = store.open_conflicts()
    for c in conflicts:
        asked = f"asked in {c.resolution_event_id}" if c.resolution_event_id else "not asked yet (run the janitor)"
        print(f"{c.scope}  {c.dedupe_key}: {c.event_id} (read) vs {c.previous_event_id}; {asked}")
    if not conflicts:
        print("no open conflicts", file=sys.stderr)
    return 0


def _audit_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=_limit, default=50, help="the newest this many records (default 50)")


def _audit(args: argparse.Namespace, store: SqlStore) -> int:
    for record in store.audit(args.limit):
        target = f" {record.event_id}" if record.event_id else ""
        print(f"{record.at:%Y-%m-%d %H:%M:%S}  {record.actor}  {record.action}{target}: {record.detail}")
    return 0


def _export_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, required=True, help="the folder (e.g. in an Obsidian vault) to write")
    parser.add_argument("--scope", action="append", help="a scope, or agent:* / project:* (repeatable)")
    parser.add_argument(
        "--include-agent-scopes", action="store_true", help="also agent:<id> scopes (left out by default)"
    )


def _export(ctx: PluginContext) -> Callable[[argparse.Namespace, SqlStore], int]:
    def run(args: argparse.Namespace, store: SqlStore) -> int:
        written = export_markdown(
            store,
            args.out,
            settings=_settings(ctx),
            tz=ctx.settings.tz,
            scope_patterns=_scopes(args.scope),
            include_agent_scopes=args.include_agent_scopes,
            now=_now(),
        )
        print(f"wrote {len(written)} file(s) to {args.out} (a replica: the gateway's store stays the source of truth)")
        return 0

    return run


def _file_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="the JSON Lines file")


def _export_file(args: argparse.Namespace, store: SqlStore) -> int:
    count = export_store(store, args.file, now=_now())
    print(f"exported {count} event(s) and the token hashes to {args.file}")
    return 0


def _import_file(ctx: PluginContext) -> Callable[[argparse.Namespace, SqlStore], int]:
    def run(args: argparse.Namespace, store: SqlStore) -> int:
        """An import is checked as appends are: the secret filter, and the configured agents only."""
        if not args.file.is_file():
            raise UsageError(f"{args.file} is not a file")
        try:
            summary = import_store(store, args.file, agents=_settings(ctx).agents)
        except PortableError as exc:
            raise UsageError(f"{args.file}: {exc}; nothing was imported") from None
        print(summary_line(summary))
        return 0

    return run


def commands(ctx: PluginContext) -> list[Command]:
    no_options: Callable[[argparse.ArgumentParser], None] = lambda _parser: None  # noqa: E731
    return [
        _command("serve", "gateway", "serve the shared memory gateway (HTTP)", _serve_options, _serve(ctx)),
        _command("token", "gateway", "make, list or revoke agent tokens", _token_options, _token(ctx), db_option=False),
        _command("list", "shared", "list events, newest first", _list_options, _list),
        _command("search", "shared", "find events by words", _search_options, _search),
        _command(
            "cleanup",
            "shared",
            "propose deleting old or expired events; --confirm PLAN_ID deletes",
            _cleanup_options,
            _cleanup,
        ),
        _command("consolidate", "shared", "compact the log into pins", _json_option, _consolidate(ctx)),
        _command("janitor", "shared", "pins, ttl candidates, conflicts, secret scan", _janitor_options, _janitor(ctx)),
        _command("conflicts", "shared", "open conflicts", no_options, _conflicts),
        _command("audit", "shared", "the audit trail (redactions, deletions, janitor runs)", _audit_options, _audit),
        _command("export-md", "shared", "write pins and daily logs as Markdown", _export_options, _export(ctx)),
        _command("export", "shared", "every event and token hash to a JSON Lines file", _file_option, _export_file),
        _command(
            "import", "shared", "restore an export (idempotent), e.g. into PostgreSQL", _file_option, _import_file(ctx)
        ),
    ]
