"""The agent's tools: ``shared_snapshot`` (read what the agents share) and ``shared_append`` (add one settled
entry). A failed read tells the agent to stop and ask for the connection to be fixed; a private
memory never reaches the gateway; secrets and personal data are refused before anything is sent."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ego_core import (
    PRIVATE_MARK,
    InvalidArgumentError,
    PluginContext,
    Response,
    ScaffoldLine,
    Tool,
    ToolError,
    relative_age,
    truncate,
)
from ego_shared_memory.client import PendingAppends, RefusedError, SharedClient, UnreachableError
from ego_shared_memory.detector import DetectionBudgetExceeded, detection_budget, kinds_in, sensitive_field
from ego_shared_memory.events import (
    EVENT_ID,
    KINDS,
    RULES,
    check_scope,
    parse_iso,
    parse_scopes,
)
from ego_shared_memory.events import EventError as _EventError

SNAPSHOT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "scopes": {"type": "string"},
        "limit": {"type": "integer", "minimum": 0, "maximum": 50},
    },
    "additionalProperties": False,
}
APPEND_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "scope": {"type": "string"},
        "kind": {"enum": list(KINDS)},
        "dedupe_key": {"type": "string", "pattern": "^[a-z0-9_:-]{1,64}$"},
        "content": {"type": "string", "minLength": 1, "maxLength": 4000},
        "confidence": {"enum": ["high", "med", "low"], "default": "high"},
        "supersedes": {"type": "string"},
        "ttl_days": {"type": "integer", "minimum": 0, "maximum": 36500, "default": 0},
    },
    "required": ["scope", "kind", "dedupe_key", "content"],
    "additionalProperties": False,
}

READ_FAILED = (
    "The shared memory could not be read ({reason}). Stop here: tell the user that the shared memory is "
    "unreachable and ask them to fix the connection (gateway address, token or permissions) before going on. "
    "Do not carry on from guesses."
)
WRITE_FAILED = (
    "The shared memory could not be written ({reason}); nothing was saved. Tell the user it was not written. "
    "Repeating the same call later is safe: appends are idempotent."
)
PRIVATE_REFUSED = (
    "Not shared: the text contains one of your private memories, and private memories never leave you. "
    "Share only what is not private."
)
RECENT_CHARS = 120
DETECTION_BUDGET_SECONDS = 2.0
"""How long the check of a shared_append's content for secrets may take (the handler runs in a worker thread,
never on the server's event loop); past it nothing is sent."""
UNCHECKED = "Not shared: the text could not be checked for secrets and personal data in time; nothing was sent."
WITHHELD_PREFIX = "[WITHHELD"


