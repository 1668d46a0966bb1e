"""``ego import --from FORMAT PATH``: bringing a past kept elsewhere (an OpenClaw workspace, a folder of Markdown
notes, an ego-mcp data directory) into ego.

Plugins contribute readers through the ``import_formats`` hook (``register(ImportFormat(...))``); several plugins
may contribute to one format, each reading only its own part. A reader turns the source into records per plugin
id, in that plugin's own export-record schema (what ``export_records`` writes), each with an id derived from the
source, so that importing the same source twice adds nothing. The core merges the readers' records and runs them
through the same path as ``ego import FILE``: every plugin's ``check_records`` first, nothing written unless all
of them pass, then ``import_records``.

This module also holds the helpers readers share: reading text files with errors that name file and line, dates
in file names and headings (``2026-12-03``, ``2026/12/3``, ``2026年12月3日``), splitting Markdown notes into
entries (one per bullet or paragraph), and stable ids.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, date, datetime, time, tzinfo
from pathlib import Path
from typing import Any

import attrs

IMPORT_SOURCE = "source"
"""A record may say where it came from (``"memory/2026-12-03.md:14"``): a problem ``check_records`` finds with
it is reported at that place. Plugins ignore the key."""

DEFAULT_TIME = time(12, 0)
"""The time of day given to an entry whose source has a date but no time (noon, in the configured time zone)."""


class ImportFormatError(ValueError):
    """The source cannot be imported; the message names the file (and line) and what is wrong. Nothing was
    written."""

    def __init__(self, where: str | Path, problem: str, line: int | None = None) -> None:
        self.where = str(where)
        self.line = line
        self.problem = problem
        place = f"{self.where}:{line}" if line is not None else self.where
        super().__init__(f"{place}: {problem}")


def _quiet(_count: int) -> None:
    return None


@attrs.frozen
class ImportOptions:
    """What a reader is told: ``private`` (``--private``: every record private), the time zone of dates without
    one (``tz``, the configured ``timezone``), the time of day of a dated entry without a time (``default_time``)
    and ``progress`` (call it with the number of files read, for the progress line)."""

    private: bool = False
    tz: tzinfo = UTC
    default_time: time = DEFAULT_TIME
    progress: Callable[[int], None] = _quiet


Records = Mapping[str, Sequence[Mapping[str, Any]]]
"""Records per plugin id, each plugin's in its own export-record schema."""

Reader = Callable[[Path, ImportOptions], Records]


@attrs.frozen
class ImportFormat:
    """A format ``ego import --from NAME PATH`` reads, or this plugin's part of it.

    ``read(path, options)`` returns records per plugin id (normally only the registering plugin's own, but a
    plugin may read for another whose schema it knows, as workspace_sync reads memories), each record with a
    stable id derived from the source. It raises :class:`ImportFormatError` naming the file and line of bad input;
    it never writes anything.
    """

    name: str
    description: str
    read: Reader


FORMAT_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


# --------------------------------------------------------------------------------------------------
# Helpers for readers


def stable_id(prefix: str, *parts: str) -> str:
    """``prefix`` + 12 hex digits of a hash of ``parts``: the same source entry always gets the same id."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return f"{prefix}{digest[:12]}"


def read_text(path: Path, shown: str | None = None) -> str:
    """The UTF-8 text of ``path`` (a byte-order mark dropped); :class:`ImportFormatError` naming the file, and the
    line of the first bad byte, when it is not UTF-8 text."""
    name = shown or str(path)
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise ImportFormatError(name, "is a directory, not a file") from None
    except OSError as exc:
        raise ImportFormatError(name, f"cannot be read ({exc.strerror})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ImportFormatError(name, f"not UTF-8 text (byte 0x{data[exc.start]:02x})", line) from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise ImportFormatError(name, "a NUL character: a binary file, not text", line)
    return text.removeprefix("\ufeff")


_DATE_PATTERNS = (
    re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)"),
    re.compile(r"(?<!\d)(\d{4})/(\d{1,2})/(\d{1,2})(?!\d)"),
    re.compile(r"(?<!\d)(\d{4})\.(\d{1,2})\.(\d{1,2})(?!\d)"),
    re.compile(r"(?<!\d)(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日"),
)
_TIME = re.compile(r"^(\d{1,2}):(\d{2})(?::\d{2})?(?!\d)")


class DateError(ValueError):
    """A text names a date that does not exist (``2026-02-30``)."""


def find_date(text: str) -> date | None:
    """The first date written in ``text`` (full-width digits read as digits), or ``None``; :class:`DateError`
    when it names a day that does not exist."""
    folded = unicodedata.normalize("NFKC", text)
    found: list[tuple[int, re.Match[str]]] = []
    for pattern in _DATE_PATTERNS:
        match = pattern.search(folded)
        if match is not None:
            found.append((match.start(), match))
    if not found:
        return None
    match = min(found, key=lambda item: item[0])[1]
    year, month, day = (int(group) for group in match.groups())
    try:
        return date(year, month, day)
    except ValueError:
        raise DateError(f"{match.group(0)} is not a date") from None


def local_moment(day: date, at: time, tz: tzinfo) -> datetime:
    """``day`` at ``at`` in ``tz``, as an aware UTC time."""
    return datetime.combine(day, at, tzinfo=tz).astimezone(UTC)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


@attrs.frozen
class NoteEntry:
    """One memory-sized piece of a Markdown file: a bullet (with its continuation lines) or a paragraph."""

    text: str
    line: int
    """The line (1-based) it starts on."""
    day: date | None
    """The date of the nearest heading above it that has one, else the file's date."""
    at: time | None = None
    """A time of day written at its start (``14:05 …``), else ``None``."""
    private: bool = False
    """Marked ``#private`` / ``#非公開`` (the mark is taken out of ``text``), or in a file whose front matter says
    ``private: true``."""
    hashtags: tuple[str, ...] = ()
    """Its other ``#tags``."""


