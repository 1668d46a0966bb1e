"""The page in the owner's language and time zone, in a real browser (Chromium driven by Playwright): every view
in Japanese and English (``?lang=``, the page's switch kept in localStorage, else ``ego init``'s language), times
in the configured zone, empty states that say what will appear, History fitted to the data, Logs folded, and
labels (the memory graph's, the charts' axes) that do not overlap."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import attrs
import pytest
from dashboard_support import FELT_HOURS_AGO, LOGIN, Seeded, build_seeded, call, of_chart, owner_client, serve
from playwright.sync_api import Browser, Page, expect
from starlette.testclient import TestClient

from ego_core import PluginHost, Settings, log_event
from ego_core.testing import HostFactory, read_log
from ego_dashboard.app import build_app
from ego_desires import DesiresPlugin
from ego_memory.plugin import MemoryPlugin
from ego_self_model import SelfModelPlugin

VIEWS = ("now", "memory", "self", "history", "logs", "shared")
TABS = {
    "en": ["Now", "Memory", "Self", "History", "Logs", "Shared"],
    "ja": ["いま", "記憶", "自己", "履歴", "ログ", "共有メモリ"],
}
HEADINGS = {  # a heading of each view, as the owner reads it
    "en": {
        "now": "Feeling (valence × arousal)",
        "memory": "Merge candidates",
        "self": "Open questions: salience over the next weeks",
        "history": "Valence and arousal of what was remembered",
        "logs": "details",
        "shared": "Setting up the shared memory",
    },
    "ja": {
        "now": "気分（快・不快 × 覚醒度）",
        "memory": "統合の候補",
        "self": "未解決の問い: これから数週間の気がかり度",
        "history": "記憶した出来事の快・不快と覚醒度",
        "logs": "詳細",
        "shared": "共有メモリの設定",
    },
}
EMPTY = {  # what a new owner reads where nothing is yet: what will appear, and how
    "en": {
        "#feeling-empty": "No memories yet. Each memory the agent keeps (the remember tool) appears here",
        "#memory-empty": "No memories yet. What the agent remembers (the remember tool) is listed here",
        "#questions-empty": "No open questions yet. When the agent wonders about something (update_self",
        "#people-empty": "Nobody known yet. People appear when the agent records a relationship",
        "#history-empty": "Nothing in this range yet.",
        "#logs-empty": "No log lines yet today. ego writes its log to",
        "#shared-status": "The shared memory is not enabled.",
    },
    "ja": {
        "#feeling-empty": "まだ記憶がありません。エージェントが remember ツールで記憶を残すと、ここに点として現れます",
        "#memory-empty": "まだ記憶がありません。エージェントが remember ツールで残した記憶が、ここに新しい順に並びます",
        "#questions-empty": "未解決の問いはまだありません。エージェントが何かを疑問に思うと",
        "#people-empty": "知っている人はまだいません。",
        "#history-empty": "この期間にはまだ何もありません。",
        "#logs-empty": "今日のログはまだありません。ego はログを",
        "#shared-status": "共有メモリは有効になっていません。",
    },
}
EMPTY_VIEW = {
    "#feeling-empty": "now",
    "#memory-empty": "memory",
    "#questions-empty": "self",
    "#people-empty": "self",
    "#history-empty": "history",
    "#logs-empty": "logs",
    "#shared-status": "shared",
}
KNOWN_INSTANT = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)
"""A memory's time, shown in Asia/Tokyo as 18:30 on 1 March 2025."""
SHOWN_AT = {"en": "1 Mar 2025, 18:30", "ja": "2025年3月1日 18:30"}
OVERLAPS = """(selector) => {
  const boxes = Array.from(document.querySelectorAll(selector)).map((n) => n.getBoundingClientRect());
  const hits = [];
  boxes.forEach((a, i) => boxes.slice(i + 1).forEach((b, j) => {
    if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) hits.push([i, i + 1 + j]);
  }));
  return { count: boxes.length, hits: hits };
}"""
AXIS_OVERLAPS = """(() => {
  const ctx = document.createElement("canvas").getContext("2d");
  const result = {};
  Object.values(chart.scales).forEach((scale) => {
    const boxes = scale.getLabelItems().map((item) => {
      ctx.font = item.font.string;
      const w = ctx.measureText(String(item.label)).width, h = item.font.lineHeight;
      const [x, y] = item.options.translation, align = item.options.textAlign, base = item.options.textBaseline;
      const left = align === "center" ? x - w / 2 : align === "right" || align === "end" ? x - w : x;
      const top = base === "middle" ? y - h / 2 : base === "bottom" ? y - h : y;
      return { left: left, right: left + w, top: top, bottom: top + h, rotation: item.options.rotation };
    });
    const hits = [];
    boxes.forEach((a, i) => boxes.slice(i + 1).forEach((b) => {
      if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) hits.push([a, b]);
    }));
    result[scale.id] = { labels: boxes.length, hits: hits.length, rotated: boxes.some((b) => b.rotation) };
  });
  return result;
})()"""


