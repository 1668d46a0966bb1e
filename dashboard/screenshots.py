"""Write the screenshots of docs/dashboard.md (docs/images/dashboard-*.png): every view in English
(``dashboard-<view>.png``) and in Japanese (``dashboard-<view>-ja.png``), over a temporary store seeded with a few
days of memories (an episode, a near-duplicate pair, introspect calls) and a shared memory gateway seeded with a
few agents' events (a conflict, a janitor run, some of them 40 days old by the gateway's clock); and the Now and
Self views of a new, empty store (``dashboard-first-run*.png``). The time zone is Asia/Tokyo and ego init's
language Japanese; the English shots are the same page with ``?lang=en``. Each is a 1280×800 PNG (the Memory
view's taller, to show the graph), taken by Debian's Chromium through Playwright.

    python dashboard/screenshots.py
"""

from __future__ import annotations

import asyncio
import secrets
import socket
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import uvicorn
from playwright.sync_api import Page, sync_playwright

from ego_core import PluginHost, Settings, build_host
from ego_core.kernel.logs import configure_logging
from ego_core.testing import ToolRunner, tool_text
from ego_dashboard.app import build_app
from ego_dashboard.browser import launch_chromium

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "images"
DAYS = [
    ("The walk along the river at dawn was calm and bright", "contentment", 0.6, 0.3),
    ("Master and I talked about the garden tomatoes ripening late this year", "happy", 0.7, 0.5),
    ("Debugging the flaky network test took the whole afternoon", "frustrated", -0.5, 0.7),
    ("A new book about octopus intelligence arrived today", "curious", 0.5, 0.6),
    ("朝の散歩で川沿いの桜がきれいに咲いていた", "moved", 0.8, 0.4),
    ("Reading old letters from the first week brought back a warm feeling", "nostalgic", 0.4, 0.2),
    ("The deploy failed twice before lunch and I could not see why", "anxious", -0.6, 0.8),
    ("We fixed the deploy together: a missing environment variable", "contentment", 0.5, 0.3),
    ("Master said the summary I wrote was exactly what was needed", "happy", 0.8, 0.6),
    ("雨の日は静かで、考えごとがはかどる", "melancholy", -0.1, 0.2),
    ("I wonder whether octopuses dream in colour", "curious", 0.3, 0.5),
    ("Today I noticed I keep returning to the same questions about memory", "neutral", 0.0, 0.3),
]
PRIVATE = ["My secret worry is that Keiko will find the unfinished sonnet manuscript"]


def call(host: PluginHost, tool: str, args: dict[str, object]) -> str:
    async def run() -> str:
        result = await ToolRunner(host).call(tool, args)
        assert not result.is_error, tool_text(result)
        return tool_text(result)

    return anyio.run(run)


def seed(host: PluginHost) -> None:
    now = datetime.now(UTC)
    try:
        for i, (content, emotion, valence, arousal) in enumerate(DAYS):
            host.clock.set(now - timedelta(hours=9 * (len(DAYS) - i)))
            call(host, "remember", {"content": content, "emotion": emotion, "valence": valence, "arousal": arousal})
            if i % 3 == 2:
                call(host, "introspect", {})  # the desires are felt (and recorded) at each
    finally:
        host.clock.set(None)
    call(host, "remember", {"content": PRIVATE[0], "emotion": "anxious", "private": True, "force": True})
    call(
        host,
        "remember",
        {"content": "Introspection: I am calmer when the work has a shape", "category": "introspection"},
    )
    call(host, "update_self", {"field": "new_question", "value": {"question": "Why do octopuses fascinate me?"}})
    service = host.services.get("memory.store")
    if service is not None:  # three memories linked to each other: consolidate makes a notion of them
        ids = [m.id for m in service.recent(datetime(1970, 1, 1, tzinfo=UTC), 100) if "deploy" in m.content]
        ids += [m.id for m in service.recent(datetime(1970, 1, 1, tzinfo=UTC), 100) if "Debugging" in m.content]
        for first, second in ((0, 1), (1, 2), (0, 2)):
            call(host, "link_memories", {"source_id": ids[first], "target_id": ids[second], "link_type": "related"})
        call(host, "consolidate", {})
        again = "A new book about octopus intelligence arrived this morning"  # a near-duplicate: a merge candidate
        call(host, "remember", {"content": again, "emotion": "curious", "force": True})
        everything = service.recent(datetime(1970, 1, 1, tzinfo=UTC), 100)
        octopus = [m.id for m in everything if "octopus" in m.content.lower() or m.content == PRIVATE[0]]
        summary = "Octopus week: a book, a question about their dreams, and a worry kept to myself"
        call(host, "create_episode", {"memory_ids": octopus, "summary": summary})
    walk = {"question": "What makes a walk calm?", "importance": 2}
    call(host, "update_self", {"field": "new_question", "value": walk})
    call(host, "update_relationship", {"person": "Master", "field": "trust_level", "value": 0.8})
    call(host, "introspect", {})


