"""``ego export`` / ``ego import``: every plugin's state in one portable, versioned JSON Lines file.

Line 1 is a header ``{"format": "ego-export", "version": 1, "include_private": …, "plugins": {id: version}}``;
then one record per line ``{"plugin": <id>, "type": …, …}``, plugins in id order, each plugin's records in
the stable order it yields them; the last line is ``{"format": "ego-export", "end": true, "records": {id:
count}}``, so a file cut short (even at a line break) is refused. No timestamp of the export itself is
written, so exporting an imported store gives a byte-identical file.

An export without ``--include-private`` leaves private data out and passes every record through the
redaction pipeline. An import reads and checks the whole file first (JSON, header, every plugin's
``check_records``) and writes nothing unless everything is readable; importing the same file twice adds
nothing the second time.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

import attrs

from ego_core.kernel.host import PluginHost
from ego_core.kernel.status import CORE_PLUGIN_ID
from ego_core.kernel.storage import open_atomically

FORMAT = "ego-export"
VERSION = 1


class PortableError(ValueError):
    """The file cannot be imported (or written); nothing was changed."""


@attrs.frozen
class ImportSummary:
    added: Mapping[str, int]
    records: Mapping[str, int]


class Progress:
    """A one-line counter on stderr while a long export/import runs (only on a terminal)."""

    def __init__(self, label: str, stream: TextIO | None = None, every: int = 500) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.every = every
        self.count = 0
        self.enabled = self.stream.isatty()

    def step(self, n: int = 1) -> None:
        self.count += n
        if self.enabled and self.count % self.every < n:
            self.stream.write(f"\r{self.label}: {self.count}")
            self.stream.flush()

    def done(self) -> None:
        if self.enabled:
            self.stream.write(f"\r{self.label}: {self.count}\n")
            self.stream.flush()


def _dumps(value: Mapping[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def unexportable_plugins(host: PluginHost) -> list[str]:
    """Why an export would be incomplete: each selected plugin that failed to load or start, with the reason."""
    reasons = {status.id: status.reason for status in host.statuses()}
    broken = [plugin for plugin, stage in host.unavailable_stages().items() if stage != "register"]
    return [f"{plugin} ({reasons.get(plugin) or 'not running'})" for plugin in broken]


def unexported_state(host: PluginHost) -> list[str]:
    """Active plugins that keep files in their data directory but implement no ``export_records`` and do not
    say why (``local_state``): an export leaves their state out (``ego export`` warns)."""
    exporting = set(host.hooks.implementers("export_records"))
    root = host.settings.data_dir.expanduser()
    found = []
    for plugin_id in host.plugin_ids():
        directory = root / plugin_id
        if plugin_id in exporting or plugin_id == CORE_PLUGIN_ID or not host.is_active(plugin_id):
            continue
        if getattr(host.plugin(plugin_id), "local_state", None):  # says why its files are not state to export
            continue
        if directory.is_dir() and any(directory.iterdir()):
            found.append(plugin_id)
    return found


@attrs.define
class ExportSummary:
    """What an export wrote: records by plugin and type (``meta`` records describe a plugin's state and are
    not data), and how many records the redaction pipeline changed (a public export masks secrets)."""

    by_type: dict[tuple[str, str], int] = attrs.field(factory=dict)
    masked: int = 0
    unexported: list[str] = attrs.field(factory=list)
    """Plugins that keep state in their data directory but do not implement ``export_records``."""

    @property
    def records(self) -> int:
        return sum(count for (_plugin, kind), count in self.by_type.items() if kind != "meta")

    def describe(self) -> str:
        parts = [f"{plugin} {kind}: {n}" for (plugin, kind), n in sorted(self.by_type.items()) if kind != "meta"]
        return ", ".join(parts)


def export_lines(host: PluginHost, include_private: bool, summary: ExportSummary | None = None) -> Iterator[str]:
    broken = unexportable_plugins(host)
    if broken:
        raise PortableError(
            f"not exported: plugin(s) {'; '.join(broken)} failed, so their state would be missing from the export; "
            "fix them (ego doctor), or leave them out explicitly with --disable"
        )
    plugins = host.hooks.implementers("export_records")
    versions = {s.id: s.version for s in host.statuses() if s.id in plugins}
    yield _dumps({"format": FORMAT, "version": VERSION, "include_private": include_private, "plugins": versions})
    counts: dict[str, int] = {}
    for plugin_id in plugins:
        for record in host.hooks.export_records(plugin_id, include_private=include_private) or ():
            if not isinstance(record, Mapping) or not isinstance(record.get("type"), str):
                raise PortableError(f"plugin {plugin_id} exported a record without a string 'type'")
            line = dict(record)
            if not include_private:
                redacted = host.redaction.value(line)
                if summary is not None and redacted != line:
                    summary.masked += 1
                line = redacted
            line["plugin"] = plugin_id
            counts[plugin_id] = counts.get(plugin_id, 0) + 1
            if summary is not None:
                key = (plugin_id, str(record["type"]))
                summary.by_type[key] = summary.by_type.get(key, 0) + 1
            yield _dumps(line)
    yield _dumps({"format": FORMAT, "end": True, "records": counts})


def export_file(host: PluginHost, path: Path, *, include_private: bool) -> ExportSummary:
    """Write the export atomically (a temp file beside ``path``, then rename)."""
    path = path.expanduser()
    if path.is_dir():
        raise PortableError(f"{path}: is a directory; name the file to write, e.g. {path / 'ego-export.jsonl'}")
    if not path.parent.is_dir():
        raise PortableError(f"{path}: the directory {path.parent} does not exist")
    progress = Progress(f"export {path.name}")
    summary = ExportSummary()
    try:
        with open_atomically(path) as out:  # mode 0600
            for line in export_lines(host, include_private, summary):
                out.write(line + "\n")
                progress.step()
    except OSError as exc:
        raise PortableError(f"{path}: writing the export failed ({exc.strerror}); nothing was written") from None
    progress.done()
    summary.unexported = unexported_state(host)
    return summary


def read_export(lines: Iterable[str], source: str) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """Parse and check the structure of an export; raises PortableError naming the line."""
    header: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    grouped: dict[str, list[dict[str, Any]]] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        if end is not None:
            raise PortableError(f"{source}:{number}: text after the end line; the file was changed, not imported")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise PortableError(f"{source}:{number}: not valid JSON ({exc.msg})") from None
        if not isinstance(value, dict):
            raise PortableError(f"{source}:{number}: expected a JSON object")
        if header is None:
            if value.get("format") != FORMAT:
                raise PortableError(f'{source}: not an ego export (the first line has no "format": "{FORMAT}")')
            if value.get("version") != VERSION:
                raise PortableError(
                    f"{source}: export format version {value.get('version')!r}; this ego reads version {VERSION}"
                )
            header = value
            continue
        if value.get("end") is True and value.get("format") == FORMAT:
            end = value
            continue
        plugin = value.pop("plugin", None)
        if not isinstance(plugin, str) or not isinstance(value.get("type"), str):
            raise PortableError(f'{source}:{number}: a record needs a string "plugin" and "type"')
        grouped.setdefault(plugin, []).append(value)
    if header is None:
        raise PortableError(f"{source}: empty file, not an ego export")
    if end is None:
        raise PortableError(f"{source}: the file ends before its end line: it was cut short; nothing was imported")
    found = {plugin: len(records) for plugin, records in grouped.items()}
    if end.get("records") != found:
        raise PortableError(
            f"{source}: the end line counts {_counts(end.get('records'))} but the file holds {_counts(found)}; "
            "records are missing or were added, nothing was imported"
        )
    return header, grouped


def _counts(value: object) -> str:
    if not isinstance(value, Mapping):
        return repr(value)
    return ", ".join(f"{plugin}: {count}" for plugin, count in sorted(value.items())) or "no records"


@attrs.frozen
class ExportFile:
    """An export read from disk and checked for structure (not yet by the plugins)."""

    path: Path
    header: Mapping[str, Any]
    grouped: Mapping[str, list[dict[str, Any]]]


def read_export_file(path: Path) -> ExportFile:
    """Read and check the structure of an export file, without touching any store."""
    path = path.expanduser()
    try:
        with path.open(encoding="utf-8") as fh:
            header, grouped = read_export(fh, str(path))
    except IsADirectoryError:
        raise PortableError(f"{path}: is a directory, not an ego export") from None
    except OSError as exc:
        raise PortableError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise PortableError(f"{path}: not UTF-8 text, not an ego export") from None
    return ExportFile(path=path, header=header, grouped=grouped)


def import_file(host: PluginHost, path: Path | ExportFile) -> ImportSummary:
    """Import an export (a path, or a file :func:`read_export_file` already read) into the started host."""
    export = path if isinstance(path, ExportFile) else read_export_file(path)
    path, grouped = export.path, export.grouped
    importers = set(host.hooks.implementers("import_records"))
    missing = sorted(set(grouped) - importers)
    if missing:
        raise PortableError(
            f"{path}: records for plugin(s) {', '.join(missing)}, which are not enabled or cannot import; "
            "enable them (ego plugins) and try again"
        )
    problems: list[str] = []
    for plugin_id, records in sorted(grouped.items()):
        found = host.hooks.check_records(plugin_id, records=records)
        problems.extend(f"{plugin_id}: {problem}" for problem in found or ())
    if problems:
        shown = "; ".join(problems[:10]) + (f"; … {len(problems) - 10} more" if len(problems) > 10 else "")
        raise PortableError(f"{path}: nothing was imported: {shown}")
    added: dict[str, int] = {}
    for plugin_id, records in sorted(grouped.items()):
        count = host.hooks.import_records(plugin_id, records=records)
        added[plugin_id] = int(count or 0)
    data = {plugin: sum(1 for r in records if r.get("type") != "meta") for plugin, records in grouped.items()}
    return ImportSummary(added=added, records=data)
