"""The memory plugin's readers for ``ego import --from``: ``markdown`` (a folder or file of notes) and its part of
``ego-mcp`` (the memories and episodes in an ego-mcp 1.x data directory's Chroma store).

Both give memory records in the plugin's export schema (``ego_memory.exchange.portable``) with ids derived from the
source, and a ``meta`` record asking for the duplicate guard (``duplicate_guard``): a memory that repeats one
already stored (or one imported before it in the same run) is not added. docs/importing.md says what maps to what.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, tzinfo
from pathlib import Path
from typing import Any

from ego_core import (
    EMOTIONS,
    IMPORT_SOURCE,
    ImportFormat,
    ImportFormatError,
    ImportOptions,
    find_date,
    local_moment,
    markdown_files,
    note_entries,
    read_text,
    stable_id,
)
from ego_memory.exchange.portable import MEMORY_ID, RECORD_VERSION
from ego_memory.record.emotions import CATEGORIES
from ego_memory.record.limits import MAX_LINK_NOTE_CHARS, MAX_TAG_CHARS, MAX_TAGS

PLUGIN = "memory"

EGO_MCP_EMOTIONS: Mapping[str, str] = {
    "calm": "contentment",
    "content": "contentment",
    "fulfilled": "contentment",
    "peaceful": "contentment",
    "contemplative": "curious",
    "thoughtful": "curious",
    "grateful": "moved",
    "touched": "moved",
    "love": "moved",
    "warm": "happy",
    "hopeful": "happy",
    "vulnerable": "anxious",
    "concerned": "anxious",
    "afraid": "anxious",
    "lonely": "sad",
    "ashamed": "sad",
    "bored": "melancholy",
    "angry": "frustrated",
}
"""ego-mcp's 18 emotions beyond ego's 12, each to the nearest of ego's (the memory keeps its own valence and
arousal numbers)."""


def meta_record() -> dict[str, Any]:
    return {"type": "meta", "record_version": RECORD_VERSION, "duplicate_guard": True}


def _tags(values: Sequence[str]) -> list[str]:
    kept = [tag for tag in dict.fromkeys(values) if tag and len(tag) <= MAX_TAG_CHARS]
    return kept[:MAX_TAGS]


# --------------------------------------------------------------------------------------------------
# markdown


def read_markdown(path: Path, options: ImportOptions, *, max_content_chars: int) -> dict[str, list[dict[str, Any]]]:
    """One memory per bullet or paragraph of every ``.md`` file under ``path`` (or of ``path`` itself)."""
    root = path if path.is_dir() else path.parent
    files = markdown_files(path)
    if not files:
        raise ImportFormatError(path, "no Markdown (.md) file to read")
    records: list[dict[str, Any]] = [meta_record()]
    for file in files:
        shown = file.relative_to(root).as_posix()
        records.extend(markdown_records(read_text(file, shown), shown, options, max_content_chars, file))
        options.progress(1)
    return {PLUGIN: records}


def file_day(name: str, where: str) -> date | None:
    """The date in a file's name (``2026-12-03.md``, ``2026年12月3日.md``), or None."""
    try:
        return find_date(name)
    except ValueError as exc:
        raise ImportFormatError(where, f"the file name names a date that does not exist: {exc}") from None


def markdown_records(
    text: str,
    shown: str,
    options: ImportOptions,
    max_content_chars: int,
    file: Path | None = None,
    *,
    importance: int = 3,
) -> list[dict[str, Any]]:
    """Memory records of one Markdown text (``shown``: its path relative to the source, part of each id)."""
    day = file_day(Path(shown).name, shown)
    if day is None and file is not None:  # no date anywhere: the day the file was last changed
        day = datetime.fromtimestamp(file.stat().st_mtime, options.tz).date()
    records: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for entry in note_entries(text, shown, day=day):
        if len(entry.text) > max_content_chars:
            raise ImportFormatError(
                shown,
                f"an entry of {len(entry.text)} characters; a memory holds at most {max_content_chars} "
                "(split it, or raise [plugins.memory] max_content_chars)",
                entry.line,
            )
        occurrence = seen.get(entry.text, 0)
        seen[entry.text] = occurrence + 1
        moment = local_moment(entry.day or date.today(), entry.at or options.default_time, options.tz)
        tags = list(entry.hashtags)
        records.append(
            {
                "type": "memory",
                "id": stable_id("mem_", "markdown", shown, entry.text, str(occurrence)),
                "content": entry.text,
                "timestamp": moment.isoformat(),
                "importance": importance,
                "tags": _tags(tags),
                "is_private": options.private or entry.private,
                IMPORT_SOURCE: f"{shown}:{entry.line}",
            }
        )
    return records


