"""``ego import --from FORMAT PATH``: the core's side. Collects the plugins' readers (``register_import_formats``),
reads a source with every reader of the format, merges their records per plugin, and hands them to the same
check-then-import path as ``ego import FILE`` (:func:`ego_core.mcp.portable.import_file`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ego_core.importing import (
    FORMAT_NAME,
    IMPORT_SOURCE,
    Contribution,
    ImportFormat,
    ImportFormatError,
    ImportOptions,
    merge_records,
    sample_line,
    spread,
)
from ego_core.kernel.host import PluginHost
from ego_core.mcp.portable import ExportFile, ImportSummary, PortableError, Progress, import_file

SAMPLE = 5
"""Records per plugin a dry run shows."""
_RECORD = re.compile(r"\brecord (\d+)\b")


def collect_formats(host: PluginHost) -> dict[str, list[Contribution]]:
    """Every active plugin's import formats by name (the contributors in plugin order). A plugin that registers
    something that is not an :class:`ImportFormat`, or a bad name, fails its registration (recorded)."""
    formats: dict[str, list[Contribution]] = {}
    for plugin_id in host.plugin_ids():
        if not host.is_active(plugin_id):
            continue

        def add(value: ImportFormat, _plugin: str = plugin_id) -> None:
            if not isinstance(value, ImportFormat):
                raise TypeError(f"register_import_formats expects ego_core.ImportFormat, got {type(value).__name__}")
            if not FORMAT_NAME.match(value.name) or not callable(value.read):
                raise ValueError(f"import format {value.name!r}: a name of a-z, 0-9, - and _, and a callable read")
            formats.setdefault(value.name, []).append(Contribution(_plugin, value))

        host.hooks.register_import_formats(plugin_id, register=add)
    return formats


def describe_formats(formats: Mapping[str, Sequence[Contribution]]) -> str:
    if not formats:
        return "none (no enabled plugin reads any)"
    return ", ".join(sorted(formats))


@attrs.frozen
class ForeignSource:
    """A source read by every reader of its format: records per plugin, not yet checked by the plugins."""

    format: str
    path: Path
    grouped: Mapping[str, list[dict[str, Any]]]

    def counts(self) -> dict[tuple[str, str], int]:
        found: dict[tuple[str, str], int] = {}
        for plugin_id, records in self.grouped.items():
            for record in records:
                kind = str(record.get("type"))
                if kind != "meta":
                    found[(plugin_id, kind)] = found.get((plugin_id, kind), 0) + 1
        return found


def read_source(host: PluginHost, name: str, path: Path, *, private: bool) -> ForeignSource:
    """Read ``path`` as format ``name`` with every reader of it; raises :class:`ImportFormatError` (bad input) or
    :class:`PortableError` (no such format, nothing to read)."""
    formats = collect_formats(host)
    if name not in formats:
        raise PortableError(f"unknown import format {name!r}; the enabled plugins read: {describe_formats(formats)}")
    path = path.expanduser()
    if not path.exists():
        raise PortableError(f"{path}: no such file or directory")
    progress = Progress(f"read {path.name or path}", every=10)
    options = ImportOptions(private=private, tz=host.settings.tz, progress=progress.step)
    parts = []
    for contribution in formats[name]:
        records = contribution.format.read(path, options)
        if not isinstance(records, Mapping):
            raise PortableError(
                f"plugin {contribution.plugin}'s {name} reader returned {type(records).__name__}, "
                "expected records per plugin id"
            )
        parts.append(records)
    progress.done()
    grouped = merge_records(parts)
    if not any(record.get("type") != "meta" for records in grouped.values() for record in records):
        raise PortableError(f"{path}: nothing to import: no entry found for the format {name}")
    return ForeignSource(format=name, path=path, grouped=grouped)


def check_source(host: PluginHost, source: ForeignSource) -> None:
    """Every plugin's ``check_records`` on the source's records; raises :class:`PortableError` naming the file and
    line of each problem (a record's ``source``), nothing written."""
    importers = set(host.hooks.implementers("import_records"))
    missing = sorted(set(source.grouped) - importers)
    if missing:
        raise PortableError(
            f"{source.path}: the {source.format} reader gives records for plugin(s) {', '.join(missing)}, which are "
            "not enabled or cannot import; enable them (ego plugins) and try again"
        )
    problems: list[str] = []
    for plugin_id, records in sorted(source.grouped.items()):
        for problem in host.hooks.check_records(plugin_id, records=records) or ():
            problems.append(_placed(problem, records))
    if problems:
        shown = "; ".join(problems[:10]) + (f"; … {len(problems) - 10} more" if len(problems) > 10 else "")
        raise PortableError(f"nothing was imported: {shown}")


def _placed(problem: str, records: Sequence[Mapping[str, Any]]) -> str:
    """A plugin's problem with ``record N`` put at the source place that record came from."""
    found = _RECORD.search(problem)
    if found is None:
        return problem
    index = int(found.group(1)) - 1
    if 0 <= index < len(records) and isinstance(records[index].get(IMPORT_SOURCE), str):
        return f"{records[index][IMPORT_SOURCE]}: {problem}"
    return problem


def import_source(host: PluginHost, source: ForeignSource) -> ImportSummary:
    """Check, then import (the same path as ``ego import FILE``)."""
    check_source(host, source)
    return import_file(host, ExportFile(path=source.path, header={}, grouped=source.grouped))


def dry_run_lines(source: ForeignSource) -> list[str]:
    """What ``--dry-run`` prints: the counts per plugin and type, then a sample of each plugin's records."""
    lines = [f"would import from {source.path} ({source.format}), nothing written:"]
    for (plugin_id, kind), count in sorted(source.counts().items()):
        lines.append(f"  {plugin_id}: {count} {kind} record{'' if count == 1 else 's'}")
    for plugin_id, records in sorted(source.grouped.items()):
        data = [record for record in records if record.get("type") != "meta"]
        if not data:
            continue
        lines.append(f"sample ({plugin_id}):")
        for record in spread(data, SAMPLE):
            place = f" ({record[IMPORT_SOURCE]})" if isinstance(record.get(IMPORT_SOURCE), str) else ""
            lines.append(f"  {sample_line(record)}{place}")
    return lines


__all__ = [
    "ForeignSource",
    "ImportFormatError",
    "check_source",
    "collect_formats",
    "dry_run_lines",
    "import_source",
    "read_source",
]
