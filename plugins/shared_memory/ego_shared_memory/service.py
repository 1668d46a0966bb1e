"""What the gateway does, independent of HTTP: append, snapshot, lookup and search for an agent.

The gateway's routes and the agent side's local mode both call :class:`SharedMemory`; it validates, checks
permissions and turns store results into the JSON documents the OpenAPI description promises.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.events import (
    JANITOR_KIND,
    KINDS,
    AccessError,
    EventError,
    check_access,
    iso,
    may_access,
    parse_event,
    parse_scopes,
)
from ego_shared_memory.pins import compose_pins
from ego_shared_memory.store import EventFilter, SqlStore
from ego_shared_memory.store.sql import COUNT_CAP

_log = logging.getLogger("ego.shared_memory.gateway")

MAX_SEARCH = 100
MAX_TERMS = 8
MAX_SCOPES = 32
"""Scopes one snapshot or search may name: each costs the store work (a snapshot, three subqueries), so a
request naming thousands could hold the store for seconds."""
MAX_QUERY_CHARS = 512
PIN_CANDIDATES = 40
"""Live entries per scope considered for the pinned summary (the budget holds fewer)."""


def _scopes(scopes: str | Sequence[str]) -> list[str]:
    """:func:`parse_scopes`, at most :data:`MAX_SCOPES` of them."""
    count = scopes.count(",") + 1 if isinstance(scopes, str) else len(scopes)
    if count > MAX_SCOPES:
        raise EventError("scopes", f"at most {MAX_SCOPES} comma-separated scopes")
    return parse_scopes(scopes)


class NotFoundError(LookupError):
    """No such event (HTTP 404)."""


class SharedMemory:
    def __init__(self, store: SqlStore, settings: GatewaySettings) -> None:
        self.store = store
        self.settings = settings

    # -- write -------------------------------------------------------------------------------------

    def append(self, body: object, *, agent_id: str, now: datetime) -> dict[str, Any]:
        draft, warnings = parse_event(body, agent_id=agent_id, max_chars=self.settings.content_max_chars)
        check_access(agent_id, draft.scope, "write")
        if len(draft.content_md) > self.settings.content_warn_chars:
            warnings.append(
                f"content_md has {len(draft.content_md)} characters; {self.settings.content_warn_chars} or fewer "
                "is recommended (a short summary reads better)"
            )
        result = self.store.append(draft, now)
        return {
            "event_id": result.event.event_id,
            "status": result.status,
            "warnings": [*warnings, *result.warnings],
            "event": result.event.as_dict(now),
        }

    # -- read --------------------------------------------------------------------------------------

    def default_scopes(self, agent_id: str) -> list[str]:
        return ["global", f"agent:{agent_id}"]

    def snapshot(
        self, *, agent_id: str, scopes: str | Sequence[str] | None, limit_recent: int, now: datetime
    ) -> dict[str, Any]:
        chosen = _scopes(scopes) if scopes else self.default_scopes(agent_id)
        for scope in chosen:
            check_access(agent_id, scope, "read")
        if not 0 <= limit_recent <= self.settings.max_recent:
            raise EventError("limit_recent", f"an integer from 0 to {self.settings.max_recent}")
        top, recent, candidates, counts, conflicts = self.store.snapshot_rows(
            chosen, recent=limit_recent, pins=PIN_CANDIDATES, now=now
        )
        complete = all(n <= COUNT_CAP for n in counts.values())
        counts = {scope: min(n, COUNT_CAP) for scope, n in counts.items()}
        conflicts = min(conflicts, COUNT_CAP)
        pins = compose_pins(
            candidates, total=sum(counts.values()), complete=complete, budget_tokens=self.settings.pin_budget_tokens
        )
        identity = f"{agent_id}|{','.join(chosen)}|{limit_recent}|{top}|{self.settings.ruleset_stamp}"
        snapshot_id = f"snap_{top}_{hashlib.sha256(identity.encode()).hexdigest()[:12]}"
        _log.info("snapshot %s read by %s (%s)", snapshot_id, agent_id, ",".join(chosen))
        return {
            "snapshot_id": snapshot_id,
            "agent_id": agent_id,
            "scopes": chosen,
            "ruleset_stamp": self.settings.ruleset_stamp,
            "generated_at": iso(now),
            "pinned_md": pins.markdown,
            "pinned_event_ids": [event.event_id for event in pins.events],
            "pinned_tokens": pins.tokens,
            "pin_budget_tokens": self.settings.pin_budget_tokens,
            "entries": counts,
            "entries_complete": complete,
            "open_conflicts": conflicts,
            "recent_events": [event.as_dict(now) for event in recent],
        }

    def event(self, *, agent_id: str, event_id: str, now: datetime) -> dict[str, Any]:
        found = self.store.get(event_id)
        if found is None:
            raise NotFoundError(f"no event has the id {event_id}")
        if not may_access(agent_id, found.scope):
            raise AccessError(f"{found.scope} is private to its agent; {agent_id} may not read it")
        return found.as_dict(now)

    def search(
        self,
        *,
        agent_id: str,
        query: str,
        scopes: str | None,
        kind: str | None,
        limit: int,
        include_deprecated: bool,
        now: datetime,
    ) -> dict[str, Any]:
        if len(query) > MAX_QUERY_CHARS or "\x00" in query:
            raise EventError("q", f"one or more words to look for: at most {MAX_QUERY_CHARS} characters, no NUL")
        terms = tuple(term for term in query.split() if term)[:MAX_TERMS]
        if not terms:
            raise EventError("q", "one or more words to look for")
        if not 1 <= limit <= MAX_SEARCH:
            raise EventError("limit", f"an integer from 1 to {MAX_SEARCH}")
        if kind is not None and kind not in (*KINDS, JANITOR_KIND):
            raise EventError("kind", f"one of {', '.join((*KINDS, JANITOR_KIND))}")
        chosen = _scopes(scopes) if scopes else []
        for scope in chosen:
            check_access(agent_id, scope, "read")
        events = self.store.list_events(
            EventFilter(
                scopes=tuple(chosen),
                reader=agent_id,
                kinds=(kind,) if kind else (),
                terms=terms,
                include_deprecated=include_deprecated,
                limit=limit,
            )
        )
        return {"query": " ".join(terms), "events": [event.as_dict(now) for event in events]}
