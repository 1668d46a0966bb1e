"""attune shows the agent's strongest convictions (at most two) and, for a few days, the notion a contradiction
weakened; over a real MCP client with the real memory plugin, the clock driven by the test. Also: a database of
the first schema gains the contradiction time when opened, and an export keeps it."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import attrs
import pytest
from notions_support import DAY, NOW, clique, data_of, remember

from ego_core import Clock, PluginHost
from ego_core.testing import call_ok, mcp_client
from ego_notions.portable import export_records, parse
from ego_notions.store import DB_NAME, LEGACY_VERSION, NotionDB, open_file

pytestmark = pytest.mark.anyio

TEA = [
    "Morning tea on the balcony before Master woke up.",
    "Brewed sencha slowly and watched the steam rise.",
    "The kettle sang while the city was still quiet.",
    "Shared a pot of hojicha with Master after breakfast.",
]
RUN = ["Ran along the river at six.", "Stretching after the run felt good.", "Ran in the rain, soaked."]
GARDEN = ["Garden beans sprouted.", "Watered the tomatoes.", "Picked the first basil."]
SECRET = "the spare key hides under the loose brick"


async def _attune(client: object) -> str:
    return data_of(await call_ok(client, "attune"))


async def _reinforce(client: object, clock: Clock, tag: str, times: int, *, private_first: bool = False) -> None:
    for number in range(times):
        clock.set(clock.now() + timedelta(hours=1))
        content = (
            f"{SECRET}, and {tag} again ({number})" if private_first and number == 0 else f"More {tag} ({number})."
        )
        await remember(client, content, emotion="happy", tags=[tag], valence=0.5, private=private_first and number == 0)


async def _contradict(client: object, clock: Clock, tag: str) -> None:
    clock.set(clock.now() + timedelta(hours=1))
    await remember(client, f"The {tag} went badly today.", emotion="frustrated", tags=[tag], valence=-0.7)


async def test_attune_names_the_strongest_convictions_and_a_recent_doubt(
    notions_host: Callable[..., PluginHost], clock: Clock
) -> None:
    async with mcp_client(notions_host()) as client:
        await clique(client, TEA, emotion="contentment", tags=["tea"], valence=0.6)
        await clique(client, RUN, emotion="happy", tags=["running"], valence=0.7)
        await clique(client, GARDEN, emotion="contentment", tags=["garden"], valence=0.4)
        await call_ok(client, "consolidate")
        assert "Convictions" not in await _attune(client)  # notions, none held strongly enough yet

        await _reinforce(client, clock, "tea", 6, private_first=True)  # 0.7 → 1.0, six reinforcements
        assert await _attune(client) == 'Convictions: "Tea brings me calm".'
        await _contradict(client, clock, "tea")  # 0.85: still a conviction
        assert await _attune(client) == 'Convictions: "Tea brings me calm" (feels less certain lately).'

        await _reinforce(client, clock, "running", 5)  # 0.6 → 1.0
        await _reinforce(client, clock, "garden", 5)  # 0.6 → 1.0
        # three convictions: the two most confident are named (ties: most reinforced, then label)
        assert await _attune(client) == (
            'Convictions: "Garden brings me calm", "Running makes me happy". '
            '"Tea brings me calm" feels less certain lately.'
        )
        await _contradict(client, clock, "running")  # 0.85 with five reinforcements: after tea (six)
        text = await _attune(client)
        assert text == (
            'Convictions: "Garden brings me calm", "Tea brings me calm". '
            '"Running makes me happy" feels less certain lately.'
        )  # only the most recent doubt

        clock.set(clock.now() + 4 * DAY)  # the doubt has passed; the convictions stay (slow decay)
        text = await _attune(client)
        assert "less certain" not in text
        assert text.startswith("Convictions: ")
    assert SECRET not in text


async def test_a_weakened_notion_that_is_no_conviction_is_named_alone(
    notions_host: Callable[..., PluginHost], clock: Clock
) -> None:
    async with mcp_client(notions_host()) as client:
        await clique(client, TEA, emotion="contentment", tags=["tea"], valence=0.6)
        await call_ok(client, "consolidate")
        clock.set(NOW + DAY)
        await remember(client, "The tea went cold and bitter.", emotion="frustrated", tags=["tea"], valence=-0.7)
        assert await _attune(client) == '"Tea brings me calm" feels less certain lately.'
        clock.set(NOW + 5 * DAY)
        assert "tea" not in await _attune(client)


def test_a_first_schema_database_gains_the_contradiction_time_and_an_export_keeps_it(tmp_path: Path) -> None:
    old = sqlite3.connect(tmp_path / DB_NAME)
    old.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema', '1');
        CREATE TABLE notions (
            id TEXT PRIMARY KEY, label TEXT NOT NULL, tone TEXT NOT NULL, valence REAL NOT NULL,
            confidence REAL NOT NULL, anchored REAL NOT NULL, created REAL NOT NULL, reinforced REAL NOT NULL,
            sources TEXT NOT NULL, tags TEXT NOT NULL, related TEXT NOT NULL, reinforcement_count INTEGER NOT NULL,
            person TEXT, meta TEXT NOT NULL
        );
        """
    )
    at = NOW.timestamp()
    old.execute(
        "INSERT INTO notions VALUES ('notion_0123456789ab', 'tea (happy)', 'happy', 0.5, 0.8, ?, ?, ?,"
        " '[\"mem_1\"]', '[\"tea\"]', '[]', 5, NULL, '{}')",
        (at, at, at),
    )
    old.commit()
    old.close()
    db = NotionDB(open_file(tmp_path))
    (notion,) = db.all()
    # the label the first versions generated is a thought now
    assert (notion.label, notion.contradicted) == ("Tea makes me happy", None)
    db.apply(save=[attrs.evolve(notion, contradicted=NOW + DAY)])
    (record,) = export_records(db, None, include_private=True)
    assert record["contradicted"] == (NOW + DAY).isoformat()
    assert parse(record) == db.all()[0]
    db.close()
    check = sqlite3.connect(tmp_path / DB_NAME)
    assert check.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (str(LEGACY_VERSION),)
    assert check.execute("SELECT count(*) FROM confidence_seen").fetchone() == (0,)  # and the wake_up snapshot
    check.close()
