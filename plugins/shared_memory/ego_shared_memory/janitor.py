"""The janitor: compacts the log into pins, marks expired events as cleanup candidates, turns conflicts into
``conflict_resolution`` events, and masks sensitive data that slipped in (audited). It never deletes: deletion
is :func:`cleanup` with explicit approval.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import attrs

from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.detector import redact_sensitive
from ego_shared_memory.events import (
    JANITOR_AGENT,
    JANITOR_KIND,
    Event,
    EventDraft,
    Source,
    iso,
)
from ego_shared_memory.pins import compose_pins
from ego_shared_memory.store import EventFilter, Pin, SqlStore

STEPS: tuple[str, ...] = ("scan", "conflicts", "ttl", "consolidate")
"""In the order they run: the scan first, so that no pin quotes what it masks."""
SCAN_STATE = "janitor.scan_seq"
SCAN_BATCH = 500
RESOLUTION_TTL_DAYS = 30
"""A conflict_resolution event becomes a cleanup candidate after this many days."""
DURATION = re.compile(r"^([0-9]{1,7})\s*([dhw])$")
MAX_DURATION = timedelta(days=36525)
"""The longest ``older_than`` (100 years): a longer one would reach before year 1 (an overflow, not a date)."""


def parse_duration(text: str) -> timedelta:
    """``30d``, ``12h``, ``2w``: at most :data:`MAX_DURATION` (ValueError otherwise)."""
    match = DURATION.match(text.strip().lower())
    if not match:
        raise ValueError("expected a duration such as 30d, 12h or 2w")
    amount, unit = int(match.group(1)), match.group(2)
    duration = {"d": timedelta(days=amount), "h": timedelta(hours=amount), "w": timedelta(weeks=amount)}[unit]
    if duration > MAX_DURATION:
        raise ValueError("expected a duration of at most 36525d (100 years)")
    return duration


def conflict_key(dedupe_key: str) -> str:
    key = f"conflict:{dedupe_key}"
    if len(key) <= 64:
        return key
    digest = hashlib.sha256(dedupe_key.encode()).hexdigest()[:8]
    return f"conflict:{dedupe_key[:46]}-{digest}"


def consolidate(store: SqlStore, settings: GatewaySettings, now: datetime) -> list[dict[str, Any]]:
    """Stores each scope's pins (each links to its source event); returns a line of figures per scope."""
    report = []
    for scope in store.scopes():
        candidates = store.heads(scope, by="rank", limit=200, now=now)
        total = store.head_count(scope)
        pins = compose_pins(candidates, total=total, budget_tokens=settings.pin_budget_tokens)
        lines = pins.markdown.splitlines()
        stored = [
            Pin(scope, index, event.dedupe_key, event.event_id, lines[index], now)
            for index, event in enumerate(pins.events)
        ]
        store.replace_pins(scope, stored)
        report.append({"scope": scope, "pinned": len(stored), "entries": total, "tokens": pins.tokens})
    return report


def mark_expired(store: SqlStore, now: datetime) -> dict[str, int]:
    expired = store.expired(now, limit=100_000)
    added = store.mark_candidates([e.event_id for e in expired], "ttl expired", now)
    return {"expired": len(expired), "newly_marked": added}


def resolve_conflicts(store: SqlStore, now: datetime) -> dict[str, int]:
    """Records conflicts the appends did not see, and asks for a decision on each open one, once."""
    settled = store.resolve_settled_conflicts(now)
    detected = 0
    for scope, key, event_id, previous in store.undetected_conflicts():
        detected += store.record_conflict(scope, key, event_id, previous, now=now)
    asked = 0
    for conflict in store.open_conflicts():
        if conflict.resolution_event_id is not None:
            continue
        newer, older = store.get(conflict.event_id), store.get(conflict.previous_event_id)
        if newer is None or older is None:
            continue
        content = (
            f"Two entries for `{conflict.dedupe_key}` disagree: {newer.event_id} ({newer.agent_id}, "
            f"{newer.confidence}, {newer.created_at:%Y-%m-%d}) is read; {older.event_id} ({older.agent_id}, "
            f"{older.confidence}, {older.created_at:%Y-%m-%d}) says otherwise. Which one holds? Append the right "
            "one with supersedes naming the other."
        )
        draft = EventDraft(
            agent_id=JANITOR_AGENT,
            run_id=f"janitor-conflict-{conflict.id}",
            scope=conflict.scope,
            kind=JANITOR_KIND,
            dedupe_key=conflict_key(conflict.dedupe_key),
            confidence="high",
            content_md=content,
            source=Source(system="other"),
            ttl_days=RESOLUTION_TTL_DAYS,
        )
        result = store.append(draft, now)
        store.set_conflict_resolution(conflict.id, result.event.event_id)
        asked += 1
    return {"settled": settled, "detected": detected, "resolution_events": asked}


