"""``ego dashboard``: serve the inner-life dashboard of this data directory (or ``--agent``'s space)."""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from collections.abc import Callable
from pathlib import Path

from ego_core import Command, PluginHost, UsageError, hookimpl

DEFAULT_PORT = 8766
WILDCARDS = {"0.0.0.0": "127.0.0.1", "::": "::1"}  # noqa: S104 (what the printed link names for a wildcard bind)


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="bind address (default 127.0.0.1); every address needs the owner's login",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a name browsers reach this dashboard by, besides loopback names and the bound address (repeatable)",
    )
    parser.add_argument(
        "--reveal-private",
        action="store_true",
        help="offer a Reveal button that shows a private memory's text on request (off by default)",
    )
    parser.add_argument(
        "--new-owner-token",
        action="store_true",
        help="make a new owner token for this space, print it once and exit (the old one stops working)",
    )


def _shown(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def _run(args: argparse.Namespace, host: PluginHost) -> int:
    from ego_dashboard.owner import OwnerFileError, issue_owner_token, owner_path, read_record

    space = host.settings.data_dir.expanduser()

    def issue() -> str:
        try:
            return issue_owner_token(space)
        except OSError as exc:
            raise UsageError(f"{owner_path(space)}: cannot be written ({exc.strerror}); nothing was changed") from None

    if args.new_owner_token:
        token = issue()
        print(
            f"ego: a new owner token for the dashboard of {space} (shown once: keep it, e.g. in a password manager; "
            "the old one and every page logged in with it no longer open it):",
            file=sys.stderr,
        )
        print(token)
        return 0

    import uvicorn

    from ego_core.mcp.http_transport import check_listen_address
    from ego_dashboard.app import LOGIN_LINK_SECONDS, build_app, is_loopback
    from ego_dashboard.shared import OPERATOR_TOKEN_ENV

    if not 0 < args.port < 65536:
        raise UsageError("--port must be from 1 to 65535")
    login_secret = secrets.token_urlsafe(32)
    try:
        check_listen_address(args.host, args.port, "/")
        app = build_app(
            host,
            bind_host=args.host,
            port=args.port,
            allowed_hosts=args.allowed_host,
            login_secret=login_secret,
            reveal_private=args.reveal_private,
            gateway_operator_token=os.environ.get(OPERATOR_TOKEN_ENV) or None,
        )
        record = read_record(owner_path(space))
    except (ValueError, OwnerFileError) as exc:
        raise UsageError(str(exc)) from None
    if record is None:
        token = issue()
        print(
            f"ego: this dashboard's owner token (for {space}; shown once: keep it, e.g. in a password manager; "
            f"`ego dashboard --new-owner-token` replaces it): {token}",
            file=sys.stderr,
        )
    address = WILDCARDS.get(args.host, args.host)
    if not is_loopback(args.host):
        print(
            "ego: served beyond loopback on plain HTTP: the login crosses the network in clear; on a network you do "
            "not trust, put TLS in front (a reverse proxy passing the Host header, or --allowed-host its name)",
            file=sys.stderr,
        )
    url = f"http://{_shown(address)}:{args.port}/"
    print(
        f"ego: dashboard at {url} ; log in once with {url}#login={login_secret} (within "
        f"{LOGIN_LINK_SECONDS // 60} minutes), or with the owner token; Ctrl-C stops",
        file=sys.stderr,
    )
    config = uvicorn.Config(app, host=args.host, port=args.port, log_config=None, access_log=False, lifespan="on")
    uvicorn.Server(config).run()
    return 0


def _configure_bench(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated store sizes (default 1000,10000)")
    parser.add_argument("--requests", type=int, default=30, help="timed requests per view and size (default 30)")
    parser.add_argument(
        "--browser-runs", type=int, default=5, help="page loads timed in Chromium per size (0: none; default 5)"
    )
    parser.add_argument("--output", type=Path, default=None, help="write the JSON report here (default: stdout)")
    parser.add_argument("--work-dir", type=Path, default=None, help="where the temporary stores go (default: temp)")
    parser.add_argument(
        "--seed",
        choices=("import", "vectors"),
        default="import",
        help="import: the memory plugin's import (embeds every text); vectors: random unit vectors through the "
        "store's batch write, for large sizes (default import)",
    )


def _run_bench(args: argparse.Namespace, host: PluginHost) -> int:
    from ego_dashboard.bench import run  # starlette, the MCP SDK: only for the command that needs them

    return run(args, host)


class DashboardPlugin:
    """Contributes the ``ego dashboard`` command; it has no tools and no store of its own."""

    @hookimpl
    def register_commands(self, register: Callable[[Command], None]) -> None:
        register(
            Command(
                name="dashboard",
                help="open the inner-life dashboard: memories, feelings, desires, questions, logs (local web page)",
                configure=_configure,
                run=_run,
                starts_host=False,
            )
        )
        register(
            Command(
                name="dashboard",
                group="bench",
                help="the dashboard's API p50/p95 per view and first render at growing store sizes (JSON)",
                configure=_configure_bench,
                run=_run_bench,
                starts_host=False,
            )
        )