_BULLET = re.compile(r"^\s*(?:[-*+](?=\s)|[・•●◦▪]|\d{1,3}[.)](?=\s))\s*(?:\[[ xX]\]\s+)?")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_HASHTAG = re.compile(r"(?<![\w#&/])#([^\s#.,;:!?、。，．！？「」()（）\[\]]+)")
PRIVATE_TAGS = frozenset({"private", "非公開", "秘密", "プライベート"})


def hashtags(text: str) -> tuple[str, ...]:
    """The ``#tags`` in ``text`` (Japanese ones too), each once, in order."""
    return tuple(dict.fromkeys(tag for tag in _HASHTAG.findall(text)))


def _front_matter(lines: list[str], where: str) -> tuple[int, bool]:
    """Lines a YAML front matter takes at the top (0 without one) and whether it says ``private: true``."""
    if not lines or lines[0].strip() != "---":
        return 0, False
    for number, line in enumerate(lines[1:], start=1):
        if line.strip() in ("---", "..."):
            private = any(
                re.match(r"^\s*private\s*:\s*(true|yes|on)\s*$", item, re.IGNORECASE) for item in lines[1:number]
            )
            return number + 1, private
    raise ImportFormatError(where, "the front matter opened by --- is never closed", 1)


def note_entries(
    text: str, where: str, *, day: date | None = None, skip: Callable[[str], bool] | None = None
) -> list[NoteEntry]:
    """Split Markdown notes into entries: one per bullet (with its indented continuation lines) or paragraph.

    Headings are not entries; a heading with a date (``## 2026-12-03``, ``# 2026年12月3日（木）``) dates the entries
    below it until the next heading of the same or a higher level; other entries take ``day`` (the file's date).
    A bullet's leading ``HH:MM`` is its time. Code blocks, horizontal rules, HTML comments and tables are not
    entries. ``skip(line)`` leaves out lines another reader handles. Raises :class:`ImportFormatError` (``where``
    and the line) for a heading that names a date that does not exist or an unclosed front matter.
    """
    lines = text.splitlines()
    start, private_file = _front_matter(lines, where)
    entries: list[NoteEntry] = []
    dated: list[tuple[int, date | None]] = []  # (heading level, its date) of the open headings
    current: list[str] = []
    current_line = 0
    in_fence = False
    in_comment = False

    def heading_day() -> date | None:
        for _level, found in reversed(dated):
            if found is not None:
                return found
        return day

    def flush() -> None:
        nonlocal current
        if current:
            entries.append(_entry(current, current_line, heading_day(), private_file))
        current = []

    for number, raw in enumerate(lines[start:], start=start + 1):
        line = raw.rstrip()
        if in_comment:
            if "-->" in line:
                in_comment = False
            continue
        if _FENCE.match(line):
            flush()
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        stripped = line.strip()
        if stripped.startswith("<!--"):
            flush()
            in_comment = "-->" not in stripped
            continue
        if skip is not None and stripped and skip(stripped):
            flush()
            continue
        heading = _HEADING.match(line)
        if heading is not None:
            flush()
            level = len(heading.group(1))
            try:
                found = find_date(heading.group(2))
            except DateError as exc:
                raise ImportFormatError(where, f"the heading names a date that does not exist: {exc}", number) from None
            while dated and dated[-1][0] >= level:
                dated.pop()
            dated.append((level, found))
            continue
        if not stripped or _RULE.match(line) or stripped.startswith("|"):
            flush()
            continue
        if _BULLET.match(line) and not (current and _continues(line, current[0])):
            flush()
            current, current_line = [line], number
            continue
        if current:
            current.append(line)
        else:
            current, current_line = [line], number
    flush()
    return [entry for entry in entries if entry.text]


