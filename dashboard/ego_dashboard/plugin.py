"""``ego dashboard``: serve the inner-life dashboard of this data directory (or ``--agent``'s space)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from ego_core import Command, PluginHost, UsageError, hookimpl

DEFAULT_PORT = 8766


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="bind address (default 127.0.0.1; any other address needs an agent's token, `ego token new`)",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")


def _run(args: argparse.Namespace, host: PluginHost) -> int:
    import uvicorn

    from ego_core.http_transport import check_listen_address
    from ego_dashboard.app import build_app

    if not 0 < args.port < 65536:
        raise UsageError("--port must be from 1 to 65535")
    try:
        check_listen_address(args.host, args.port, "/")
        app = build_app(host, bind_host=args.host, tokens=host.settings.server.tokens)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"ego: dashboard at http://{shown}:{args.port}/ ; Ctrl-C stops", file=sys.stderr)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_config=None, access_log=False, lifespan="on")
    uvicorn.Server(config).run()
    return 0


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
