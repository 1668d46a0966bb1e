"""`ego shared export` / `import`: a store moves to another backend (SQLite → PostgreSQL) with every event,
its id, time, deprecation and redaction, and the token hashes; importing again changes nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from shared_support import event

from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.events import EventDraft, Source, parse_event
from ego_shared_memory.janitor import run_janitor
from ego_shared_memory.portable import PortableError, export_store, import_store, read_export
from ego_shared_memory.store import EventFilter, SqlStore, open_store
from ego_shared_memory.tokens import create_token, hash_token

NOW = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)


def fill(store: SqlStore) -> str:
    def put(agent: str, moment: datetime, **fields: object) -> str:
        draft, _w = parse_event(event(**fields), agent_id=agent, max_chars=4000)
        return store.append(draft, moment).event.event_id

    old = put("claude", NOW - timedelta(days=2), content_md="A is 1.")
    put("claude", NOW - timedelta(days=1), run_id="r2", content_md="A is 2.", supersedes=old)
    put("gemini", NOW, run_id="r3", content_md="A is 3.")  # a conflict with the previous head
    put("gemini", NOW, scope="agent:gemini", dedupe_key="todo:x", kind="todo", content_md="Mine.", ttl_days=7)
    leaked = EventDraft("claude", "r4", "global", "fact", "fact:leak", "high", "Owner taro@gmail.com.", Source())
    store.append(leaked, NOW)
    run_janitor(store, GatewaySettings(), NOW)  # masks the leak, asks about the conflict
    return create_token(store, "claude", role="agent", agents=("claude",), now=NOW)


def snapshot_of(store: SqlStore) -> list[tuple[object, ...]]:
    events = sorted(store.list_events(EventFilter(include_deprecated=True, limit=1000)), key=lambda e: e.seq)
    return [
        (e.event_id, e.agent_id, e.scope, e.dedupe_key, e.content_md, e.created_at, e.deprecated, e.redacted)
        for e in events
    ]


def test_sqlite_to_postgresql_and_back_again(tmp_path: Path, pg_url: str) -> None:
    source = open_store(f"sqlite:///{tmp_path / 'old.db'}")
    target = open_store(pg_url)
    try:
        token = fill(source)
        path = tmp_path / "shared.jsonl"
        assert source.event_count() == 6  # five appends and the janitor's conflict_resolution
        assert export_store(source, path, now=NOW) == 6
        text = path.read_text(encoding="utf-8")
        assert token not in text
        assert "taro@gmail.com" not in text
        summary = import_store(target, path)
        assert (summary.events, summary.new_events, summary.tokens, summary.new_tokens) == (6, 6, 1, 1)
        assert snapshot_of(target) == snapshot_of(source)
        assert [e.event_id for e in target.heads("global", by="recent", limit=10, now=NOW)] == [
            e.event_id for e in source.heads("global", by="recent", limit=10, now=NOW)
        ]
        assert target.count_open_conflicts(["global"]) == source.count_open_conflicts(["global"]) == 1
        assert target.token_owner(hash_token(token)) == ("claude", "agent")
        again = import_store(target, path)
        assert (again.new_events, again.new_tokens) == (0, 0)
        assert target.event_count() == 6
    finally:
        source.close()
        target.close()


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        ([], "empty"),
        ([{"type": "something"}], "not an export"),
        ([{"type": "ego-shared-memory", "version": 1}, {"type": "event", "event_id": "x"}], "event field event_id"),
        ([{"type": "ego-shared-memory", "version": 1}, {"type": "note"}], "unknown record type"),
    ],
)
def test_a_bad_file_imports_nothing(
    tmp_path: Path, store: SqlStore, lines: list[dict[str, object]], problem: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(PortableError, match=problem):
        read_export(path)
    with pytest.raises(PortableError):
        import_store(store, path)
    assert store.event_count() == 0


def test_an_export_missing_a_superseded_event_is_refused(tmp_path: Path, store: SqlStore) -> None:
    fill(store)
    path = tmp_path / "x.jsonl"
    export_store(store, path, now=NOW)
    kept = [line for line in path.read_text(encoding="utf-8").splitlines() if '"A is 1."' not in line]
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    with pytest.raises(PortableError, match="supersede events the file does not hold"):
        read_export(path)
