"""Moving a shared store (SQLite → PostgreSQL when a gateway outgrows one machine, or a backup): a JSON Lines
file of every event, in log order, and the token hashes (never tokens).

The first line is ``{"type": "ego-shared-memory", "version": 1, ...}``; then ``{"type": "event", ...}`` (the
stored event's fields) and ``{"type": "token", ...}`` lines. Importing checks the whole file first, then
restores each event with its own id and time (idempotent: what is already there is skipped).

An import is a write like any other: each event's texts (content, dedupe_key, scope, run_id, source ids) go through
the same secret and personal-data filter as an append, and every author and token holder must be one of the
configured agents (the janitor's own conflict_resolution events aside). One refused line refuses the whole file,
naming the line, the field and the kinds found, never the data.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import attrs

from ego_core import open_atomically
from ego_shared_memory.detector import sensitive_field
from ego_shared_memory.events import (
    AGENT_ID,
    CONFIDENCES,
    DEDUPE_KEY,
    DEFAULT_AGENTS,
    EVENT_ID,
    JANITOR_AGENT,
    JANITOR_KIND,
    KINDS,
    RESERVED_AGENTS,
    SOURCE_SYSTEMS,
    Event,
    Source,
    iso,
    parse_iso,
    valid_scope,
)
from ego_shared_memory.store import EventFilter, SqlStore
from ego_shared_memory.store.base import Role
from ego_shared_memory.store.sql import storable

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
    with open_atomically(path) as handle:  # mode 0600
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
    for field, text in (
        ("content_md", record["content_md"]),
        ("run_id", record["run_id"]),
        ("source.thread_id", source.get("thread_id")),
        ("source.message_id", source.get("message_id")),
    ):
        if isinstance(text, str) and not storable(text):
            raise PortableError(
                f"line {number}: event {record['event_id']}: {field} holds a NUL character or an unpaired surrogate, "
                "which no store keeps as it is (PostgreSQL refuses NUL); fix it at the source and export again"
            )
    refused = sensitive_field(
        (
            ("content_md", record["content_md"]),
            ("dedupe_key", record["dedupe_key"]),
            ("scope", record["scope"]),
            ("run_id", record["run_id"]),
            ("source.thread_id", source.get("thread_id")),
            ("source.message_id", source.get("message_id")),
        )
    )
    if refused is not None:
        field, kinds = refused
        raise PortableError(
            f"line {number}: event {record['event_id']}: {field} contains data that is never stored "
            f"({', '.join(kinds)}); mask it at the source first (`ego shared janitor --full-scan` there) and export "
            "again"
        )
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


def check_authors(
    events: Sequence[Event],
    tokens: Sequence[tuple[str, str, Role, datetime, datetime | None]],
    agents: Sequence[str],
) -> None:
    """Every event's author and every agent token's holder is one of ``agents`` (the configured allow-list, as
    for tokens made here); the janitor writes only its conflict_resolution events. Raises :class:`PortableError`."""
    for event in events:
        by_janitor = event.agent_id == JANITOR_AGENT
        if (by_janitor and event.kind != JANITOR_KIND) or (not by_janitor and event.agent_id not in agents):
            raise PortableError(
                f"event {event.event_id} is by {event.agent_id}, who is not among the configured agents "
                f"({', '.join(agents)}); add it to [plugins.shared_memory] agents to import its events"
            )
        if event.kind == JANITOR_KIND and not by_janitor:
            raise PortableError(f"event {event.event_id}: only the janitor writes {JANITOR_KIND} events")
    for _digest, agent, role, _created, _revoked in tokens:
        if role == "agent" and agent not in agents:
            raise PortableError(
                f"a token belongs to {agent}, who is not among the configured agents ({', '.join(agents)})"
            )
        if not AGENT_ID.match(agent) or agent in RESERVED_AGENTS:
            raise PortableError(f"a token belongs to {agent}, a reserved or invalid agent id")


def import_store(store: SqlStore, path: Path, *, agents: Sequence[str] = DEFAULT_AGENTS) -> ImportSummary:
    """Restores the file into ``store`` after checking all of it (:func:`read_export`, :func:`check_authors`
    against ``agents``, the configured allow-list); nothing is written when any line is refused."""
    events, tokens = read_export(path)
    check_authors(events, tokens, agents)
    new_events = sum(store.import_event(event) for event in events)
    new_tokens = sum(store.import_token(*token) for token in tokens)
    return ImportSummary(len(events), new_events, len(tokens), new_tokens)


def summary_line(summary: ImportSummary) -> str:
    return f"{summary.new_events} new of {summary.events} events; {summary.new_tokens} new of {summary.tokens} tokens"
