"""Write the screenshots of docs/dashboard.md (docs/images/dashboard-*.png): a temporary store seeded with a few
memories, served on a free loopback port, each view photographed by Debian's Chromium through Playwright.

    python dashboard/screenshots.py
"""

from __future__ import annotations

import socket
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
import uvicorn
from playwright.sync_api import sync_playwright

from ego_core import PluginHost, Settings, build_host
from ego_core.testing import ToolRunner, tool_text
from ego_dashboard.app import build_app

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "images"
MODEL = ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2" / "onnx"
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
    for content, emotion, valence, arousal in DAYS:
        call(host, "remember", {"content": content, "emotion": emotion, "valence": valence, "arousal": arousal})
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
    walk = {"question": "What makes a walk calm?", "importance": 2}
    call(host, "update_self", {"field": "new_question", "value": walk})


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as data:
        settings = Settings(data_dir=Path(data), timezone="UTC", plugin_tables={"memory": {"model_dir": str(MODEL)}})
        chosen = ["memory", "self_model", "desires", "interoception", "emotion_trend", "notions"]
        host = build_host(settings, enabled=chosen)
        host.start()
        seed(host)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        server = uvicorn.Server(uvicorn.Config(build_app(host), host="127.0.0.1", port=port, log_config=None))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync"]  # fmt: skip
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=args)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_selector("#now-questions li")
            page.uncheck("#live")
            page.screenshot(path=str(OUT / "dashboard-now.png"))
            page.click("button[data-view=memory]")
            page.fill("#q", "octopus")
            page.click("#search button")
            page.wait_for_selector("#results tbody tr")
            page.locator("#results tbody tr").first.click()
            page.wait_for_selector("#graph canvas")
            time.sleep(0.5)
            page.screenshot(path=str(OUT / "dashboard-memory.png"), full_page=True)
            for view in ("self", "history", "logs", "shared"):
                page.click(f"button[data-view={view}]")
                time.sleep(0.8)
                page.screenshot(path=str(OUT / f"dashboard-{view}.png"))
            browser.close()
        server.should_exit = True
        thread.join()
        host.stop()
    print(f"wrote {OUT}/dashboard-*.png", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
