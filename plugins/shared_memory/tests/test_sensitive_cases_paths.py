"""The case table on every path a write takes: the gateway's append over HTTP and
the agent tool ``shared_append`` (through a real MCP client and the gateway), each on SQLite and on PostgreSQL, and
``ego shared import``. Every must-refuse case is refused and every must-store case stored; nothing refused ever
appears in a response, a log record or the store. An import also answers to the agent allow-list (an audit stored
an import by agent "mallory" holding an AWS key)."""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
from sensitive_cases import CASES, FIELD_CASES, FIELD_STORED, REFUSE_CASES, STORE_CASES
from shared_support import ThreadGateway, agent_host, event

from ego_core import Settings
from ego_core.testing import HostFactory, tool_text
from ego_shared_memory import SharedMemoryPlugin
from ego_shared_memory.detector import API_KEY, PHONE
from ego_shared_memory.portable import PortableError, import_store
from ego_shared_memory.store import EventFilter, SqlStore
from ego_shared_memory.tools import _append_log_view

APPEND = "/v1/memory/append"
AWS_KEY = "AKIAQ3EGRT7YHJKL2MNB"


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def stored_texts(store: SqlStore) -> str:
    """Every text an event keeps (content, ids an agent chose, source ids), as one string."""
    events = store.list_events(EventFilter(include_deprecated=True, limit=100_000))
    return "\n".join(
        "\t".join(
            str(part)
            for part in (e.content_md, e.dedupe_key, e.scope, e.run_id, e.source.thread_id, e.source.message_id)
        )
        for e in events
    )


def refused_values() -> list[str]:
    """What was refused, less what a must-store case also holds in another context (``order 0312345678`` is
    stored where ``TEL: 0312345678`` is refused): each response is checked for its own case's data."""
    stored = [case.text for case in STORE_CASES] + [value for _f, value in FIELD_STORED]
    values = [needle for case in REFUSE_CASES for needle in case.needles] + [value for _f, value, _k in FIELD_CASES]
    return [value for value in values if not any(value in text for text in stored)]


def assert_nowhere(values: Iterable[str], **places: str) -> None:
    leaks = [(value, name) for value in values for name, text in places.items() if value in text]
    assert leaks == [], f"refused data found: {leaks[:10]}"


def field_body(ident: str, field: str, value: str) -> dict[str, Any]:
    """An event whose ``field`` (dedupe_key or scope) is ``value``; its other ids unique to ``ident``."""
    body = event(dedupe_key=f"case:{ident}", content_md=f"A plain note ({ident}).")
    body[field] = value
    return body


