"""ego sends nothing anywhere, and that includes its libraries: onnxruntime's telemetry (a device id and an event
queue under ~/.cache/Microsoft) is switched off before onnxruntime is imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from mcp import Client, StdioServerParameters

from ego_core.testing import call_ok

if TYPE_CHECKING:
    from conftest import EgoChild


def fresh_home_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EGO_", "ORT_", "XDG_", "HF_"))}
    env["HOME"] = str(home)
    return env


def created_under(home: Path) -> list[str]:
    return sorted(str(path.relative_to(home)) for path in home.rglob("*"))


@pytest.mark.anyio
async def test_a_plain_serve_with_a_fresh_home_creates_no_telemetry_files(ego_child: EgoChild, tmp_path: Path) -> None:
    """A new user found: "no telemetry" was claimed, but a plain `ego serve` made onnxruntime create
    `~/.cache/Microsoft/DeveloperTools/.onnxruntime/deviceid` and `onnxruntime.db`. With a fresh HOME, a day's
    calls (remember, recall, with chromadb and so onnxruntime loaded) leave nothing in HOME at all."""
    home = tmp_path / "home"
    home.mkdir()
    env = {**fresh_home_env(home), **{k: v for k, v in ego_child.env().items() if k.startswith("EGO_")}}
    server = StdioServerParameters(command=sys.executable, args=["-m", "ego_core.mcp.cli", "serve"], env=env)
    async with Client(server) as client:
        await call_ok(client, "remember", {"content": "The first day with a fresh home directory."})
        assert "fresh home" in await call_ok(client, "recall", {"context": "first day fresh home"})
    assert created_under(home) == []
    loads = "import sys, ego_memory.plugin, chromadb; sys.exit(0 if 'onnxruntime' in sys.modules else 1)"
    assert subprocess.run([sys.executable, "-c", loads], env=env, check=False).returncode == 0  # it was loaded


def test_onnxruntime_imported_after_ego_core_writes_no_device_id(tmp_path: Path) -> None:
    """The switch is in ego_core itself, so any process that imports ego before onnxruntime (every ego command,
    every plugin) is covered; onnxruntime alone, in the same fresh HOME, does create them (the control)."""
    pytest.importorskip("onnxruntime")
    quiet, control = tmp_path / "quiet", tmp_path / "control"
    for home, code in ((quiet, "import ego_core, onnxruntime"), (control, "import onnxruntime")):
        home.mkdir()
        done = subprocess.run(
            [sys.executable, "-c", code], env=fresh_home_env(home), capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
    assert created_under(quiet) == []
    assert ".cache/Microsoft/DeveloperTools/.onnxruntime/deviceid" in created_under(control)
