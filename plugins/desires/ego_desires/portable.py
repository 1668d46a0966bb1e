"""The desires' part of ``ego export`` / ``ego import``: a ``meta`` record, then one ``desire`` record each.

``{"type": "desire", "name": "curiosity", "anchored_at": "2026-03-01T12:00:00+00:00", "start": 0.0,
"quality": 1.0, "source": "explicit"}``. An import takes a desire's state when it is newer than the local one,
or when the local desire was never satisfied; importing the same file again changes nothing.

A catalog whose words differ from the built-in ones is exported as one ``catalog`` record (``{"type": "catalog",
"catalog": {…}}``, the file's layout); an import checks it whole and writes it in place of the local one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from ego_desires.catalog import DESIRES
from ego_desires.curve import EARLIEST, EXPLICIT, INITIAL, LATEST, SHARED, Anchor
from ego_desires.store import DesireStore
from ego_desires.wording import Catalog, CatalogError
from ego_desires.wording import parse as parse_catalog

RECORD_VERSION: Final = 1
MAX_START: Final = 1000.0
_SOURCE = re.compile(rf"{INITIAL}|{EXPLICIT}|{SHARED}|tool:[^\x00-\x1f\x7f]{{1,100}}")


def export_records(store: DesireStore, catalog: Mapping[str, Any] | None = None) -> Iterator[Mapping[str, Any]]:
    """The records; ``catalog`` (the file's layout) is added when given."""
    yield from _desire_records(store)
    if catalog is not None:
        yield {"type": "catalog", "catalog": dict(catalog)}


def _desire_records(store: DesireStore) -> Iterator[Mapping[str, Any]]:
    anchors = store.anchors()
    yield {"type": "meta", "record_version": RECORD_VERSION}
    for name in DESIRES:
        anchor = anchors.get(name)
        if anchor is None:
            continue
        yield {
            "type": "desire",
            "name": name,
            "anchored_at": datetime.fromtimestamp(anchor.anchored_at, UTC).isoformat(),
            "start": anchor.start,
            "quality": anchor.quality,
            "source": anchor.source,
        }


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _moment(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None or moment.utcoffset() is None:
        return None
    return moment if EARLIEST <= moment.timestamp() <= LATEST else None


def _desire(body: Mapping[str, Any]) -> tuple[str | None, Anchor | None, list[str]]:
    problems: list[str] = []
    name = body.get("name")
    if name not in DESIRES:
        problems.append(f"`name`: expected one of {', '.join(DESIRES)}")
    moment = _moment(body.get("anchored_at"))
    if moment is None:
        problems.append("`anchored_at`: expected an ISO 8601 date and time with a UTC offset, years 1 to 9999")
    start = _number(body.get("start"))
    if start is None or not 0.0 <= start <= MAX_START:
        problems.append(f"`start`: expected a number from 0 to {MAX_START:g}")
    quality = body.get("quality")
    number = _number(quality)
    if quality is not None and (number is None or not 0.0 <= number <= 1.0):
        problems.append("`quality`: expected null or a number from 0 to 1")
    source = body.get("source")
    if not isinstance(source, str) or not _SOURCE.fullmatch(source):
        problems.append("`source`: expected initial, explicit, shared or tool:<tool name>")
    unknown = sorted(set(body) - {"name", "anchored_at", "start", "quality", "source"})
    if unknown:
        problems.append(f"unknown field(s) {', '.join(unknown)}")
    if problems or moment is None or start is None:
        return None, None, problems
    anchor = Anchor(anchored_at=moment.timestamp(), start=start, quality=number, source=str(source))
    return str(name), anchor, []


def parse(records: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Anchor], list[str], Catalog | None]:
    """The anchors and the catalog in ``records``, and every problem (naming the record and the field)."""
    anchors: dict[str, Anchor] = {}
    problems: list[str] = []
    catalog: Catalog | None = None
    for number, record in enumerate(records, start=1):
        kind = record.get("type")
        body = {k: v for k, v in record.items() if k != "type"}
        if kind == "meta":
            if body.get("record_version") != RECORD_VERSION:
                problems.append(f"record {number} (meta): record_version must be {RECORD_VERSION}")
            continue
        if kind == "catalog":
            unknown = sorted(set(body) - {"catalog"})
            if unknown:
                problems.append(f"record {number} (catalog): unknown field(s) {', '.join(unknown)}")
            try:
                found_catalog = parse_catalog(body.get("catalog"))
            except CatalogError as exc:
                place = f"catalog.{exc.path}" if exc.path else "catalog"
                problems.append(f"record {number} (catalog): `{place}`: {exc.problem}")
                continue
            if catalog is not None:
                problems.append(f"record {number} (catalog): a second catalog")
            catalog = found_catalog
            continue
        if kind != "desire":
            problems.append(f"record {number}: unknown record type")
            continue
        name, anchor, found = _desire(body)
        problems.extend(f"record {number} (desire): {problem}" for problem in found)
        if name is not None and anchor is not None:
            if name in anchors:
                problems.append(f"record {number} (desire): {name} appears twice")
            anchors[name] = anchor
    return anchors, problems, catalog


def check_records(records: Sequence[Mapping[str, Any]]) -> list[str]:
    return parse(records)[1]


def import_records(
    store: DesireStore, records: Sequence[Mapping[str, Any]], replace_catalog: Callable[[Catalog], bool]
) -> int:
    """Merge the desires' states and, when the file holds one, put its catalog in place (``replace_catalog`` says
    whether that changed anything)."""
    anchors, problems, catalog = parse(records)
    if problems:
        raise ValueError("; ".join(problems))
    changed = store.merge(anchors)
    if catalog is not None and replace_catalog(catalog):
        changed += 1
    return changed
