"""The notions plugin's part of ``ego export`` / ``ego import``: one ``notion`` record per notion.

Times are ISO 8601 in UTC. Without ``--include-private`` a notion keeps only the ids of public memories, and a
notion formed from private memories alone is left out. ``chosen`` says the label is the agent's own (absent:
drawn from the memories, drawn again when one of them turns private). An import checks every record first and
writes nothing if one is wrong; a notion already held (same id) is kept as it is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from ego_core import MemoryService
from ego_notions.model import META_TYPES, Notion
from ego_notions.store import NotionDB

ID = re.compile(r"^notion_[0-9a-f]{12}$")
FIELDS = ("id", "label", "tone", "valence", "confidence", "anchored", "created", "reinforced", "sources", "tags")


def export_records(db: NotionDB, service: MemoryService | None, include_private: bool) -> Iterator[Mapping[str, Any]]:
    notions = sorted(db.all(), key=lambda n: (n.created, n.id))
    public: set[str] | None = None
    if not include_private:
        ids = sorted({s for n in notions for s in n.sources})
        found = service.get(ids) if service is not None else []
        public = {m.id for m in found if not m.is_private}
    for notion in notions:
        sources = list(notion.sources) if public is None else [s for s in notion.sources if s in public]
        if public is not None and notion.sources and not sources:
            continue
        yield {
            "type": "notion",
            "id": notion.id,
            "label": notion.label,
            "chosen": notion.chosen,
            "tone": notion.tone,
            "valence": notion.valence,
            "confidence": notion.confidence,
            "anchored": notion.anchored.isoformat(),
            "created": notion.created.isoformat(),
            "reinforced": notion.reinforced.isoformat(),
            "reinforcement_count": notion.reinforcement_count,
            "sources": sources,
            "tags": list(notion.tags),
            "related": list(notion.related),
            "person": notion.person,
            "meta": {k: dict(v) for k, v in sorted(notion.meta.items())},
            "contradicted": None if notion.contradicted is None else notion.contradicted.isoformat(),
        }


def _time(value: Any) -> datetime:
    moment = datetime.fromisoformat(str(value))
    if moment.tzinfo is None:
        raise ValueError("needs a time zone")
    return moment


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected a list of strings")
    return list(value)


def parse(record: Mapping[str, Any]) -> Notion:
    """A notion from an exported record; ValueError names the field that is wrong."""
    missing = [f for f in FIELDS if f not in record]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    values: dict[str, Any] = {}
    for name, check in (
        ("id", lambda v: v if isinstance(v, str) and ID.match(v) else None),
        ("label", lambda v: " ".join(v.split()) if isinstance(v, str) and v.strip() and len(v) <= 300 else None),
        ("tone", lambda v: v if isinstance(v, str) and v.strip() else None),
        ("valence", lambda v: float(v) if _finite(v) and -1 <= v <= 1 else None),
        ("confidence", lambda v: float(v) if _finite(v) and 0 <= v <= 1 else None),
    ):
        value = check(record[name])
        if value is None:
            raise ValueError(f"{name}: not a valid value")
        values[name] = value
    for name in ("anchored", "created", "reinforced"):
        try:
            values[name] = _time(record[name])
        except (TypeError, ValueError):
            raise ValueError(f"{name}: expected an ISO 8601 time with a time zone") from None
    if record.get("contradicted") is not None:
        try:
            values["contradicted"] = _time(record["contradicted"])
        except (TypeError, ValueError):
            raise ValueError("contradicted: expected an ISO 8601 time with a time zone, or null") from None
    for name in ("sources", "tags", "related"):
        try:
            values[name] = tuple(_strings(record.get(name, [])))
        except ValueError:
            raise ValueError(f"{name}: expected a list of strings") from None
    count = record.get("reinforcement_count", 0)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError("reinforcement_count: expected a whole number, 0 or more")
    chosen = record.get("chosen", False)
    if not isinstance(chosen, bool):
        raise ValueError("chosen: expected true or false")
    person = record.get("person")
    if person is not None and (not isinstance(person, str) or not person.strip()):
        raise ValueError("person: expected a name or null")
    meta = record.get("meta", {})
    if not isinstance(meta, Mapping) or not all(
        isinstance(f, Mapping) and f.get("type") in META_TYPES for f in meta.values()
    ):
        raise ValueError("meta: expected fields with a type of text or notion_ids")
    return Notion(
        reinforcement_count=count, person=person, meta={k: dict(v) for k, v in meta.items()}, chosen=chosen, **values
    )


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def check_records(records: Sequence[Mapping[str, Any]]) -> list[str]:
    problems: list[str] = []
    for number, record in enumerate(records, start=1):
        if record.get("type") != "notion":
            problems.append(f"notions record {number}: unknown type {str(record.get('type'))[:40]!r}")
            continue
        try:
            parse(record)
        except ValueError as exc:
            problems.append(f"notions record {number}: {exc}")
    return problems


def import_records(db: NotionDB, records: Sequence[Mapping[str, Any]]) -> int:
    held = {n.id for n in db.all()}
    fresh = [parse(r) for r in records if r.get("type") == "notion" and r.get("id") not in held]
    unique = list({n.id: n for n in fresh}.values())
    db.apply(save=unique)
    return len(unique)
