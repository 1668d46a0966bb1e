"""``ego plugin new NAME``: a minimal, working plugin package to start from.

It has everything a real plugin needs and nothing more: a tool, a ``wake_up`` section, a config option with its
environment variable, its own SQLite database (``ctx.database``), a doctor check, ``ego export`` / ``ego import``
records, tests (in-process and as installed), a tox environment that also runs ``mypy --strict``, and
``py.typed``. ego-core is not on PyPI: the tox environment installs it from the clone (or wheel) this ego runs
from, or from ``$EGO_CORE``.
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

import ego_core
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
    root = Path(ego_core.__file__).resolve().parent.parent
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
    package = values["package"]
    files = {
        "pyproject.toml": PYPROJECT,
        "README.md": README,
        "tox.ini": TOX,
        f"{package}/__init__.py": INIT,
        f"{package}/plugin.py": PLUGIN,
        f"{package}/py.typed": "",
        f"tests/test_{plugin_id}.py": TESTS,
    }
    return {path: Template(text).substitute(values) for path, text in files.items()}


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


PYPROJECT = """\
[build-system]
requires = ["setuptools>=69"]
build-backend = "setuptools.build_meta"

[project]
name = "$dist"
version = "0.1.0"
description = "An ego plugin: short notes, counted at wake_up"
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["ego-core>=0.1,<0.2", "attrs>=24.2"]

[project.optional-dependencies]
test = ["pytest>=8", "anyio>=4.4", "mypy>=1.11"]

# The entry-point name is the plugin id: --plugins $id, EGO_PLUGINS, [plugins.$id], logs.
[project.entry-points.ego]
$id = "$package:${Class}Plugin"

[tool.setuptools.packages.find]
include = ["$package*"]

[tool.setuptools.package-data]
$package = ["py.typed"]

[tool.pytest.ini_options]
testpaths = ["tests"]

[tool.mypy]
strict = true
"""

README = """\
# $dist

An ego plugin made with `ego plugin new $id`.

- `$tool(text)` keeps a short note in `<data dir>/$id/$id.sqlite3`.
- `wake_up` says how many notes were kept since the previous session.
- `[plugins.$id] max_chars` (default 500, env `$ENV`) bounds a note.
- `ego export` / `ego import` carry the notes; `ego doctor` counts them.

```sh
tox                      # its tests and mypy --strict, with ego-core from $core (or $$EGO_CORE)
pip install .            # into the environment that runs ego (after ego-core)
ego plugins              # $id  enabled  $dist 0.1.0
```
"""

TOX = """\
# ego-core is not on PyPI: it comes from the clone (or wheel) `ego plugin new` ran from, or from $$EGO_CORE
# (a path to a clone or to a wheel, e.g. EGO_CORE=../wheels/ego_core-0.1.0-py3-none-any.whl).
[tox]
env_list = py3

[testenv]
deps =
    {env:EGO_CORE:$core}
extras = test
commands =
    pytest {posargs}
    mypy --strict $package tests
"""

INIT = """\
\"\"\"The $id plugin for ego.\"\"\"

from $package.plugin import ${Class}Config, ${Class}Plugin

__all__ = ["${Class}Config", "${Class}Plugin"]
"""

PLUGIN = '''\
"""The ``$id`` plugin: a tool, a wake_up line, a config option, its own SQLite database, export and import."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs

from ego_core import (
    Check,
    Database,
    InvalidArgumentError,
    PluginBase,
    PluginContext,
    Response,
    Section,
    Tool,
    hookimpl,
    is_blank,
    truncate,
)

MIGRATIONS = ("CREATE TABLE notes (id INTEGER PRIMARY KEY, created TEXT NOT NULL, text TEXT NOT NULL);",)
"""The schema, one script per version: to change it, append a script; never edit one that was released."""


def _max_chars_in_range(_instance: object, _attribute: object, value: int) -> None:
    if not 1 <= value <= 2000:
        raise ValueError("max_chars must be from 1 to 2000")


@attrs.frozen
class ${Class}Config:
    """``[plugins.$id]`` in ego.toml."""

    max_chars: int = attrs.field(default=500, validator=_max_chars_in_range)


SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 2000}},
    "required": ["text"],
    "additionalProperties": False,
}


