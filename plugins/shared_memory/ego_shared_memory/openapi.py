"""The gateway's OpenAPI 3.1 description (served at ``/openapi.json``); the tests validate every response
against it, and check that it lists exactly the routes the app serves."""

from __future__ import annotations

import copy
from typing import Any

from ego_shared_memory.events import (
    CONFIDENCES,
    JANITOR_KIND,
    KINDS,
    MAX_TTL_DAYS,
    SOURCE_SYSTEMS,
)
from ego_shared_memory.janitor import MAX_CLEANUP_SCOPES, SCANNED_FIELDS, STEPS

VERSION = "1.0.0"

_NULLABLE_STRING: dict[str, Any] = {"type": ["string", "null"]}
_SCOPE = {
    "type": "string",
    "pattern": r"^(global|project:[a-z0-9][a-z0-9_-]{0,63}|agent:[a-z][a-z0-9_-]{0,31})$",
}
_EVENT_ID = {"type": "string", "pattern": "^evt_[0-9a-f]{24}$"}
_AGENT_ID = {"type": "string", "pattern": "^[a-z][a-z0-9_-]{0,31}$"}
_SOURCE_ID = {"type": ["string", "null"], "pattern": "^[A-Za-z0-9._:/@#-]{1,128}$"}
_ONE_SCOPE = r"(global|project:[a-z0-9][a-z0-9_-]{0,63}|agent:[a-z][a-z0-9_-]{0,31})"
_CLEANUP_SCOPE = {
    "type": "string",
    "pattern": rf"^(\*|agent:\*|project:\*|{_ONE_SCOPE})$",
    "description": "a scope, or one of the patterns * (global and every project), agent:* and project:*",
}
_SCOPE_LIST = {
    "type": "string",
    "pattern": rf"^ *{_ONE_SCOPE} *(, *{_ONE_SCOPE} *){{0,31}}$",
    "description": "at most 32 (MAX_SCOPES) comma-separated scopes",
}
_TEXT = {
    "type": "string",
    "minLength": 1,
    "pattern": "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$",
    "description": "not only whitespace; no NUL (\\u0000) and no unpaired surrogate (neither store keeps them)",
}
_TIME = {"type": "string", "format": "date-time"}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _obj(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, **extra}
    schema["required"] = list(properties) if required is None else required
    return schema


_PLAN_ID = {"type": "string", "pattern": r"^plan_[0-9a-f]{24}$"}
_PLAN_FIELDS: dict[str, Any] = {
    "plan_id": _PLAN_ID,
    "state": {"type": "string", "enum": ["open", "expired", "confirmed"]},
    "created_at": _TIME,
    "expires_at": _TIME,
    "proposed_by": {"type": "string"},
    "criteria": _obj(
        {
            "older_than": {"type": ["string", "null"]},
            "created_before": {"oneOf": [_TIME, {"type": "null"}]},
            "expired": {"type": "boolean"},
            "scopes": {"type": "array", "items": {"type": "string"}},
        }
    ),
    "total": {"type": "integer", "minimum": 0},
    "counts": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 1}},
    "truncated": {"type": "boolean"},
    "event_ids": {"type": "array", "items": _EVENT_ID},
    "confirmed_at": {"oneOf": [_TIME, {"type": "null"}]},
    "confirmed_by": {"type": ["string", "null"]},
    "deleted": {"type": ["integer", "null"], "minimum": 0},
}

