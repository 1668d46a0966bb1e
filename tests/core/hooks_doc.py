"""The generated part of docs/hooks.md: each hook's heading, signature, kind and specification docstring.

``render_blocks()`` reads the spec classes: ego_core's ``ALL_SPECS``, then the classes built-in plugins publish
(:data:`PUBLISHED`, found in the core first while they are still there). The table of kinds comes from
``HookKind``'s member docstrings. Prose and examples around the blocks are written by hand. ``test_docs.py``
fails when the page differs; run ``python tests/core/hooks_doc.py`` to write the blocks again.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ego_core.kernel import hookspecs, markers
from ego_core.kernel.markers import HookKind

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "hooks.md"

PUBLISHED: tuple[tuple[str, str, str], ...] = (("ego_memory.api", "MemorySpecs", "plugins/memory/ego_memory/api.py"),)
"""(module, class, source) of the spec classes built-in plugins publish (a plugin's ``hookspecs = (MemorySpecs,)``)."""

KINDS = "kinds"
BEGIN = "<!-- generated from {module}: {name} -->"
END = "<!-- end of generated {name} -->"
BLOCK = re.compile(
    r"<!-- generated from (?P<module>[\w./]+): (?P<name>\w+) -->\n.*?<!-- end of generated (?P=name) -->\n?", re.S
)
LABEL = re.compile(r"^(When|Arguments|Returns|Isolation|Ordering and isolation|Budget):", re.M)
ROLE = re.compile(r":\w+:`~?(?:[\w.]+\.)?(\w+)`")


class HookDocError(Exception):
    """The spec classes cannot be documented as they are (a hook declared twice)."""


def _module_path(obj: Any) -> str:
    source = inspect.getsourcefile(obj)
    assert source is not None, obj
    return Path(source).resolve().relative_to(ROOT).as_posix()


def spec_classes() -> list[type]:
    """ego_core's spec classes, then each published one that is not in the core (when its plugin is installed)."""
    classes = list(hookspecs.ALL_SPECS)
    for module, name, _source in PUBLISHED:
        if any(spec_class.__name__ == name for spec_class in classes):
            continue
        try:
            published = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
        classes.append(published)
    return classes


def unavailable_modules() -> set[str]:
    """Source paths of published spec modules that cannot be imported here: their blocks are left as they are."""
    missing = set()
    for module, name, source in PUBLISHED:
        if any(spec_class.__name__ == name for spec_class in hookspecs.ALL_SPECS):
            continue
        try:
            importlib.import_module(module)
        except ImportError:
            missing.add(source)
    return missing


def hooks() -> dict[str, tuple[type, Callable[..., Any]]]:
    """Hook name -> (spec class, spec function), in declaration order."""
    found: dict[str, tuple[type, Callable[..., Any]]] = {}
    for spec_class in spec_classes():
        for name, function in vars(spec_class).items():
            if name.startswith("_") or not callable(function):
                continue
            if name in found:
                raise HookDocError(f"{name} is declared by {found[name][0].__name__} and {spec_class.__name__}")
            found[name] = (spec_class, function)
    return found


def heading(name: str, function: Callable[..., Any]) -> str:
    params = [p for p in inspect.signature(function).parameters if p != "self"]
    return f"## {name}({', '.join(params)})"


def _annotation(value: Any) -> str:
    return value if isinstance(value, str) else inspect.formatannotation(value)


def signature(name: str, function: Callable[..., Any], published: bool) -> str:
    """The implementation's signature as the spec writes it, ``@hookimpl`` included."""
    sig = inspect.signature(function, eval_str=False)
    params = [
        p.name if p.annotation is inspect.Parameter.empty else f"{p.name}: {_annotation(p.annotation)}"
        for p in sig.parameters.values()
    ]
    returns = "" if sig.return_annotation is inspect.Signature.empty else f" -> {_annotation(sig.return_annotation)}"
    marker = "@hookimpl(optionalhook=True)" if published else "@hookimpl"
    line = f"def {name}({', '.join(params)}){returns}: ..."
    if len(line) > 116:
        inner = "".join(f"    {param},\n" for param in params)
        line = f"def {name}(\n{inner}){returns}: ..."
    return f"{marker}\n{line}"


def markdown(docstring: str) -> str:
    """A docstring as Markdown: ``code`` as `code`, roles as their last name, section labels in bold."""
    text = ROLE.sub(r"`\1`", docstring.replace("``", "`"))
    return LABEL.sub(r"**\1:**", text)


def kind_line(function: Callable[..., Any]) -> str:
    kind = markers.kind_of(function)
    text = f"**Kind:** [{kind.value.replace('_', ' ')}](#kinds)"
    if markers.is_setup(function) and kind not in markers.SETUP_KINDS:
        text += ", a set-up hook (its time is expected work, never an agent waiting)"
    return text + "."


def _kind_docs() -> dict[str, str]:
    """HookKind member -> its docstring, read from markers.py (attribute docstrings are not kept at runtime)."""
    tree = ast.parse(Path(inspect.getfile(markers)).read_text(encoding="utf-8"))
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == HookKind.__name__).body
    docs: dict[str, str] = {}
    for statement, following in itertools.pairwise(body):
        if (
            isinstance(statement, ast.Assign)
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[statement.targets[0].id] = " ".join(following.value.value.split())
    return docs


def kinds_table(found: dict[str, tuple[type, Callable[..., Any]]]) -> str:
    docs = _kind_docs()
    lines = ["| kind | how its implementations are called | hooks |", "| --- | --- | --- |"]
    for kind in HookKind:
        names = [name for name, (_cls, function) in found.items() if markers.kind_of(function) is kind]
        listed = ", ".join(f"`{name}`" for name in names)
        lines.append(f"| {kind.value.replace('_', ' ')} | {markdown(docs[kind.name])} | {listed} |")
    return "\n".join(lines)


def render_blocks() -> dict[str, tuple[str, str]]:
    """Block name (a hook, or ``kinds``) -> (source module, Markdown), hooks in declaration order."""
    found = hooks()
    core = set(hookspecs.ALL_SPECS)
    blocks = {KINDS: (_module_path(markers), kinds_table(found))}
    for name, (spec_class, function) in found.items():
        doc = inspect.getdoc(function)
        assert doc, f"the spec of {name} has no docstring"
        parts = [
            heading(name, function),
            f"```python\n{signature(name, function, spec_class not in core)}\n```",
            kind_line(function),
            markdown(doc),
        ]
        blocks[name] = (_module_path(spec_class), "\n\n".join(parts))
    return blocks


def expected_page(page: str) -> str:
    """``page`` with every generated block rendered again (blocks of names that are gone stay, so the test names
    them; so do the blocks of a publisher whose plugin is not installed here, and the table of kinds then)."""
    blocks = render_blocks()
    if unavailable_modules():  # the kinds table lists every hook: without a publisher's plugin it is left as it is
        del blocks[KINDS]

    def fill(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in blocks:
            return match[0]
        module, text = blocks[name]
        return f"{BEGIN.format(module=module, name=name)}\n{text}\n{END.format(name=name)}\n"

    return BLOCK.sub(fill, page)


def documented(page: str) -> list[tuple[str, str]]:
    """(module, name) of every generated block on the page, in page order."""
    return [(match["module"], match["name"]) for match in BLOCK.finditer(page)]


def hand_written_headings(page: str) -> list[str]:
    """``## name(`` headings outside the generated blocks: a hook section must be generated."""
    outside = BLOCK.sub("", page)
    return re.findall(r"^## \w+\(.*$", outside, flags=re.M)


if __name__ == "__main__":
    text = PAGE.read_text(encoding="utf-8")
    missing = [name for name in render_blocks() if name not in {name for _module, name in documented(text)}]
    PAGE.write_text(expected_page(text), encoding="utf-8")
    for name in missing:
        begin, end = BEGIN.format(module="…", name=name), END.format(name=name)
        print(f"add a block for {name} to {PAGE.name}: {begin} … {end}", file=sys.stderr)
    sys.exit(1 if missing else 0)