def scan(store: SqlStore, now: datetime, *, full: bool = False) -> dict[str, Any]:
    """Masks secrets and personal data in stored events (from where the last scan stopped, or all)."""
    seq = 0 if full else int(store.get_state(SCAN_STATE) or 0)
    scanned = 0
    redacted: list[dict[str, Any]] = []
    while True:
        batch = store.events_after(seq, SCAN_BATCH)
        if not batch:
            break
        for event in batch:
            scanned += 1
            change = _redaction(event)
            if change is not None:
                content, source, kinds = change
                if store.redact_event(event.event_id, content, source, kinds, actor=JANITOR_AGENT, now=now):
                    redacted.append({"event_id": event.event_id, "kinds": kinds})
        seq = batch[-1].seq
        store.set_state(SCAN_STATE, str(seq))
    return {"scanned": scanned, "redacted": redacted}


def _redaction(event: Event) -> tuple[str, Source, list[str]] | None:
    content, kinds = redact_sensitive(event.content_md)
    ids: dict[str, str | None] = {}
    for name in ("thread_id", "message_id"):
        value = getattr(event.source, name)
        if value:
            _masked, found = redact_sensitive(value)
            if found:
                value = "redacted"
                kinds += [kind for kind in found if kind not in kinds]
        ids[name] = value
    if not kinds:
        return None
    return content, Source(event.source.system, ids["thread_id"], ids["message_id"]), kinds


def run_janitor(
    store: SqlStore, settings: GatewaySettings, now: datetime, *, steps: Sequence[str] = STEPS, full_scan: bool = False
) -> dict[str, Any]:
    unknown = [step for step in steps if step not in STEPS]
    if unknown:
        raise ValueError(f"unknown janitor step(s) {', '.join(unknown)}; expected some of {', '.join(STEPS)}")
    steps = [step for step in STEPS if step in steps]
    report: dict[str, Any] = {"at": iso(now), "steps": steps}
    if "scan" in steps:
        report["scan"] = scan(store, now, full=full_scan)
    if "conflicts" in steps:
        report["conflicts"] = resolve_conflicts(store, now)
    if "ttl" in steps:
        report["ttl"] = mark_expired(store, now)
    if "consolidate" in steps:
        report["consolidate"] = consolidate(store, settings, now)
    store.add_audit(JANITOR_AGENT, "janitor", None, "steps: " + ", ".join(steps), now=now)
    return report


@attrs.frozen
class CleanupPlan:
    events: tuple[Event, ...]
    deleted: int = 0


def cleanup(
    store: SqlStore,
    now: datetime,
    *,
    older_than: timedelta | None,
    scope_patterns: Sequence[str],
    expired_only: bool,
    approve: bool,
    actor: str,
    limit: int = 10_000,
) -> CleanupPlan:
    """Events older than ``older_than`` (and/or expired), in the matching scopes. Deleted only with ``approve``
    (each deletion audited); without it, the plan of what would go."""
    if older_than is None and not expired_only:
        raise ValueError("cleanup needs --older-than and/or --expired (what to select)")
    if expired_only:
        selected = [e for e in store.expired(now, limit) if _matches(e.scope, scope_patterns)]
        if older_than is not None:
            selected = [e for e in selected if e.created_at < now - older_than]
    else:
        assert older_than is not None
        selected = store.list_events(
            EventFilter(
                scope_patterns=tuple(scope_patterns),
                before=now - older_than,
                include_deprecated=True,
                limit=limit,
            )
        )
    if not approve:
        return CleanupPlan(events=tuple(selected))
    deleted = store.delete_events([e.event_id for e in selected], actor, now)
    return CleanupPlan(events=tuple(selected), deleted=deleted)


def _matches(scope: str, patterns: Sequence[str]) -> bool:
    if not patterns:
        return True
    return any(scope.startswith(p[:-1]) if p.endswith("*") else scope == p for p in patterns)