def tokyo(settings: Settings, language: str = "en") -> Settings:
    return attrs.evolve(settings, timezone="Asia/Tokyo", language=language)


@pytest.fixture
def logged_host(make_host: HostFactory, ego_settings: Settings) -> Seeded:
    """The seeded host in Asia/Tokyo, writing ego's log (what the Logs view, the tool counts and the last
    introspect read)."""

    def with_log(plugins: Any = None, **options: Any) -> PluginHost:
        return make_host(plugins, log=True, **options)

    return build_seeded(with_log, settings=tokyo(ego_settings))  # type: ignore[arg-type]


@pytest.fixture
def url(logged_host: Seeded) -> Iterator[str]:
    server, thread, served = serve(build_app(logged_host.host, login_secret=LOGIN))
    yield served
    server.should_exit = True
    thread.join(timeout=30)


@pytest.fixture
def page(browser: Browser, url: str) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.goto(f"{url}#login={LOGIN}")
    expect(opened.locator("#logout")).to_be_visible()
    yield opened
    context.close()
    assert not errors, errors


def open_view(page: Page, view: str) -> None:
    page.click(f"button[data-view={view}]")
    expect(page.locator(f"#view-{view}")).to_be_visible()


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_view_in_both_languages(page: Page, url: str, lang: str) -> None:
    page.goto(f"{url}?lang={lang}")
    page.uncheck("#live")
    expect(page.locator("#tabs button")).to_have_text(TABS[lang])
    assert page.evaluate("document.documentElement.lang") == lang
    for view in VIEWS:
        open_view(page, view)
        expect(page.locator(f"#view-{view}")).to_contain_text(HEADINGS[lang][view])
    open_view(page, "now")
    ran = page.locator("#introspect-ran")
    expect(ran).to_contain_text("introspect last ran" if lang == "en" else "最後に introspect を実行したのは")
    expect(page.locator("#now-questions li")).to_have_text(
        ["What makes a walk feel calm? (active)" if lang == "en" else "What makes a walk feel calm? (考え中)"]
    )
    open_view(page, "self")
    trust = "you trust them deeply" if lang == "en" else "深く信頼している"
    expect(page.locator("#people tbody tr", has_text="Master").locator("td").nth(1)).to_have_text(trust)
    expect(page.locator("#error")).to_be_hidden()


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_new_owner_reads_what_will_appear(
    browser: Browser, make_host: HostFactory, ego_settings: Settings, lang: str
) -> None:
    plugins = {"memory": MemoryPlugin(), "self_model": SelfModelPlugin(), "desires": DesiresPlugin()}
    host = make_host(plugins, settings=tokyo(ego_settings, language=lang))
    server, thread, served = serve(build_app(host, login_secret=LOGIN))
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{served}#login={LOGIN}")  # no ?lang: ego init's language
        expect(page.locator("#tabs button").first).to_have_text(TABS[lang][0])
        page.uncheck("#live")
        for selector, text in EMPTY[lang].items():
            open_view(page, EMPTY_VIEW[selector])
            expect(page.locator(selector)).to_be_visible()
            expect(page.locator(selector)).to_contain_text(text)
        open_view(page, "now")
        expect(page.locator("#circumplex")).to_be_hidden()  # no blank axes
        intro = "No reflection kept yet" if lang == "en" else "記憶として残した内省はまだありません"
        expect(page.locator("#introspection")).to_contain_text(intro)
        open_view(page, "self")
        expect(page.locator("#salience")).to_be_hidden()
        expect(page.locator("#questions")).to_be_hidden()
        expect(page.locator("#people")).to_be_hidden()
        open_view(page, "history")
        expect(page.locator("#h-emotion-card")).to_be_hidden()
        open_view(page, "shared")
        expect(page.locator("#shared-status a")).to_have_attribute("href", "#shared-setup")
        expect(page.locator("#shared-setup")).to_contain_text("EGO_SHARED_TOKEN")
    finally:
        context.close()
        server.should_exit = True
        thread.join(timeout=30)