def _continues(line: str, first: str) -> bool:
    """Whether a bullet line is nested under the entry's first line (a sub-bullet stays with its parent)."""
    indent = len(line) - len(line.lstrip())
    first_indent = len(first) - len(first.lstrip())
    return indent > first_indent + 1


def _entry(lines: list[str], number: int, day: date | None, private_file: bool) -> NoteEntry:
    first = _BULLET.sub("", lines[0], count=1).strip()
    rest = [_BULLET.sub("", line, count=1).strip() for line in lines[1:]]
    text = " ".join(part for part in [first, *rest] if part).strip()
    at: time | None = None
    clock = _TIME.match(unicodedata.normalize("NFKC", text[:8]))
    if clock is not None and int(clock.group(1)) < 24 and int(clock.group(2)) < 60:
        at = time(int(clock.group(1)), int(clock.group(2)))
        text = text[len(clock.group(0)) :].lstrip(" \u3000-–:：")
    tags = hashtags(text)
    marked = [tag for tag in tags if tag.casefold() in PRIVATE_TAGS]
    for tag in marked:  # a mark of privacy is the entry's state, not its words
        text = re.sub(rf"\s*(?<![\w#&/])#{re.escape(tag)}(?![^\s#.,;:!?、。，．！？「」()（）\[\]])", "", text).strip()
    kept = tuple(tag for tag in tags if tag not in marked)
    return NoteEntry(text=text, line=number, day=day, at=at, private=private_file or bool(marked), hashtags=kept)


def read_json(path: Path, shown: str | None = None) -> Any:
    """The JSON of ``path`` (read as :func:`read_text`); :class:`ImportFormatError` naming the file and the line
    when it is not JSON."""
    name = shown or str(path)
    try:
        return json.loads(read_text(path, name))
    except json.JSONDecodeError as exc:
        raise ImportFormatError(name, f"not valid JSON ({exc.msg})", exc.lineno) from None


def source_moment(value: Any, tz: tzinfo, fallback: datetime) -> datetime:
    """An ISO time a source wrote (one without an offset is local to ``tz``) in UTC; ``fallback`` when it wrote
    none. A malformed time raises ``ValueError`` for the reader to name its file and line."""
    if not isinstance(value, str) or not value.strip():
        return fallback
    moment = datetime.fromisoformat(value)
    return (moment if moment.tzinfo else moment.replace(tzinfo=tz)).astimezone(UTC)


def markdown_files(root: Path, pattern: str = "**/*.md") -> list[Path]:
    """The Markdown files under ``root`` (itself when it is a file), in a stable order; hidden ones left out."""
    if root.is_file():
        return [root]
    found = [
        path
        for path in root.glob(pattern)
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(root).parts)
    ]
    return sorted(found, key=lambda path: path.relative_to(root).as_posix())


# --------------------------------------------------------------------------------------------------
# The core's side: collecting the readers, reading a source


@attrs.frozen
class Contribution:
    plugin: str
    format: ImportFormat


def merge_records(parts: Iterable[Records]) -> dict[str, list[dict[str, Any]]]:
    """Records of several readers, per plugin id, in order."""
    merged: dict[str, list[dict[str, Any]]] = {}
    for part in parts:
        for plugin_id, records in part.items():
            merged.setdefault(plugin_id, []).extend(dict(record) for record in records)
    return merged


def sample_line(record: Mapping[str, Any], width: int = 72) -> str:
    """One line describing a record for ``--dry-run``: its date, whether private, and its text."""
    moment = next((str(record[k]) for k in ("timestamp", "created", "at", "updated") if record.get(k)), "")
    text = next((str(record[k]) for k in ("content", "label", "text", "name", "field", "summary") if record.get(k)), "")
    text = " ".join(text.split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    private = " (private)" if record.get("is_private") or record.get("private") else ""
    stamp = f"[{moment[:16]}] " if moment else ""
    return f"{record.get('type', '?')}: {stamp}{text}{private}"


def spread(items: Sequence[Any], count: int) -> Iterator[Any]:
    """Up to ``count`` items spread over ``items`` (first and last included)."""
    if len(items) <= count:
        yield from items
        return
    step = (len(items) - 1) / (count - 1) if count > 1 else 0
    for index in range(count):
        yield items[round(index * step)]
