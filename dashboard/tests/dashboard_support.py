"""Helpers of the dashboard tests: a real host (memory, dedup, self_model, desires, interoception, the real
default embedding model) seeded with public and private memories, links, an open question, Master's trust set twice and
the desires felt three times in the past hours."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import anyio
import attrs
import uvicorn
from starlette.applications import Starlette
from starlette.testclient import TestClient

from ego_core import PluginHost, Settings
from ego_core.testing import HostFactory, ToolRunner, tool_text
from ego_dashboard.app import build_app
from ego_dashboard.owner import issue_owner_token
from ego_dedup import DedupPlugin
from ego_desires import DesiresPlugin
from ego_interoception import InteroceptionPlugin
from ego_memory.plugin import MemoryPlugin
from ego_self_model import SelfModelPlugin

if TYPE_CHECKING:
    from playwright.sync_api import Page

PUBLIC = [
    ("The walk along the river at dawn was calm and bright", "contentment"),
    ("Master and I talked about the garden tomatoes ripening late this year", "happy"),
    ("Debugging the flaky network test took the whole afternoon", "frustrated"),
    ("A new book about octopus intelligence arrived today", "curious"),
    ("朝の散歩で川沿いの桜がきれいに咲いていた", "moved"),
    ("Reading old letters from the first week brought back a warm feeling", "nostalgic"),
]
PRIVATE = [
    ("My secret worry is that Keiko will find the unfinished sonnet manuscript", "anxious"),
    ("誰にも言っていないけれど、本当は転職を考えている自分がいる", "melancholy"),
]
"""Private texts: no run of 12 of their characters may reach any dashboard response."""


@attrs.define
class Seeded:
    host: PluginHost
    public_ids: list[str]
    private_ids: list[str]
    question_id: str
    episode_id: str = ""


def call(host: PluginHost, tool: str, args: dict[str, Any]) -> str:
    async def run() -> str:
        result = await ToolRunner(host).call(tool, args)
        text = tool_text(result)
        assert not result.is_error, f"{tool}: {text}"
        return text

    with ThreadPoolExecutor(1) as worker:  # its own thread: Playwright's sync API runs a loop in this one
        return worker.submit(anyio.run, run).result()


def seeded_plugins() -> dict[str, object]:
    return {
        "memory": MemoryPlugin(),
        "dedup": DedupPlugin(),
        "self_model": SelfModelPlugin(),
        "desires": DesiresPlugin(),
        "interoception": InteroceptionPlugin(),
    }


def build_seeded(
    make_host: HostFactory,
    plugins: dict[str, object] | None = None,
    config: Mapping[str, Mapping[str, Any]] | None = None,
    settings: Settings | None = None,
) -> Seeded:
    chosen = plugins or seeded_plugins()
    host = make_host(chosen, config=config, settings=settings)
    host.start()
    public_ids: list[str] = []
    private_ids: list[str] = []
    question_id = ""
    episode_id = ""
    seed_trust(host, chosen)  # before the memories: Master is known by then
    if "memory" in chosen:
        for content, emotion in PUBLIC:
            call(host, "remember", {"content": content, "emotion": emotion, "force": True})
        for content, emotion in PRIVATE:
            call(host, "remember", {"content": content, "emotion": emotion, "private": True, "force": True})
        memories = host.services.get("memory.store")
        assert memories is not None
        for memory in memories.recent(datetime(1970, 1, 1, tzinfo=UTC), 100):
            (private_ids if memory.is_private else public_ids).append(memory.id)
        call(host, "link_memories", {"source_id": public_ids[0], "target_id": public_ids[1]})
        call(host, "link_memories", {"source_id": public_ids[1], "target_id": private_ids[0]})
        call(host, "link_memories", {"source_id": public_ids[1], "target_id": public_ids[2]})
        members = [public_ids[0], public_ids[1], private_ids[0]]
        summary = "A calm morning walk, then talk of the garden; " + PRIVATE[0][0]  # the private words are masked
        created = call(host, "create_episode", {"memory_ids": members, "summary": summary})
        episode_id = created.split()[1]
    if "self_model" in chosen:
        call(host, "update_self", {"field": "new_question", "value": {"question": "What makes a walk feel calm?"}})
        questions = host.services.get("self_model.questions")
        assert questions is not None
        question_id = questions.unresolved()[0].id
    seed_felt(host, chosen)
    return Seeded(
        host=host, public_ids=public_ids, private_ids=private_ids, question_id=question_id, episode_id=episode_id
    )


TRUST_SEEDED = (0.6, 0.8)
"""Master's trust level as it is set, two days and then one day ago (Master is new at the first)."""
FELT_HOURS_AGO = (5, 3, 1)
"""When the seeded host's desires were felt (an introspect each), in hours before now."""


