"""The Shared view: the shared memory as the configured agent sees it.

Everything is read through the shared_memory plugin's client, the way the agent's own tools read it: the
gateway's HTTP API with the agent's token (``gateway_url`` + ``token``), or, for an agent configured with a
store on this machine (``db`` + ``agent_id``), the plugin's local client. The dashboard never opens the
gateway's database itself.

The janitor's part (open conflicts, the audit trail, cleanup plans) needs an operator token of the gateway
(``ego gateway token create ops --admin``) given to the dashboard in ``EGO_DASHBOARD_GATEWAY_TOKEN``; without it
the view shows what the agent's token reads. Only what the configured agent may read is shown: a conflict in
another agent's private scope is left out, an audit record naming another agent's scope keeps its action and
time but not its detail, and a cleanup plan that covers another agent's scope cannot be confirmed from here.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ego_core import PluginHost

OPERATOR_TOKEN_ENV = "EGO_DASHBOARD_GATEWAY_TOKEN"  # noqa: S105 (the variable's name, not a token)
"""The gateway's operator token the dashboard uses for the janitor's endpoints (never the agent's token)."""
EVENTS_SHOWN = 50
AUDIT_SHOWN = 50
PLAN_EVENTS_SHOWN = 20
PLAN_ID = re.compile(r"^plan_[0-9a-f]{24}\Z")
SCOPE = re.compile(r"^(global|project:[a-z0-9][a-z0-9_-]{0,63}|agent:[a-z][a-z0-9_-]{0,31})\Z")
AGENT_SCOPE = re.compile(r"agent:([a-z][a-z0-9_-]{0,31})")
DURATION = re.compile(r"^[1-9][0-9]{0,5}[hdw]\Z")
EVENT_FIELDS = (
    "event_id",
    "agent_id",
    "scope",
    "kind",
    "dedupe_key",
    "confidence",
    "content_md",
    "created_at",
    "expires_at",
    "expired",
    "supersedes",
    "deprecated",
    "redacted",
)


class SharedError(Exception):
    """A request the dashboard cannot carry out (``status``: the HTTP status the dashboard answers with)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class AgentClient(Protocol):
    """The plugin's client, as the agent's tools have it."""

    def describe(self) -> str: ...
    def snapshot(self, scopes: Sequence[str] | None, limit: int) -> dict[str, Any]: ...
    def close(self) -> None: ...


class Gateway(Protocol):
    """A gateway client able to make any of the gateway's idempotent calls."""

    def request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> tuple[int, dict[str, Any]]: ...
    def close(self) -> None: ...


READERS = "shared_memory.readers"


class Readers(Protocol):
    """The shared memory plugin's ``shared_memory.readers`` service: new clients, and the errors they raise."""

    unreachable: type[Exception]
    refused: type[Exception]

    def agent(self) -> AgentClient: ...
    def gateway(self, token: str | None = None) -> Gateway | None: ...


def _reason(exc: Exception) -> str:
    """Why a shared-memory client could not reach its store (its ``reason``)."""
    return str(getattr(exc, "reason", exc))


def _refused(status: int, payload: Mapping[str, Any]) -> SharedError:
    message = str(payload.get("message") or payload.get("error") or f"HTTP {status}")
    if status in (401, 403):
        return SharedError(409, f"the gateway refused the dashboard's operator token (HTTP {status}): {message}")
    return SharedError(status if status in (400, 404, 409, 410, 422) else 502, f"the gateway: {message}")


def may_read(agent_id: str | None, scope: str) -> bool:
    """The gateway's rule: global and project scopes are everyone's; ``agent:X`` is X's alone."""
    owner = scope.removeprefix("agent:") if scope.startswith("agent:") else None
    return owner is None or owner == agent_id


def event_row(event: Mapping[str, Any]) -> dict[str, Any]:
    return {key: event.get(key) for key in EVENT_FIELDS}


class SharedView:
    """The shared memory plugin's state, its events, pins and conflicts as the agent reads them, and with the
    operator token the janitor's conflicts, audit and cleanup plans. Clients are made at first use."""

    def __init__(self, host: PluginHost, operator_token: str | None = None) -> None:
        self.host = host
        self.operator_token = operator_token or None
        self._lock = threading.Lock()
        self._agent: AgentClient | None = None
        self._agent_calls: Gateway | None = None
        self._operator: Gateway | None = None
        self._agent_id: str | None = None

    # -- configuration ------------------------------------------------------------------------------

    def _config(self) -> Any | None:
        if "shared_memory" not in self.host.plugin_ids() or not self.host.is_active("shared_memory"):
            return None
        return self.host.context("shared_memory").config

    def state(self) -> dict[str, Any]:
        config = self._config()
        enabled = config is not None
        mode = None
        if config is not None and getattr(config, "gateway_url", None):
            mode = "gateway"
        elif config is not None and getattr(config, "db", None):
            mode = "local"
        return {
            "enabled": enabled,
            "configured": mode is not None,
            "mode": mode,
            "operator": mode == "gateway" and self.operator_token is not None,
            "tools": [t.name for p, t in self.host.tools() if p == "shared_memory"],
        }

    def _readers(self) -> Readers:
        config = self._config()
        if config is None:
            raise SharedError(409, "the shared memory plugin is not enabled")
        readers: Readers | None = self.host.services.get(READERS)
        if readers is None:
            raise SharedError(409, "the shared memory plugin is not configured (gateway_url or db)")
        return readers

    def _clients(self) -> tuple[AgentClient, Gateway | None, Gateway | None]:
        readers = self._readers()
        with self._lock:
            if self._agent is None:
                self._agent = readers.agent()
                self._agent_calls = readers.gateway()
                if self._agent_calls is not None and self.operator_token:
                    self._operator = readers.gateway(self.operator_token)
                if self._agent_calls is None:
                    self._agent_id = getattr(self._config(), "agent_id", None)
            return self._agent, self._agent_calls, self._operator

    def close(self) -> None:
        with self._lock:
            for client in (self._agent, self._agent_calls, self._operator):
                if client is not None:
                    client.close()
            self._agent = self._agent_calls = self._operator = None

    # -- reading --------------------------------------------------------------------------------------

    def _scopes(self, requested: str | None, agent: AgentClient) -> list[str] | None:
        if requested:
            scopes = [s.strip() for s in requested.split(",") if s.strip()]
            if not scopes or len(scopes) > 8 or any(not SCOPE.match(s) for s in scopes):
                raise SharedError(400, "scopes: expected up to 8 scopes: global, project:<slug>, agent:<id>")
            return scopes
        project = getattr(self._config(), "project", None)
        if not project:
            return None  # the gateway's default for this agent: global and its own scope
        if self._agent_id is None:
            self._agent_id = str(agent.snapshot(None, 0).get("agent_id") or "") or None
        own = [f"agent:{self._agent_id}"] if self._agent_id else []
        return ["global", f"project:{project}", *own]

    def read(self, requested_scopes: str | None = None) -> dict[str, Any]:
        out = self.state()
        if not out["configured"]:
            return out
        readers = self._readers()
        unreachable, refused = readers.unreachable, readers.refused
        agent, _calls, operator = self._clients()
        try:
            snapshot = agent.snapshot(self._scopes(requested_scopes, agent), EVENTS_SHOWN)
        except unreachable as exc:
            return {**out, "reachable": False, "error": _reason(exc), "where": agent.describe()}
        except refused as exc:
            payload: Mapping[str, Any] = getattr(exc, "payload", {})
            raise SharedError(400, str(payload.get("message") or payload.get("error"))) from None
        self._agent_id = str(snapshot.get("agent_id") or self._agent_id or "") or None
        by_scope: dict[str, list[dict[str, Any]]] = {scope: [] for scope in snapshot.get("scopes", [])}
        for event in snapshot.get("recent_events", []):
            if may_read(self._agent_id, str(event.get("scope"))):
                by_scope.setdefault(str(event.get("scope")), []).append(event_row(event))
        out.update(
            reachable=True,
            where=agent.describe(),
            agent_id=self._agent_id,
            scopes=snapshot.get("scopes", []),
            snapshot_id=snapshot.get("snapshot_id"),
            generated_at=snapshot.get("generated_at"),
            ruleset_stamp=snapshot.get("ruleset_stamp"),
            pinned_md=snapshot.get("pinned_md", ""),
            pinned_event_ids=snapshot.get("pinned_event_ids", []),
            entries=snapshot.get("entries", {}),
            open_conflicts=snapshot.get("open_conflicts", 0),
            events_by_scope=by_scope,
        )
        out["conflicts"] = out["audit"] = None
        out["operator_error"] = None
        if operator is not None:
            try:
                out["conflicts"] = self._conflicts(operator)
                out["audit"] = self._audit(operator)
            except SharedError as exc:
                out["operator_error"] = exc.message
            except unreachable as exc:
                out["operator_error"] = _reason(exc)
        return out

    def _operator_call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> dict[str, Any]:
        unreachable = self._readers().unreachable
        _agent, _calls, operator = self._clients()
        if operator is None:
            raise SharedError(
                409, f"the janitor needs the gateway's operator token in {OPERATOR_TOKEN_ENV} (and a gateway_url)"
            )
        try:
            status, payload = operator.request(method, path, body)
        except unreachable as exc:
            raise SharedError(502, _reason(exc)) from None
        if status not in (200, 201):
            raise _refused(status, payload)
        return payload

    def _conflicts(self, operator: Gateway) -> list[dict[str, Any]]:
        status, payload = operator.request("GET", "/v1/janitor/conflicts")
        if status != 200:
            raise _refused(status, payload)
        return [
            {key: c.get(key) for key in ("scope", "dedupe_key", "event_id", "previous_event_id", "detected_at")}
            | {"asked_in": c.get("resolution_event_id")}
            for c in payload.get("conflicts", [])
            if may_read(self._agent_id, str(c.get("scope")))
        ]

    def _audit(self, operator: Gateway) -> list[dict[str, Any]]:
        status, payload = operator.request("GET", f"/v1/janitor/audit?limit={AUDIT_SHOWN}")
        if status != 200:
            raise _refused(status, payload)
        rows = []
        for record in payload.get("audit", []):
            detail = str(record.get("detail") or "")
            hidden = any(owner != self._agent_id for owner in AGENT_SCOPE.findall(detail))
            rows.append(
                {
                    "at": record.get("at"),
                    "actor": record.get("actor"),
                    "action": record.get("action"),
                    "event_id": None if hidden else record.get("event_id"),
                    "detail": "(about a scope private to another agent)" if hidden else detail,
                }
            )
        return rows

    # -- cleanup plans ------------------------------------------------------------------------------

    def propose(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Propose a cleanup plan (the gateway deletes nothing yet): events older than ``older_than`` (30d, 12h,
        2w) and/or expired ones, in the shared scopes (global and every project) or the agent's own."""
        older = body.get("older_than")
        expired = body.get("expired", False)
        where = body.get("where", "shared")
        if older is not None and (not isinstance(older, str) or not DURATION.match(older)):
            raise SharedError(400, "older_than: expected a duration such as 30d, 12h or 2w")
        if not isinstance(expired, bool):
            raise SharedError(400, "expired: expected true or false")
        if older is None and not expired:
            raise SharedError(400, "older_than: give a duration, or expired: true")
        if where not in ("shared", "own"):
            raise SharedError(400, "where: expected shared (global and every project) or own (the agent's scope)")
        self._clients()
        if where == "own":
            if self._agent_id is None:
                self.read()
            if self._agent_id is None:
                raise SharedError(502, "the gateway did not say which agent the token belongs to")
            scopes = [f"agent:{self._agent_id}"]
        else:
            scopes = []
        request: dict[str, Any] = {"expired": expired, "scopes": scopes}
        if older is not None:
            request["older_than"] = older
        return self._plan_view(self._operator_call("POST", "/v1/janitor/cleanup", request))

    def plan(self, plan_id: str) -> dict[str, Any]:
        return self._plan_view(self._operator_call("GET", f"/v1/janitor/cleanup/{self._plan_id(plan_id)}"))

    def confirm(self, plan_id: str) -> dict[str, Any]:
        """Delete exactly the plan's events, once, if every scope it covers is one the agent may read."""
        chosen = self._plan_id(plan_id)
        plan = self._operator_call("GET", f"/v1/janitor/cleanup/{chosen}")
        if self._agent_id is None:
            self.read()
        foreign = [scope for scope in plan.get("counts", {}) if not may_read(self._agent_id, scope)]
        if foreign:
            raise SharedError(
                403,
                "this plan covers a scope private to another agent; confirm it with `ego shared cleanup --confirm`",
            )
        done = self._operator_call("POST", f"/v1/janitor/cleanup/{chosen}/confirm", {})
        return {
            "plan_id": done.get("plan_id"),
            "state": done.get("state"),
            "deleted": len(done.get("deleted_event_ids", [])),
            "already_gone": len(done.get("already_gone", [])),
        }

    @staticmethod
    def _plan_id(plan_id: str) -> str:
        if not PLAN_ID.match(plan_id):
            raise SharedError(400, "plan id: expected plan_ and 24 hexadecimal digits")
        return plan_id

    def _plan_view(self, plan: Mapping[str, Any]) -> dict[str, Any]:
        """The plan, with the first events it would delete as the agent's token reads them (an event of a scope
        the agent may not read is named by its scope only)."""
        unreachable = self._readers().unreachable
        _agent, calls, _operator = self._clients()
        counts = {str(k): v for k, v in dict(plan.get("counts", {})).items()}
        readable = all(may_read(self._agent_id, scope) for scope in counts)
        events: list[dict[str, Any]] = []
        for event_id in list(plan.get("event_ids", []))[:PLAN_EVENTS_SHOWN]:
            row: dict[str, Any] = {"event_id": event_id}
            if calls is not None:
                try:
                    status, payload = calls.request("GET", f"/v1/memory/events/{event_id}")
                except unreachable:
                    status, payload = 502, {}
                if status == 200 and may_read(self._agent_id, str(payload.get("scope"))):
                    row = event_row(payload)
                elif status == 403:
                    row = {"event_id": None, "scope": "another agent's private scope"}
                elif status == 404:
                    row["gone"] = True
            events.append(row)
        return {
            "plan_id": plan.get("plan_id"),
            "state": plan.get("state"),
            "created_at": plan.get("created_at"),
            "expires_at": plan.get("expires_at"),
            "proposed_by": plan.get("proposed_by"),
            "criteria": plan.get("criteria", {}),
            "total": plan.get("total", 0),
            "counts": counts,
            "truncated": plan.get("truncated", False),
            "deleted": plan.get("deleted"),
            "confirmable": readable and plan.get("state") == "open",
            "events": events,
        }
