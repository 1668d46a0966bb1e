"""The storage interface every backend implements (SQLite, PostgreSQL), and the values it returns.

The event log is append-only: an event is never changed, with two exceptions an operator asks for — the
janitor masking sensitive data that slipped in (audited) and the approved deletion of cleanup candidates
(audited). Everything else (heads, deprecations, conflicts, pins, candidates) is bookkeeping derived from the
log in the same transaction as the append.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, Protocol

import attrs

from ego_shared_memory.events import Event, EventDraft, Source

Status = Literal["created", "duplicate", "superseded_previous"]
Role = Literal["agent", "admin"]
PlanState = Literal["open", "expired", "confirmed"]
PlanProblem = Literal["unknown", "expired", "confirmed"]


class StoreError(RuntimeError):
    """The store cannot be opened or used (bad URL, server down, newer schema)."""


class StoreBusyError(StoreError):
    """The store stayed locked by other writers through every retry (HTTP 503 ``busy``, with Retry-After)."""


class StoreFullError(StoreError):
    """The store has no space left (SQLite's disk or ``max_page_count``, PostgreSQL's disk): nothing was written
    (HTTP 503 ``store_full``, with Retry-After)."""


class CleanupPlanError(LookupError):
    """A cleanup plan cannot be confirmed: ``problem`` says why (``unknown``: no plan has this id, HTTP 404;
    ``expired``: HTTP 410; ``confirmed``: it already ran, HTTP 409). Nothing was deleted."""

    def __init__(self, problem: PlanProblem, message: str) -> None:
        super().__init__(message)
        self.problem: PlanProblem = problem


@attrs.frozen
class CleanupPlan:
    """Events proposed for deletion, stored in the store (so the CLI and every gateway replica see the same
    plan): they are deleted only when this plan is confirmed before ``expires_at``, and then exactly these."""

    plan_id: str
    created_at: datetime
    expires_at: datetime
    proposed_by: str
    criteria: Mapping[str, Any]
    """What selected the events (older_than, expired, scopes), as proposed."""
    event_ids: tuple[str, ...]
    counts: Mapping[str, int]
    """Events per scope; each agent's private scope is its own entry."""
    truncated: bool
    """More events matched than a plan holds: confirm this one, then propose again."""
    confirmed_at: datetime | None = None
    confirmed_by: str | None = None
    deleted: int | None = None

    def state(self, now: datetime) -> PlanState:
        if self.confirmed_at is not None:
            return "confirmed"
        return "expired" if now >= self.expires_at else "open"


@attrs.frozen
class CleanupDone:
    plan: CleanupPlan
    deleted: tuple[str, ...]
    already_gone: tuple[str, ...]
    """Events of the plan that no longer existed when it was confirmed."""


@attrs.frozen
class AppendResult:
    event: Event
    status: Status
    warnings: tuple[str, ...] = ()


@attrs.frozen
class Conflict:
    id: int
    scope: str
    dedupe_key: str
    event_id: str
    previous_event_id: str
    detected_at: datetime
    resolution_event_id: str | None = None
    resolved_at: datetime | None = None


@attrs.frozen
class Pin:
    scope: str
    position: int
    dedupe_key: str
    event_id: str
    line: str
    consolidated_at: datetime


@attrs.frozen
class AuditRecord:
    id: int
    at: datetime
    actor: str
    action: str
    event_id: str | None
    detail: str


@attrs.frozen
class TokenInfo:
    agent_id: str
    role: Role
    created_at: datetime
    revoked_at: datetime | None
    fingerprint: str
    """The first characters of the token's hash: enough to tell tokens apart, useless to an attacker."""


@attrs.frozen
class EventFilter:
    """What ``list_events`` and ``search`` select. ``scope_patterns`` may end in ``*`` (``agent:*``)."""

    scopes: tuple[str, ...] = ()
    scope_patterns: tuple[str, ...] = ()
    reader: str | None = None
    """An agent: only scopes it may read (never another agent's). ``None``: every scope (the operator)."""
    kinds: tuple[str, ...] = ()
    agent_id: str | None = None
    dedupe_key: str | None = None
    terms: tuple[str, ...] = ()
    before: datetime | None = None
    include_deprecated: bool = False
    limit: int = 50