def test_the_case_table_over_http(
    store: SqlStore, gateway: ThreadGateway, token_for: Callable[..., str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    headers = auth(token_for("claude"))
    problems: list[str] = []
    answers: list[str] = []
    with httpx.Client(base_url=gateway.url, timeout=30) as client:
        for case in CASES:
            response = client.post(
                APPEND, json=event(dedupe_key=f"case:{case.ident}", content_md=case.text), headers=headers
            )
            answers.append(response.text)
            body = response.json()
            if any(needle in response.text for needle in case.needles):
                problems.append(f"{case.ident}: the response echoes the refused data")
            if case.kind is None and response.status_code != 201:
                problems.append(f"{case.ident} {case.text!r} not stored: {response.status_code} {body}")
            if case.kind is not None and (
                response.status_code != 422 or body.get("field") != "content_md" or case.kind not in body["kinds"]
            ):
                problems.append(f"{case.ident} {case.text!r} not refused as {case.kind}: {response.status_code}")
        for number, (field, value, kind) in enumerate(FIELD_CASES):
            response = client.post(APPEND, json=field_body(f"field-{number}", field, value), headers=headers)
            answers.append(response.text)
            body = response.json()
            if response.status_code != 422 or body.get("field") != field or kind not in body["kinds"]:
                problems.append(f"{field} {value!r} not refused as {kind}: {response.status_code} {body}")
        for number, (field, value) in enumerate(FIELD_STORED):
            response = client.post(APPEND, json=field_body(f"stored-{number}", field, value), headers=headers)
            if response.status_code != 201:
                problems.append(f"{field} {value!r} not stored: {response.status_code} {response.json()}")
    assert problems == []
    stored = stored_texts(store)
    assert_nowhere(refused_values(), responses="\n".join(answers), log=caplog.text, store=stored)
    kept = {e.content_md for e in store.list_events(EventFilter(include_deprecated=True, limit=100_000))}
    assert {case.text for case in CASES if case.kind is None} <= kept  # stored as sent, not masked
    assert store.event_count() == len(CASES) - len(REFUSE_CASES) + len(FIELD_STORED)


@pytest.mark.anyio
async def test_the_case_table_through_the_agent_tool(
    make_host: HostFactory,
    ego_settings: Settings,
    gateway: ThreadGateway,
    token_for: Callable[..., str],
    store: SqlStore,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from ego_core.testing import mcp_client

    caplog.set_level(logging.DEBUG)
    host = agent_host(
        lambda plugins, config: make_host(
            plugins, config=config, settings=attrs.evolve(ego_settings, log_arguments=True)
        ),
        {"gateway_url": gateway.url, "token": token_for("claude")},
    )
    problems: list[str] = []
    answers: list[str] = []

    def call(ident: str, content: str, *, dedupe_key: str | None = None, scope: str = "global") -> dict[str, Any]:
        return {"scope": scope, "kind": "fact", "dedupe_key": dedupe_key or f"case:{ident}", "content": content}

    async with mcp_client(host) as client:
        for case in CASES:
            result = await client.call_tool("shared_append", call(case.ident, case.text))
            text = tool_text(result)
            answers.append(text)
            if any(needle in text for needle in case.needles):
                problems.append(f"{case.ident}: the answer echoes the refused data")
            if case.kind is None and (result.is_error or "Shared (evt_" not in text):
                problems.append(f"{case.ident} {case.text!r} not shared: {text}")
            if case.kind is not None and (not result.is_error or case.kind not in text):
                problems.append(f"{case.ident} {case.text!r} not refused as {case.kind}: {text}")
        for number, (field, value, kind) in enumerate(FIELD_CASES):
            args = call(f"field-{number}", f"A plain note (field-{number}).", **{field: value})
            result = await client.call_tool("shared_append", args)
            text = tool_text(result)
            answers.append(text)
            if not result.is_error or kind not in text or field not in text:
                problems.append(f"{field} {value!r} not refused as {kind}: {text}")
        for number, (field, value) in enumerate(FIELD_STORED):
            args = call(f"stored-{number}", f"A plain note (stored-{number}).", **{field: value})
            result = await client.call_tool("shared_append", args)
            if result.is_error:
                problems.append(f"{field} {value!r} not shared: {tool_text(result)}")
    assert problems == []
    assert_nowhere(refused_values(), responses="\n".join(answers), log=caplog.text, store=stored_texts(store))
    assert store.event_count() == len(CASES) - len(REFUSE_CASES) + len(FIELD_STORED)


def test_the_tool_log_withholds_a_scope_holding_sensitive_data() -> None:
    view = _append_log_view({"scope": "project:09012345678", "kind": "fact", "content": "x"})
    assert view["scope"] == "[withheld]"
    assert _append_log_view({"scope": "project:memory-gateway"})["scope"] == "project:memory-gateway"


# --------------------------------------------------------------------------------------------------
# ego shared import


def record(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "type": "event",
        "event_id": "evt_" + "0" * 23 + "1",
        "agent_id": "claude",
        "run_id": "run_import",
        "scope": "global",
        "kind": "config",
        "dedupe_key": "config:imported",
        "confidence": "high",
        "content_md": "The deploy key lives in ~/.ssh/deploy (since 2026-02-02).",
        "source": {"system": "cli", "thread_id": None, "message_id": None},
        "supersedes": None,
        "ttl_days": 0,
        "created_at": "2026-11-20T10:00:00.000000Z",
        "redacted": False,
    }
    base.update(fields)
    return base


def write_export(path: Path, *records: dict[str, Any]) -> Path:
    header = {"type": "ego-shared-memory", "version": 1, "exported_at": "2026-11-20T10:00:00.000000Z"}
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in (header, *records)), "utf-8")
    return path


@pytest.fixture
def ego_import(make_host: HostFactory, capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """``ego shared import FILE --db URL`` in-process, with ``agents`` as [plugins.shared_memory] agents."""

    def run(path: Path, db: str, agents: list[str] | None = None) -> tuple[int, str, str]:
        table = {"agents": agents} if agents is not None else {}
        host = make_host({"shared_memory": SharedMemoryPlugin()}, config={"shared_memory": table})
        (command,) = [c for _p, c in host.commands() if (c.group, c.name) == ("shared", "import")]
        parser = argparse.ArgumentParser(prog="ego shared import", allow_abbrev=False)
        command.configure(parser)
        code = command.run(parser.parse_args([str(path), "--db", db]), host)
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_an_import_by_an_unknown_agent_holding_a_key_stores_nothing(
    ego_import: Callable[..., tuple[int, str, str]], store: SqlStore, store_url: str, tmp_path: Path
) -> None:
    """The audit's case: agent "mallory", an AWS key."""
    path = write_export(tmp_path / "mallory.jsonl", record(agent_id="mallory", content_md=f"deploy key {AWS_KEY}"))
    code, out, err = ego_import(path, store_url)
    assert code == 2
    assert "nothing was imported" in err
    assert AWS_KEY not in out + err
    assert API_KEY in err
    assert store.event_count() == 0


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"agent_id": "mallory"}, "mallory, who is not among the configured agents"),
        ({"agent_id": "system"}, "system, who is not among the configured agents"),
        ({"agent_id": "janitor", "kind": "fact"}, "janitor"),
        ({"content_md": f"deploy key {AWS_KEY}"}, f"content_md contains data that is never stored ({API_KEY})"),
        ({"dedupe_key": "contact:090-1234-5678"}, f"dedupe_key contains data that is never stored ({PHONE})"),
        ({"scope": "project:09012345678"}, f"scope contains data that is never stored ({PHONE})"),
        ({"run_id": "run_taro@gmail.com"}, "run_id contains data that is never stored"),
        ({"source": {"system": "cli", "thread_id": "090-1234-5678", "message_id": None}}, "source.thread_id"),
    ],
)
def test_an_import_is_checked_like_an_append(
    ego_import: Callable[..., tuple[int, str, str]],
    store: SqlStore,
    store_url: str,
    tmp_path: Path,
    fields: dict[str, Any],
    problem: str,
) -> None:
    good = record(event_id="evt_" + "0" * 23 + "2", dedupe_key="config:fine")
    path = write_export(tmp_path / "export.jsonl", good, record(**fields))
    code, _out, err = ego_import(path, store_url)
    assert code == 2
    assert problem in err
    assert "nothing was imported" in err
    assert_nowhere([AWS_KEY, "090-1234-5678", "09012345678", "taro@gmail.com"], message=err)
    assert store.event_count() == 0  # the good line is not imported either


