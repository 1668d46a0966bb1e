"""The notions plugin's part of ``ego import --from ego-mcp``: ``notions.json`` of an ego-mcp 1.x data directory,
as ``notion`` records (``ego_notions.portable``). A ``file_path`` meta field has no counterpart and is left out;
everything else maps one to one (docs/importing.md)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ego_core import (
    IMPORT_SOURCE,
    ImportFormat,
    ImportFormatError,
    ImportOptions,
    read_json,
    source_moment,
    stable_id,
)
from ego_notions.model import META_TYPES

PLUGIN = "notions"
NOTION_ID = re.compile(r"^notion_[0-9a-f]{12}$")
MEMORY_ID = re.compile(r"^mem_[0-9a-f]{12}$")


def _unit(value: Any, low: float, default: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return default
    return max(low, min(1.0, float(value)))


def notion_id_of(ident: str) -> str:
    return ident if NOTION_ID.match(ident) else stable_id("notion_", "ego-mcp", ident)


def memory_id_of(ident: str) -> str:
    return ident if MEMORY_ID.match(ident) else stable_id("mem_", "ego-mcp", ident)


def notion_record(key: str, raw: Mapping[str, Any], options: ImportOptions, fallback: datetime) -> dict[str, Any]:
    ident = str(raw.get("id") or key)
    created = source_moment(raw.get("created"), options.tz, fallback)
    reinforced = source_moment(raw.get("last_reinforced"), options.tz, created)
    meta = {
        str(name): dict(field)
        for name, field in (raw.get("meta_fields") or {}).items()
        if isinstance(field, Mapping) and field.get("type") in META_TYPES
    }
    label = " ".join(str(raw.get("label") or "").split())[:300] or "untitled"
    person = raw.get("person_id")
    return {
        "type": "notion",
        "id": notion_id_of(ident),
        "label": label,
        "tone": str(raw.get("emotion_tone") or "neutral"),
        "valence": _unit(raw.get("valence"), -1.0, 0.0),
        "confidence": _unit(raw.get("confidence"), 0.0, 0.5),
        "anchored": reinforced.isoformat(),
        "created": created.isoformat(),
        "reinforced": reinforced.isoformat(),
        "reinforcement_count": max(0, int(raw.get("reinforcement_count") or 0)),
        "sources": [memory_id_of(str(i)) for i in raw.get("source_memory_ids") or []],
        "tags": [str(t) for t in raw.get("tags") or []],
        "related": [notion_id_of(str(i)) for i in raw.get("related_notion_ids") or []],
        "person": person if isinstance(person, str) and person.strip() else None,
        "meta": meta,
        "contradicted": None,
        IMPORT_SOURCE: f"notions.json: {ident}",
    }


def read_ego_mcp(path: Path, options: ImportOptions) -> dict[str, list[dict[str, Any]]]:
    file = path / "notions.json"
    if not path.is_dir() or not file.is_file():
        return {}
    data = read_json(file, "notions.json")
    if not isinstance(data, Mapping):
        raise ImportFormatError("notions.json", "expected an object of notions by id", 1)
    fallback = datetime.fromtimestamp(file.stat().st_mtime, UTC)
    records = []
    for key, raw in data.items():
        if not isinstance(raw, Mapping):
            raise ImportFormatError("notions.json", f"notion {key}: expected an object")
        try:
            records.append(notion_record(str(key), raw, options, fallback))
        except (TypeError, ValueError) as exc:
            raise ImportFormatError("notions.json", f"notion {key}: {exc}") from None
    options.progress(1)
    return {PLUGIN: records}


def ego_mcp_format() -> ImportFormat:
    return ImportFormat(name="ego-mcp", description="ego-mcp notions (notions.json)", read=read_ego_mcp)