SCHEMAS: dict[str, Any] = {
    "Source": _obj(
        {
            "system": {"type": "string", "enum": list(SOURCE_SYSTEMS)},
            "thread_id": _SOURCE_ID,
            "message_id": _SOURCE_ID,
        },
        required=[],
    ),
    "MemoryEvent": _obj(
        {
            "agent_id": {**_AGENT_ID, "description": "optional; must be the token's agent"},
            "run_id": {"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,128}$"},
            "scope": _SCOPE,
            "kind": {"type": "string", "enum": list(KINDS)},
            "dedupe_key": {"type": "string", "pattern": "^[a-z0-9_:-]{1,64}$"},
            "confidence": {"type": "string", "enum": list(CONFIDENCES)},
            "content_md": {**_TEXT, "description": "Markdown; at most content_max_chars (default 4000) characters"},
            "source": _ref("Source"),
            "supersedes": {"oneOf": [_EVENT_ID, {"type": "null"}]},
            "ttl_days": {"type": "integer", "minimum": 0, "maximum": MAX_TTL_DAYS},
        },
        required=["run_id", "scope", "kind", "dedupe_key", "confidence", "content_md"],
    ),
    "StoredEvent": _obj(
        {
            "event_id": _EVENT_ID,
            "agent_id": {"type": "string"},
            "run_id": {"type": "string"},
            "scope": _SCOPE,
            "kind": {"type": "string", "enum": [*KINDS, JANITOR_KIND]},
            "dedupe_key": {"type": "string"},
            "confidence": {"type": "string", "enum": list(CONFIDENCES)},
            "content_md": {"type": "string"},
            "source": _obj(
                {
                    "system": {"type": "string", "enum": list(SOURCE_SYSTEMS)},
                    "thread_id": _NULLABLE_STRING,
                    "message_id": _NULLABLE_STRING,
                }
            ),
            "supersedes": {"oneOf": [_EVENT_ID, {"type": "null"}]},
            "ttl_days": {"type": "integer", "minimum": 0},
            "created_at": _TIME,
            "expires_at": {"oneOf": [_TIME, {"type": "null"}]},
            "deprecated": {"type": "boolean"},
            "redacted": {"type": "boolean"},
            "expired": {"type": "boolean"},
        },
        additionalProperties=False,
    ),
    "AppendResult": _obj(
        {
            "event_id": _EVENT_ID,
            "status": {"type": "string", "enum": ["created", "duplicate", "superseded_previous"]},
            "warnings": {"type": "array", "items": {"type": "string"}},
            "event": _ref("StoredEvent"),
        },
        additionalProperties=False,
    ),
    "Snapshot": _obj(
        {
            "snapshot_id": {"type": "string", "pattern": "^snap_[0-9]+_[0-9a-f]{12}$"},
            "agent_id": {"type": "string"},
            "scopes": {"type": "array", "items": _SCOPE, "minItems": 1},
            "ruleset_stamp": {"type": "string"},
            "generated_at": _TIME,
            "pinned_md": {"type": "string"},
            "pinned_event_ids": {"type": "array", "items": _EVENT_ID},
            "pinned_tokens": {"type": "integer", "minimum": 0},
            "pin_budget_tokens": {"type": "integer", "minimum": 1},
            "entries": {
                "type": "object",
                "additionalProperties": {"type": "integer", "minimum": 0, "maximum": 1000},
                "description": "live entries per scope, counted up to 1000",
            },
            "entries_complete": {"type": "boolean", "description": "false: some scope holds more than 1000"},
            "open_conflicts": {"type": "integer", "minimum": 0},
            "recent_events": {"type": "array", "items": _ref("StoredEvent")},
        },
        additionalProperties=False,
    ),
    "SearchResult": _obj(
        {"query": {"type": "string"}, "events": {"type": "array", "items": _ref("StoredEvent")}},
        additionalProperties=False,
    ),
    "Health": _obj(
        {
            "status": {"const": "ok"},
            "backend": {"type": "string", "enum": ["sqlite", "postgresql"]},
            "ruleset_stamp": {"type": "string"},
            "last_seq": {"type": "integer", "minimum": 0},
        },
        additionalProperties=False,
    ),
    "Error": _obj(
        {
            "error": {"type": "string"},
            "message": {"type": "string"},
            "field": {"type": "string"},
            "rule": {"type": "string"},
            "kinds": {"type": "array", "items": {"type": "string"}},
        },
        required=["error", "message"],
        additionalProperties=False,
    ),
    "JanitorRequest": _obj(
        {
            "steps": {"type": "array", "items": {"type": "string", "enum": list(STEPS)}, "minItems": 1},
            "full_scan": {"type": "boolean"},
        },
        required=[],
    ),
    "JanitorReport": _obj(
        {
            "at": _TIME,
            "steps": {"type": "array", "items": {"type": "string", "enum": list(STEPS)}},
            "scan": _obj(
                {
                    "scanned": {"type": "integer", "minimum": 0},
                    "redacted": {
                        "type": "array",
                        "items": _obj(
                            {
                                "event_id": _EVENT_ID,
                                "fields": {"type": "array", "items": {"type": "string", "enum": list(SCANNED_FIELDS)}},
                                "kinds": {"type": "array", "items": {"type": "string"}},
                            }
                        ),
                    },
                    "flagged": {
                        "type": "array",
                        "items": _obj(
                            {
                                "event_id": _EVENT_ID,
                                "field": {"type": "string", "enum": ["scope"]},
                                "kinds": {"type": "array", "items": {"type": "string"}},
                            }
                        ),
                    },
                }
            ),
            "conflicts": _obj(
                {
                    "settled": {"type": "integer", "minimum": 0},
                    "detected": {"type": "integer", "minimum": 0},
                    "resolution_events": {"type": "integer", "minimum": 0},
                }
            ),
            "ttl": _obj(
                {"expired": {"type": "integer", "minimum": 0}, "newly_marked": {"type": "integer", "minimum": 0}}
            ),
            "consolidate": {
                "type": "array",
                "items": _obj(
                    {
                        "scope": _SCOPE,
                        "pinned": {"type": "integer", "minimum": 0},
                        "entries": {"type": "integer", "minimum": 0},
                        "tokens": {"type": "integer", "minimum": 0},
                    }
                ),
            },
        },
        required=["at", "steps"],
        additionalProperties=False,
    ),
    "ConflictList": _obj(
        {
            "conflicts": {
                "type": "array",
                "items": _obj(
                    {
                        "id": {"type": "integer"},
                        "scope": _SCOPE,
                        "dedupe_key": {"type": "string"},
                        "event_id": _EVENT_ID,
                        "previous_event_id": _EVENT_ID,
                        "detected_at": _TIME,
                        "resolution_event_id": {"oneOf": [_EVENT_ID, {"type": "null"}]},
                    }
                ),
            }
        }
    ),
    "CandidateList": _obj(
        {
            "candidates": {
                "type": "array",
                "items": _obj({"event_id": _EVENT_ID, "reason": {"type": "string"}, "marked_at": _TIME}),
            }
        }
    ),
    "AuditList": _obj(
        {
            "audit": {
                "type": "array",
                "items": _obj(
                    {
                        "id": {"type": "integer"},
                        "at": _TIME,
                        "actor": {"type": "string"},
                        "action": {
                            "type": "string",
                            "enum": ["janitor", "redact", "delete", "cleanup_plan", "cleanup_confirm"],
                        },
                        "event_id": {"oneOf": [_EVENT_ID, {"type": "null"}]},
                        "detail": {"type": "string"},
                    }
                ),
            }
        }
    ),
    "CleanupRequest": _obj(
        {
            "older_than": {"type": "string", "pattern": r"^\d+\s*[dhw]$"},
            "scopes": {"type": "array", "items": _CLEANUP_SCOPE, "maxItems": MAX_CLEANUP_SCOPES},
            "expired": {"type": "boolean"},
        },
        required=[],
        description=(
            "What to propose deleting: older_than and/or expired. Without scopes (or with *): global and every "
            "project; an agent's private scope only when named (agent:<id> or agent:*). There is no approve: "
            "confirming the plan's id deletes"
        ),
    ),
    "CleanupPlan": _obj(
        _PLAN_FIELDS,
        description="A proposed deletion: confirm its plan_id before expires_at to delete exactly event_ids",
    ),
    "CleanupConfirmed": _obj(
        {
            **_PLAN_FIELDS,
            "deleted_event_ids": {"type": "array", "items": _EVENT_ID},
            "already_gone": {"type": "array", "items": _EVENT_ID},
        }
    ),
}


