"""The ``openclaw`` format of ``ego import --from``: an OpenClaw workspace's ``MEMORY.md`` and daily files
``memory/YYYY-MM-DD.md``, as memory records (the memory plugin's export schema).

The lines ego (or ego-mcp) wrote there, ``- 14:05 [daily] … (emotion: curious, intensity: 0.60) [id:mem_…]``, are
read back with their memory's id, time, category, emotion and intensity: a memory still in the store is not
added again, and one line in both a daily file and ``MEMORY.md`` is one memory. Everything else is notes: one
memory per bullet or paragraph, dated by the file name or a heading, at noon when no time is written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

from ego_core import (
    IMPORT_SOURCE,
    ImportFormat,
    ImportFormatError,
    ImportOptions,
    find_date,
    local_moment,
    note_entries,
    read_text,
    stable_id,
)
from ego_workspace_sync.render import CURATED_HEADER, CURATED_IMPORTANCE

MEMORY_PLUGIN = "memory"
ENTRY = re.compile(
    r"^- (?:(?P<day>\d{4}-\d{2}-\d{2}) )?(?P<time>\d{2}:\d{2}) \[(?P<category>[^\]\n]{1,40})\] (?P<content>.+?) "
    r"\(emotion: (?P<emotion>[^,()\n]{1,40}), intensity: (?P<intensity>\d+(?:\.\d+)?)\) "
    r"\[id:(?P<id>mem_[0-9a-f]{12})\]\s*$"
)
"""A line workspace_sync writes (``render.entry_line``); ego-mcp's workspace sync writes the same form."""
MARKER = re.compile(r"\s*\[id:mem_[0-9a-f]{12}\]\s*$")
CURATED_NOTE = CURATED_HEADER.strip().splitlines()[-1]
"""The one-line note under ``# MEMORY`` in a ``MEMORY.md`` ego started: not a memory."""
DAILY = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")
CURATED_NAMES = ("MEMORY.md", "memory.md")


def workspace_files(root: Path) -> tuple[Path | None, list[Path]]:
    """``MEMORY.md`` (or None) and the daily files of a workspace, oldest first."""
    if not root.is_dir():
        raise ImportFormatError(root, "not a directory: give the OpenClaw workspace directory")
    curated = next((root / name for name in CURATED_NAMES if (root / name).is_file()), None)
    folder = root / "memory"
    daily = sorted(p for p in folder.glob("*.md") if p.is_file() and DAILY.match(p.name)) if folder.is_dir() else []
    if curated is None and not daily:
        raise ImportFormatError(root, "not an OpenClaw workspace: no MEMORY.md and no memory/YYYY-MM-DD.md")
    return curated, daily


def _entry_record(
    found: re.Match[str], day: date | None, options: ImportOptions, *, where: str, line: int, importance: int
) -> dict[str, Any]:
    written_day = found.group("day")
    try:
        when = date.fromisoformat(written_day) if written_day else day
        at = time.fromisoformat(found.group("time"))
    except ValueError:
        raise ImportFormatError(where, "an ego entry line with a date or time that does not exist", line) from None
    if when is None:
        raise ImportFormatError(where, "an ego entry line without a date, in a file not named by its date", line)
    return {
        "type": "memory",
        "id": found.group("id"),
        "content": found.group("content"),
        "timestamp": local_moment(when, at, options.tz).isoformat(),
        "category": found.group("category"),
        "emotional_trace": {"primary": found.group("emotion"), "intensity": float(found.group("intensity"))},
        "importance": importance,
        "is_private": options.private,
        IMPORT_SOURCE: f"{where}:{line}",
    }


def file_records(
    text: str, where: str, day: date | None, options: ImportOptions, *, importance: int
) -> list[dict[str, Any]]:
    """The memory records of one workspace file: ego's entry lines, then the notes around them."""
    records: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        found = ENTRY.match(line.rstrip())
        if found is not None:
            records.append(_entry_record(found, day, options, where=where, line=number, importance=importance))
    skip: Callable[[str], bool] = lambda line: ENTRY.match(line) is not None or line == CURATED_NOTE  # noqa: E731
    seen: dict[str, int] = {}
    for entry in note_entries(text, where, day=day, skip=skip):
        content = MARKER.sub("", entry.text).strip()
        if not content:
            continue
        occurrence = seen.get(content, 0)
        seen[content] = occurrence + 1
        when = entry.day or day
        assert when is not None
        records.append(
            {
                "type": "memory",
                "id": stable_id("mem_", "openclaw", where, content, str(occurrence)),
                "content": content,
                "timestamp": local_moment(when, entry.at or options.default_time, options.tz).isoformat(),
                "importance": importance,
                "is_private": options.private or entry.private,
                IMPORT_SOURCE: f"{where}:{entry.line}",
            }
        )
    return records


def read_openclaw(path: Path, options: ImportOptions) -> dict[str, list[dict[str, Any]]]:
    curated, daily = workspace_files(path)
    by_id: dict[str, dict[str, Any]] = {}
    ordered: list[dict[str, Any]] = []
    sources: list[tuple[Path, int]] = [(file, 3) for file in daily]
    if curated is not None:
        sources.append((curated, CURATED_IMPORTANCE))
    for file, importance in sources:
        where = file.relative_to(path).as_posix()
        text = read_text(file, where)
        day: date | None
        if file is curated:
            day = datetime.fromtimestamp(file.stat().st_mtime, options.tz).date()
        else:
            try:
                day = find_date(file.name)
            except ValueError as exc:
                raise ImportFormatError(where, f"the file name names a date that does not exist: {exc}") from None
        for record in file_records(text, where, day, options, importance=importance):
            held = by_id.get(record["id"])
            if held is None:
                by_id[record["id"]] = record
                ordered.append(record)
            else:  # one memory in a daily file and MEMORY.md: curated
                held["importance"] = max(held["importance"], record["importance"])
        options.progress(1)
    meta = {"type": "meta", "record_version": 1, "duplicate_guard": True}
    return {MEMORY_PLUGIN: [meta, *ordered]}


def openclaw_format() -> ImportFormat:
    return ImportFormat(
        name="openclaw",
        description="an OpenClaw workspace: MEMORY.md and memory/YYYY-MM-DD.md (the lines ego wrote are "
        "recognised and never come back as duplicates)",
        read=read_openclaw,
    )
