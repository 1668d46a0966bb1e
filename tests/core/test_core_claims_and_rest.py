"""What composed answers carry besides their words: the claims of the sections shown (in the result's ``_meta``
with ``EGO_CLAIMS``, never for a section the budget left out), and lines that rest (``Section.rest``): the very
same words give way in that tool until their rest is over, across processes on one data directory."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import attrs
import pytest

from ego_core import LINE_REST, Claim, Clock, Section, Settings, hookimpl
from ego_core.mcp.freshness import ShownLines
from ego_core.testing import HostFactory, mcp_client, tool_text

pytestmark = pytest.mark.anyio

NOON = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
LONG = "the kettle hums along in the quiet kitchen " * 30


class Saying:
    """A mood that stands for days (rests), a fact that changes (does not), and a long low-priority aside."""

    def __init__(self) -> None:
        self.fact = "Fact one."

    @hookimpl
    def on_attune(self) -> list[Section]:
        mood = Claim(kind="desire", words="calm", value=0.4)
        aside = Claim(kind="quote", memory_id="mem_aside", words="…")
        return [
            Section(key="mood", text="A quiet mood.", order=10, rest=LINE_REST, claims=(mood,)),
            Section(key="fact", text=self.fact, order=20),
            Section(key="aside", text=LONG, order=30, priority=1, claims=(aside,)),
        ]


def settings(tmp_path: Path, **changes: object) -> Settings:
    return attrs.evolve(Settings(data_dir=tmp_path / "ego"), **changes)


async def test_claims_of_the_sections_shown_reach_the_client(make_host: HostFactory, tmp_path: Path) -> None:
    host = make_host({"saying": Saying()}, settings=settings(tmp_path, claims=True), clock=Clock(NOON))
    async with mcp_client(host) as client:
        result = await client.call_tool("attune", {})
    claims = result.meta["ego/claims"] if result.meta else []
    assert claims == [{"kind": "desire", "words": "calm", "value": 0.4}], "the aside did not fit: nor its claim"
    assert "kettle" not in tool_text(result)


async def test_a_resting_line_gives_way_until_its_rest_is_over(make_host: HostFactory, tmp_path: Path) -> None:
    clock, saying = Clock(NOON), Saying()
    async with mcp_client(make_host({"saying": saying}, settings=settings(tmp_path), clock=clock)) as client:
        first = tool_text(await client.call_tool("attune", {}))
        clock.set(NOON + timedelta(hours=12))
        saying.fact = "Fact two."
        second = tool_text(await client.call_tool("attune", {}))
        clock.set(NOON + LINE_REST + timedelta(minutes=1))
        third = tool_text(await client.call_tool("attune", {}))
        woke = tool_text(await client.call_tool("wake_up", {}))
    assert "A quiet mood." in first
    assert "A quiet mood." not in second, "the mood rests"
    assert "Fact two." in second
    assert "A quiet mood." in third
    assert "A quiet mood." not in woke, "attune's section, not wake_up's"


def test_a_rest_is_kept_on_disk_for_the_next_process(tmp_path: Path) -> None:
    path = tmp_path / "core" / "shown.db"
    mood = Section(key="mood", text="A quiet mood.", rest=LINE_REST)
    first = ShownLines(path)
    first.shown("attune", [mood, Section(key="fact", text="Fact.")], NOON)
    first.close()
    second = ShownLines(path)
    assert second.resting("attune", mood, NOON + timedelta(hours=1))
    assert not second.resting("attune", attrs.evolve(mood, text="Another mood."), NOON + timedelta(hours=1))
    assert not second.resting("wake_up", mood, NOON + timedelta(hours=1))
    assert not second.resting("attune", Section(key="fact", text="Fact."), NOON), "only lines with a rest are kept"
    second.shown("attune", [attrs.evolve(mood, text="Later.")], NOON + timedelta(days=40))
    second.close()
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT count(*) FROM shown").fetchone()[0]
    assert rows == 1, "a month-old line is forgotten"
