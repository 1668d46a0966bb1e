"""The import contracts of the lint environment (``lint-imports``, configured in pyproject.toml) catch an import
cycle: shown on a package with a planted one, and on the same package without it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CONFIG = """
[tool.importlinter]
root_packages = ["planted"]

[[tool.importlinter.contracts]]
name = "No import cycles inside any package"
type = "acyclic_siblings"
ancestors = ["planted"]
"""


def lint_imports(workdir: Path) -> subprocess.CompletedProcess[str]:
    command = Path(sys.executable).parent / "lint-imports"
    assert command.exists(), "import-linter is a test dependency (tox deps)"
    return subprocess.run(
        [str(command), "--config", str(workdir / "pyproject.toml"), "--no-cache"],
        cwd=workdir,
        env={"PYTHONPATH": str(workdir), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    package = tmp_path / "planted"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "host.py").write_text("from planted.context import Context\n\nclass Host:\n    context = Context\n")
    (package / "context.py").write_text("class Context:\n    pass\n")
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent(CONFIG))
    return tmp_path


def test_an_acyclic_package_keeps_the_contract(planted: Path) -> None:
    done = lint_imports(planted)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_planted_cycle_breaks_the_contract(planted: Path) -> None:
    # a lazy import inside a function is still a cycle
    (planted / "planted" / "context.py").write_text(
        "class Context:\n    def host(self):\n        from planted.host import Host\n        return Host\n"
    )
    done = lint_imports(planted)
    assert done.returncode != 0
    assert "No cycles are allowed in planted" in done.stdout