def test_times_are_shown_in_the_configured_zone(
    browser: Browser, make_host: HostFactory, ego_settings: Settings
) -> None:
    host = make_host({"memory": MemoryPlugin()}, settings=tokyo(ego_settings, language="ja"))
    host.start()
    host.clock.set(KNOWN_INSTANT)
    try:
        call(host, "remember", {"content": "桜の下で友だちとお弁当を食べた", "emotion": "happy", "force": True})
    finally:
        host.clock.set(None)
    server, thread, served = serve(build_app(host, login_secret=LOGIN))
    context = browser.new_context(timezone_id="America/New_York")  # the browser's own zone is not the one shown
    try:
        page = context.new_page()
        page.goto(f"{served}#login={LOGIN}")
        expect(page.locator("#tabs button").first).to_have_text("いま")  # ego init's language: ja
        for lang in ("ja", "en"):
            page.goto(f"{served}?lang={lang}")
            open_view(page, "memory")
            expect(page.locator("#results tbody tr td").first).to_have_text(SHOWN_AT[lang])
    finally:
        context.close()
        server.should_exit = True
        thread.join(timeout=30)


def test_the_language_switch_persists_and_lang_overrides_it(page: Page, url: str) -> None:
    expect(page.locator("#tabs button").first).to_have_text("Now")  # ego init's language: en
    page.select_option("#lang", "ja")
    expect(page.locator("#tabs button")).to_have_text(TABS["ja"])
    expect(page.locator("#feeling-summary")).to_contain_text("記憶")
    assert page.evaluate("localStorage.getItem('ego.dashboard.language')") == "ja"
    page.goto(url)
    expect(page.locator("#tabs button")).to_have_text(TABS["ja"])
    page.goto(f"{url}?lang=en")
    expect(page.locator("#tabs button")).to_have_text(TABS["en"])
    expect(page.locator("#lang")).to_have_value("en")
    page.goto(url)
    expect(page.locator("#tabs button")).to_have_text(TABS["ja"])  # ?lang= was for that visit only
    page.goto(f"{url}?lang=ja")
    page.select_option("#lang", "en")  # the switch drops ?lang=, so a reload keeps its choice
    assert "lang=" not in page.url
    page.reload()
    expect(page.locator("#tabs button")).to_have_text(TABS["en"])


def test_logs_are_rows_with_their_details_folded(page: Page, logged_host: Seeded) -> None:
    long_detail = "詳細 " + "x" * 3000
    log_event(logging.getLogger("ego.test"), "test_long_record", level=logging.WARNING, detail=long_detail)
    page.uncheck("#live")
    open_view(page, "logs")
    rows = page.locator("#logs tbody tr.log-row")
    expect(rows.first).to_be_visible()
    assert rows.count() > 5
    heights = page.evaluate("Array.from(document.querySelectorAll('#logs tbody tr.log-row')).map(r => r.offsetHeight)")
    assert max(heights) < 60, heights  # one line each
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    assert page.evaluate("document.querySelectorAll('#logs details[open]').length") == 0
    record = rows.filter(has_text="test_long_record")
    expect(record.locator(".level")).to_have_text("warning")
    expect(record.locator("summary")).to_contain_text("detail=詳細")
    field = record.locator(".log-fields td").filter(has_text="xxxx")
    expect(field).to_be_hidden()
    record.locator("summary").click()
    expect(field).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280  # the long value wraps
    page.evaluate("document.querySelector('#logs tbody tr').dataset.before = 'yes'")
    page.click("#log-filter button")  # read again (as the live view does): the unfolded row stays unfolded
    expect(page.locator("#logs tbody tr[data-before]")).to_have_count(0)
    expect(field).to_be_visible()
    calls = rows.filter(has_text="tool_call").filter(has_text="tool=introspect")
    expect(calls.first.locator("summary")).to_contain_text("outcome=ok")


