"""An author's first plugin, out of tree: ``ego plugin new`` beside the clone, its own tox (its tests and
``mypy --strict``) there, then the plugin as installed in that tox environment, served by ``ego serve`` to a
real MCP client over stdio.

Slow (tox builds a virtual environment and installs ego-core from this clone into it): it runs in one tox
environment only, ``all``, which sets ``EGO_TEST_PLUGIN_NEW=1`` and installs tox with tox-uv. Nothing comes from a
package index: uv installs offline, from the cache that installing ``all`` filled (pytest, anyio, attrs, mypy), and
ego-core from the clone's path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from ego_core.testing import tool_text

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    os.environ.get("EGO_TEST_PLUGIN_NEW") != "1",
    reason="slow (tox inside a test): runs in `tox -e all`, which sets EGO_TEST_PLUGIN_NEW=1",
)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without the outer tox run's, ego's or a virtual environment's variables."""
    dropped = ("EGO_", "TOX_", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTEST_", "COV_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    outer_bin = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != outer_bin)
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def beside_the_clone() -> Iterator[Path]:
    """A temporary directory next to the clone, as an author's own repository would be."""
    directory = Path(tempfile.mkdtemp(prefix=".ego-plugin-new-", dir=ROOT.parent))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="module")
def plugin_repo(beside_the_clone: Path) -> Path:
    done = subprocess.run(
        [sys.executable, "-m", "ego_core.mcp.cli", "plugin", "new", "dream"],
        cwd=beside_the_clone,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    repo = beside_the_clone / "ego-dream"
    assert f"ego-core from {ROOT}" in done.stdout
    return repo


@pytest.fixture(scope="module")
def toxed(plugin_repo: Path) -> Path:
    """Run the plugin's own tox (its tests, then mypy --strict); the environment it made has the plugin
    installed from its distribution, with ego-core from this clone."""
    done = subprocess.run(
        [sys.executable, "-m", "tox", "run", "-e", "py3"],
        cwd=plugin_repo,
        env=clean_env(UV_OFFLINE="1"),  # tox-uv: every package from uv's cache, which the outer install filled
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]
    assert "4 passed" in output, output[-3000:]
    assert "Success: no issues found" in output, output[-3000:]  # mypy --strict ego_dream tests
    return plugin_repo / ".tox" / "py3"


def test_its_tox_runs_the_tests_and_mypy_strict(toxed: Path) -> None:
    python = toxed / "bin" / "python"
    shown = subprocess.run(
        [str(python), "-c", "import ego_core, ego_dream; print(ego_core.__file__); print(ego_dream.__file__)"],
        cwd=toxed,  # not the clone: `python -c` would import ego_core from the working directory
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    assert all("site-packages" in path for path in shown), shown  # both installed, not read from a source tree


@pytest.mark.anyio
async def test_the_installed_plugin_is_served_over_stdio(toxed: Path, tmp_path: Path) -> None:
    python = toxed / "bin" / "python"
    env = {"EGO_DATA_DIR": str(tmp_path / "data"), "EGO_TIMEZONE": "UTC"}
    params = StdioServerParameters(
        command=str(python),
        args=["-m", "ego_core.mcp.cli", "serve", "--plugins", "dream"],
        env=clean_env(**env),
        cwd=toxed,  # `python -m` reads the working directory first: not the clone's ego_core
    )
    async with Client(params) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert "dream_note" in tools
        assert "wake_up" in tools
        first = await client.call_tool("dream_note", {"text": "夢の中で海を歩いた。"})
        assert not first.is_error, tool_text(first)
        assert tool_text(first).startswith("Noted (1 kept).")
        refused = await client.call_tool("dream_note", {"text": "   "})
        assert refused.is_error
        wake = tool_text(await client.call_tool("wake_up", {}))
    assert "1 note since last time; the latest: 夢の中で海を歩いた。" in wake
    assert (tmp_path / "data" / "dream" / "dream.sqlite3").is_file()
