"""The page in a real browser (Debian's Chromium driven by Playwright): each view renders, a search finds a
memory, a private memory shows as private, and a forget from the page removes the memory."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from dashboard_support import PRIVATE, Seeded
from playwright.sync_api import Browser, Page, expect, sync_playwright

from ego_dashboard.app import build_app

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def served(seeded: Seeded) -> Iterator[str]:
    port = free_port()
    config = uvicorn.Config(build_app(seeded.host), host="127.0.0.1", port=port, log_config=None, lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the dashboard did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/"
    server.should_exit = True
    thread.join(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail("Debian's Chromium is missing: apt-get install -y chromium")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser, served: str) -> Iterator[Page]:
    context = browser.new_context()
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    outside: list[str] = []
    opened.on("request", lambda request: None if request.url.startswith(served) else outside.append(request.url))
    opened.goto(served)
    yield opened
    context.close()
    assert not errors, errors
    assert not outside, f"the page reached beyond the dashboard: {outside}"


def test_every_view_renders(page: Page, seeded: Seeded) -> None:
    total = len(seeded.public_ids) + len(seeded.private_ids)
    expect(page.locator("#token-form")).to_be_hidden()  # on loopback no token is asked for
    expect(page.locator("#feeling-summary")).to_contain_text(f"{total} memories")
    expect(page.locator("#now-questions li")).to_have_text(["What makes a walk feel calm? (active)"])
    assert page.locator("#body tr").count() > 0
    assert page.locator("#circumplex").bounding_box() is not None
    page.click("button[data-view=self]")
    expect(page.locator("#questions tbody tr")).to_have_count(1)
    page.click("button[data-view=history]")
    expect(page.locator("#h-emotion")).to_be_visible()
    page.click("button[data-view=logs]")
    expect(page.locator("#view-logs")).to_be_visible()
    page.click("button[data-view=shared]")
    expect(page.locator("#shared-status")).to_have_text("The shared memory plugin is not enabled.")
    expect(page.locator("#error")).to_be_hidden()


def test_search_detail_and_forget_from_the_page(page: Page, seeded: Seeded) -> None:
    page.click("button[data-view=memory]")
    total = len(seeded.public_ids) + len(seeded.private_ids)
    expect(page.locator("#results tbody tr")).to_have_count(total)
    expect(page.locator("#results tbody td.private")).to_have_count(len(seeded.private_ids))
    page.fill("#q", "octopus intelligence book")
    page.click("#search button")
    first = page.locator("#results tbody tr").first
    expect(first).to_contain_text("octopus")
    memory_id = first.get_attribute("data-id")
    first.click()
    expect(page.locator("#detail-text")).to_contain_text("octopus")
    expect(page.locator("#graph canvas").first).to_be_attached()
    expect(page.locator("#reveal")).to_be_hidden()  # off by default, and this memory is not private
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#forget")
    expect(page.locator("#detail")).to_be_hidden()
    expect(page.locator(f"#results tbody tr[data-id='{memory_id}']")).to_have_count(0)
    memories = seeded.host.services.get("memory.store")
    assert memories is not None
    assert memories.get([str(memory_id)]) == []
    html = page.content()
    for text, _emotion in PRIVATE:
        assert text[:12] not in html
