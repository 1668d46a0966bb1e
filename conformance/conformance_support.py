"""What the conformance tests share: Node 22 and the pinned Node tools, how ego is started, the test token (a
module, not conftest, so imports are unambiguous)."""

from __future__ import annotations

import importlib.metadata
import os
import socket
import sys
from pathlib import Path

import attrs

HERE = Path(__file__).resolve().parent
TOKEN = "ego_conformance-0123456789abcdef0123456789abcdef"  # noqa: S105 (a test token, hashed into the config)
PLUGINS = ("desires", "self_model")
"""Served besides the core when installed: they offer resources, resource templates and completion values."""


@attrs.frozen
class NodeTools:
    node: Path
    root: Path

    def env(self, home: Path) -> dict[str, str]:
        """The environment of a Node tool: Node 22 first on PATH, a throwaway HOME (the Inspector keeps a
        catalog there), the Inspector's secrets in memory, no ``EGO_*`` variable."""
        path = f"{self.node.parent}{os.pathsep}{os.environ.get('PATH', '')}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}  # an ego it starts sees only its own
        return {**env, "PATH": path, "HOME": str(home), "MCP_INSPECTOR_SECRET_STORE": "memory", "NO_COLOR": "1"}

    def package(self, name: str) -> Path:
        return self.root / "node_modules" / name


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def installed_plugins() -> list[str]:
    found = {ep.name for ep in importlib.metadata.entry_points(group="ego")}
    return [plugin for plugin in PLUGINS if plugin in found]


def ego_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
    return {**env, "EGO_DATA_DIR": str(data_dir), **extra}


def ego_command(*args: str) -> list[str]:
    plugins = installed_plugins()
    chosen = ["--plugins", ",".join(plugins)] if plugins else []
    return [sys.executable, "-m", "ego_core.mcp.cli", *args, *chosen]


@attrs.frozen
class EgoHttp:
    port: int
    data_dir: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"