class SharedTools:
    """Handlers bound to a client (built at startup); the host's redaction and clock come with each call's ``ctx``."""

    def __init__(
        self,
        client: Callable[[], SharedClient],
        *,
        run_id: str,
        source_system: str,
        limit_recent: int,
        default_scopes: Sequence[str] | None,
        pending: PendingAppends | None = None,
    ) -> None:
        self._client = client
        self.pending = pending if pending is not None else PendingAppends(None)
        self.run_id = run_id
        self.source_system = source_system
        self.limit_recent = limit_recent
        self.default_scopes = list(default_scopes) if default_scopes else None

    def tools(self) -> list[Tool]:
        return [
            Tool(
                name="shared_snapshot",
                description="Read the memory shared with the other agents (pinned, then recent). Start tasks with it.",
                input_schema=SNAPSHOT_SCHEMA,
                handler=self.snapshot,
                tier="surface",
            ),
            Tool(
                name="shared_append",
                description="Add one settled fact to the shared memory (append-only, idempotent).",
                input_schema=APPEND_SCHEMA,
                handler=self.append,
                tier="backend",
                log_view=_append_log_view,
            ),
        ]

    # -- shared_snapshot ---------------------------------------------------------------------------

    def snapshot(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        scopes = self.default_scopes
        if args.get("scopes"):
            try:
                scopes = parse_scopes(str(args["scopes"]))
            except _EventError:
                raise InvalidArgumentError("scopes", "comma-separated scopes: " + RULES["scope"]) from None
        limit = int(args.get("limit", self.limit_recent))
        try:
            snap = self._client().snapshot(scopes, limit)
        except UnreachableError as exc:
            raise ToolError(READ_FAILED.format(reason=exc.reason)) from None
        except RefusedError as exc:  # the request itself was wrong (another agent's scope): say so, nothing broke
            raise ToolError(f"Not read: {exc.payload.get('message', 'the gateway refused the request')}.") from None
        return Response(self._render_snapshot(snap, ctx.now()), scaffold=SNAPSHOT_SCAFFOLD)

    def _render_snapshot(self, snap: Mapping[str, Any], now: datetime) -> str:
        entries = sum(int(n) for n in dict(snap.get("entries", {})).values())
        head = (
            f"Shared memory ({snap['snapshot_id']}, {snap['ruleset_stamp']}), {', '.join(snap['scopes'])}: "
            f"{entries}{'' if snap.get('entries_complete', True) else '+'} entries"
        )
        conflicts = int(snap.get("open_conflicts", 0))
        if conflicts:
            head += f", {conflicts} open conflict{'s' if conflicts != 1 else ''} (see conflict_resolution entries)"
        lines = [head + "."]
        if snap.get("pinned_md"):
            lines += ["Pinned:", str(snap["pinned_md"])]
        recent = list(snap.get("recent_events", []))
        if recent:
            lines.append("Recent (newest first):")
            for event in recent:
                age = relative_age(parse_iso(event["created_at"]), now)
                first = " ".join(str(event["content_md"]).split())
                expired = " (expired)" if event.get("expired") else ""
                lines.append(
                    f"- [{age}] {event['agent_id']} · {event['scope']} · {event['kind']} `{event['dedupe_key']}` "
                    f"({event['confidence']}){expired}: {truncate(first, RECENT_CHARS)} [{event['event_id']}]"
                )
        elif not entries:
            lines.append("Nothing shared in these scopes yet.")
        return "\n".join(lines)

    # -- shared_append -----------------------------------------------------------------------------

    def append(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        try:
            scope = check_scope(args["scope"])
        except _EventError:
            raise InvalidArgumentError("scope", RULES["scope"]) from None
        supersedes = args.get("supersedes")
        if supersedes is not None and not EVENT_ID.match(str(supersedes)):
            raise InvalidArgumentError("supersedes", RULES["supersedes"].removeprefix("null or "))
        content = str(args["content"])
        try:
            with detection_budget(DETECTION_BUDGET_SECONDS):
                found = sensitive_field(
                    (("content", content), ("dedupe_key", str(args["dedupe_key"])), ("scope", scope))
                )
        except DetectionBudgetExceeded:
            raise ToolError(UNCHECKED) from None
        if found is not None:
            field, kinds = found
            raise ToolError(
                f"Not shared: {field} holds data the shared memory never stores ({', '.join(kinds)}). "
                "Say where such data lives, never the data itself."
            )
        redacted = ctx.redact(content)
        # the key and the scope are read by every agent too: a private text as a slug stays private
        checked = [redacted, ctx.redact(str(args["dedupe_key"])), ctx.redact(scope)]
        if any(PRIVATE_MARK in text for text in checked):
            raise ToolError(PRIVATE_REFUSED)
        if any(text.startswith(WITHHELD_PREFIX) for text in checked):
            raise ToolError("Not shared: the text could not be checked for private content; nothing was sent.")
        body: dict[str, Any] = {
            "scope": scope,
            "kind": args["kind"],
            "dedupe_key": args["dedupe_key"],
            "confidence": args.get("confidence", "high"),
            "content_md": redacted,
            "source": {"system": self.source_system},
            "supersedes": supersedes,
            "ttl_days": int(args.get("ttl_days", 0)),
        }
        try:
            client = self._client()
        except UnreachableError as exc:
            raise ToolError(WRITE_FAILED.format(reason=exc.reason)) from None
        # An earlier attempt at this very entry whose outcome stayed unknown (perhaps committed, then the
        # answer was lost) was sent with some run id: send it with the same one, so that it is recognised.
        fingerprint = PendingAppends.fingerprint(client.describe(), body)
        now = ctx.now()
        run_id = self.pending.run_id(fingerprint, now) or self.run_id
        try:
            result = client.append({"run_id": run_id, **body})
        except UnreachableError as exc:
            self.pending.remember(fingerprint, run_id, now)
            raise ToolError(WRITE_FAILED.format(reason=exc.reason)) from None
        except RefusedError as exc:
            self.pending.forget(fingerprint, now)
            raise ToolError(_refusal(exc)) from None
        self.pending.forget(fingerprint, now)
        return Response(_render_append(result, scope, str(args["dedupe_key"])), scaffold=APPEND_SCAFFOLD)


def _refusal(exc: RefusedError) -> str:
    payload = exc.payload
    if payload.get("kinds"):
        return (
            f"Not shared: the gateway refused data it never stores ({', '.join(payload['kinds'])}). "
            "Say where such data lives, never the data itself."
        )
    if exc.status == 422 and payload.get("field"):
        field = "content" if payload["field"] == "content_md" else str(payload["field"])
        return f"Not shared: `{field}` must be {payload.get('rule', 'valid')}."
    return f"Not shared: {payload.get('message', 'the gateway refused the entry')}."


def _render_append(result: Mapping[str, Any], scope: str, key: str) -> str:
    status = result["status"]
    if status == "duplicate":
        lines = [f"Already shared ({result['event_id']}): the same entry exists; nothing new was written."]
    elif status == "superseded_previous":
        superseded = result.get("event", {}).get("supersedes")
        lines = [f"Shared ({result['event_id']}) in {scope} as `{key}`; {superseded} is now deprecated."]
    else:
        lines = [f"Shared ({result['event_id']}) in {scope} as `{key}`."]
    lines += [f"Note: {warning}" for warning in result.get("warnings", [])]
    return "\n".join(lines)


def _append_log_view(args: Mapping[str, Any]) -> Mapping[str, Any]:
    """Sizes and labels only: the content is the agent's thought; a scope holding sensitive data (refused) is
    withheld."""
    scope = str(args.get("scope", ""))[:80]
    return {
        "scope": "[withheld]" if kinds_in(scope) else scope,
        "kind": args.get("kind"),
        "content_chars": len(str(args.get("content", ""))),
    }


SNAPSHOT_SCAFFOLD = (
    "Does anything pinned here change how you approach this task?",
    ScaffoldLine("When something is settled, what should the others know? shared_append keeps it.", {"shared_append"}),
)
APPEND_SCAFFOLD = ("Does an older entry say otherwise? Naming it in supersedes retires it.",)
