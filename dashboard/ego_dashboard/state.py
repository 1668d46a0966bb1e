"""What the dashboard shows, read through the host's services and hooks (never another plugin's files).

Every function returns plain JSON-able values; :func:`scrub` then passes every string through the host's
redaction pipeline before anything is served. A private memory is described by its emotion and date only, and a
search finds it by its metadata only (:func:`search`).
"""

from __future__ import annotations

import itertools
import json
import math
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ego_core import BODY_SENSE, MEMORY_STORE, BodySense, Memory, MemoryService, PluginHost, RecallHit
from ego_desires.api import DESIRE_LEVELS, DesireLevels
from ego_notions.api import NOTIONS_STORE, NotionStore
from ego_self_model.api import OPEN_QUESTIONS, PEOPLE, OpenQuestions, People

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
BROWSE_LIMIT = 200
"""How many of the newest memories a search without words looks through."""
SEARCH_MAX = 50
GRAPH_MAX_NODES = 150
"""A neighbourhood graph stops growing here, however large the store."""
LOG_MAX_ROWS = 300
LOG_DAYS = 3
SALIENCE_DAYS = 60


class BadParameterError(ValueError):
    """The request's parameters are wrong (HTTP 400); the message names the parameter."""


@runtime_checkable
class RecallPath(Protocol):
    """The memory plugin's recall pipeline as its service object offers it: the same parsing and ranking
    ``recall`` and ``search_memories`` use (``touch=False``: a dashboard search does not count as recalling)."""

    def query(self, args: Mapping[str, Any], tool: str = "recall") -> tuple[Any, Any]: ...

    def search(self, query: Any, filters: Any, *, touch: bool = True) -> tuple[list[RecallHit], int, list[str]]: ...


@runtime_checkable
class EpisodeShelf(Protocol):
    """The memory plugin's store of episodes, as its service object holds it (``service.store``): the same
    records ``get_episode`` and ``ego://episodes/{episode_id}`` read."""

    def episodes(self) -> Sequence[Any]: ...


