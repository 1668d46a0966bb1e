"""The memory event: its schema, its validation (a problem names the field and the rule), scopes and who may
read or write them.

The canonical event (the 4-party protocol, §6): agent_id, run_id, scope, kind, dedupe_key, confidence,
content_md, source {system, thread_id, message_id}, supersedes, ttl_days.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs

from ego_shared_memory.detector import sensitive_field

KINDS: tuple[str, ...] = ("decision", "config", "constraint", "workflow", "fact", "bug", "todo", "log", "deprecation")
JANITOR_KIND = "conflict_resolution"
"""Written by the janitor only: asks the agents to confirm which of two disagreeing entries holds."""
CONFIDENCES: tuple[str, ...] = ("high", "med", "low")
CONFIDENCE_RANK: Mapping[str, int] = {"high": 3, "med": 2, "low": 1}
SOURCE_SYSTEMS: tuple[str, ...] = ("telegram", "cli", "web", "other")
DEFAULT_AGENTS: tuple[str, ...] = ("chatgpt", "claude", "gemini", "openclaw")
JANITOR_AGENT = "janitor"
"""The gateway's own author id (conflict_resolution events); no token can be made for it."""
RESERVED_AGENTS: frozenset[str] = frozenset({JANITOR_AGENT, "system", "gateway", "admin"})

# \Z, not $: "$" also matches before a final newline, and "key\n" is not a valid key (the OpenAPI patterns,
# ECMA-262 regular expressions, end with $, which there matches only at the very end).
AGENT_ID = re.compile(r"^[a-z][a-z0-9_-]{0,31}\Z")
PROJECT_SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\Z")
DEDUPE_KEY = re.compile(r"^[a-z0-9_:-]{1,64}\Z")
RUN_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}\Z")
EVENT_ID = re.compile(r"^evt_[0-9a-f]{24}\Z")
SOURCE_ID = re.compile(r"^[A-Za-z0-9._:/@#-]{1,128}\Z")
MAX_TTL_DAYS = 36500

RULES: Mapping[str, str] = {
    "agent_id": "lower-case ASCII: a letter, then letters, digits, _ or -; at most 32 characters",
    "run_id": "1 to 128 characters: ASCII letters, digits, '.', '_', ':' or '-'",
    "scope": "global, project:<slug> (slug: lower-case letters, digits, _ or -) or agent:<agent_id>",
    "kind": "one of " + ", ".join(KINDS),
    "dedupe_key": "lower-case ASCII letters, digits, _, - and :; 1 to 64 characters",
    "confidence": "one of high, med, low",
    "content_md": "a non-empty Markdown string",
    "source": "an object {system, thread_id, message_id}",
    "source.system": "one of " + ", ".join(SOURCE_SYSTEMS),
    "source.thread_id": "null or 1 to 128 characters: ASCII letters, digits and . _ : / @ # -",
    "source.message_id": "null or 1 to 128 characters: ASCII letters, digits and . _ : / @ # -",
    "supersedes": "null or an event id evt_<24 hex digits>",
    "ttl_days": f"an integer from 0 (permanent) to {MAX_TTL_DAYS}",
}
KNOWN_FIELDS = frozenset(
    {"agent_id", "run_id", "scope", "kind", "dedupe_key", "confidence", "content_md", "source", "supersedes"}
    | {"ttl_days"}
)


class EventError(ValueError):
    """An event field breaks its rule (HTTP 422). ``kinds`` lists sensitive data found (never the data)."""

    def __init__(self, field: str, rule: str, kinds: Sequence[str] = ()) -> None:
        self.field = field
        self.rule = rule
        self.kinds = tuple(kinds)
        super().__init__(self.message)

    @property
    def message(self) -> str:
        if self.kinds:
            return (
                f"{self.field} contains data that is never stored: {', '.join(self.kinds)}. Remove it (say where "
                "a secret lives, never what it is) and send the event again."
            )
        return f"{self.field}: expected {self.rule}"


class AccessError(PermissionError):
    """The caller may not touch a scope, or wrote as another agent (HTTP 403)."""


@attrs.frozen
class Source:
    system: str = "other"
    thread_id: str | None = None
    message_id: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {"system": self.system, "thread_id": self.thread_id, "message_id": self.message_id}


