"""The page in a real browser (Debian's Chromium driven by Playwright): the owner logs in through the one-time
link or the owner token, each view renders, a search finds a memory, a private memory shows as private, a forget
from the page removes the memory, and a correction of importance, tags or privacy goes through."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from dashboard_support import FELT_HOURS_AGO, LOGIN, PRIVATE, TRUST_SEEDED, Seeded, call, of_chart, serve
from playwright.sync_api import Browser, Page, expect
from shared_gateway import GEMINI_PRIVATE, OLD_NOTE, OWN_NOTE, SeededGateway, shared_host_plugins

from ego_core.testing import HostFactory
from ego_dashboard.app import build_app
from ego_dashboard.owner import issue_owner_token


@pytest.fixture
def served(seeded: Seeded) -> Iterator[str]:
    server, thread, url = serve(build_app(seeded.host, login_secret=LOGIN))
    yield url
    server.should_exit = True
    thread.join(timeout=30)


@pytest.fixture
def page(browser: Browser, served: str) -> Iterator[Page]:
    context = browser.new_context()
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    outside: list[str] = []
    opened.on("request", lambda request: None if request.url.startswith(served) else outside.append(request.url))
    opened.goto(f"{served}#login={LOGIN}")
    yield opened
    context.close()
    assert not errors, errors
    assert not outside, f"the page reached beyond the dashboard: {outside}"


def test_every_view_renders(page: Page, seeded: Seeded, served: str) -> None:
    total = len(seeded.public_ids) + len(seeded.private_ids)
    expect(page.locator("#login-form")).to_be_hidden()  # logged in by the link
    assert page.url == served  # the link's secret is gone from the address bar and the history
    expect(page.locator("#feeling-summary")).to_contain_text(f"{total} memories")
    expect(page.locator("#now-questions li")).to_have_text(["What makes a walk feel calm? (active)"])
    assert page.locator("#body tr").count() > 0
    assert page.locator("#circumplex").bounding_box() is not None
    page.click("button[data-view=self]")
    expect(page.locator("#questions tbody tr")).to_have_count(1)
    master = page.locator("#people tbody tr", has_text="Master")
    expect(master.locator("td")).to_have_text(["Master", "you trust them deeply", "0.80", "1", ""])
    expect(master.locator("canvas.spark")).to_be_visible()  # the trust history of the seeded changes
    shown = of_chart(page, "#people canvas.spark", "chart.data.datasets[0].data")
    assert shown == list(TRUST_SEEDED)
    expect(page.locator("#people-missing")).to_be_hidden()
    page.click("button[data-view=history]")
    expect(page.locator("#h-emotion")).to_be_visible()
    expect(page.locator("#h-desires")).to_be_visible()
    expect(page.locator("#h-desires-count")).to_have_text(f"{len(FELT_HOURS_AGO)} samples of 9 desires")
    expect(page.locator("#h-desires-missing")).to_be_hidden()
    desires = of_chart(page, "#h-desires", "chart.data.datasets.map(d => [d.label, d.data.length])")
    assert len(desires) == 9
    assert all(count == len(FELT_HOURS_AGO) for _label, count in desires)
    page.click("button[data-view=logs]")
    expect(page.locator("#view-logs")).to_be_visible()
    page.click("button[data-view=shared]")
    expect(page.locator("#shared-status")).to_contain_text("The shared memory is not enabled.")
    expect(page.locator("#shared-status a")).to_have_attribute("href", "#shared-setup")
    expect(page.locator("#shared-setup")).to_contain_text("ego gateway token create")
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


def test_correct_importance_tags_and_privacy_from_the_page(page: Page, seeded: Seeded) -> None:
    page.click("button[data-view=memory]")
    page.fill("#q", "garden tomatoes ripening")
    page.click("#search button")
    first = page.locator("#results tbody tr").first
    expect(first).to_contain_text("tomatoes")
    memory_id = str(first.get_attribute("data-id"))
    first.click()
    expect(page.locator("#revise")).to_be_visible()
    page.select_option("#r-importance", "5")
    page.fill("#r-tags", "garden, 家庭菜園")
    page.click("#r-save")
    expect(page.locator("#r-done")).to_contain_text("saved")
    expect(page.locator("#detail-meta")).to_contain_text("家庭菜園")
    memories = seeded.host.services.get("memory.store")
    assert memories is not None
    [stored] = memories.get([memory_id])
    assert (stored.importance, stored.tags) == (5, ("garden", "家庭菜園"))

    page.check("#r-private")
    page.click("#r-save")
    expect(page.locator("#detail-text")).to_have_text("private memory: its text is not shown")
    row = page.locator(f"#results tbody tr[data-id='{memory_id}']")
    expect(row).to_have_count(0)  # its text no longer finds it: a private memory is found by its metadata only
    assert "tomatoes" not in page.content()
    page.fill("#q", "家庭菜園")  # its tag
    page.click("#search button")
    expect(row.locator("td.private")).to_have_count(1)
    assert "tomatoes" not in page.content()

    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    page.uncheck("#r-private")
    page.click("#r-save")
    expect(page.locator("#detail-text")).to_contain_text("tomatoes")
    assert asked
    assert "public" in asked[0]
    [stored] = memories.get([memory_id])
    assert not stored.is_private


@pytest.fixture
def shared_page(browser: Browser, gateway: SeededGateway, make_host: HostFactory) -> Iterator[Page]:
    """The dashboard of an agent (claude) whose shared memory is the seeded gateway, with the operator token."""
    host = make_host(shared_host_plugins(), config={"shared_memory": gateway.plugin_config()})
    server, thread, url = serve(build_app(host, login_secret=LOGIN, gateway_operator_token=gateway.operator))
    context = browser.new_context()
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.goto(f"{url}#login={LOGIN}")
    opened.uncheck("#live")
    yield opened
    context.close()
    server.should_exit = True
    thread.join(timeout=30)
    assert not errors, errors


def test_the_shared_view_shows_the_gateway(shared_page: Page, gateway: SeededGateway) -> None:
    page = shared_page
    page.click("button[data-view=shared]")
    expect(page.locator("#shared-status")).to_contain_text("Read as claude")
    expect(page.locator("#shared-pins")).to_contain_text("answer_style")
    global_events = page.locator(".scope-events[data-scope='global'] tbody tr")
    expect(global_events.filter(has_text=OLD_NOTE)).to_have_count(1)
    expect(page.locator(f"tr[data-event='{gateway.events['pref']}']")).to_contain_text("[pinned]")
    expect(page.locator(".scope-events[data-scope='agent:claude']")).to_contain_text(OWN_NOTE)
    expect(page.locator("#shared-conflict-count")).to_have_text("1 open conflict(s) in these scopes.")
    expect(page.locator("#shared-conflicts tbody tr")).to_contain_text(["release_branch"])
    expect(page.locator("#shared-audit tbody tr").filter(has_text="janitor").first).to_be_visible()
    expect(page.locator("#error")).to_be_hidden()
    assert GEMINI_PRIVATE[:12] not in page.content()
    assert "poem_" not in page.content()


def test_a_cleanup_plan_is_confirmed_from_the_page(shared_page: Page, gateway: SeededGateway) -> None:
    page = shared_page
    page.click("button[data-view=shared]")
    expect(page.locator("#shared-status")).to_contain_text("Read as claude")
    page.fill("#cleanup-older", "30d")
    page.click("#cleanup-form button")
    expect(page.locator("#cleanup-plan-summary")).to_contain_text("1 event(s) (global: 1)")
    expect(page.locator("#cleanup-events tbody tr")).to_contain_text([OLD_NOTE])
    assert gateway.store.get(gateway.events["old"]) is not None  # a proposal deletes nothing
    dismissed: list[str] = []
    page.once("dialog", lambda dialog: (dismissed.append(dialog.message), dialog.dismiss()))
    page.click("#cleanup-confirm")
    expect(page.locator("#cleanup-confirm")).to_be_visible()
    assert dismissed
    assert gateway.store.get(gateway.events["old"]) is not None  # asked first; the owner said no
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#cleanup-confirm")
    expect(page.locator("#cleanup-done")).to_contain_text("Deleted 1 event(s)")
    assert gateway.store.get(gateway.events["old"]) is None
    expect(page.locator("#shared-audit tbody tr").filter(has_text="cleanup_confirm")).to_have_count(1)
    expect(page.locator(".scope-events[data-scope='global']")).not_to_contain_text(OLD_NOTE)


def test_confirming_needs_the_owner_and_the_pages_csrf(
    browser: Browser, gateway: SeededGateway, make_host: HostFactory
) -> None:
    """Served beyond loopback: without the owner's login nothing is read and nothing confirmed (an agent's token
    does not log in); a page that does not hold this dashboard's CSRF token (a forged copy, with the owner's
    cookie) cannot confirm a plan; the real page, logged in with the owner token, can."""
    host = make_host(shared_host_plugins(), config={"shared_memory": gateway.plugin_config()})
    anywhere = ".".join(["0"] * 4)
    owner = issue_owner_token(host.settings.data_dir)
    app = build_app(host, bind_host=anywhere, login_secret=LOGIN, gateway_operator_token=gateway.operator)
    server, thread, url = serve(app)
    with gateway.http(gateway.operator) as ops:
        plan_id = ops.post("/v1/janitor/cleanup", json={"older_than": "30d"}).json()["plan_id"]
    confirm = f"{url}api/shared/cleanup/{plan_id}/confirm"
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url)
        csrf = page.locator("meta[name=ego-csrf]").get_attribute("content")
        expect(page.locator("#login-form")).to_be_visible()
        for wrong in ("egoowner_wrong", gateway.claude):
            page.fill("#owner-token", wrong)
            page.click("#login-form button")
            expect(page.locator("#error")).to_contain_text("not this dashboard's owner token")
            expect(page.locator("#login-form")).to_be_visible()
        refused = page.request.post(confirm, headers={"X-Ego-Csrf": str(csrf)})
        assert refused.status == 401
        assert page.context.cookies() == []

        page.fill("#owner-token", owner)
        page.click("#login-form button")
        expect(page.locator("#login-form")).to_be_hidden()
        expect(page.locator("#logout")).to_be_visible()
        [cookie] = page.context.cookies()
        assert (cookie["httpOnly"], cookie["sameSite"]) == (True, "Strict")
        assert owner not in cookie["value"]
        assert page.evaluate("document.cookie") == ""  # HttpOnly: out of the page's scripts' reach

        forged = context.new_page()
        forged.route(url, lambda route: route.fulfill(response=(fetched := route.fetch()),
                                                     body=fetched.text().replace(str(csrf), "forged")))  # fmt: skip
        forged.goto(url)
        forged.click("button[data-view=shared]")
        forged.uncheck("#live")
        forged.fill("#cleanup-plan-id", plan_id)
        forged.click("#cleanup-lookup button")
        expect(forged.locator("#cleanup-plan-summary")).to_contain_text(plan_id)  # reading: the cookie is enough
        forged.once("dialog", lambda dialog: dialog.accept())
        forged.click("#cleanup-confirm")
        expect(forged.locator("#error")).to_contain_text("CSRF")
        assert gateway.store.get(gateway.events["old"]) is not None

        page.click("button[data-view=shared]")
        page.uncheck("#live")
        page.fill("#cleanup-plan-id", plan_id)
        page.click("#cleanup-lookup button")
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#cleanup-confirm")
        expect(page.locator("#cleanup-done")).to_contain_text("Deleted 1 event(s)")
        assert gateway.store.get(gateway.events["old"]) is None
    finally:
        context.close()
        server.should_exit = True
        thread.join(timeout=30)


def test_the_login_link_works_once_and_log_out_ends_the_session(browser: Browser, served: str) -> None:
    first = browser.new_context()
    second = browser.new_context()
    try:
        page = first.new_page()
        page.goto(f"{served}#login={LOGIN}")
        expect(page.locator("#feeling-summary")).to_contain_text("memories")
        again = second.new_page()
        again.goto(f"{served}#login={LOGIN}")
        expect(again.locator("#error")).to_contain_text("the login link was used or has expired")
        expect(again.locator("#login-form")).to_be_visible()
        assert again.request.get(f"{served}api/now").status == 401
        assert page.request.get(f"{served}api/now").status == 200
        page.click("#logout")
        expect(page.locator("#login-form")).to_be_visible()
        assert page.request.get(f"{served}api/now").status == 401
    finally:
        first.close()
        second.close()


def test_episode_in_the_detail_and_merge_review(page: Page, seeded: Seeded) -> None:
    near = ("I repotted the basil on the balcony this evening", "I repotted the basil on the balcony in the evening")
    for text in near:
        call(seeded.host, "remember", {"content": text, "emotion": "happy", "force": True})
    page.click("button[data-view=memory]")
    page.locator(f"#results tbody tr[data-id='{seeded.public_ids[0]}']").click()
    episode = page.locator("#detail-episode")
    expect(episode).to_contain_text("A calm morning walk, then talk of the garden")
    expect(episode.locator("li.private")).to_have_count(1)
    expect(episode.locator("li")).to_have_count(3)
    page.click("#merge-load")
    pair = page.locator("#merge-pairs tbody tr").filter(has_text=near[0])
    expect(pair).to_have_count(1)
    expect(pair).to_contain_text(near[1])
    pair.locator("button.keep-both").click()
    pair.locator("button.undo-keep").click()  # undone: proposed again
    expect(pair.locator("button.keep-both")).to_be_visible()
    expect(page.locator("#merge-summary")).to_contain_text("0 pair(s) kept both of")
    pair.locator("button.keep-both").click()
    expect(pair.locator("button.undo-keep")).to_be_visible()
    page.click("#merge-load")
    expect(page.locator("#merge-pairs tbody tr").filter(has_text=near[0])).to_have_count(0)
    expect(page.locator("#merge-summary")).to_contain_text("1 pair(s) kept both of")
    reviews = seeded.host.services.get("dedup.reviews")
    assert reviews is not None
    assert reviews.count() == 1
    page.click("#merge-kept-box summary")
    page.locator("#merge-kept tbody tr").filter(has_text=near[0]).locator("button.undo-keep").click()
    expect(page.locator("#merge-pairs tbody tr").filter(has_text=near[0])).to_have_count(1)
    expect(page.locator("#merge-kept-box")).to_be_hidden()
    html = page.content()
    for text, _emotion in PRIVATE:
        assert text[:12] not in html


def test_the_header_controls_stay_in_place_as_the_owner_logs_in(browser: Browser, served: str) -> None:
    """The log-out button keeps its place while hidden: "live" and the language menu do not move under the pointer
    when the login completes (a click on them then would land elsewhere)."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(served)
        expect(page.locator("#login-form")).to_be_visible()
        expect(page.locator("#logout")).to_be_hidden()
        before = [page.locator(selector).bounding_box() for selector in ("#live", "#lang")]
        page.goto(f"{served}?again#login={LOGIN}")
        expect(page.locator("#logout")).to_be_visible()
        after = [page.locator(selector).bounding_box() for selector in ("#live", "#lang")]
        assert None not in before
        assert after == before
    finally:
        context.close()
