"""Moving a shared store (SQLite → PostgreSQL when a gateway outgrows one machine, or a backup): a JSON Lines
file of every event, in log order, and the token hashes (never tokens).

The first line is ``{"type": "ego-shared-memory", "version": 1, ...}``; then ``{"type": "event", ...}`` (the
stored event's fields) and ``{"type": "token", ...}`` lines. Importing checks the whole file first, then
restores each event with its own id and time (idempotent: what is already there is skipped).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import attrs

from ego_shared_memory.events import (
    AGENT_ID,
    CONFIDENCES,
    DEDUPE_KEY,
    EVENT_ID,
    JANITOR_KIND,
    KINDS,
    SOURCE_SYSTEMS,
    Event,
    Source,
    iso,
    parse_iso,
    valid_scope,
)
from ego_shared_memory.store import EventFilter, SqlStore
from ego_shared_memory.store.base import Role

FORMAT = "ego-shared-memory"
VERSION = 1
ALL = 100_000_000


class PortableError(ValueError):
    """The file cannot be imported; the message names the line and the problem."""


@attrs.frozen
class ImportSummary:
    events: int
    new_events: int
    tokens: int
    new_tokens: int


def export_store(store: SqlStore, path: Path, *, now: datetime) -> int:
    """Writes every event (oldest first) and token hash to ``path`` (temp file + rename); returns the events."""
    events = sorted(store.list_events(EventFilter(include_deprecated=True, limit=ALL)), key=lambda e: e.seq)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            header = {"type": FORMAT, "version": VERSION, "exported_at": iso(now), "backend": store.backend}
            handle.write(json.dumps(header) + "\n")
            for event in events:
                record = event.as_dict()
                record.pop("deprecated", None)  # derived again from supersedes on import
                handle.write(json.dumps({"type": "event", **record}, ensure_ascii=False) + "\n")
            for token_hash, agent, role, created, revoked in store.token_rows():
                token = {
                    "type": "token",
                    "token_hash": token_hash,
                    "agent_id": agent,
                    "role": role,
                    "created_at": iso(created),
                    "revoked_at": iso(revoked) if revoked else None,
                }
                handle.write(json.dumps(token) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(events)


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                raise PortableError(f"line {number}: not JSON") from None
            if not isinstance(record, dict):
                raise PortableError(f"line {number}: expected a JSON object")
            yield number, record


def _time(value: object, number: int, field: str) -> datetime:
    try:
        moment = parse_iso(str(value))
    except ValueError:
        raise PortableError(f"line {number}: {field} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise PortableError(f"line {number}: {field} has no time zone")
    return moment


def _event(record: dict[str, Any], number: int) -> Event:
    checks = (
        ("event_id", isinstance(record.get("event_id"), str) and EVENT_ID.match(record["event_id"])),
        ("agent_id", isinstance(record.get("agent_id"), str) and AGENT_ID.match(record["agent_id"])),
        ("run_id", isinstance(record.get("run_id"), str) and record["run_id"]),
        ("scope", valid_scope(record.get("scope"))),
        ("kind", record.get("kind") in (*KINDS, JANITOR_KIND)),
        ("dedupe_key", isinstance(record.get("dedupe_key"), str) and DEDUPE_KEY.match(record["dedupe_key"])),
        ("confidence", record.get("confidence") in CONFIDENCES),
        ("content_md", isinstance(record.get("content_md"), str)),
        ("source", isinstance(record.get("source"), dict) and record["source"].get("system") in SOURCE_SYSTEMS),
        ("supersedes", record.get("supersedes") is None or EVENT_ID.match(str(record["supersedes"]))),
        ("ttl_days", isinstance(record.get("ttl_days"), int) and record["ttl_days"] >= 0),
    )
    for field, ok in checks:
        if not ok:
            raise PortableError(f"line {number}: event field {field} is missing or invalid")
    source = record["source"]
    return Event(
        seq=0,
        event_id=record["event_id"],
        agent_id=record["agent_id"],
        run_id=record["run_id"],
        scope=record["scope"],
        kind=record["kind"],
        dedupe_key=record["dedupe_key"],
        confidence=record["confidence"],
        content_md=record["content_md"],
        source=Source(source["system"], source.get("thread_id"), source.get("message_id")),
        supersedes=record.get("supersedes"),
        ttl_days=int(record["ttl_days"]),
        created_at=_time(record.get("created_at"), number, "created_at"),
        redacted=bool(record.get("redacted", False)),
    )


def read_export(path: Path) -> tuple[list[Event], list[tuple[str, str, Role, datetime, datetime | None]]]:
    """Every event and token of the file, checked (nothing is written)."""
    events: list[Event] = []
    tokens: list[tuple[str, str, Role, datetime, datetime | None]] = []
    seen_header = False
    for number, record in _lines(path):
        kind = record.get("type")
        if not seen_header:
            if kind != FORMAT or record.get("version") != VERSION:
                raise PortableError(f"line {number}: not an export of `ego shared export` (version {VERSION})")
            seen_header = True
            continue
        if kind == "event":
            events.append(_event(record, number))
        elif kind == "token":
            digest, agent, role = record.get("token_hash"), record.get("agent_id"), record.get("role")
            if not (
                isinstance(digest, str) and len(digest) == 64 and isinstance(agent, str) and role in ("agent", "admin")
            ):
                raise PortableError(f"line {number}: a token line needs token_hash, agent_id and role")
            revoked = record.get("revoked_at")
            tokens.append(
                (
                    digest,
                    agent,
                    cast("Role", role),
                    _time(record.get("created_at"), number, "created_at"),
                    _time(revoked, number, "revoked_at") if revoked else None,
                )
            )
        else:
            raise PortableError(f"line {number}: unknown record type")
    if not seen_header:
        raise PortableError("the file is empty")
    ids = {event.event_id for event in events}
    missing = sorted({e.supersedes for e in events if e.supersedes and e.supersedes not in ids})
    if missing:
        raise PortableError(f"events supersede events the file does not hold: {', '.join(missing[:5])}")
    return events, tokens


def import_store(store: SqlStore, path: Path) -> ImportSummary:
    events, tokens = read_export(path)
    new_events = sum(store.import_event(event) for event in events)
    new_tokens = sum(store.import_token(*token) for token in tokens)
    return ImportSummary(len(events), new_events, len(tokens), new_tokens)


def summary_line(summary: ImportSummary) -> str:
    return f"{summary.new_events} new of {summary.events} events; {summary.new_tokens} new of {summary.tokens} tokens"
