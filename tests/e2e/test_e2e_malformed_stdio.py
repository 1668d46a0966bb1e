"""Malformed lines on stdio are answered (parse error / invalid request, under the request's id when it can be
known) or, where the protocol gives no id to answer, logged; the next valid request is answered either way."""

from __future__ import annotations

import json
import selectors
import subprocess
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conftest import EgoWorld

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


def call(request_id: int, arguments_json: str) -> str:
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"wake_up","arguments":{arguments_json}}}}}'
    )


MALFORMED = [
    ("lone surrogate", call(11, '{"note":"\\ud800"}'), 11, -32600),
    ("5,000-digit integer", call(12, '{"n":' + "9" * 5000 + "}"), 12, -32600),
    ("3,000-level nesting", call(13, '{"deep":' + '{"a":' * 3000 + "1" + "}" * 3000 + "}"), 13, -32700),
    ("garbage", "this is not json at all", None, -32700),
    ("truncated", '{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"wak', 15, -32700),
    ("not JSON-RPC", '{"id": 16, "question": "what is this?"}', 16, -32600),
    ("string id", '{"jsonrpc":"2.0","id":"req-17","method":"tools/call","params":', "req-17", -32700),
]


class Server:
    def __init__(self, world: EgoWorld) -> None:
        self.proc = subprocess.Popen(
            world.command("serve", *world.without_real_plugins()),
            env=world.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.selector = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)
        self.buffer = b""

    def send(self, line: str) -> None:
        self.send_bytes(line.encode("utf-8"))

    def send_bytes(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float) -> dict[str, Any] | None:
        """The next message, or ``None`` if none arrives within ``timeout`` seconds."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not self.selector.select(left):
                return None
            chunk = self.proc.stdout.read1(1 << 16)  # type: ignore[attr-defined]
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        message: dict[str, Any] = json.loads(line)
        return message

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)


@pytest.fixture
def server(world: EgoWorld) -> Iterator[Server]:
    running = Server(world)
    running.send(json.dumps(INITIALIZE))
    assert running.reply(timeout=60) is not None  # started (the plugins load before the first reply)
    running.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    yield running
    running.close()


@pytest.mark.parametrize(("case", "line", "expected_id", "code"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_line_is_answered_within_a_second(
    server: Server, case: str, line: str, expected_id: int | str | None, code: int
) -> None:
    server.send(line)
    reply = server.reply(timeout=1.0)
    assert reply is not None, f"{case}: no answer within a second"
    assert reply["id"] == expected_id
    assert reply["error"]["code"] == code
    server.send(call(99, "{}"))
    answer = server.reply(timeout=10.0)
    assert answer is not None
    assert answer["id"] == 99
    assert "Awake" in answer["result"]["content"][0]["text"]


def test_an_invalid_notification_is_logged_and_the_next_request_answered(server: Server, world: EgoWorld) -> None:
    server.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":"not an object"}')
    server.send(call(21, "{}"))
    answer = server.reply(timeout=10.0)
    assert answer is not None
    assert answer["id"] == 21
    records = [r for r in world.log_records() if r.get("event") == "malformed_request"]
    assert len(records) == 1
    assert records[0]["answered"] is False
    assert "not an object" not in world.log_text()


@pytest.mark.parametrize("bad_id", ['{"a":1}', "null", "true", "1.5"])
def test_a_request_with_an_object_id_gets_an_invalid_request_reply(server: Server, bad_id: str) -> None:
    """A new user found: `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}` got no reply at all (the SDK took it
    for a notification); an id JSON-RPC does not allow is an invalid request, answered under the id null."""
    server.send(f'{{"jsonrpc":"2.0","id":{bad_id},"method":"ping"}}')
    reply = server.reply(timeout=1.0)
    assert reply is not None, "no answer within a second"
    assert reply["id"] is None
    assert reply["error"]["code"] == -32600
    assert reply["error"]["message"] == "Invalid request: `id` must be a string or an integer; nothing was done"
    server.send('{"jsonrpc":"2.0","id":7,"method":"ping"}')
    assert server.reply(timeout=10.0) == {"jsonrpc": "2.0", "id": 7, "result": {}}


def test_invalid_utf8_on_stdio_is_a_parse_error(server: Server, world: EgoWorld) -> None:
    """A new user found: bytes that are not UTF-8 were decoded to U+FFFD and the call went on with text the
    client never sent; the line is refused as a parse error (-32700) under its id, and nothing runs."""
    line = call(31, '{"note":"caf\xe9"}').encode("latin-1")  # é as one Latin-1 byte: not UTF-8
    server.send_bytes(line)
    reply = server.reply(timeout=1.0)
    assert reply is not None, "no answer within a second"
    assert (reply["id"], reply["error"]["code"]) == (31, -32700)
    assert "not valid UTF-8" in reply["error"]["message"]
    server.send(call(32, "{}"))
    answer = server.reply(timeout=10.0)
    assert answer is not None
    assert answer["id"] == 32
    records = [r for r in world.log_records() if r.get("event") == "malformed_request"]
    assert [r["reason"] for r in records] == ["not valid UTF-8"]
    assert not [r for r in world.log_records() if r.get("event") == "tool_call" and r.get("outcome") != "ok"]