class ${Class}Plugin(PluginBase):
    config_class = ${Class}Config
    config_env: Mapping[str, str] = {"$ENV": "max_chars"}

    def __init__(self) -> None:
        self._ctx: PluginContext | None = None
        self._db: Database | None = None

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        self._ctx, self._db = ctx, ctx.database(MIGRATIONS)

    @hookimpl
    def on_shutdown(self) -> None:
        if self._db is not None:
            self._db.close()
        self._ctx = self._db = None

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name="$tool",
                description="Keep a short note; wake_up counts the notes since last time.",
                input_schema=SCHEMA,
                handler=self.note,
                log_view=lambda args: {"chars": len(str(args.get("text", "")))},  # never the text
            )
        )

    def note(self, args: Mapping[str, Any]) -> Response:
        """A sync handler: it runs in a worker thread; ``write()`` takes the database's write lock."""
        if self._ctx is None or self._db is None:
            raise RuntimeError("the $id plugin is not started")
        config: ${Class}Config = self._ctx.config
        text = str(args["text"]).strip()
        if is_blank(text) or len(text) > config.max_chars:
            raise InvalidArgumentError("text", f"1 to {config.max_chars} characters with words in them")
        with self._db.write() as db:
            db.execute("INSERT INTO notes(created, text) VALUES (?, ?)", (self._ctx.now().isoformat(), text))
            (count,) = db.execute("SELECT count(*) FROM notes").fetchone()
        return Response(f"Noted ({count} kept).", scaffold=("What made it worth keeping?",))

    @hookimpl
    def on_wake_up(self, ctx: PluginContext) -> Section | None:
        if self._db is None:
            return None
        since = ctx.previous_session()
        after = since.isoformat() if since is not None else ""
        query = "SELECT count(*), max(id) FROM notes WHERE created >= ?"
        count, newest = self._db.db.execute(query, (after,)).fetchone()
        if not count:
            return None
        (latest,) = self._db.db.execute("SELECT text FROM notes WHERE id = ?", (newest,)).fetchone()
        text = f"{count} {'note' if count == 1 else 'notes'} since last time; the latest: {truncate(latest, 80)}"
        return Section(key="$id", text=text, order=900)

    @hookimpl
    def doctor_checks(self, ctx: PluginContext) -> list[Check]:
        reader = ctx.read_database()  # read-only: works when on_startup did not run, or failed
        if reader is None:
            return [Check("notes", True, "none kept yet")]
        with reader:
            (count,) = reader.db.execute("SELECT count(*) FROM notes").fetchone()
            return [Check("notes", True, f"{count} kept (schema version {reader.version})")]

    @hookimpl
    def export_records(self, ctx: PluginContext) -> Iterator[Mapping[str, Any]]:
        reader = ctx.read_database()
        if reader is None:
            return
        with reader:
            for created, text in reader.db.execute("SELECT created, text FROM notes ORDER BY id").fetchall():
                yield {"type": "note", "created": created, "text": text}

    @hookimpl
    def check_records(self, records: Sequence[Mapping[str, Any]]) -> list[str]:
        problems = []
        for number, record in enumerate(records, start=1):
            if record.get("type") != "note" or not isinstance(record.get("text"), str):
                problems.append(f"record {number}: expected a note with a text")
                continue
            try:
                datetime.fromisoformat(str(record.get("created")))
            except ValueError:
                problems.append(f"record {number}: created is not an ISO 8601 time")
        return problems

    @hookimpl
    def import_records(self, records: Sequence[Mapping[str, Any]]) -> int:
        if self._db is None:
            raise RuntimeError("the $id plugin is not started")
        added = 0
        with self._db.write() as db:
            for record in records:
                row = (str(record["created"]), str(record["text"]))
                if db.execute("SELECT 1 FROM notes WHERE created = ? AND text = ?", row).fetchone() is None:
                    db.execute("INSERT INTO notes(created, text) VALUES (?, ?)", row)
                    added += 1
        return added
'''

TESTS = '''\
"""The $id plugin in-process (make_host and an MCP client) and as installed (its entry point)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ego_core import Clock, Settings
from ego_core.testing import HostFactory, call_error, call_ok, export_file, import_file, mcp_client
from $package import ${Class}Plugin

NOON = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.mark.anyio
async def test_notes_are_counted_at_the_next_wake_up(make_host: HostFactory) -> None:
    clock = Clock(NOON)
    host = make_host({"$id": ${Class}Plugin()}, clock=clock)
    async with mcp_client(host) as client:
        await call_ok(client, "wake_up")
        assert "Noted (1 kept)." in await call_ok(client, "$tool", {"text": "A walk by the river."})
        await call_error(client, "$tool", {"text": "   "})
        clock.set(NOON + timedelta(hours=3))
        text = await call_ok(client, "wake_up")
    assert "1 note since last time; the latest: A walk by the river." in text


@pytest.mark.anyio
async def test_max_chars_is_configured(make_host: HostFactory) -> None:
    host = make_host({"$id": ${Class}Plugin()}, config={"$id": {"max_chars": 5}})
    async with mcp_client(host) as client:
        assert "1 to 5 characters" in await call_error(client, "$tool", {"text": "far too long"})


@pytest.mark.anyio
async def test_export_and_import_carry_the_notes(make_host: HostFactory, tmp_path: Path) -> None:
    host = make_host({"$id": ${Class}Plugin()})
    async with mcp_client(host) as client:
        await call_ok(client, "$tool", {"text": "川沿いを散歩した。"})
    export_file(host, tmp_path / "export.jsonl", include_private=False)
    other = make_host({"$id": ${Class}Plugin()}, settings=Settings(data_dir=tmp_path / "other", timezone="UTC"))
    other.start()
    assert import_file(other, tmp_path / "export.jsonl").added == {"$id": 1}
    assert import_file(other, tmp_path / "export.jsonl").added == {"$id": 0}  # idempotent
    async with mcp_client(other) as client:
        assert "Noted (2 kept)." in await call_ok(client, "$tool", {"text": "Another note."})


def test_the_installed_entry_point_serves_the_tool(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
    env["EGO_DATA_DIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "ego_core.cli", "plugins", "--json", "--plugins", "$id"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["tools"]["$tool"] == "$id"
'''
