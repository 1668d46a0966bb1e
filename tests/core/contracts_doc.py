"""The generated part of docs/services.md: every service contract and value type, rendered from the code.

``render_blocks()`` reads ``ego_core/services.py``, ``ego_core/types.py`` and ``ego_core/embedding.py``, and the
``api`` module of each built-in plugin that owns a contract, when that plugin is installed (the classes and names
listed in :data:`CONTRACTS` and :data:`PLUGIN_CONTRACTS`), and renders each class as a stub: its docstring, its
fields with types and defaults (and their docstrings), its methods' signatures (and their docstrings).
``test_docs.py`` fails when the page differs; run ``python tests/core/contracts_doc.py`` to write the blocks again.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "services.md"
CORE = ROOT / "ego_core"

CONTRACTS: dict[str, tuple[str, ...]] = {
    "services.py": ("*",),
    "types.py": ("EmotionalTrace", "LinkType", "LINK_TYPES", "MemoryLink", "Memory"),
    "embedding.py": ("Vectors", "EmbedRole", "SimilarityProfile"),
}
"""Per module of ego_core, the names rendered ("*": every public class, alias and service name of the module)."""

PLUGIN_CONTRACTS: dict[str, str] = {
    "ego_desires.api": "plugins/desires/ego_desires/api.py",
    "ego_self_model.api": "plugins/self_model/ego_self_model/api.py",
    "ego_notions.api": "plugins/notions/ego_notions/api.py",
}
"""The built-in plugins' contracts (every public name of each): module -> its path in this repository, which names
its blocks on the page."""

BEGIN = "<!-- generated from {module}: {name} -->"
END = "<!-- end of generated {name} -->"
BLOCK = re.compile(
    r"<!-- generated from (?P<module>[\w./]+): (?P<name>\w+) -->\n.*?<!-- end of generated (?P=name) -->", re.S
)


def _docstring(node: ast.stmt | None, indent: str) -> list[str]:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
        return []
    text = textwrap.dedent(node.value.value).strip()
    first, _, rest = text.partition("\n")
    lines = [first.strip(), *textwrap.dedent(rest).splitlines()] if rest else [first.strip()]
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [f'{indent}"""{lines[0]}', *[f"{indent}{line}".rstrip() for line in lines[1:]], f'{indent}"""']


def _default(value: ast.expr) -> str | None:
    """``= x`` for a field: attrs.field(default=x) or factory=f (shown as ``f()``), else the value itself."""
    if isinstance(value, ast.Call) and ast.unparse(value.func) in ("attrs.field", "attr.ib", "attrs.Factory"):
        for keyword in value.keywords:
            if keyword.arg == "default":
                return ast.unparse(keyword.value)
            if keyword.arg == "factory":
                factory = ast.unparse(keyword.value)
                return {"dict": "{}", "list": "[]", "tuple": "()"}.get(factory, f"{factory}()")
        return None
    return ast.unparse(value)


def _function(node: ast.FunctionDef, indent: str) -> list[str]:
    lines = [f"{indent}@{ast.unparse(d)}" for d in node.decorator_list]
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    doc = _docstring(node.body[0] if node.body else None, indent + "    ")
    lines.append(f"{indent}def {node.name}({ast.unparse(node.args)}){returns}:" + ("" if doc else " ..."))
    return lines + doc


def _class(node: ast.ClassDef) -> list[str]:
    bases = ", ".join(ast.unparse(b) for b in node.bases)
    lines = [f"@{ast.unparse(d)}" for d in node.decorator_list]
    lines.append(f"class {node.name}({bases}):" if bases else f"class {node.name}:")
    body = node.body
    lines += [*_docstring(body[0], "    "), ""]
    for index, statement in enumerate(body):
        following = body[index + 1] if index + 1 < len(body) else None
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            field = f"    {statement.target.id}: {ast.unparse(statement.annotation)}"
            default = _default(statement.value) if statement.value is not None else None
            lines.append(field + (f" = {default}" if default is not None else ""))
            lines += _docstring(following, "    ")
        elif isinstance(statement, ast.FunctionDef) and not statement.name.startswith("_"):
            lines += [*([""] if lines[-1] else []), *_function(statement, "    ")]
    return lines


def _assignment(node: ast.stmt) -> tuple[str, str] | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, f"{node.targets[0].id} = {ast.unparse(node.value)}"
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        target = node.target.id
        return target, f"{target}: {ast.unparse(node.annotation)} = {ast.unparse(node.value)}"
    return None


def unavailable_modules() -> set[str]:
    """Paths (as the page names them) of the plugin contracts whose plugin is not installed here: their blocks are
    left as they are."""
    return {path for module, path in PLUGIN_CONTRACTS.items() if _origin(module) is None}


def _origin(module: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(module)
    except ImportError:  # the plugin's package is not installed
        return None
    return Path(spec.origin) if spec is not None and spec.origin else None


def _sources() -> list[tuple[str, Path, tuple[str, ...]]]:
    """(path as the page names it, file, names) of every module rendered here."""
    found = [(f"ego_core/{module}", CORE / module, names) for module, names in CONTRACTS.items()]
    for module, path in PLUGIN_CONTRACTS.items():
        origin = _origin(module)
        if origin is not None:
            found.append((path, origin, ("*",)))
    return found


def render_blocks() -> dict[tuple[str, str], str]:
    """``(module, name) -> the python stub`` of every rendered name, in the order of the source."""
    blocks: dict[tuple[str, str], str] = {}
    for module, source, names in _sources():
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for index, node in enumerate(tree.body):
            following = tree.body[index + 1] if index + 1 < len(tree.body) else None
            if isinstance(node, ast.ClassDef):
                name, lines = node.name, _class(node)
            elif (found := _assignment(node)) is not None:
                name, line = found
                lines = [line, *_docstring(following, "")]
            else:
                continue
            if name.startswith("_") or ("*" not in names and name not in names):
                continue
            blocks[(module, name)] = "\n".join(lines)
    return blocks


def expected_page(page: str) -> str:
    """``page`` with every generated block rendered again from the code (blocks of names that are gone stay,
    so the test names them)."""
    blocks = render_blocks()

    def fill(match: re.Match[str]) -> str:
        key = (match["module"], match["name"])
        if key not in blocks:
            return match[0]
        begin = BEGIN.format(module=key[0], name=key[1])
        return f"{begin}\n```python\n{blocks[key]}\n```\n{END.format(name=key[1])}"

    return BLOCK.sub(fill, page)


def documented(page: str) -> set[tuple[str, str]]:
    return {(match["module"], match["name"]) for match in BLOCK.finditer(page)}


if __name__ == "__main__":
    text = PAGE.read_text(encoding="utf-8")
    missing = sorted(set(render_blocks()) - documented(text))
    PAGE.write_text(expected_page(text), encoding="utf-8")
    for module, name in missing:
        print(
            f"add a block for {name} to {PAGE.name}: {BEGIN.format(module=module, name=name)} ... "
            f"{END.format(name=name)}",
            file=sys.stderr,
        )
    sys.exit(1 if missing else 0)
