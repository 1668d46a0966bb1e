"""One public surface: plugins (built-in and the example) import only ``ego_core`` and ``ego_core.testing``."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import ego_core
import ego_core.testing

ROOT = Path(__file__).resolve().parents[2]
PUBLIC_MODULES = {"ego_core", "ego_core.testing"}
PLUGIN_TREES = [*sorted((ROOT / "plugins").glob("*/")), *sorted((ROOT / "docs" / "examples").glob("*/"))]
GUIDES = [ROOT / "docs" / "plugin-author-guide.md", ROOT / "docs" / "hooks.md"]


def _core_imports(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, module) of every import of an ``ego_core`` module, at any depth of the file."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "ego_core" or node.module.startswith("ego_core."):
                yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("ego_core"):
                    yield node.lineno, alias.name


def private_imports(source: str, where: str) -> list[str]:
    return [
        f"{where}:{line} imports {module}"
        for line, module in _core_imports(ast.parse(source))
        if module not in PUBLIC_MODULES
    ]


def test_every_public_name_exists() -> None:
    missing = [name for name in ego_core.__all__ if not hasattr(ego_core, name)]
    assert not missing
    assert not [name for name in ego_core.testing.__all__ if not hasattr(ego_core.testing, name)]


def test_plugins_import_only_the_public_surface() -> None:
    found: list[str] = []
    for tree in PLUGIN_TREES:
        for path in sorted(tree.rglob("*.py")):
            found += private_imports(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert PLUGIN_TREES, "no plugin found"
    assert not found, "plugins must import only ego_core and ego_core.testing:\n" + "\n".join(found)


def test_the_guides_examples_import_only_the_public_surface() -> None:
    found: list[str] = []
    for guide in GUIDES:
        for block in re.findall(r"```python\n(.*?)```", guide.read_text(encoding="utf-8"), flags=re.S):
            try:
                tree = ast.parse(block)
            except SyntaxError:  # a fragment with "..." placeholders: check its import lines alone
                imports = "\n".join(line for line in block.splitlines() if line.startswith(("from ", "import ")))
                tree = ast.parse(imports)
            found += [
                f"{guide.name}: imports {module}"
                for _line, module in _core_imports(tree)
                if module not in PUBLIC_MODULES
            ]
    assert not found, "\n".join(found)


def test_the_check_catches_a_private_import() -> None:
    planted = "def f():\n    from ego_core.kernel.host import PluginContext\n"
    assert private_imports(planted, "planted.py") == ["planted.py:2 imports ego_core.kernel.host"]
    assert private_imports("from ego_core import hookimpl\nimport ego_core.testing\n", "ok.py") == []


def test_every_public_name_is_in_the_author_guide() -> None:
    guide = (ROOT / "docs" / "plugin-author-guide.md").read_text(encoding="utf-8")
    missing = [name for name in ego_core.__all__ if name != "__version__" and f"`{name}`" not in guide]
    assert not missing, f"docs/plugin-author-guide.md does not mention {missing}"
