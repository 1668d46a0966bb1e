"""The janitor: compacts the log into pins, marks expired events as cleanup candidates, turns conflicts into
``conflict_resolution`` events, and masks sensitive data that slipped in (audited). It never deletes: deletion
takes two steps, a cleanup plan (:func:`propose_cleanup`, stored in the store) and the operator confirming
that plan's id (:func:`confirm_cleanup`), which deletes exactly the events it lists.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.detector import kinds_in, redact_sensitive
from ego_shared_memory.events import (
    JANITOR_AGENT,
    JANITOR_KIND,
    Event,
    EventDraft,
    Source,
    check_scope,
    iso,
)
from ego_shared_memory.pins import compose_pins
from ego_shared_memory.store import CleanupDone, CleanupPlan, CleanupPlanError, EventFilter, Pin, SqlStore

STEPS: tuple[str, ...] = ("scan", "conflicts", "ttl", "consolidate")
"""In the order they run: the scan first, so that no pin quotes what it masks."""
SCANNED_FIELDS: tuple[str, ...] = (
    "content_md",
    "source.thread_id",
    "source.message_id",
    "run_id",
    "dedupe_key",
    "scope",
)
"""Every text of an event the scan checks (each an agent chose)."""
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
    """Masks secrets and personal data in stored events (from where the last scan stopped, or all).

    Text is masked in place (the content, the source's ids; a run id becomes ``redacted``). An identifier
    cannot be masked in place, since other rows find events by it: a dedupe_key that holds sensitive data is
    replaced by a token (:func:`identifier_token`) in every event of its key at once, and a project scope's
    slug likewise in every event of the scope. The token is random, so nothing in the store leads back to
    the value. An ``agent:`` scope is the agent's id, which the operator chose and which tokens and authors
    also hold: it is reported under ``flagged`` (the event and the kinds) and left for the operator to rename.
    Each changed event is flagged ``redacted`` and audited; the report names fields and kinds, never values."""
    seq = 0 if full else int(store.get_state(SCAN_STATE) or 0)
    scanned = 0
    redacted: dict[str, dict[str, list[str]]] = {}
    flagged: list[dict[str, Any]] = []
    scopes: dict[str, str] = {}  # scopes replaced during this scan (a batch read before holds the old name)
    keys: set[tuple[str, str]] = set()  # (scope, dedupe_key) replaced during this scan

    def note(event_ids: Sequence[str], field: str, kinds: Sequence[str]) -> None:
        for event_id in event_ids:
            entry = redacted.setdefault(event_id, {"fields": [], "kinds": []})
            entry["fields"] += [field] if field not in entry["fields"] else []
            entry["kinds"] += [kind for kind in kinds if kind not in entry["kinds"]]

    while True:
        batch = store.events_after(seq, SCAN_BATCH)
        if not batch:
            break
        for event in batch:
            scanned += 1
            scope = scopes.get(event.scope, event.scope)
            found = kinds_in(scope) if scope not in scopes.values() else []
            if found and scope.startswith("project:"):
                new_scope = "project:" + identifier_token()
                note(store.redact_scope(scope, new_scope, found, actor=JANITOR_AGENT, now=now), "scope", found)
                scopes[scope] = new_scope
                scope = new_scope
            elif found:
                flagged.append({"event_id": event.event_id, "field": "scope", "kinds": found})
            found = kinds_in(event.dedupe_key) if (scope, event.dedupe_key) not in keys else []
            if found:
                new_key = identifier_token()
                changed = store.redact_key(scope, event.dedupe_key, new_key, found, actor=JANITOR_AGENT, now=now)
                note(changed, "dedupe_key", found)
                keys.add((scope, event.dedupe_key))
            change = _redaction(event)
            if change is not None:
                content, source, run_id, fields, kinds = change
                if store.redact_event(
                    event.event_id, content, source, kinds, actor=JANITOR_AGENT, now=now, run_id=run_id
                ):
                    for field in fields:
                        note([event.event_id], field, kinds)
        seq = batch[-1].seq
        store.set_state(SCAN_STATE, str(seq))
    report = [{"event_id": event_id, **entry} for event_id, entry in redacted.items()]
    return {"scanned": scanned, "redacted": report, "flagged": flagged}


REPLACEMENT_PREFIX = "redacted-"


def identifier_token() -> str:
    """A new random token to stand for an identifier that held sensitive data: ``redacted-`` and 12 hex
    digits, a valid dedupe_key and project slug, which the detector does not flag (so a full scan leaves it
    alone). Random, not a hash of the value: a hash of a phone number can be reversed by trying them all."""
    for _attempt in range(100):
        token = REPLACEMENT_PREFIX + secrets.token_hex(6)
        if not kinds_in(token):
            return token
    raise RuntimeError("the detector flags every identifier token")  # pragma: no cover - 100 random draws


def _redaction(event: Event) -> tuple[str, Source, str | None, list[str], list[str]] | None:
    """The event's masked content and source, its new run id (``None``: unchanged), the fields changed and
    the kinds found; ``None`` when nothing is found."""
    content, kinds = redact_sensitive(event.content_md)
    fields = ["content_md"] if kinds else []
    ids: dict[str, str | None] = {}
    for name in ("thread_id", "message_id"):
        value = getattr(event.source, name)
        if value:
            found = kinds_in(value)
            if found:
                value = "redacted"
                fields.append(f"source.{name}")
                kinds += [kind for kind in found if kind not in kinds]
        ids[name] = value
    run_id = None
    found = kinds_in(event.run_id)
    if found:
        run_id = "redacted"
        fields.append("run_id")
        kinds += [kind for kind in found if kind not in kinds]
    if not kinds:
        return None
    return content, Source(event.source.system, ids["thread_id"], ids["message_id"]), run_id, fields, kinds


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


PLAN_LIMIT = 10_000
"""The most events one cleanup plan holds; when more match, the plan says ``truncated``."""
PLAN_TTL = timedelta(minutes=30)
"""How long a proposed cleanup plan can be confirmed: long enough to review it, short enough that what it
lists is what the operator saw."""
CLEANUP_SCOPE_PATTERNS = ("*", "agent:*", "project:*")
MAX_CLEANUP_SCOPES = 32
"""The most scopes and patterns one cleanup request names."""
PLAN_ID = re.compile(r"^plan_[0-9a-f]{24}$")


def cleanup_scopes(patterns: Sequence[str]) -> tuple[str, ...]:
    """The scopes a cleanup may select from. None given, or ``*``: ``global`` and every project — never an
    agent's private scope, which a plan reaches only when it names it (``agent:<id>``, or ``agent:*`` for
    every agent's). Raises ValueError for anything but a scope or one of :data:`CLEANUP_SCOPE_PATTERNS`."""
    chosen: list[str] = []
    for pattern in patterns or ("*",):
        if pattern == "*":
            chosen += ["global", "project:*"]
        elif pattern in CLEANUP_SCOPE_PATTERNS:
            chosen.append(pattern)
        else:
            check_scope(pattern, "scopes")
            chosen.append(pattern)
    return tuple(dict.fromkeys(chosen))


def duration_text(duration: timedelta) -> str:
    seconds = int(duration.total_seconds())
    if seconds % 86400 == 0:
        return f"{seconds // 86400}d"
    return f"{seconds // 3600}h" if seconds % 3600 == 0 else f"{seconds}s"


def propose_cleanup(
    store: SqlStore,
    now: datetime,
    *,
    older_than: timedelta | None,
    scope_patterns: Sequence[str],
    expired_only: bool,
    actor: str,
    limit: int = PLAN_LIMIT,
    ttl: timedelta = PLAN_TTL,
) -> CleanupPlan:
    """Selects events older than ``older_than`` and/or whose ttl ran out, in the scopes of
    :func:`cleanup_scopes`, and stores a plan to delete exactly them (audited). Deletes nothing: only
    :func:`confirm_cleanup` with the plan's id does, before the plan expires."""
    if older_than is None and not expired_only:
        raise ValueError("cleanup needs --older-than and/or --expired (what to select)")
    patterns = cleanup_scopes(scope_patterns)
    if expired_only:
        selected = [e for e in store.expired(now, 100 * limit) if _matches(e.scope, patterns)]
        if older_than is not None:
            selected = [e for e in selected if e.created_at < now - older_than]
    else:
        assert older_than is not None
        selected = store.list_events(
            EventFilter(scope_patterns=patterns, before=now - older_than, include_deprecated=True, limit=limit + 1)
        )
    criteria: dict[str, Any] = {
        "older_than": duration_text(older_than) if older_than is not None else None,
        "created_before": iso(now - older_than) if older_than is not None else None,
        "expired": expired_only,
        "scopes": list(patterns),
    }
    return store.create_cleanup_plan(
        [e.event_id for e in selected[:limit]],
        criteria=criteria,
        truncated=len(selected) > limit,
        actor=actor,
        now=now,
        expires_at=now + ttl,
    )


def confirm_cleanup(store: SqlStore, plan_id: str, *, actor: str, now: datetime) -> CleanupDone:
    """Deletes exactly the events of plan ``plan_id`` (each deletion audited). Raises
    :class:`~ego_shared_memory.store.CleanupPlanError` for an unknown, expired or already confirmed plan."""
    if not PLAN_ID.match(plan_id):
        raise CleanupPlanError("unknown", f"no cleanup plan has the id {plan_id[:40]!r} (plan ids: plan_<24 hex>)")
    return store.confirm_cleanup_plan(plan_id, actor, now)


def find_plan(store: SqlStore, plan_id: str) -> CleanupPlan:
    """The plan ``plan_id``; :class:`~ego_shared_memory.store.CleanupPlanError` (``unknown``) when none."""
    plan = store.cleanup_plan(plan_id) if PLAN_ID.match(plan_id) else None
    if plan is None:
        raise CleanupPlanError("unknown", f"no cleanup plan has the id {plan_id[:40]!r} (plan ids: plan_<24 hex>)")
    return plan


def plan_view(plan: CleanupPlan, now: datetime) -> dict[str, Any]:
    """A plan as JSON (the gateway's answer, ``ego shared cleanup --json``)."""
    return {
        "plan_id": plan.plan_id,
        "state": plan.state(now),
        "created_at": iso(plan.created_at),
        "expires_at": iso(plan.expires_at),
        "proposed_by": plan.proposed_by,
        "criteria": dict(plan.criteria),
        "total": len(plan.event_ids),
        "counts": dict(plan.counts),
        "truncated": plan.truncated,
        "event_ids": list(plan.event_ids),
        "confirmed_at": iso(plan.confirmed_at) if plan.confirmed_at else None,
        "confirmed_by": plan.confirmed_by,
        "deleted": plan.deleted,
    }


def _matches(scope: str, patterns: Sequence[str]) -> bool:
    if not patterns:
        return True
    return any(scope.startswith(p[:-1]) if p.endswith("*") else scope == p for p in patterns)