def _json(schema: str) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": _ref(schema)}}}


def _answer(description: str, schema: str) -> dict[str, Any]:
    return {"description": description, **_json(schema)}


ERRORS = {
    "401": _answer("no token, or an unknown or revoked one", "Error"),
    "403": _answer("the token may not do this (another agent's scope, body agent_id mismatch, token role)", "Error"),
    "422": _answer("a field breaks its rule (field and rule named), or sensitive data was refused (kinds)", "Error"),
    "503": {
        **_answer("busy (a check or the store's lock took too long), the store is full, or it is unavailable", "Error"),
        "headers": {
            "Retry-After": {"description": "seconds to wait before trying again", "schema": {"type": "integer"}}
        },
    },
}


UNSUPPORTED = _answer("a body sent without Content-Type: application/json", "Error")


def _query(name: str, schema: dict[str, Any], description: str, required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "schema": schema, "description": description}


def _operation(summary: str, responses: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"summary": summary, "responses": responses, **extra}


_AGENT: list[dict[str, list[str]]] = [{"agentToken": []}]
_PLAN_PARAMETER = {"name": "plan_id", "in": "path", "required": True, "schema": _PLAN_ID}
_ADMIN: list[dict[str, list[str]]] = [{"operatorToken": []}]

PATHS: dict[str, Any] = {
    "/openapi.json": {
        "get": _operation(
            "This document",
            {"200": {"description": "the OpenAPI description", "content": {"application/json": {}}}},
            security=[],
        )
    },
    "/v1/health": {
        "get": _operation(
            "Liveness and the store backend", {"200": _answer("ok", "Health"), "503": ERRORS["503"]}, security=[]
        )
    },
    "/v1/memory/snapshot": {
        "get": _operation(
            "Read the pinned summary and the recent entries (latest per dedupe_key) of some scopes",
            {"200": _answer("the snapshot", "Snapshot"), **ERRORS},
            parameters=[
                _query("agent_id", _AGENT_ID, "optional; must be the token's agent"),
                _query("scopes", _SCOPE_LIST, "comma-separated scopes (default: global,agent:<you>)"),
                _query(
                    "limit_recent", {"type": "integer", "minimum": 0, "maximum": 200}, "recent entries (default 50)"
                ),
            ],
            security=_AGENT,
        )
    },
    "/v1/memory/append": {
        "post": _operation(
            "Append one memory event (idempotent)",
            {
                "201": _answer("created (or superseded_previous)", "AppendResult"),
                "200": _answer(
                    "duplicate: the same event (agent, run, scope, dedupe_key, content, kind, confidence, supersedes "
                    "and ttl_days) was appended before; its event_id. A change to any of them is a new event (201)",
                    "AppendResult",
                ),
                "400": _answer("the body is not JSON", "Error"),
                "413": _answer("the body is too large", "Error"),
                "415": UNSUPPORTED,
                **ERRORS,
            },
            requestBody={"required": True, **_json("MemoryEvent")},
            security=_AGENT,
        )
    },
    "/v1/memory/events/{event_id}": {
        "get": _operation(
            "One event by id",
            {"200": _answer("the event", "StoredEvent"), "404": _answer("no such event", "Error"), **ERRORS},
            parameters=[{"name": "event_id", "in": "path", "required": True, "schema": _EVENT_ID}],
            security=_AGENT,
        )
    },
    "/v1/memory/search": {
        "get": _operation(
            "Events whose content or dedupe_key holds every word, newest first",
            {"200": _answer("matching events", "SearchResult"), **ERRORS},
            parameters=[
                _query("q", {**_TEXT, "maxLength": 512}, "words to look for (the first 8 count)", required=True),
                _query("scopes", _SCOPE_LIST, "comma-separated scopes (default: every scope you may read)"),
                _query("kind", {"type": "string", "enum": [*KINDS, JANITOR_KIND]}, "only this kind"),
                _query("limit", {"type": "integer", "minimum": 1, "maximum": 100}, "at most this many (default 20)"),
                _query(
                    "include_deprecated",
                    {"type": "boolean"},
                    "also superseded events: true or false, 1 or 0 (default false)",
                ),
            ],
            security=_AGENT,
        )
    },
    "/v1/janitor/run": {
        "post": _operation(
            "Run janitor steps (consolidate pins, mark expired ttl, conflicts, scan and redact); never deletes",
            {
                "200": _answer("what each step did", "JanitorReport"),
                "400": _answer("not JSON", "Error"),
                "413": _answer("the body is too large", "Error"),
                "415": UNSUPPORTED,
                **ERRORS,
            },
            requestBody={"required": False, **_json("JanitorRequest")},
            security=_ADMIN,
        )
    },
    "/v1/janitor/conflicts": {
        "get": _operation(
            "Open conflicts", {"200": _answer("open conflicts", "ConflictList"), **ERRORS}, security=_ADMIN
        )
    },
    "/v1/janitor/candidates": {
        "get": _operation(
            "Cleanup candidates (expired ttl)",
            {"200": _answer("candidates", "CandidateList"), **ERRORS},
            security=_ADMIN,
        )
    },
    "/v1/janitor/audit": {
        "get": _operation(
            "The audit trail (janitor runs, redactions, deletions), newest first",
            {"200": _answer("audit records", "AuditList"), **ERRORS},
            parameters=[_query("limit", {"type": "integer", "minimum": 1, "maximum": 1000}, "default 100")],
            security=_ADMIN,
        )
    },
    "/v1/janitor/cleanup": {
        "post": _operation(
            "Propose deleting old or expired events: stores a plan (ids, counts per scope, an expiry) and deletes "
            "nothing",
            {
                "201": _answer("the plan; confirm its plan_id to delete exactly its events", "CleanupPlan"),
                "400": _answer("not JSON", "Error"),
                "413": _answer("the body is too large", "Error"),
                "415": UNSUPPORTED,
                **ERRORS,
            },
            requestBody={"required": True, **_json("CleanupRequest")},
            security=_ADMIN,
        )
    },
    "/v1/janitor/cleanup/{plan_id}": {
        "get": _operation(
            "A cleanup plan and its state (open, expired, confirmed)",
            {"200": _answer("the plan", "CleanupPlan"), "404": _answer("no plan has this id", "Error"), **ERRORS},
            parameters=[_PLAN_PARAMETER],
            security=_ADMIN,
        )
    },
    "/v1/janitor/cleanup/{plan_id}/confirm": {
        "post": _operation(
            "Delete exactly the events of an open plan (each deletion audited); a plan runs once",
            {
                "200": _answer("what was deleted", "CleanupConfirmed"),
                "404": _answer("no plan has this id", "Error"),
                "409": _answer("the plan was already confirmed; nothing was deleted", "Error"),
                "410": _answer("the plan expired; nothing was deleted (propose a new one)", "Error"),
                "415": UNSUPPORTED,
                **ERRORS,
            },
            parameters=[_PLAN_PARAMETER],
            security=_ADMIN,
        )
    },
}


def openapi_document() -> dict[str, Any]:
    return copy.deepcopy(
        {
            "openapi": "3.1.0",
            "info": {
                "title": "ego shared memory gateway",
                "version": VERSION,
                "description": "One append-only, permissioned memory for several agents (ego-shared-memory).",
            },
            "paths": PATHS,
            "components": {
                "schemas": SCHEMAS,
                "securitySchemes": {
                    "agentToken": {"type": "http", "scheme": "bearer", "description": "an agent's token"},
                    "operatorToken": {"type": "http", "scheme": "bearer", "description": "an operator (--admin) token"},
                },
            },
        }
    )