def seed_trust(host: PluginHost, chosen: Mapping[str, object]) -> None:
    """Master's trust set twice, two days and one day ago (the self-model records each change, and the level
    Master starts with)."""
    if "self_model" not in chosen:
        return
    now = datetime.now(UTC)
    try:
        for days, trust in zip((2, 1), TRUST_SEEDED, strict=True):
            host.clock.set(now - timedelta(days=days))
            call(host, "update_relationship", {"person": "Master", "field": "trust_level", "value": trust})
    finally:
        host.clock.set(None)


def seed_felt(host: PluginHost, chosen: Mapping[str, object]) -> None:
    """The desires felt three times, hours apart (the desires plugin records one sample per 15 minutes)."""
    if "desires" not in chosen:
        return
    now = datetime.now(UTC)
    try:
        for hours in FELT_HOURS_AGO:
            host.clock.set(now - timedelta(hours=hours))
            call(host, "introspect", {})
    finally:
        host.clock.set(None)


def csrf_of(client: TestClient) -> str:
    """The CSRF token of the page the dashboard serves."""
    page = client.get("/").text
    marker = '<meta name="ego-csrf" content="'
    start = page.index(marker) + len(marker)
    return page[start : page.index('"', start)]


LOGIN = "a-one-time-login-secret-of-the-tests-0123456789"
"""The login link's secret the tests' dashboards are built with (``build_app(login_secret=LOGIN)``)."""


def log_in(client: TestClient, token: str) -> None:
    """Log ``client`` in as the owner with the owner token (the session cookie stays in its jar)."""
    answer = client.post("/api/login", json={"owner_token": token}, headers={"X-Ego-Csrf": csrf_of(client)})
    assert answer.status_code == 200, answer.text


@contextmanager
def owner_client(host: PluginHost, base_url: str = "http://127.0.0.1:8766", **options: Any) -> Iterator[TestClient]:
    """The dashboard of ``host`` (``build_app(host, **options)``) with a client logged in as its owner, through a
    new owner token of the host's space."""
    with TestClient(build_app(host, **options), base_url=base_url) as client:
        log_in(client, issue_owner_token(host.settings.data_dir))
        yield client


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve(app: Starlette) -> tuple[uvicorn.Server, threading.Thread, str]:
    """``app`` served by uvicorn on a free loopback port, in a thread: the server, its thread and its URL."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False, lifespan="on")
    server = uvicorn.Server(config)  # no access log, as `ego dashboard`: a search's words are in its URL
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the dashboard did not start"
        time.sleep(0.05)
    return server, thread, f"http://127.0.0.1:{port}/"


def of_chart(page: Page, selector: str, expression: str) -> Any:
    """`expression` over `chart`, the Chart.js chart on `selector`, once it exists: a canvas is visible before the
    data it waits for arrives and the chart is made."""
    page.wait_for_function("(s) => Chart.getChart(document.querySelector(s)) !== undefined", arg=selector)
    return page.evaluate(
        f"(s) => {{ const chart = Chart.getChart(document.querySelector(s)); return {expression}; }}", selector
    )