def markdown_format(max_content_chars: int) -> ImportFormat:
    return ImportFormat(
        name="markdown",
        description="a folder or file of Markdown notes: one memory per bullet or paragraph, dated by headings "
        "or file names",
        read=lambda path, options: read_markdown(path, options, max_content_chars=max_content_chars),
    )


# --------------------------------------------------------------------------------------------------
# ego-mcp: the Chroma store (read as SQLite, read-only)

EGO_MCP_MARKERS = ("chroma", "notions.json", "self_model.json", "desire_state.json", "relationships")


def ego_mcp_dir(path: Path) -> Path:
    """``path`` when it looks like an ego-mcp data directory; else :class:`ImportFormatError`."""
    if not path.is_dir():
        raise ImportFormatError(path, "not a directory: give the ego-mcp data directory (EGO_MCP_DATA_DIR)")
    if not any((path / name).exists() for name in EGO_MCP_MARKERS):
        raise ImportFormatError(
            path, "not an ego-mcp data directory: none of chroma/, notions.json, self_model.json is there"
        )
    return path


def chroma_rows(database: Path, collection: str) -> list[tuple[str, dict[str, Any]]]:
    """(id, metadata with ``chroma:document``) of every record of a Chroma collection, oldest first; [] when the
    collection does not exist."""
    try:
        db = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise ImportFormatError(database, f"cannot be opened as SQLite ({exc})") from None
    try:
        found = db.execute("SELECT id FROM collections WHERE name = ?", (collection,)).fetchone()
        if found is None:
            return []
        rows = db.execute(
            "SELECT e.id, e.embedding_id, m.key, m.string_value, m.int_value, m.float_value, m.bool_value "
            "FROM segments s JOIN embeddings e ON e.segment_id = s.id "
            "LEFT JOIN embedding_metadata m ON m.id = e.id "
            "WHERE s.collection = ? AND s.scope = 'METADATA' ORDER BY e.id",
            (found[0],),
        ).fetchall()
    except sqlite3.Error as exc:
        raise ImportFormatError(database, f"not a Chroma store this version can read ({exc})") from None
    finally:
        db.close()
    records: dict[int, tuple[str, dict[str, Any]]] = {}
    for rid, ident, key, text, integer, number, flag in rows:
        _ident, metadata = records.setdefault(rid, (ident, {}))
        if key is not None:
            value: Any = text if text is not None else integer if integer is not None else number
            if flag is not None:
                value = bool(flag)
            metadata[key] = value
    return list(records.values())


def _moment(value: Any, tz: tzinfo) -> datetime:
    moment = datetime.fromisoformat(str(value))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    return moment.astimezone(UTC)


def _optional_moment(value: Any, tz: tzinfo) -> str | None:
    if value in (None, ""):
        return None
    return _moment(value, tz).isoformat()


def _emotion(label: Any) -> str:
    name = str(label or "neutral").strip().lower()
    return name if name in EMOTIONS else EGO_MCP_EMOTIONS.get(name, "neutral")


def _number(metadata: Mapping[str, Any], key: str, default: float) -> float:
    value = metadata.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key} {value!r} is not a number")
    return float(value)


def memory_id_of(ident: str) -> str:
    """The ego id of an ego-mcp memory id: the same when it has ego's form (``mem_`` + 12 hex digits)."""
    return ident if MEMORY_ID.match(ident) else stable_id("mem_", "ego-mcp", ident)