class SharedStore(Protocol):
    backend: str
    display_url: str

    def close(self) -> None: ...

    # events
    def append(self, draft: EventDraft, now: datetime) -> AppendResult: ...
    def append_many(self, drafts: Sequence[EventDraft], now: datetime) -> list[AppendResult]: ...
    def import_event(self, event: Event) -> bool: ...
    def snapshot_rows(
        self, scopes: Sequence[str], *, recent: int, pins: int, now: datetime
    ) -> tuple[int, list[Event], list[Event], dict[str, int], int]: ...
    def get(self, event_id: str) -> Event | None: ...
    def heads(self, scope: str, *, by: Literal["recent", "rank"], limit: int, now: datetime) -> list[Event]: ...
    def head_count(self, scope: str) -> int: ...
    def max_seq(self) -> int: ...
    def event_count(self) -> int: ...
    def list_events(self, query: EventFilter) -> list[Event]: ...
    def scopes(self) -> list[str]: ...

    # conflicts
    def open_conflicts(self, scopes: Sequence[str] | None = None) -> list[Conflict]: ...
    def count_open_conflicts(self, scopes: Sequence[str]) -> int: ...
    def record_conflict(self, scope: str, dedupe_key: str, event_id: str, previous: str, *, now: datetime) -> bool: ...
    def undetected_conflicts(self) -> list[tuple[str, str, str, str]]: ...
    def set_conflict_resolution(self, conflict_id: int, event_id: str) -> None: ...
    def resolve_settled_conflicts(self, now: datetime) -> int: ...

    # pins, ttl, deletion, redaction, audit
    def replace_pins(self, scope: str, pins: Sequence[Pin]) -> None: ...
    def pins(self, scopes: Sequence[str] | None = None) -> list[Pin]: ...
    def expired(self, now: datetime, limit: int) -> list[Event]: ...
    def mark_candidates(self, event_ids: Sequence[str], reason: str, now: datetime) -> int: ...
    def candidates(self) -> list[tuple[str, str, datetime]]: ...
    def delete_events(self, event_ids: Sequence[str], actor: str, now: datetime) -> int: ...
    def create_cleanup_plan(
        self,
        event_ids: Sequence[str],
        *,
        criteria: Mapping[str, Any],
        truncated: bool,
        actor: str,
        now: datetime,
        expires_at: datetime,
    ) -> CleanupPlan: ...
    def cleanup_plan(self, plan_id: str) -> CleanupPlan | None: ...
    def confirm_cleanup_plan(self, plan_id: str, actor: str, now: datetime) -> CleanupDone: ...
    def events_after(self, seq: int, limit: int) -> list[Event]: ...
    def redact_event(
        self,
        event_id: str,
        content_md: str,
        source: Source,
        kinds: Sequence[str],
        *,
        actor: str,
        now: datetime,
        run_id: str | None = None,
    ) -> bool: ...
    def redact_key(
        self, scope: str, dedupe_key: str, new_key: str, kinds: Sequence[str], *, actor: str, now: datetime
    ) -> list[str]: ...
    def redact_scope(
        self, scope: str, new_scope: str, kinds: Sequence[str], *, actor: str, now: datetime
    ) -> list[str]: ...
    def audit(self, limit: int = 100) -> list[AuditRecord]: ...
    def add_audit(self, actor: str, action: str, event_id: str | None, detail: str, *, now: datetime) -> None: ...
    def get_state(self, name: str) -> str | None: ...
    def set_state(self, name: str, value: str) -> None: ...

    # tokens
    def add_token(self, token_hash: str, agent_id: str, role: Role, now: datetime) -> None: ...
    def token_owner(self, token_hash: str) -> tuple[str, Role] | None: ...
    def tokens(self) -> list[TokenInfo]: ...
    def revoke_tokens(self, agent_id: str, now: datetime) -> int: ...
    def token_rows(self) -> list[tuple[str, str, Role, datetime, datetime | None]]: ...
    def import_token(
        self, token_hash: str, agent_id: str, role: Role, created: datetime, revoked: datetime | None
    ) -> bool: ...