def test_an_import_by_configured_agents_is_stored(
    ego_import: Callable[..., tuple[int, str, str]], store: SqlStore, store_url: str, tmp_path: Path
) -> None:
    path = write_export(tmp_path / "ok.jsonl", record(agent_id="mallory"))
    assert ego_import(path, store_url)[0] == 2
    code, out, _err = ego_import(path, store_url, agents=["claude", "mallory"])
    assert code == 0, out
    assert "1 new of 1 events" in out
    (stored,) = store.list_events(EventFilter(include_deprecated=True))
    assert stored.agent_id == "mallory"


def test_a_token_of_an_unknown_agent_is_not_imported(store: SqlStore, tmp_path: Path) -> None:
    token = {
        "type": "token",
        "token_hash": "a" * 64,
        "agent_id": "mallory",
        "role": "agent",
        "created_at": "2026-11-20T10:00:00.000000Z",
        "revoked_at": None,
    }
    path = write_export(tmp_path / "token.jsonl", record(), token)
    with pytest.raises(PortableError, match="a token belongs to mallory"):
        import_store(store, path, agents=("claude",))
    assert store.event_count() == 0
    assert store.token_owner("a" * 64) is None


def test_every_case_of_the_table_meets_the_same_filter_on_import(store: SqlStore, tmp_path: Path) -> None:
    problems: list[str] = []
    for number, case in enumerate(CASES):
        path = write_export(
            tmp_path / f"{case.ident}.jsonl", record(event_id=f"evt_{number:024x}", content_md=case.text)
        )
        try:
            import_store(store, path, agents=("claude",))
        except PortableError as exc:
            if case.kind is None or case.kind not in str(exc):
                problems.append(f"{case.ident}: {exc}")
            assert_nowhere(case.needles, message=str(exc))
        else:
            if case.kind is not None:
                problems.append(f"{case.ident} {case.text!r} was imported")
    assert problems == []
    assert store.event_count() == len(STORE_CASES)
    assert_nowhere(refused_values(), store=stored_texts(store))