@attrs.frozen
class EventDraft:
    """A validated event about to be appended (the agent is the token's, never the body's)."""

    agent_id: str
    run_id: str
    scope: str
    kind: str
    dedupe_key: str
    confidence: str
    content_md: str
    source: Source = attrs.field(factory=Source)
    supersedes: str | None = None
    ttl_days: int = 0


@attrs.frozen
class Event:
    """A stored event."""

    seq: int
    event_id: str
    agent_id: str
    run_id: str
    scope: str
    kind: str
    dedupe_key: str
    confidence: str
    content_md: str
    source: Source
    supersedes: str | None
    ttl_days: int
    created_at: datetime
    deprecated: bool = False
    redacted: bool = False

    @property
    def expires_at(self) -> datetime | None:
        return self.created_at + timedelta(days=self.ttl_days) if self.ttl_days > 0 else None

    def expired(self, now: datetime) -> bool:
        expires = self.expires_at
        return expires is not None and expires <= now

    def as_dict(self, now: datetime | None = None) -> dict[str, Any]:
        expires = self.expires_at
        data: dict[str, Any] = {
            "event_id": self.event_id,
            "agent_id": self.agent_id,
            "run_id": self.run_id,
            "scope": self.scope,
            "kind": self.kind,
            "dedupe_key": self.dedupe_key,
            "confidence": self.confidence,
            "content_md": self.content_md,
            "source": self.source.as_dict(),
            "supersedes": self.supersedes,
            "ttl_days": self.ttl_days,
            "created_at": iso(self.created_at),
            "expires_at": iso(expires) if expires else None,
            "deprecated": self.deprecated,
            "redacted": self.redacted,
        }
        if now is not None:
            data["expired"] = self.expired(now)
        return data


def iso(moment: datetime) -> str:
    """UTC, microseconds, ``Z``: fixed width, so text order is time order."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# --------------------------------------------------------------------------------------------------
# Scopes and permissions


def check_agent_id(agent_id: str) -> str:
    if not isinstance(agent_id, str) or not AGENT_ID.match(agent_id):
        raise EventError("agent_id", RULES["agent_id"])
    return agent_id


def valid_scope(scope: object) -> bool:
    if not isinstance(scope, str):
        return False
    if scope == "global":
        return True
    prefix, _, rest = scope.partition(":")
    if prefix == "project":
        return bool(PROJECT_SLUG.match(rest))
    if prefix == "agent":
        return bool(AGENT_ID.match(rest))
    return False


def check_scope(scope: object, field: str = "scope") -> str:
    if not valid_scope(scope):
        raise EventError(field, RULES["scope"])
    return str(scope)


def scope_owner(scope: str) -> str | None:
    """The agent a private scope belongs to (``agent:claude`` → ``claude``), else ``None``."""
    return scope[len("agent:") :] if scope.startswith("agent:") else None


def may_access(agent_id: str, scope: str) -> bool:
    """Everyone reads and writes global and project scopes; ``agent:X`` is X's alone."""
    owner = scope_owner(scope)
    return owner is None or owner == agent_id


def check_access(agent_id: str, scope: str, action: str) -> None:
    if not may_access(agent_id, scope):
        raise AccessError(
            f"{agent_id} may not {action} {scope}: agent scopes are private to their agent; {agent_id} may "
            f"{action} global, project:<slug> and agent:{agent_id}"
        )


def parse_scopes(text: str | Sequence[str]) -> list[str]:
    """A comma-separated list (or a list) of scopes, each valid, in order, each once."""
    parts = text.split(",") if isinstance(text, str) else list(text)
    scopes = [check_scope(part.strip() if isinstance(part, str) else part, "scopes") for part in parts]
    if not scopes:
        raise EventError("scopes", RULES["scope"])
    return list(dict.fromkeys(scopes))


# --------------------------------------------------------------------------------------------------
# Parsing a request body


def _string(body: Mapping[str, Any], field: str, pattern: re.Pattern[str] | None = None) -> str:
    value = body.get(field)
    if not isinstance(value, str) or (pattern is not None and not pattern.match(value)):
        raise EventError(field, RULES[field])
    return value


def _choice(body: Mapping[str, Any], field: str, choices: Sequence[str], default: str | None = None) -> str:
    value = body.get(field, default)
    if value not in choices:
        raise EventError(field, RULES[field])
    return str(value)