def test_history_fits_the_data(page: Page, logged_host: Seeded) -> None:
    open_view(page, "history")
    page.uncheck("#live")
    expect(page.locator("#range")).to_have_value("auto")
    expect(page.locator("#history-span")).to_contain_text("24 hours")  # every memory is from the last hour
    labels = of_chart(page, "#h-activity", "chart.data.labels")
    memories = of_chart(page, "#h-activity", "chart.data.datasets[0].data")
    assert len(labels) == 6  # the buckets before the first memory are left out, but for a few
    assert sum(memories) == len(logged_host.public_ids) + len(logged_host.private_ids)
    host = logged_host.host
    host.clock.set(datetime.now(UTC) - timedelta(days=3, hours=2))
    try:
        call(host, "remember", {"content": "三日前の雨の朝、静かに本を読んだ", "emotion": "contentment", "force": True})
    finally:
        host.clock.set(None)
    page.select_option("#range", "24h")
    page.select_option("#range", "auto")
    expect(page.locator("#history-span")).to_contain_text("7 days")
    memories = of_chart(page, "#h-activity", "chart.data.datasets[0].data")
    assert memories[0] > 0  # the axis starts at the first memory
    assert 12 <= len(memories) <= 28
    page.select_option("#range", "30d")
    expect(page.locator("#history-span")).to_contain_text("30 days")
    assert of_chart(page, "#h-activity", "chart.data.labels.length") >= 6


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_no_labels_overlap(page: Page, url: str, logged_host: Seeded, lang: str) -> None:
    host = logged_host.host
    hub = logged_host.public_ids[1]
    for i in range(12):  # a crowded neighbourhood
        call(
            host,
            "remember",
            {"content": f"庭のトマトの記録その{i}: 葉が少し増えた", "emotion": "curious", "force": True},
        )
    memories = host.services.get("memory.store")
    assert memories is not None
    recent = memories.recent(datetime(1970, 1, 1, tzinfo=UTC), 100)
    for memory in [m for m in recent if "庭のトマト" in m.content]:
        call(host, "link_memories", {"source_id": hub, "target_id": memory.id})
    page.goto(f"{url}?lang={lang}")
    page.uncheck("#live")
    open_view(page, "memory")
    page.locator(f"#results tbody tr[data-id='{hub}']").click()
    expect(page.locator("#graph-labels .graph-label").first).to_be_visible()
    found = page.evaluate(OVERLAPS, "#graph-labels .graph-label")
    assert found["hits"] == []
    assert found["count"] >= 3
    nodes = page.request.get(f"{url}api/memories/{hub}/graph?depth=2").json()["nodes"]
    more = page.locator("#graph-more")
    left = int("".join(ch for ch in more.inner_text().split(":")[0] if ch.isdigit())) if more.is_visible() else 0
    assert found["count"] + left == len(nodes)  # a label with no free place is counted, and shown on hover
    for view, charts in (
        ("now", ["circumplex", "desires"]),
        ("self", ["salience"]),
        ("history", ["h-emotion", "h-activity", "h-desires"]),
    ):
        open_view(page, view)
        for chart in charts:
            expect(page.locator(f"#{chart}")).to_be_visible()
            axes = of_chart(page, f"#{chart}", AXIS_OVERLAPS)
            assert sum(axis["labels"] for axis in axes.values()) >= 4, (chart, axes)
            assert all(axis["hits"] == 0 for axis in axes.values()), (chart, axes)
            assert not any(axis["rotated"] for name, axis in axes.items() if name == "x"), (chart, axes)


def test_the_api_gives_the_language_zone_last_introspect_and_fitted_history(logged_host: Seeded) -> None:
    with owner_client(logged_host.host) as client:
        status = client.get("/api/status").json()
        assert (status["language"], status["timezone"]) == ("en", "Asia/Tokyo")
        assert '<html lang="en">' in client.get("/").text
        ran = client.get("/api/now").json()["last_introspect"]
        records = read_log(logged_host.host)
        introspects = [r["ts"] for r in records if r.get("event") == "tool_call" and r.get("tool") == "introspect"]
        assert len(introspects) == len(FELT_HOURS_AGO)
        assert ran == {"at": introspects[-1], "days": 14}
        fitted = client.get("/api/history", params={"range": "auto"}).json()
        assert (fitted["range"], fitted["auto"], len(fitted["buckets"])) == ("24h", True, 24)
        assert fitted["first"] is not None
        assert all(not b["memories"] and not b["tool_calls"] for b in fitted["buckets"][: fitted["first"]])
        hours = {
            datetime.fromisoformat(b["start"]).astimezone(ZoneInfo("Asia/Tokyo")).minute for b in fitted["buckets"]
        }
        assert hours == {0}  # on the hour
        days = client.get("/api/history", params={"range": "30d"}).json()["buckets"]
        assert {datetime.fromisoformat(b["start"]).astimezone(ZoneInfo("Asia/Tokyo")).hour for b in days} == {0}
        wrong = client.get("/api/history", params={"range": "1y"})
        assert wrong.status_code == 400
        assert "auto" in wrong.json()["error"]


def test_no_log_no_last_introspect(client: TestClient) -> None:
    assert client.get("/api/now").json()["last_introspect"] == {"at": None, "days": 14}