def scrub(host: PluginHost, value: Any) -> Any:
    """``value`` with every string (keys included) passed through the redaction pipeline."""
    if isinstance(value, str):
        return host.redact(value)
    if isinstance(value, Mapping):
        return {scrub(host, str(k)): scrub(host, v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(host, v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def memories(host: PluginHost) -> MemoryService | None:
    return host.services.get(MEMORY_STORE, MemoryService)


def plugins(host: PluginHost) -> dict[str, Any]:
    active = [p for p in host.plugin_ids() if host.is_active(p)]
    return {
        "active": active,
        "memory": memories(host) is not None,
        "desires": host.services.get(DESIRE_LEVELS, DesireLevels) is not None,
        "body": host.services.get(BODY_SENSE, BodySense) is not None,
        "questions": host.services.get(OPEN_QUESTIONS, OpenQuestions) is not None,
        "notions": host.services.get(NOTIONS_STORE, NotionStore) is not None,
        "people": _people(host) is not None,
        "shared_memory": "shared_memory" in active,
        "tools": sorted(tool.name for _p, tool in host.tools()),
    }


def memory_card(memory: Memory, *, detail: bool = False) -> dict[str, Any]:
    """A memory as the page sees it: a private one keeps only its id, emotion and date."""
    trace = memory.emotional_trace
    card: dict[str, Any] = {
        "id": memory.id,
        "private": memory.is_private,
        "timestamp": memory.timestamp.isoformat(),
        "emotion": trace.primary,
        "valence": trace.valence,
        "arousal": trace.arousal,
        "intensity": trace.intensity,
    }
    if memory.is_private:
        card["content"] = None
        return card
    card.update(
        content=memory.content,
        importance=memory.importance,
        category=memory.category,
        tags=list(memory.tags),
        secondary=list(trace.secondary),
    )
    if detail:
        card.update(
            access_count=memory.access_count,
            last_accessed=memory.last_accessed.isoformat() if memory.last_accessed else None,
            body_state=dict(trace.body_state),
            links=[
                {"target": link.target_id, "type": link.link_type, "confidence": link.confidence, "note": link.note}
                for link in memory.links
            ],
        )
    return card


def _date(value: str | None, name: str) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise BadParameterError(f"{name}: expected a date such as 2026-01-31") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _int(params: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadParameterError(f"{name}: expected an integer from {low} to {high}") from None
    if not low <= value <= high:
        raise BadParameterError(f"{name}: expected an integer from {low} to {high}")
    return value


def _matches(memory: Memory, params: Mapping[str, str]) -> bool:
    emotion, category = params.get("emotion"), params.get("category")
    if emotion and memory.emotional_trace.primary != emotion:
        return False
    if category and memory.category != category:
        return False
    private = params.get("private")
    if private == "only" and not memory.is_private:
        return False
    if private == "hide" and memory.is_private:
        return False
    min_importance = _int(params, "min_importance", 1, 1, 5)
    if memory.importance < min_importance:
        return False
    date_from = _date(params.get("date_from"), "date_from")
    if date_from is not None and memory.timestamp < date_from:
        return False
    date_to = _date(params.get("date_to"), "date_to")
    return not (date_to is not None and memory.timestamp >= date_to + timedelta(days=1))


@runtime_checkable
class PrivateIds(Protocol):
    """The memory plugin's store as its service object holds it (``service.store``): which memories are private,
    and memories read without their links (what a search by metadata needs)."""

    def private_ids(self) -> set[str]: ...

    def get(self, ids: Sequence[str], *, with_links: bool = True) -> list[Memory]: ...


PRIVATE_ROOM = 100
"""A search by words asks the recall path for this many more results at most (as many as there are private
memories), so that the private ones it drops leave the public ones in their places."""


def private_ids(service: MemoryService) -> set[str] | None:
    """Every private memory's id, or None when the store cannot say."""
    shelf = getattr(service, "store", None)
    return shelf.private_ids() if isinstance(shelf, PrivateIds) else None


def metadata_text(memory: Memory, tz: tzinfo) -> list[str]:
    """What a private memory is found by in a search: its tags, category, emotions and date, never its text."""
    trace = memory.emotional_trace
    day = memory.timestamp.astimezone(tz).date().isoformat()
    return [t.casefold() for t in (*memory.tags, memory.category, trace.primary, *trace.secondary, day) if t]


def by_metadata(host: PluginHost, service: MemoryService, ids: Iterable[str], words: str) -> list[Memory]:
    """The private memories among ``ids`` whose metadata holds every word of ``words`` (newest first)."""
    terms = [t for t in words.casefold().split() if t]
    tz = host.settings.tz
    found = []
    shelf = getattr(service, "store", None)
    wanted = sorted(ids)
    read = shelf.get(wanted, with_links=False) if isinstance(shelf, PrivateIds) else service.get(wanted)
    for memory in read:
        fields = metadata_text(memory, tz)
        if memory.is_private and all(any(term in field for field in fields) for term in terms):
            found.append(memory)
    return sorted(found, key=lambda m: (m.timestamp, m.id), reverse=True)


def _cards(
    found: Iterable[Memory], params: Mapping[str, str], limit: int, scores: Mapping[str, float | None]
) -> list[dict[str, Any]]:
    """The cards of the first ``limit`` of ``found`` that pass the filters, each with its score."""
    results: list[dict[str, Any]] = []
    for memory in found:
        if len(results) >= limit:
            break
        if _matches(memory, params):
            results.append({**memory_card(memory), "score": scores.get(memory.id)})
    return results


def search(host: PluginHost, params: Mapping[str, str], *, private_text: bool = False) -> dict[str, Any]:
    """Memories matching ``q`` through the recall path, or the newest ones without ``q``; then filtered.

    With ``q``, private memories are found by their metadata only (:func:`metadata_text`), after the public
    ones: what a search finds never depends on a private memory's text, so it cannot confirm a guess of it.
    ``private_text`` (the owner's explicit reveal) lets the recall path match private text too."""
    service = memories(host)
    if service is None:
        return {"available": False, "results": []}
    if params.get("private") not in (None, "", "any", "only", "hide"):
        raise BadParameterError("private: expected any, only or hide")
    limit = _int(params, "limit", 20, 1, SEARCH_MAX)
    date_from = _date(params.get("date_from"), "date_from")
    _date(params.get("date_to"), "date_to")
    words = (params.get("q") or "").strip()
    scores: dict[str, float | None] = {}
    hidden: set[str] | None
    if words:
        hidden = set() if private_text else private_ids(service)
        room = limit + min(len(hidden or ()), PRIVATE_ROOM)
        hits: list[tuple[Memory, float | None, bool]]
        if not isinstance(service, RecallPath):
            hits = [(m, None, False) for m, _s in service.nearest(words, room)]
            mode = "nearest"
        else:
            args: dict[str, Any] = {"context": words, "n_results": room}
            for key, arg in (("emotion", "emotion_filter"), ("category", "category_filter")):
                if params.get(key):
                    args[arg] = params[key]
            for key in ("date_from", "date_to"):
                if params.get(key):
                    args[key] = params[key]
            try:
                query, filters = service.query(args, "search_memories")
                recalled, _pool, _lines = service.search(query, filters, touch=False)
            except Exception as exc:  # the recall path's own argument errors
                message = getattr(exc, "message", None) or getattr(exc, "expected", None) or str(exc)
                raise BadParameterError(str(message)) from None
            hits = [(h.memory, h.relevance, h.linked) for h in recalled]
            mode = "recall"
        found = []
        for memory, relevance, linked in hits:
            if not private_text and (memory.is_private or linked):
                continue  # a private memory's text must not rank it, nor bring its linked memories along
            found.append(memory)
            scores[memory.id] = relevance
        if not private_text and hidden is None:
            hidden = {m.id for m, _r, _l in hits if m.is_private}
    else:
        found = list(reversed(service.recent(date_from or EPOCH, BROWSE_LIMIT)))
        mode = "newest"
        hidden = None
    results = _cards(found, params, limit, scores)
    if hidden and len(results) < limit:  # read only when there is room for them: after every public match
        more = _cards(by_metadata(host, service, hidden, words), params, limit - len(results), {})
        results += [{**card, "matched_by": "metadata"} for card in more]
    return {"available": True, "mode": mode, "total": service.count(), "results": results}


def detail(host: PluginHost, memory_id: str) -> dict[str, Any] | None:
    service = memories(host)
    if service is None:
        return None
    found = service.get([memory_id])
    if not found:
        return None
    card = memory_card(found[0], detail=True)
    targets = {m.id: m for m in service.get([link.target_id for link in found[0].links])}
    if "links" in card:
        for link in card["links"]:
            target = targets.get(link["target"])
            link["target_card"] = memory_card(target) if target is not None else None
    card["episode"] = episode_of(service, memory_id)
    card["revisable"] = host.tool_served("revise_memory", owner=True)
    return card


EPISODE_MEMBERS_SHOWN = 50


def episode_of(service: MemoryService, memory_id: str) -> dict[str, Any] | None:
    """The episode ``memory_id`` belongs to (the newest, when several hold it), its members as cards (a private
    one by its emotion and date only); None when it belongs to none or the store keeps no episodes."""
    shelf = getattr(service, "store", None)
    if not isinstance(shelf, EpisodeShelf):
        return None
    holding = [e for e in shelf.episodes() if memory_id in e.memory_ids]
    if not holding:
        return None
    episode = max(holding, key=lambda e: (e.start, e.id))
    members = service.get(list(episode.memory_ids)[:EPISODE_MEMBERS_SHOWN])
    return {
        "id": episode.id,
        "summary": episode.summary,
        "start": episode.start.isoformat(),
        "end": episode.end.isoformat(),
        "importance": episode.importance,
        "size": len(episode.memory_ids),
        "gone": min(len(episode.memory_ids), EPISODE_MEMBERS_SHOWN) - len(members),
        "members": [memory_card(m) for m in sorted(members, key=lambda m: (m.timestamp, m.id))],
        "also_in": len(holding) - 1,
    }


def private_text(host: PluginHost, memory_id: str) -> str | None:
    """A private memory's text, for the owner's explicit reveal (never served otherwise); None if there is none."""
    service = memories(host)
    found = service.get([memory_id]) if service is not None else []
    return found[0].content if found and found[0].is_private else None


def graph(host: PluginHost, memory_id: str, depth: int) -> dict[str, Any] | None:
    """The links around one memory, breadth first, at most ``GRAPH_MAX_NODES`` nodes: it reads only the
    memories it shows, one read per step away, so it costs the same in a store of a hundred or of a hundred
    thousand."""
    service = memories(host)
    if service is None:
        return None
    start = service.get([memory_id])
    if not start:
        return None
    nodes: dict[str, Memory] = {start[0].id: start[0]}
    level = {start[0].id: 0}
    edges: dict[tuple[str, str], dict[str, Any]] = {}
    frontier = [start[0]]
    truncated = False
    for step in range(1, depth + 1):
        wanted = list(
            dict.fromkeys(link.target_id for m in frontier for link in m.links if link.target_id not in nodes)
        )
        room = GRAPH_MAX_NODES - len(nodes)
        if len(wanted) > room:
            wanted, truncated = wanted[:room], True
        frontier = service.get(wanted) if wanted else []
        for target in frontier:
            nodes[target.id] = target
            level[target.id] = step
        if not frontier:
            break
    for memory in nodes.values():
        for link in memory.links:
            if link.target_id in nodes:
                key = tuple(sorted((memory.id, link.target_id)))
                edges.setdefault(
                    (key[0], key[1]), {"source": memory.id, "target": link.target_id, "type": link.link_type}
                )
    return {
        "center": memory_id,
        "nodes": [{**memory_card(m), "depth": level[m.id]} for m in nodes.values()],
        "edges": list(edges.values()),
        "truncated": truncated,
    }


def now_view(host: PluginHost) -> dict[str, Any]:
    now = host.clock.now()
    out: dict[str, Any] = {"now": now.isoformat()}
    service = memories(host)
    if service is None:
        out["memory"] = None
    else:
        day, week = service.tally(now - timedelta(days=1), now), service.tally(now - timedelta(days=7), now)
        recent = service.recent(now - timedelta(days=90), BROWSE_LIMIT)
        introspection = next((m for m in reversed(recent) if m.category == "introspection"), None)
        latest = recent[-1] if recent else None
        out["memory"] = {
            "count": service.count(),
            "day": {"count": day.count, "valence": day.valence, "arousal": day.arousal, "primary": dict(day.primary)},
            "week": {
                "count": week.count,
                "valence": week.valence,
                "arousal": week.arousal,
                "primary": dict(week.primary),
            },
            "latest": memory_card(latest) if latest else None,
            "recent_points": [memory_card(m) for m in recent[-30:]],
            "introspection": memory_card(introspection) if introspection else None,
        }
    desires = host.services.get(DESIRE_LEVELS, DesireLevels)
    out["desires"] = None if desires is None else {k: float(v) for k, v in sorted(desires.levels().items())}
    body = host.services.get(BODY_SENSE, BodySense)
    out["body"] = None if body is None else {"time_phase": body.time_phase(), "state": dict(body.body_state())}
    out["questions"] = questions(host, curves=False)
    out["last_introspect"] = {"at": last_tool_call(host.settings.logs_path, "introspect"), "days": INTROSPECT_DAYS}
    return out


INTROSPECT_DAYS = 14
"""How many days of ego's log the Now view looks through for the last ``introspect`` call."""
LAST_CALLS_KEPT = 256
_last_calls: dict[tuple[Path, str], tuple[int, int, str | None]] = {}


def _last_call_in(path: Path, tool: str) -> str | None:
    """The time (``ts``) of the last ``tool_call`` record of ``tool`` in one log file; read again only when the
    file changed since the last read."""
    try:
        stat = path.stat()
    except OSError:
        return None
    known = _last_calls.get((path, tool))
    if known is not None and known[:2] == (stat.st_size, stat.st_mtime_ns):
        return known[2]
    found: str | None = None
    needle = f'"{tool}"'
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if needle not in line or '"tool_call"' not in line:
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(entry, dict) and entry.get("event") == "tool_call" and entry.get("tool") == tool:
                found = str(entry.get("ts")) if entry.get("ts") else found
    if len(_last_calls) > LAST_CALLS_KEPT:
        _last_calls.clear()
    _last_calls[(path, tool)] = (stat.st_size, stat.st_mtime_ns, found)
    return found


def last_tool_call(log_dir: Path, tool: str, days: int = INTROSPECT_DAYS) -> str | None:
    """When ``tool`` was last called, by ego's log (newest day first), or None within ``days`` days."""
    today = datetime.now(UTC).date()
    for offset in range(days):
        found = _last_call_in(log_dir / f"ego-{today - timedelta(days=offset):%Y-%m-%d}.jsonl", tool)
        if found is not None:
            return found
    return None


def questions(host: PluginHost, *, curves: bool = True) -> list[dict[str, Any]] | None:
    service = host.services.get(OPEN_QUESTIONS, OpenQuestions)
    if service is None:
        return None
    rows = []
    now = host.clock.now()
    for q in service.unresolved():
        row: dict[str, Any] = {
            "id": q.id,
            "text": q.text,
            "importance": q.importance,
            "salience": q.salience,
            "state": q.state,
            "created": q.created.isoformat(),
        }
        if curves:
            age = max(0.0, (now - q.created).total_seconds() / 86400)
            half = 14 * max(q.importance, 1)
            row["curve"] = [
                {"day": d, "salience": (q.importance / 5) * 2 ** (-(age + d) / half)}
                for d in range(0, SALIENCE_DAYS, 3)
            ]
        rows.append(row)
    return rows


NOTIONS_MAX = 200


def notions(host: PluginHost) -> list[dict[str, Any]] | None:
    """The notions (concepts formed from linked memories), most confident first; None without the plugin."""
    service = host.services.get(NOTIONS_STORE, NotionStore)
    if service is None:
        return None
    return [
        {
            "id": n.id,
            "label": n.label,
            "tags": list(n.tags),
            "tone": n.tone,
            "valence": n.valence,
            "confidence": n.confidence,
            "conviction": n.is_conviction,
            "person": n.person,
            "reinforced": n.reinforcement_count,
            "reinforced_at": n.reinforced_at.isoformat(),
        }
        for n in service.notions(limit=NOTIONS_MAX)
    ]


def _log_lines(log_dir: Path, days: int) -> Iterator[dict[str, Any]]:
    today = datetime.now(UTC).date()
    for offset in reversed(range(days)):
        path = log_dir / f"ego-{today - timedelta(days=offset):%Y-%m-%d}.jsonl"
        if not path.is_file():
            continue
        with path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(entry, dict):
                    yield entry


def logs(host: PluginHost, params: Mapping[str, str]) -> dict[str, Any]:
    """The newest lines of ego's JSON log (already redacted when written; redacted again when served)."""
    level = params.get("level") or ""
    if level not in ("", "debug", "info", "warning", "error", "critical"):
        raise BadParameterError("level: expected debug, info, warning, error or critical")
    limit = _int(params, "limit", 100, 1, LOG_MAX_ROWS)
    days = _int(params, "days", 1, 1, 14)
    needle = (params.get("q") or "").lower()
    order = ["debug", "info", "warning", "error", "critical"]
    floor = order.index(level) if level else 0
    rows: deque[dict[str, Any]] = deque(maxlen=limit)
    for entry in _log_lines(host.settings.logs_path, days):
        entry_level = str(entry.get("level", "info"))
        if entry_level in order and order.index(entry_level) < floor:
            continue
        if needle and needle not in json.dumps(entry, ensure_ascii=False).lower():
            continue
        rows.append(entry)
    return {"rows": list(rows), "log_dir": str(host.settings.logs_path)}


RANGES: Mapping[str, tuple[timedelta, timedelta]] = {
    "24h": (timedelta(hours=24), timedelta(hours=1)),
    "7d": (timedelta(days=7), timedelta(hours=6)),
    "30d": (timedelta(days=30), timedelta(days=1)),
}
AUTO = "auto"
"""``range=auto``: the shortest range that holds every memory of the last 30 days."""


def fitting_range(service: MemoryService | None, now: datetime) -> str:
    """The shortest of :data:`RANGES` outside of which no memory of the longest was made (``30d`` at most)."""
    names = list(RANGES)
    if service is None:
        return names[0]
    for shorter, longer in itertools.pairwise(names):
        if service.tally(now - RANGES[longer][0], now - RANGES[shorter][0]).count == 0:
            return shorter
    return names[-1]


def bucket_starts(now: datetime, span: timedelta, step: timedelta, tz: tzinfo) -> list[datetime]:
    """The starts of the buckets of ``span`` up to ``now``, on the hour, at 0, 6, 12 and 18 h, or at midnight in the
    time zone ``tz`` (in UTC): as many as ``span`` has steps, the last one holding ``now``."""
    count = math.ceil(span / step)
    local = now.astimezone(tz)
    if step >= timedelta(days=1):
        today = local.date()
        days = [today - timedelta(days=i) for i in reversed(range(count))]
        return [datetime.combine(day, datetime.min.time(), tzinfo=tz).astimezone(UTC) for day in days]
    hours = int(step / timedelta(hours=1))
    floor = local.replace(minute=0, second=0, microsecond=0, hour=local.hour - local.hour % hours).astimezone(UTC)
    return [floor - step * i for i in reversed(range(count))]


def history(host: PluginHost, params: Mapping[str, str]) -> dict[str, Any]:
    """Per bucket over a range: how the memories felt (counted by the memory service, no text read) and how
    many tool calls the log records. ``range=auto`` picks the shortest range holding the last 30 days' memories;
    ``first`` is the index of the first bucket with a memory or a tool call (None when there is none)."""
    span_name = params.get("range") or "7d"
    service = memories(host)
    now = host.clock.now()
    auto = span_name == AUTO
    if auto:
        span_name = fitting_range(service, now)
    if span_name not in RANGES:
        raise BadParameterError(f"range: expected one of {', '.join([*RANGES, AUTO])}")
    span, step = RANGES[span_name]
    starts = bucket_starts(now, span, step, host.settings.tz)
    start = starts[0]
    buckets: list[dict[str, Any]] = []
    for begin in starts:
        bucket: dict[str, Any] = {"start": begin.isoformat(), "tool_calls": 0}
        if service is not None:
            tally = service.tally(begin, min(begin + step, now))
            bucket.update(
                memories=tally.count, valence=tally.valence, arousal=tally.arousal, primary=dict(tally.primary)
            )
        buckets.append(bucket)
    tools: dict[str, int] = {}
    for entry in _log_lines(host.settings.logs_path, (now - start).days + 2):
        if entry.get("event") != "tool_call":
            continue
        try:
            ts = datetime.fromisoformat(str(entry.get("ts")))
        except ValueError:
            continue
        if not start <= ts <= now:
            continue
        index = min(int((ts - start) / step), len(buckets) - 1)
        buckets[index]["tool_calls"] += 1
        name = str(entry.get("tool", "?"))
        tools[name] = tools.get(name, 0) + 1
    first = next((i for i, b in enumerate(buckets) if b.get("memories") or b["tool_calls"]), None)
    return {
        "range": span_name,
        "auto": auto,
        "end": now.isoformat(),
        "memory": service is not None,
        "buckets": buckets,
        "first": first,
        "tools": tools,
    }


DESIRE_RANGES = {
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
    "90d": timedelta(days=90),
}


def desire_history(host: PluginHost, params: Mapping[str, str]) -> dict[str, Any]:
    """The desire levels the agent felt over a range (the desires plugin records at most one sample per 15
    minutes): ``desires`` is False when the plugin is disabled (or records no history)."""
    span_name = params.get("range") or "7d"
    if span_name not in DESIRE_RANGES:
        raise BadParameterError(f"range: expected one of {', '.join(DESIRE_RANGES)}")
    now = host.clock.now()
    service = _desires(host)
    if service is None:
        return {"range": span_name, "desires": False, "names": [], "samples": []}
    samples = service.history(now - DESIRE_RANGES[span_name], now)
    names = sorted({name for sample in samples for name in sample.levels})
    return {
        "range": span_name,
        "desires": True,
        "names": names,
        "samples": [
            {"at": sample.at.isoformat(), "levels": {k: float(v) for k, v in sorted(sample.levels.items())}}
            for sample in samples
        ],
    }


def _desires(host: PluginHost) -> DesireLevels | None:
    """The desire levels, or None when no plugin provides them or the provider is older than the contract."""
    try:
        return host.services.get(DESIRE_LEVELS, DesireLevels)
    except TypeError:
        return None


def _people(host: PluginHost) -> People | None:
    """The self-model's people, or None when no plugin provides them or the provider is older than the contract."""
    try:
        return host.services.get(PEOPLE, People)
    except TypeError:
        return None


def people(host: PluginHost) -> dict[str, Any]:
    """The people the self-model knows (name, trust in words and as a number, moments shared) with each one's
    trust history; ``people`` is None when the self-model is disabled."""
    service = _people(host)
    if service is None:
        return {"people": None}
    rows = []
    for person in service.known():
        changes = service.trust_history(person.name)
        rows.append(
            {
                "name": person.name,
                "trust": person.trust,
                "trust_words": person.trust_words,
                "shared": person.shared,
                "trust_history": [{"at": change.at.isoformat(), "trust": change.trust} for change in changes],
            }
        )
    return {"people": rows}


MERGE_WINDOW = 500
"""Merge candidates are looked for among the newest this many memories (one matrix product, whatever the size
of the store), as ``consolidate``'s dedup step does within its window."""
MERGE_MAX = 20
MERGE_CHECKS = 400
"""At most this many of the most similar pairs are read for a contrast (a negation or a number apart)."""
MERGEABLE_CONTRASTS = frozenset({None, "wording"})
"""The dedup plugin's rule: a pair reworded may be one memory; a pair differing by a negation or a number is not."""
KEPT_SHOWN = 50
REVIEWS = "dedup.reviews"
LEGACY_KEPT_FILE = "kept_pairs.json"
"""Where the dashboard kept the pairs it was told to keep both of before the dedup plugin kept them itself."""


@runtime_checkable
class Reviews(Protocol):
    """The dedup plugin's ``dedup.reviews`` service: the pairs kept both of (written by its ``keep_both``)."""

    def kept_among(self, pairs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]: ...

    def newest(self, limit: int) -> list[tuple[str, str, datetime]]: ...

    def count(self) -> int: ...


def merge_threshold(host: PluginHost, service: MemoryService) -> tuple[float, str]:
    """The similarity from which a pair is a merge candidate: the dedup plugin's (its configuration, else the
    embedding model's profile) when it is enabled, else the profile's."""
    profile = service.similarity_profile
    if "dedup" in host.plugin_ids() and host.is_active("dedup"):
        thresholds = getattr(host.context("dedup").config, "thresholds", None)
        if callable(thresholds):
            _dedup, merge = thresholds(profile)
            return float(merge), "dedup"
    return float(profile.merge), "profile"


def legacy_kept_pairs(data_dir: Path) -> list[tuple[str, str]]:
    """The pairs of the dashboard's own file from before (none when there is no such file)."""
    try:
        raw = json.loads((data_dir / "dashboard" / LEGACY_KEPT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(raw, dict):
        return []
    return [(a, b) for key in raw if isinstance(key, str) and key.count("|") == 1 for a, b in [key.split("|")]]


def merge_candidates(host: PluginHost) -> dict[str, Any]:
    """Pairs among the newest :data:`MERGE_WINDOW` memories at least as similar as the merge threshold that do
    not contradict each other (the memory service's contrast: no negation, no number), strongest first, less the
    pairs kept both of. A memory the service protects (precious, or anticipating a moment still to come) is
    marked: it must not be merged away."""
    service = memories(host)
    if service is None:
        return {"available": False, "pairs": []}
    threshold, source = merge_threshold(host, service)
    window = service.recent(EPOCH, MERGE_WINDOW)
    by_id = {m.id: m for m in window}
    reviews = host.services.get(REVIEWS)
    if not isinstance(reviews, Reviews):
        reviews = None
    pairs: list[dict[str, Any]] = []
    found: list[tuple[Memory, Memory, float]] = []
    similar = service.similar_pairs(list(by_id), threshold, MERGE_CHECKS)
    kept_pairs: set[tuple[str, str]] = (
        reviews.kept_among((a, b) for a, b, _value in similar) if reviews is not None else set()
    )
    for first, second, value in similar:
        a, b = by_id[first], by_id[second]
        if (min(first, second), max(first, second)) in kept_pairs:
            continue
        if service.contrast(a.content, b.content) in MERGEABLE_CONTRASTS:
            found.append((a, b, value))
            if len(found) == MERGE_MAX:
                break
    guarded = service.protected([m.id for pair in found for m in pair[:2]], host.clock.now()) if found else set()
    for a, b, value in found:
        pairs.append(
            {
                "a": {**memory_card(a), "protected": a.id in guarded},
                "b": {**memory_card(b), "protected": b.id in guarded},
                "similarity": round(value, 4),
            }
        )
    newest_kept: list[tuple[str, str, datetime]] = reviews.newest(KEPT_SHOWN) if reviews is not None else []
    kept_cards = {m.id: m for m in service.get([i for first, second, _at in newest_kept for i in (first, second)])}
    kept_rows = [
        {
            "a": memory_card(kept_cards[first]) if first in kept_cards else {"id": first, "gone": True},
            "b": memory_card(kept_cards[second]) if second in kept_cards else {"id": second, "gone": True},
            "kept_at": at.isoformat(),
        }
        for first, second, at in newest_kept
    ]
    return {
        "available": True,
        "threshold": threshold,
        "threshold_from": source,
        "window": len(window),
        "kept": reviews.count() if reviews is not None else 0,
        "kept_pairs": kept_rows,
        "forget_served": host.tool_served("forget"),
        "keep_both_served": host.tool_served("keep_both", owner=True),
        "pairs": pairs,
    }