def _source(value: object) -> Source:
    if value is None:
        return Source()
    if not isinstance(value, Mapping):
        raise EventError("source", RULES["source"])
    system = value.get("system", "other")
    if system not in SOURCE_SYSTEMS:
        raise EventError("source.system", RULES["source.system"])
    ids: dict[str, str | None] = {}
    for key in ("thread_id", "message_id"):
        item = value.get(key)
        if item is not None and (not isinstance(item, str) or not SOURCE_ID.match(item)):
            raise EventError(f"source.{key}", RULES[f"source.{key}"])
        ids[key] = item
    return Source(system=str(system), thread_id=ids["thread_id"], message_id=ids["message_id"])


def parse_event(
    body: object, *, agent_id: str, max_chars: int, allow_kinds: Sequence[str] = KINDS
) -> tuple[EventDraft, list[str]]:
    """Validate a request body into a draft written by ``agent_id`` (the token's agent).

    Returns the draft and warnings (unknown fields are ignored, with a warning). Raises :class:`EventError`
    for the first field that breaks its rule, and :class:`AccessError` when the body names another agent.
    Sensitive data (secrets, personal data) in any text the agent chooses (the content, the dedupe_key, the scope,
    the run and source ids) is refused, naming only the field and the kind.
    """
    if not isinstance(body, Mapping):
        raise EventError("body", "a JSON object (a memory event)")
    warnings: list[str] = []
    claimed = body.get("agent_id")
    if claimed is not None:
        check_agent_id(claimed)
        if claimed != agent_id:
            raise AccessError(
                f"agent_id {claimed} does not match the token, which belongs to {agent_id}; the token decides "
                "who writes"
            )
    run_id = _string(body, "run_id", RUN_ID)
    scope = check_scope(body.get("scope"))
    kind = body.get("kind")
    if kind not in allow_kinds:
        raise EventError("kind", RULES["kind"])
    dedupe_key = _string(body, "dedupe_key", DEDUPE_KEY)
    confidence = _choice(body, "confidence", CONFIDENCES)
    content = body.get("content_md")
    if not isinstance(content, str) or not content.strip():
        raise EventError("content_md", RULES["content_md"])
    if len(content) > max_chars:
        raise EventError("content_md", f"at most {max_chars} characters (1,200 or fewer is recommended)")
    source = _source(body.get("source"))
    supersedes = body.get("supersedes")
    if supersedes is not None and (not isinstance(supersedes, str) or not EVENT_ID.match(supersedes)):
        raise EventError("supersedes", RULES["supersedes"])
    ttl = body.get("ttl_days", 0)
    if ttl is None:
        ttl = 0
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not math.isfinite(ttl) or ttl != int(ttl):
        raise EventError("ttl_days", RULES["ttl_days"])
    if not 0 <= int(ttl) <= MAX_TTL_DAYS:
        raise EventError("ttl_days", RULES["ttl_days"])
    refused = sensitive_field(
        (
            ("content_md", content),
            ("dedupe_key", dedupe_key),
            ("scope", scope),
            ("run_id", run_id),
            ("source.thread_id", source.thread_id),
            ("source.message_id", source.message_id),
        )
    )
    if refused is not None:
        raise EventError(refused[0], "no secrets or personal data", kinds=refused[1])
    unknown = sorted(str(key) for key in body if key not in KNOWN_FIELDS)
    if unknown:
        warnings.append(f"ignored unknown field(s): {', '.join(unknown[:10])}")
    draft = EventDraft(
        agent_id=agent_id,
        run_id=run_id,
        scope=scope,
        kind=str(kind),
        dedupe_key=dedupe_key,
        confidence=confidence,
        content_md=content,
        source=source,
        supersedes=supersedes,
        ttl_days=int(ttl),
    )
    return draft, warnings


PIN_ORDER: tuple[str, ...] = (
    "constraint",
    "decision",
    "config",
    "workflow",
    "bug",
    "fact",
    "todo",
    JANITOR_KIND,
    "deprecation",
    "log",
)
"""Which kinds matter most in the pinned summary, first to last."""


def pin_rank(kind: str, confidence: str) -> int:
    """Lower ranks are pinned first: by kind (:data:`PIN_ORDER`), then confidence (high first)."""
    kind_rank = PIN_ORDER.index(kind) if kind in PIN_ORDER else len(PIN_ORDER)
    return kind_rank * 4 + (3 - CONFIDENCE_RANK.get(confidence, 1))
