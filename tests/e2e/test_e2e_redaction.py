"""Secrets logged by a real third-party library (httpx) are masked in the JSON log and on stderr.
The logging runs in a real ``ego`` process: a plugin command makes the request."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import EgoWorld

GOOGLE_KEY = "AIzaSyA-1234567890abcdefghijklmnopqrstu"
GOOGLE_URL = f"https://example.test/v1?key={GOOGLE_KEY}"
BEARER = "sk-live-4f3c2b1a0987654321fedcbaZYXW"

LEAKY = f'''
import logging

import httpx

from ego_core import Command, hookimpl

URL = "{GOOGLE_URL}"
BEARER = "{BEARER}"


def run(args, host):
    def answer(request):
        return httpx.Response(200, json={{"embedding": [0.1, 0.2]}})

    with httpx.Client(transport=httpx.MockTransport(answer)) as client:
        # httpx itself logs "HTTP Request: POST <url> ..." at INFO, with the key in the URL
        client.post(URL, headers={{"Authorization": "Bearer " + BEARER}}, json={{"text": "hello"}})
    log = logging.getLogger("httpx")
    log.warning("retrying %s with Authorization: Bearer %s", URL, BEARER)
    try:
        raise httpx.HTTPStatusError(
            "Server error '500' for url " + URL, request=httpx.Request("POST", URL), response=httpx.Response(500)
        )
    except httpx.HTTPStatusError:
        log.exception("embedding request failed")
    return 0


@hookimpl
def register_commands(register):
    register(Command(name="leak", help="make a logged request", configure=lambda parser: None, run=run))
'''


def test_secrets_in_httpx_log_records_are_masked_in_the_log_file_and_stderr(world: EgoWorld) -> None:
    world.dist("egotest-leaky", "egotest_leaky", LEAKY, ep_name="t_leaky")
    done = world.run("leak", "--plugins", "t_leaky", EGO_LOG_LEVEL="DEBUG")
    assert done.returncode == 0, done.stderr

    records = world.log_records()
    log_text = world.log_text()
    for text in (log_text, done.stderr, done.stdout):
        assert GOOGLE_KEY not in text
        assert BEARER not in text

    httpx_records = [r for r in records if r["logger"] == "httpx"]
    request = next(r for r in httpx_records if r["msg"].startswith("HTTP Request: POST"))
    assert request["msg"] == 'HTTP Request: POST https://example.test/v1?key=[REDACTED] "HTTP/1.1 200 OK"'
    retry = next(r for r in httpx_records if r["msg"].startswith("retrying"))
    assert retry["msg"] == "retrying https://example.test/v1?key=[REDACTED] with Authorization: Bearer [REDACTED]"
    failure = next(r for r in httpx_records if r["msg"] == "embedding request failed")
    assert "HTTPStatusError: Server error '500' for url https://example.test/v1?key=[REDACTED]" in failure["exc"]

    # WARNING and above also go to stderr, masked the same way
    assert "retrying https://example.test/v1?key=[REDACTED] with Authorization: Bearer [REDACTED]" in done.stderr
    assert "Traceback (most recent call last)" in done.stderr
    assert "for url https://example.test/v1?key=[REDACTED]" in done.stderr
