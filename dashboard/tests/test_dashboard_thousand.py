"""The dashboard over a store of a thousand memories (private ones among them), with desires, a question,
people and a shared memory gateway, in Chromium: every view renders, a search finds a memory, and no
12-character run of any private text reaches the HTML of any view or the JSON of any answer."""

from __future__ import annotations

import json
import random
from typing import Any
from urllib.parse import urlsplit

from dashboard_support import LOGIN, PRIVATE, Seeded, build_seeded, seeded_plugins, serve
from playwright.sync_api import Browser, Page, Response, expect
from shared_gateway import GEMINI_PRIVATE, SeededGateway

from ego_core.testing import HostFactory
from ego_dashboard.app import build_app
from ego_dashboard.bench import synthetic_records
from ego_shared_memory import SharedMemoryPlugin

SIZE = 1000
SECRET_WORDS = (
    "sonnet manuscript confession resignation diagnosis inheritance quarrel overdraft pseudonym "
    "告白 辞表 診断書 借金 遺言 喧嘩 偽名 失恋"
).split()
VIEWS = ("now", "memory", "history", "self", "logs", "shared")


def private_text(rng: random.Random) -> str:
    return " ".join(rng.choice(SECRET_WORDS) for _ in range(rng.randint(5, 9)))


def seed_thousand(make_host: HostFactory, gateway: SeededGateway) -> tuple[Seeded, list[dict[str, Any]]]:
    plugins = {**seeded_plugins(), "shared_memory": SharedMemoryPlugin()}
    seeded = build_seeded(make_host, plugins, config={"shared_memory": gateway.plugin_config()})
    rng = random.Random(3)
    records = list(synthetic_records(SIZE - len(seeded.public_ids) - len(seeded.private_ids)))
    for record in records:
        if record["is_private"]:
            record["content"] = private_text(rng)
    seeded.host.hooks.import_records("memory", records=records)
    return seeded, records


def test_a_thousand_memories_every_view_search_and_no_private_run(
    browser: Browser, gateway: SeededGateway, make_host: HostFactory
) -> None:
    seeded, records = seed_thousand(make_host, gateway)
    private = [r["content"] for r in records if r["is_private"]]
    assert len(private) >= 30
    private += [text for text, _emotion in PRIVATE] + [GEMINI_PRIVATE]
    server, thread, url = serve(build_app(seeded.host, login_secret=LOGIN, gateway_operator_token=gateway.operator))
    context = browser.new_context()
    page: Page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    answers: list[str] = []
    paths: set[str] = set()

    def caught(response: Response) -> None:
        if "/api/" in response.url:
            paths.add(urlsplit(response.url).path)
            answers.append(response.text())

    page.on("response", caught)
    try:
        page.goto(f"{url}#login={LOGIN}")
        page.uncheck("#live")
        expect(page.locator("#feeling-summary")).to_contain_text(f"{SIZE} memories")
        html = [page.content()]
        for view in VIEWS[1:]:  # each view's answers are caught by the response listener
            page.click(f"button[data-view={view}]")
            expect(page.locator(f"#view-{view}")).to_be_visible()
            html.append(page.content())
        expect(page.locator("#shared-events tbody tr").first).to_be_visible()

        page.click("button[data-view=memory]")
        wanted = next(r for r in records if not r["is_private"] and "(" in r["content"])
        page.fill("#q", wanted["content"])
        page.click("#search button")
        expect(page.locator("#results tbody tr").first).to_contain_text(wanted["content"])
        page.locator("#results tbody tr").first.click()
        expect(page.locator("#detail-text")).to_have_text(wanted["content"])
        page.fill("#q", "")
        page.select_option("#f-private", "only")
        page.click("#search button")
        expect(page.locator("#results tbody td.private").first).to_be_visible()
        page.locator("#results tbody tr").first.click()
        expect(page.locator("#detail-text")).to_have_text("private memory: its text is not shown")
        html.append(page.content())
        for text in private[:5]:
            page.fill("#q", text)
            page.click("#search button")
            expect(page.locator("#memory-count")).to_contain_text("shown of")
            html.append(page.content())
        page.wait_for_load_state("networkidle")
    finally:
        context.close()
        server.should_exit = True
        thread.join(timeout=30)
    assert not errors, errors

    served = "\n".join(html + answers)
    decoded = []
    for answer in answers:
        try:
            decoded.append(json.dumps(json.loads(answer), ensure_ascii=False))
        except ValueError:
            continue
    served += "\n".join(decoded)
    runs = {text[i : i + 12] for text in private for i in range(len(text) - 11)}
    leaked = sorted(run for run in runs if run.strip() and run in served)
    assert not leaked, leaked[:10]
    assert wanted["content"][:12] in served  # the check reads what was served: a public text is there
    views = {"/api/now", "/api/memories", "/api/self", "/api/history", "/api/logs", "/api/shared", "/api/people"}
    assert views <= paths, sorted(views - paths)