def ego_mcp_memory(ident: str, metadata: Mapping[str, Any], options: ImportOptions) -> dict[str, Any]:
    tz = options.tz
    links = []
    raw_links = metadata.get("linked_ids") or "[]"
    for link in json.loads(raw_links) if isinstance(raw_links, str) else []:
        if isinstance(link, Mapping) and isinstance(link.get("target_id"), str) and link["target_id"]:
            kind = link.get("link_type", "related")
            links.append(
                {
                    "target_id": memory_id_of(link["target_id"]),
                    "link_type": kind if kind in ("similar", "caused_by", "leads_to", "related") else "related",
                    "confidence": float(link.get("confidence", 0.5)),
                    "note": str(link.get("note", ""))[:MAX_LINK_NOTE_CHARS],
                }
            )
    body: dict[str, Any] = {}
    raw_body = metadata.get("body_state") or ""
    if isinstance(raw_body, str) and raw_body:
        parsed = json.loads(raw_body)
        if isinstance(parsed, Mapping):
            body = {str(k): v for k, v in parsed.items() if isinstance(v, str | int | float | bool)}
    secondary = [_emotion(s) for s in str(metadata.get("secondary") or "").split(",") if s.strip()]
    category = str(metadata.get("category") or "daily")
    tags = [t.strip() for t in str(metadata.get("tags") or "").split(",") if t.strip()]
    content = metadata.get("chroma:document")
    if not isinstance(content, str) or not content.strip():
        raise ValueError("no text")
    return {
        "type": "memory",
        "id": memory_id_of(ident),
        "content": content,
        "timestamp": _moment(metadata.get("timestamp"), tz).isoformat(),
        "emotional_trace": {
            "primary": _emotion(metadata.get("emotion")),
            "secondary": list(dict.fromkeys(secondary))[:12],
            "intensity": _number(metadata, "intensity", 0.5),
            "valence": _number(metadata, "valence", 0.0),
            "arousal": _number(metadata, "arousal", 0.5),
            "body_state": body,
        },
        "importance": int(_number(metadata, "importance", 3)),
        "category": category if category in CATEGORIES else "daily",
        "tags": _tags(tags),
        "links": links,
        "is_private": options.private or metadata.get("is_private") in (True, 1, "1", "true", "True"),
        "access_count": max(0, int(_number(metadata, "access_count", 0))),
        "last_accessed": _optional_moment(metadata.get("last_accessed"), tz),
        "anticipated": _optional_moment(metadata.get("anticipated_at"), tz),
        IMPORT_SOURCE: f"chroma/chroma.sqlite3: memory {ident}",
    }


def ego_mcp_episode(ident: str, metadata: Mapping[str, Any], options: ImportOptions) -> dict[str, Any]:
    members = json.loads(str(metadata.get("memory_ids") or "[]"))
    if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
        raise ValueError("memory_ids is not a list of ids")
    start = _moment(metadata.get("start_time"), options.tz)
    end = _moment(metadata.get("end_time") or metadata.get("start_time"), options.tz)
    return {
        "type": "episode",
        "id": ident if re.match(r"^ep_[0-9a-f]{12}$", ident) else stable_id("ep_", "ego-mcp", ident),
        "summary": str(metadata.get("chroma:document") or ""),
        "memory_ids": [memory_id_of(m) for m in members],
        "start": start.isoformat(),
        "end": end.isoformat(),
        "importance": int(_number(metadata, "importance", 3)),
        "created": end.isoformat(),
        IMPORT_SOURCE: f"chroma/chroma.sqlite3: episode {ident}",
    }


def read_ego_mcp(path: Path, options: ImportOptions) -> dict[str, list[dict[str, Any]]]:
    """The memories (collection ``ego_memories``) and episodes (``ego_episodes``) of an ego-mcp data directory."""
    root = ego_mcp_dir(path)
    database = root / "chroma" / "chroma.sqlite3"
    if not database.is_file():
        return {}
    records: list[dict[str, Any]] = [meta_record()]
    for ident, metadata in chroma_rows(database, "ego_memories"):
        try:
            records.append(ego_mcp_memory(ident, metadata, options))
        except (TypeError, ValueError, json.JSONDecodeError) as exc:
            raise ImportFormatError(database, f"memory {ident}: {exc}") from None
        options.progress(1)
    memories = {record["id"] for record in records if record["type"] == "memory"}
    for ident, metadata in chroma_rows(database, "ego_episodes"):
        try:
            episode = ego_mcp_episode(ident, metadata, options)
        except (TypeError, ValueError, json.JSONDecodeError) as exc:
            raise ImportFormatError(database, f"episode {ident}: {exc}") from None
        episode["memory_ids"] = [m for m in episode["memory_ids"] if m in memories]
        if episode["memory_ids"] and episode["summary"].strip():
            records.append(episode)
    return {PLUGIN: records}


def ego_mcp_format() -> ImportFormat:
    return ImportFormat(
        name="ego-mcp",
        description="an ego-mcp 1.x data directory (memory: memories with emotions, links and times; episodes)",
        read=read_ego_mcp,
    )
