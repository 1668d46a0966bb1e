"""In-process tests of the hello plugin: a host built by ``make_host`` and an in-memory MCP client."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import pytest

from ego_core import BODY_SENSE, PRIVATE_MARK, Clock, ConfigError, PluginContext, Settings, hookimpl
from ego_core.testing import HostFactory, mcp_client, tool_text
from ego_hello import NOTES_SERVICE, HelloPlugin, NoteBook, NoteReader

pytestmark = pytest.mark.anyio

NOON = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def notes_file(host: Any) -> Path:
    return Path(host.settings.data_dir) / "hello" / "notes.json"


def stored_texts(host: Any) -> list[str]:
    return [n["text"] for n in json.loads(notes_file(host).read_text(encoding="utf-8"))["notes"]]


async def test_note_greets_the_next_wake_up(make_host: HostFactory) -> None:
    clock = Clock(NOON)
    host = make_host({"hello": HelloPlugin()}, clock=clock)
    async with mcp_client(host) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"wake_up", "introspect", "leave_note"} <= names
        first = await client.call_tool("wake_up", {})
        assert "note you left" not in tool_text(first)
        assert "leave_note keeps it." in tool_text(first)  # the scaffold_for line, leave_note being served
        saved = await client.call_tool("leave_note", {"text": "Ask  Master\nabout the garden."})
        assert not saved.is_error
        assert "1 of at most 20 kept" in tool_text(saved)

    clock.set(NOON + timedelta(hours=2))
    async with mcp_client(host) as client:  # a new session: the host starts again and rereads the file
        text = tool_text(await client.call_tool("wake_up", {}))
    assert "A note you left yourself (2h ago): Ask Master about the garden." in text
    data, _, scaffold = text.partition("\n\n---\n")
    assert "leave_note keeps it." in scaffold
    assert "leave_note" not in data


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "missing required parameter `text`"),
        ({"text": ""}, "`text` must be a non-empty string"),
        ({"text": "x" * 501}, "of at most 500 characters"),
        ({"text": 42}, "`text` must be a non-empty string"),
        ({"text": "hi", "mood": "ok"}, "unknown parameter `mood`"),
        ({"text": " \n\t "}, "Invalid arguments for leave_note: `text`: 1 to 500 characters with words in them"),
        ({"text": "private:   "}, "Invalid arguments for leave_note: `text`"),
    ],
)
async def test_bad_arguments_are_error_results_that_say_how_to_fix_them(
    make_host: HostFactory, arguments: dict[str, Any], expected: str
) -> None:
    host = make_host({"hello": HelloPlugin()})
    async with mcp_client(host) as client:
        result = await client.call_tool("leave_note", arguments)
    assert result.is_error
    assert expected in tool_text(result)
    assert not notes_file(host).exists()


async def test_max_notes_keeps_the_newest(make_host: HostFactory) -> None:
    host = make_host({"hello": HelloPlugin()}, config={"hello": {"max_notes": 2}})
    async with mcp_client(host) as client:
        for text in ("one", "two", "three"):
            result = await client.call_tool("leave_note", {"text": text})
        assert "2 of at most 2 kept" in tool_text(result)
    assert stored_texts(host) == ["two", "three"]


def test_max_notes_from_the_environment(make_host: HostFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EGO_HELLO_MAX_NOTES", "3")
    host = make_host({"hello": HelloPlugin()}, config={"hello": {"max_notes": 7}})  # the variable wins
    assert host.context("hello").config.max_notes == 3


@pytest.mark.parametrize(
    ("table", "env", "named"),
    [
        ({"max_notes": "many"}, None, "plugins.hello.max_notes"),
        ({}, "twenty", "plugins.hello.max_notes"),
        ({"max_notes": 0}, None, "plugins.hello"),
        ({"max_note": 5}, None, "plugins.hello"),
    ],
)
def test_bad_configuration_is_a_startup_error_naming_the_key(
    make_host: HostFactory, monkeypatch: pytest.MonkeyPatch, table: dict[str, Any], env: str | None, named: str
) -> None:
    if env is not None:
        monkeypatch.setenv("EGO_HELLO_MAX_NOTES", env)
    with pytest.raises(ConfigError, match=named):
        make_host({"hello": HelloPlugin()}, config={"hello": table})


async def test_private_note_never_reaches_a_log_line(
    make_host: HostFactory, caplog: pytest.LogCaptureFixture, ego_settings: Settings
) -> None:
    secret = "private: I was scared of the storm, don't tell anyone"
    # the log_arguments debugging aid logs argument values: the plugin's log view still keeps the note out
    host = make_host({"hello": HelloPlugin()}, settings=attrs.evolve(ego_settings, log_arguments=True))
    caplog.set_level(logging.DEBUG)
    async with mcp_client(host) as client:
        result = await client.call_tool("leave_note", {"text": secret})
        assert "It is private" in tool_text(result)
        wake = tool_text(await client.call_tool("wake_up", {}))
    # the agent itself sees its note (tool results are not redacted) ...
    assert "A private note you left yourself (just now): I was scared of the storm" in wake
    # ... but a log record made anywhere in the process, in any quoting, shows only the mark
    third_party = logging.getLogger("httpx")
    third_party.warning("request body: %s", json.dumps({"text": secret}))
    third_party.warning("args=%r", {"text": secret})
    third_party.warning("stored %s for later", secret)
    third_party.warning("%s", "Private: not yet stored, still masked")
    messages = [record.getMessage() for record in caplog.records]
    assert "storm" not in "\n".join(messages)
    assert "still masked" not in "\n".join(messages)
    assert sum(PRIVATE_MARK in m for m in messages) >= 4
    fields = [getattr(r, "ego", {}) for r in caplog.records]
    calls = [f for f in fields if f.get("event") == "tool_call" and f.get("tool") == "leave_note"]
    assert len(calls) == 1
    assert calls[0]["args"] == {"text_chars": len(secret), "private": True}


async def test_private_notes_in_the_file_are_masked_after_a_restart(
    make_host: HostFactory, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "private: the spare key is under the blue pot"
    first = make_host({"hello": HelloPlugin()})
    async with mcp_client(first) as client:
        await client.call_tool("leave_note", {"text": secret})
    again = make_host({"hello": HelloPlugin()})  # a new process: only the file knows the note
    assert again.redaction(f"stored {secret} today") == f"stored {PRIVATE_MARK} today"  # before startup
    again.start()
    caplog.set_level(logging.INFO)
    logging.getLogger("ego.plugin.other").info("saw %s in passing", secret)
    assert caplog.records[-1].getMessage() == f"saw {PRIVATE_MARK} in passing"


def test_redactor_leaves_other_text_alone() -> None:
    plugin = HelloPlugin()
    text = 'recall: score: 0.87 | private: false; {"note": "a public note"}'
    assert plugin.redact(text) == text
    assert plugin.redact("private: whole line\nand more") == PRIVATE_MARK
    assert plugin.redact('{"text": "private: a \\"quoted\\" word", "n": 1}') == f'{{"text": "{PRIVATE_MARK}", "n": 1}}'


class FakeBody:
    def body_state(self) -> Mapping[str, Any]:
        return {"time_phase": "late_night"}

    def time_phase(self) -> str:
        return "late_night"


class BodyPlugin:
    """Stands in for interoception: provides the ``interoception.body`` service."""

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        ctx.provide(BODY_SENSE, FakeBody())


async def test_uses_the_body_sense_when_provided_and_provides_its_notebook(make_host: HostFactory) -> None:
    host = make_host({"hello": HelloPlugin(), "body": BodyPlugin()}, clock=Clock(NOON))
    async with mcp_client(host) as client:
        await client.call_tool("leave_note", {"text": "The moon was out."})
        text = tool_text(await client.call_tool("wake_up", {}))
        service = host.services.get(NOTES_SERVICE, NoteReader)
        assert service is not None
        latest = service.latest()
        assert latest is not None
        assert latest.time_phase == "late_night"
    assert "A note you left yourself (just now, late night): The moon was out." in text
    assert host.services.get(NOTES_SERVICE) is None  # withdrawn when the host stopped


async def test_damaged_notes_file_fails_the_plugin_not_the_server(make_host: HostFactory) -> None:
    host = make_host({"hello": HelloPlugin()})
    path = notes_file(host)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json", encoding="utf-8")
    async with mcp_client(host) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        wake = await client.call_tool("wake_up", {})
    assert "leave_note" not in names
    assert not wake.is_error
    assert "leave_note" not in tool_text(wake)  # the scaffold line needs a served leave_note
    status = {s.id: s for s in host.statuses()}["hello"]
    assert status.state == "failed"
    assert "notes.json is not valid JSON (line 1)" in status.reason
    assert path.read_text(encoding="utf-8") == "{not json"  # the user's file is left as it was


def test_doctor_check(make_host: HostFactory) -> None:
    host = make_host({"hello": HelloPlugin()})
    host.start()
    checks = dict(host.hooks.doctor_checks())["hello"]
    assert [(c.name, c.ok) for c in checks] == [("notes", True)]
    assert "0 kept (at most 20)" in checks[0].detail
    notes_file(host).write_text("[]", encoding="utf-8")
    checks = dict(host.hooks.doctor_checks())["hello"]
    assert [(c.name, c.ok) for c in checks] == [("notes", False)]
    assert 'has no "notes" list' in checks[0].detail


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    books = [NoteBook(path, max_notes=200), NoteBook(path, max_notes=200)]  # like two server processes

    def write(book: NoteBook, worker: int) -> None:
        for i in range(20):
            book.add(f"worker {worker} note {i}", now=NOON)

    threads = [threading.Thread(target=write, args=(books[w % 2], w)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    texts = [n.text for n in books[0].notes()]
    assert sorted(texts) == sorted(f"worker {w} note {i}" for w in range(4) for i in range(20))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.json", "notes.json.lock"]


def test_failed_write_leaves_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    book = NoteBook(tmp_path / "notes.json", max_notes=5)
    book.add("kept", now=NOON)
    before = book.path.read_bytes()

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space left"):
        book.add("lost", now=NOON)
    assert book.path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.json", "notes.json.lock"]
