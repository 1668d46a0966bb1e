"""The desires plugin's part of ``ego import --from ego-mcp``: ``desire_state.json`` of an ego-mcp 1.x data
directory, as ``desire`` records (``ego_desires.portable``). ego-mcp's nine fixed desires are ego's nine; each is
anchored at its last satisfaction with its quality. Emergent desires, the EMA levels and boosts have no
counterpart (ego derives them from memories and notions) and are left out; so is the catalog
(``settings/desires.json``), whose schema differs (docs/importing.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ego_core import ImportFormat, ImportFormatError, ImportOptions, read_json
from ego_desires.catalog import DESIRES
from ego_desires.portable import RECORD_VERSION

PLUGIN = "desires"
FILE = "desire_state.json"


def read_ego_mcp(path: Path, options: ImportOptions) -> dict[str, list[dict[str, Any]]]:
    file = path / FILE
    if not path.is_dir() or not file.is_file():
        return {}
    data = read_json(file, FILE)
    if not isinstance(data, Mapping):
        raise ImportFormatError(FILE, "expected an object of desires by name", 1)
    records: list[dict[str, Any]] = [{"type": "meta", "record_version": RECORD_VERSION}]
    for name in DESIRES:
        state = data.get(name)
        if not isinstance(state, Mapping) or state.get("is_emergent") or not state.get("last_satisfied"):
            continue
        try:
            moment = datetime.fromisoformat(str(state["last_satisfied"]))
        except ValueError:
            raise ImportFormatError(FILE, f"{name}: last_satisfied {state['last_satisfied']!r} is not a time") from None
        moment = (moment if moment.tzinfo else moment.replace(tzinfo=options.tz)).astimezone(UTC)
        quality = state.get("satisfaction_quality")
        usable = isinstance(quality, int | float) and not isinstance(quality, bool) and math.isfinite(quality)
        level = max(0.0, min(1.0, float(quality))) if usable and quality is not None else None
        records.append(
            {
                "type": "desire",
                "name": name,
                "anchored_at": moment.isoformat(),
                "start": 0.0,
                "quality": level,
                "source": "explicit",
            }
        )
    options.progress(1)
    return {PLUGIN: records} if len(records) > 1 else {}


def ego_mcp_format() -> ImportFormat:
    return ImportFormat(name="ego-mcp", description="ego-mcp desire states (desire_state.json)", read=read_ego_mcp)
