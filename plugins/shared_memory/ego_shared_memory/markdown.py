"""A Markdown replica of the shared memory for a notes folder (an Obsidian vault): ``Pinned.md`` and one
``daily/YYYY-MM-DD.md`` per local day. Files are rewritten whole (temp file + rename) at each export: they
are a view of the store, which stays the source of truth. Agent scopes are left out unless asked for."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, tzinfo
from pathlib import Path

from ego_core import write_atomically
from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.events import Event
from ego_shared_memory.pins import compose_pins, pins_header
from ego_shared_memory.store import EventFilter, SqlStore

GENERATED = "<!-- written by `ego shared export-md`; edits here are replaced at the next export -->"
EXPORT_LIMIT = 1_000_000


def _wanted(scope: str, patterns: Sequence[str], include_agent_scopes: bool) -> bool:
    if scope.startswith("agent:") and not include_agent_scopes:
        return False
    if not patterns:
        return True
    return any(scope.startswith(p[:-1]) if p.endswith("*") else scope == p for p in patterns)


def _entry(event: Event, tz: tzinfo) -> str:
    flags = " *(superseded)*" if event.deprecated else ""
    head = (
        f"- {event.created_at.astimezone(tz):%H:%M} **{event.kind}** `{event.dedupe_key}` · {event.scope} · "
        f"{event.agent_id} ({event.confidence}){flags} [{event.event_id}]"
    )
    body = "\n".join(f"  {line}" if line.strip() else "" for line in event.content_md.strip().splitlines())
    return f"{head}\n{body}"


def export_markdown(
    store: SqlStore,
    out: Path,
    *,
    settings: GatewaySettings,
    tz: tzinfo,
    scope_patterns: Sequence[str],
    include_agent_scopes: bool,
    now: datetime,
) -> list[Path]:
    scopes = [s for s in store.scopes() if _wanted(s, scope_patterns, include_agent_scopes)]
    written: list[Path] = []
    pinned = [pins_header(scopes, now), GENERATED, ""]
    for scope in scopes:
        pins = compose_pins(
            store.heads(scope, by="rank", limit=200, now=now),
            total=store.head_count(scope),
            budget_tokens=settings.pin_budget_tokens,
        )
        pinned += [f"## {scope}", "", pins.markdown or "(nothing pinned)", ""]
    path = out / "Pinned.md"
    write_atomically(path, "\n".join(pinned))
    written.append(path)
    days: dict[str, list[Event]] = {}
    if scopes:
        events = store.list_events(EventFilter(scopes=tuple(scopes), include_deprecated=True, limit=EXPORT_LIMIT))
        for event in sorted(events, key=lambda e: e.seq):
            days.setdefault(f"{event.created_at.astimezone(tz):%Y-%m-%d}", []).append(event)
    for day, entries in sorted(days.items()):
        lines = [f"# {day}", GENERATED, "", *(_entry(event, tz) for event in entries), ""]
        path = out / "daily" / f"{day}.md"
        write_atomically(path, "\n".join(lines))
        written.append(path)
    return written
