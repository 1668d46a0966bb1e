"""``ego plugin new NAME``: a minimal, working plugin package to start from.

It has everything a real plugin needs and nothing more: a tool, a ``wake_up`` section, a config option with its
environment variable, its own SQLite database (``ctx.database``), a doctor check, ``ego export`` / ``ego import``
records, tests (in-process and as installed), a tox environment that also runs ``mypy --strict``, and
``py.typed``. ego-core is not on PyPI: the tox environment installs it from the clone (or wheel) this ego runs
from, or from ``$EGO_CORE``.

The files are ``ego_core/mcp/templates/plugin/**/*.tmpl`` (package data, read with importlib.resources): each is
rendered with :class:`string.Template` (``$id``, ``$dist``, ``$package``, ``$Class``, ``$tool``, ``$ENV``,
``$core``; ``$$`` is a literal ``$``), its path too, and loses its ``.tmpl`` suffix.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from string import Template

from ego_core.errors import UsageError

PLUGIN_ID = re.compile(r"[a-z][a-z0-9_]{0,31}")
RESERVED_IDS = frozenset({"core", "ego"})


def check_plugin_id(name: str) -> str:
    if not PLUGIN_ID.fullmatch(name) or name.endswith("_") or "__" in name:
        raise UsageError(
            f"plugin id {name!r} must be lower-case snake_case: a letter, then letters, digits or single '_' "
            "(at most 32), e.g. dream or night_notes"
        )
    if name in RESERVED_IDS:
        raise UsageError(f"plugin id {name!r} is reserved; choose another")
    return name


def ego_core_source() -> str:
    """Where the plugin's tox environment installs ego-core from: this ego's clone when it runs from one (a
    directory with ego-core's pyproject.toml), else the requirement ``ego-core`` (then set ``EGO_CORE``)."""
    root = Path(__file__).resolve().parents[2]
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and 'name = "ego-core"' in pyproject.read_text(encoding="utf-8"):
        return str(root)
    return "ego-core"


def _class_name(plugin_id: str) -> str:
    return "".join(part.capitalize() for part in plugin_id.split("_"))


def render(plugin_id: str, core_source: str) -> dict[str, str]:
    """Relative path -> content of every file of the new plugin."""
    values = {
        "id": plugin_id,
        "dist": f"ego-{plugin_id.replace('_', '-')}",
        "package": f"ego_{plugin_id}",
        "Class": _class_name(plugin_id),
        "tool": f"{plugin_id}_note",
        "ENV": f"EGO_{plugin_id.upper()}_MAX_CHARS",
        "core": core_source,
    }
    return {
        Template(relative).substitute(values): Template(item.read_text(encoding="utf-8")).substitute(values)
        for relative, item in _template_files(_templates(), "")
    }


def _templates() -> Traversable:
    """``ego_core/mcp/templates/plugin``, found as package data (not by importing the ``ego_core`` package)."""
    return resources.files(__name__.rpartition(".")[0]).joinpath("templates", "plugin")


def _template_files(directory: Traversable, prefix: str) -> Iterator[tuple[str, Traversable]]:
    """(relative path without ``.tmpl``, file) for every template under ``directory``, sorted by path."""
    for item in sorted(directory.iterdir(), key=lambda item: item.name):
        if item.is_dir():
            yield from _template_files(item, f"{prefix}{item.name}/")
        elif item.name.endswith(".tmpl"):
            yield f"{prefix}{item.name.removesuffix('.tmpl')}", item


def write_plugin(plugin_id: str, directory: Path, core_source: str | None = None) -> list[Path]:
    """Write the plugin into ``directory`` (which must not exist, or be empty); returns the files written."""
    check_plugin_id(plugin_id)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise UsageError(f"{directory} already exists and is not empty; choose another with --dir")
    written = []
    for relative, text in render(plugin_id, core_source or ego_core_source()).items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