GATEWAY_EVENTS = [  # (days ago, agent, scope, kind, dedupe_key, content_md)
    (40, "claude", "global", "decision", "build_day", "The weekly build moved from Friday to Thursday afternoon"),
    (0, "claude", "global", "workflow", "answer_style", "Answers start with the conclusion, then the reasons"),
    (0, "gemini", "global", "fact", "team_timezone", "The team works in JST; meetings at 10:00 and 16:00"),
    (0, "claude", "project:ego", "config", "release_branch", "Releases are cut from the main branch"),
    (0, "gemini", "project:ego", "config", "release_branch", "Releases are cut from the stable branch"),
    (0, "claude", "project:ego", "todo", "dashboard_shots", "Refresh the dashboard screenshots after the Shared view"),
    (0, "claude", "agent:claude", "workflow", "summaries", "Summarise long threads before answering"),
    (0, "gemini", "agent:gemini", "fact", "drafts", "Gemini's own drafts folder (private to gemini)"),
]


def start_gateway(data: Path) -> tuple[uvicorn.Server, threading.Thread, dict[str, Any]]:
    """A gateway over a SQLite store in ``data``, seeded through its HTTP API; the agent claude's configuration
    and the operator token."""
    from ego_shared_memory.config import GatewaySettings
    from ego_shared_memory.gateway import build_app as gateway_app
    from ego_shared_memory.store import open_store
    from ego_shared_memory.tokens import create_token

    store = open_store(f"sqlite:///{data / 'shared.db'}")
    gateway_settings = GatewaySettings()
    offset = [timedelta(0)]
    now = datetime.now(UTC)
    tokens = {
        a: create_token(store, a, role="agent", agents=gateway_settings.agents, now=now) for a in ("claude", "gemini")
    }
    operator = create_token(store, "ops", role="admin", agents=(*gateway_settings.agents, "ops"), now=now)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    app = gateway_app(store, gateway_settings, clock=lambda: datetime.now(UTC) + offset[0])
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, log_level="warning"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    for days, agent, scope, kind, key, text in GATEWAY_EVENTS:
        offset[0] = timedelta(days=-days)
        body = {"agent_id": agent, "run_id": "run_2026_11_26_001", "scope": scope, "kind": kind, "dedupe_key": key,
                "confidence": "high", "content_md": text, "source": {"system": "other"}, "supersedes": None,
                "ttl_days": 0}  # fmt: skip
        answer = httpx.post(f"{url}/v1/memory/append", json=body, headers={"Authorization": f"Bearer {tokens[agent]}"})
        assert answer.status_code in (200, 201), answer.text
    offset[0] = timedelta(0)
    httpx.post(f"{url}/v1/janitor/run", json={}, headers={"Authorization": f"Bearer {operator}"})
    config = {"gateway_url": url, "token": tokens["claude"], "project": "ego", "operator": operator}
    return server, thread, config


PLUGINS = ["memory", "dedup", "self_model", "desires", "interoception", "emotion_trend", "notions", "shared_memory"]
VIEWPORT = {"width": 1280, "height": 800}
MEMORY_HEIGHT = 1500
LANGUAGES = (("en", ""), ("ja", "-ja"))


