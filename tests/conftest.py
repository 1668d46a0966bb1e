"""Shared helpers for the core and end-to-end tests.

Child processes never inherit ``EGO_*`` variables from the developer's shell, never touch ``~/.ego``
(``EGO_DATA_DIR`` is always a temporary directory) and see exactly the plugins a test chooses: fake
distributions written into a site directory on ``PYTHONPATH``, and ``--disable`` for every really installed
plugin when a test wants "zero feature plugins".
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import StdioServerParameters

EGO = [sys.executable, "-m", "ego_core.mcp.cli"]


def installed_plugin_ids() -> list[str]:
    """Ids of the plugins really installed in this environment (differs between tox environments)."""
    return sorted({ep.name for ep in importlib.metadata.entry_points(group="ego")})


class EgoWorld:
    """A temporary data directory and a site directory of fake plugin distributions for ``ego`` children."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data_dir = root / "data"
        self.site = root / "site"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.site.mkdir(parents=True, exist_ok=True)
        self.real_plugins = installed_plugin_ids()

    def dist(self, dist: str, module: str, source: str, *, ep_name: str | None = None) -> None:
        """Write ``module.py`` and ``<dist>-0.1.0.dist-info`` with an ``ego`` entry point (as ``fake_dist``)."""
        (self.site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        info = self.site / f"{dist.replace('-', '_')}-0.1.0.dist-info"
        info.mkdir(exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n", encoding="utf-8")
        (info / "entry_points.txt").write_text(f"[ego]\n{ep_name or module} = {module}\n", encoding="utf-8")

    def without_real_plugins(self, *also: str) -> list[str]:
        """``--disable`` options leaving out every really installed plugin (and ``also``)."""
        ids = [*self.real_plugins, *also]
        return ["--disable", ",".join(ids)] if ids else []

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
        env["EGO_DATA_DIR"] = str(self.data_dir)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(self.site), os.environ.get("PYTHONPATH", "")) if p)
        env.update(extra)
        return env

    @staticmethod
    def command(*args: str) -> list[str]:
        """``ego <args>`` with the interpreter running the tests."""
        return [*EGO, *args]

    def run(self, *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*EGO, *args], env=self.env(**extra_env), capture_output=True, text=True, timeout=120, check=False
        )

    def plugins_json(self, *args: str, **extra_env: str) -> dict[str, Any]:
        done = self.run("plugins", "--json", *args, **extra_env)
        assert done.returncode == 0, done.stderr
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    def stdio(self, *args: str, **extra_env: str) -> StdioServerParameters:
        """Parameters for ``ego serve <args>`` over stdio (the client merges ``env`` over a minimal default)."""
        env = self.env(**extra_env)
        keep = {k: v for k, v in env.items() if k.startswith("EGO_") or k == "PYTHONPATH"}
        return StdioServerParameters(command=EGO[0], args=[*EGO[1:], "serve", *args], env=keep)

    def log_records(self) -> list[dict[str, Any]]:
        logs = self.data_dir / "logs"
        records: list[dict[str, Any]] = []
        for path in sorted(logs.glob("ego-*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                records.append(json.loads(line))
        return records

    def log_text(self) -> str:
        return "".join(p.read_text(encoding="utf-8") for p in sorted((self.data_dir / "logs").glob("ego-*.jsonl")))


@pytest.fixture
def world(tmp_path: Path) -> EgoWorld:
    return EgoWorld(tmp_path / "world")


@pytest.fixture(scope="session")
def make_world(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], EgoWorld]:
    """For module-scoped fixtures (a server shared by several tests)."""
    return lambda name: EgoWorld(tmp_path_factory.mktemp(name))
