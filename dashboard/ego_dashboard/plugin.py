"""``ego dashboard``: serve the inner-life dashboard of this data directory (or ``--agent``'s space)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from ego_core import Command, PluginHost, UsageError, hookimpl

DEFAULT_PORT = 8766


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="bind address (default 127.0.0.1; any other address needs an agent's token, `ego token new`)",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    parser.add_argument(
        "--reveal-private",
        action="store_true",
        help="offer a Reveal button that shows a private memory's text on request (off by default)",
    )


def _run(args: argparse.Namespace, host: PluginHost) -> int:
    import uvicorn

    from ego_core.http_transport import check_listen_address
    from ego_dashboard.app import build_app
    from ego_dashboard.shared import OPERATOR_TOKEN_ENV

    if not 0 < args.port < 65536:
        raise UsageError("--port must be from 1 to 65535")
    try:
        check_listen_address(args.host, args.port, "/")
        app = build_app(
            host,
            bind_host=args.host,
            tokens=host.settings.server.tokens,
            reveal_private=args.reveal_private,
            gateway_operator_token=os.environ.get(OPERATOR_TOKEN_ENV) or None,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"ego: dashboard at http://{shown}:{args.port}/ ; Ctrl-C stops", file=sys.stderr)
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