def dashboard(host: PluginHost, operator: str | None = None) -> tuple[uvicorn.Server, threading.Thread, str]:
    """``host``'s dashboard on a free loopback port: its server, thread and URL with the one-time login link."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    login = secrets.token_urlsafe(32)
    app = build_app(host, login_secret=login, gateway_operator_token=operator)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    return server, thread, f"http://127.0.0.1:{port}/#login={login}"


def settle(page: Page) -> None:
    page.wait_for_load_state("networkidle")
    time.sleep(0.6)


def shoot_views(page: Page, base: str, lang: str, suffix: str) -> None:
    """Every view of the page at ``base`` in ``lang``."""
    page.goto(f"{base}?lang={lang}")
    page.wait_for_selector("#now-questions li")
    page.uncheck("#live")
    settle(page)
    page.screenshot(path=str(OUT / f"dashboard-now{suffix}.png"))
    page.click("button[data-view=memory]")
    page.fill("#q", "octopus" if lang == "en" else "タコの本")
    page.click("#search button")
    page.wait_for_selector("#results tbody tr")
    page.locator("#results tbody tr").first.click()
    page.wait_for_selector("#graph canvas")
    page.click("#merge-load")
    page.wait_for_selector("#merge-pairs tbody tr")
    settle(page)
    page.screenshot(
        path=str(OUT / f"dashboard-memory{suffix}.png"),
        clip={"x": 0, "y": 0, "width": 1280, "height": MEMORY_HEIGHT},
        full_page=True,
    )
    for view in ("self", "history", "logs"):
        page.click(f"button[data-view={view}]")
        settle(page)
        if view == "logs":
            page.locator("#logs tbody tr details summary").first.click()
        page.screenshot(path=str(OUT / f"dashboard-{view}{suffix}.png"))
    page.click("button[data-view=shared]")
    page.wait_for_selector(".scope-events")
    page.fill("#cleanup-older", "30d")
    page.click("#cleanup-form button")
    page.wait_for_selector("#cleanup-events tbody tr")
    settle(page)
    page.locator("#cleanup-plan").scroll_into_view_if_needed()
    page.screenshot(path=str(OUT / f"dashboard-shared{suffix}.png"))


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as data, tempfile.TemporaryDirectory() as fresh:
        gateway, gateway_thread, shared = start_gateway(Path(data))
        operator = shared.pop("operator")
        settings = Settings(
            data_dir=Path(data), timezone="Asia/Tokyo", language="ja", plugin_tables={"shared_memory": shared}
        )
        configure_logging(settings.logs_path)  # the Logs view, the tool counts and the last introspect
        host = build_host(settings, enabled=PLUGINS)
        host.start()
        seed(host)
        empty = build_host(Settings(data_dir=Path(fresh), timezone="Asia/Tokyo", language="ja"), enabled=PLUGINS[:-1])
        empty.start()
        running = [dashboard(host, operator), dashboard(empty)]
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            url, _, secret = running[0][2].partition("#")
            page.goto(f"{url}#{secret}")  # the login link works once: the session cookie serves both languages
            page.wait_for_selector("#now-questions li")
            for lang, suffix in LANGUAGES:
                shoot_views(page, url, lang, suffix)
            context.close()
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            url, _, secret = running[1][2].partition("#")
            page.goto(f"{url}#{secret}")
            page.wait_for_selector("#now-questions li")
            for lang, suffix in LANGUAGES:
                page.goto(f"{url}?lang={lang}")
                page.wait_for_selector("#now-questions li")
                page.uncheck("#live")
                settle(page)
                page.screenshot(path=str(OUT / f"dashboard-first-run{suffix}.png"))
                page.click("button[data-view=self]")
                settle(page)
                page.screenshot(path=str(OUT / f"dashboard-first-run-self{suffix}.png"))
            context.close()
            browser.close()
        for server, thread, _url in running:
            server.should_exit = True
            thread.join()
        host.stop()
        empty.stop()
        gateway.should_exit = True
        gateway_thread.join()
    print(f"wrote {OUT}/dashboard-*.png", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
