"""A mind in time: anticipated moments, precious memories kept within reach, recall that fades to a gist and an
impression, and the dormant memories near a text (the ``memory.store`` service's ``dormant_near``)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from memory_support import saved_id

from ego_core import MEMORY_STORE, PRIVATE_MARK, Clock, MemoryService, PluginHost, Settings
from ego_core.testing import HostFactory, call_error, call_ok, export_file, import_file, mcp_client, read_log
from ego_memory.plugin import MemoryPlugin

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def memory_host(
    make_host: HostFactory,
    data_dir: Path,
    clock: Clock,
    *,
    timezone: str = "UTC",
    plugins: Mapping[str, object] | None = None,
    log: bool = False,
    seed: int = 7,
) -> PluginHost:
    settings = Settings(data_dir=data_dir, timezone=timezone, random_seed=seed)
    host = make_host(
        {"memory": MemoryPlugin(), **(plugins or {})},
        settings=settings,
        clock=clock,
        log=log,
    )
    host.start()
    return host


def service(host: PluginHost) -> MemoryService:
    found = host.services.get(MEMORY_STORE, MemoryService)
    assert found is not None
    return found


async def remember(client: Any, content: str, **args: Any) -> str:
    return saved_id(await call_ok(client, "remember", {"content": content, **args}))


# ---------------------------------------------------------------------------------------------------
# dormant_near


@pytest.mark.anyio
async def test_dormant_near_finds_only_faded_memories_near_the_text(make_host: HostFactory, tmp_path: Path) -> None:
    clock = Clock(NOW)
    host = memory_host(make_host, tmp_path / "data", clock)
    async with mcp_client(host) as client:
        old_sea = await remember(client, "We walked along the sea at dusk and collected shells.")
        old_cake = await remember(client, "Baked a lemon cake for the first time; it sank in the middle.")
        clock.set(NOW + timedelta(days=400))
        fresh_sea = await remember(client, "Swam in the cold sea this morning, the waves were high.")
        memories = service(host)
        found = memories.dormant_near("the sea and the shore", k=5, at=clock.now())
        ids = [memory.id for memory, _ in found]
        assert old_sea in ids
        assert fresh_sea not in ids  # a fresh memory is not dormant
        assert ids[0] == old_sea  # the most similar first
        similarities = [similarity for _, similarity in found]
        assert similarities == sorted(similarities, reverse=True)
        assert [m.id for m, _ in memories.dormant_near("the sea and the shore", k=1, at=clock.now())] == [old_sea]
        # a year before, nothing was dormant yet; and looking never counts as a recall
        assert memories.dormant_near("the sea and the shore", at=NOW + timedelta(days=1)) == []
        assert all(m.access_count == 0 for m in memories.get([old_sea, old_cake, fresh_sea]))


@pytest.mark.anyio
async def test_similar_pairs_are_the_pairs_at_the_threshold_most_similar_first(
    make_host: HostFactory, tmp_path: Path
) -> None:
    host = memory_host(make_host, tmp_path / "data", Clock(NOW))
    async with mcp_client(host) as client:
        walk = await remember(client, "We walked along the sea at dusk and collected shells.")
        again = await remember(client, "At dusk we walked by the sea and picked up shells.", force=True)
        also = await remember(client, "We strolled on the beach in the evening, gathering seashells.", force=True)
        cake = await remember(client, "Baked a lemon cake for the first time; it sank in the middle.")
    memories = service(host)
    ids = [walk, again, also, cake, "mem_000000000000"]
    pairs = memories.similar_pairs(ids, 0.5)
    assert pairs
    assert all(cake not in (first, second) for first, second, _ in pairs)
    assert all(ids.index(first) < ids.index(second) for first, second, _ in pairs)
    assert [s for _, _, s in pairs] == sorted((s for _, _, s in pairs), reverse=True)
    assert all(0.5 <= s <= 1.0 for _, _, s in pairs)
    assert (walk, again) in {(first, second) for first, second, _ in pairs}
    assert memories.similar_pairs(ids, 0.5, limit=1) == pairs[:1]
    assert memories.similar_pairs(ids, 1.01) == []
    assert memories.similar_pairs([walk], 0.0) == []


# ---------------------------------------------------------------------------------------------------
# Anticipation: input


@pytest.mark.anyio
async def test_anticipation_reads_dates_naive_times_and_offsets(make_host: HostFactory, tmp_path: Path) -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    host = memory_host(make_host, tmp_path / "data", Clock(NOW), timezone="Asia/Tokyo")
    async with mcp_client(host) as client:
        text = await call_ok(
            client, "remember", {"content": "Dinner with Master on Friday.", "anticipated_at": "2026-03-06"}
        )
        assert "Looking forward to it: in a few days." in text
        date_only = saved_id(text)
        naive = await remember(client, "The concert in the park.", anticipated_at="2026-03-03T18:30")
        offset = await remember(client, "A call with my sister.", anticipated_at="2026-03-20T08:00:00+02:00")
        zulu = await remember(client, "The rocket launch.", anticipated_at="2026-03-04T01:00:00Z")
        found = {m.id: m.anticipated for m in service(host).get([date_only, naive, offset, zulu])}
    assert found[date_only] == datetime(2026, 3, 6, tzinfo=tokyo)  # local midnight
    assert found[naive] == datetime(2026, 3, 3, 18, 30, tzinfo=tokyo)
    assert found[offset] == datetime(2026, 3, 20, 6, 0, tzinfo=UTC)
    assert found[zulu] == datetime(2026, 3, 4, 1, 0, tzinfo=UTC)
    assert all(moment is not None and moment.tzinfo is not None for moment in found.values())


@pytest.mark.anyio
async def test_anticipation_in_the_past_or_unreadable_is_kept_as_a_regular_memory(
    make_host: HostFactory, tmp_path: Path
) -> None:
    host = memory_host(make_host, tmp_path / "data", Clock(NOW))
    async with mcp_client(host) as client:
        past = await call_ok(client, "remember", {"content": "The exam.", "anticipated_at": "2026-03-01T10:00"})
        unreadable = await call_ok(client, "remember", {"content": "The trip.", "anticipated_at": "next friday"})
        refused = await call_error(client, "remember", {"content": "The party.", "anticipated_at": 20260310})
        count = service(host).count()
    assert "Note: anticipated_at is already in the past — held as a regular memory." in past
    assert "Note: anticipated_at could not be read as a time — held as a regular memory." in unreadable
    assert "anticipated_at" in refused
    stored = service(host).get([saved_id(past), saved_id(unreadable)])
    assert [m.anticipated for m in stored] == [None, None]
    assert count == 2  # the refused call stored nothing


# ---------------------------------------------------------------------------------------------------
# Anticipation: strength and surfacing


def _section_lines(text: str, *starts: str) -> list[str]:
    return [line for line in text.partition("\n\n---\n")[0].splitlines() if line.startswith(starts)]


ANTICIPATION_STARTS = ("Approaching:", "Tomorrow:", "Later today:", "That time came:")


@pytest.mark.anyio
async def test_anticipation_keeps_its_strength_until_the_moment_then_fades_from_it(
    make_host: HostFactory, tmp_path: Path
) -> None:
    clock = Clock(NOW)
    host = memory_host(make_host, tmp_path / "data", clock)
    moment = NOW + timedelta(days=300)
    async with mcp_client(host) as client:
        waiting = await remember(client, "The long voyage to the southern islands.", anticipated_at=moment.isoformat())
        plain = await remember(client, "Read a book about the southern islands.")
        memories = service(host)
        before = NOW + timedelta(days=299)
        dormant = [m.id for m, _ in memories.dormant_near("the southern islands", at=before)]
        assert plain in dormant
        assert waiting not in dormant  # it has not faded at all
        assert memories.protected([waiting, plain], before) == {waiting}
        # after the moment it fades from the moment on (not from when it was written), and is no longer protected
        assert waiting not in [
            m.id for m, _ in memories.dormant_near("the southern islands", at=moment + timedelta(days=60))
        ]
        assert waiting in [
            m.id for m, _ in memories.dormant_near("the southern islands", at=moment + timedelta(days=400))
        ]
        assert memories.protected([waiting], moment + timedelta(days=1)) == set()


@pytest.mark.anyio
async def test_anticipation_surfaces_one_line_by_band_and_its_arrival_once(
    make_host: HostFactory, tmp_path: Path
) -> None:
    clock = Clock(NOW)
    data = tmp_path / "data"
    host = memory_host(make_host, data, clock)
    moment = NOW + timedelta(days=10, hours=3)
    async with mcp_client(host) as client:
        await remember(
            client, "Dinner with Master at the harbour restaurant.", importance=3, anticipated_at=moment.isoformat()
        )
        await remember(
            client, "The dentist appointment.", importance=1, anticipated_at=(NOW + timedelta(days=9)).isoformat()
        )
        # ten days ahead, importance 3: approaching (salience about 0.37), mentioned one time in two
        shown = [_section_lines(await call_ok(client, "wake_up"), *ANTICIPATION_STARTS) for _ in range(12)]
        assert {len(lines) for lines in shown} == {0, 1}
        assert {line for lines in shown for line in lines} == {
            'Approaching: "Dinner with Master at the harbour restaurant." (in over a week).'
        }
        # importance 1 is never approaching; within two days both are imminent, the more salient one is said
        clock.set(moment - timedelta(hours=30))
        for tool in ("wake_up", "attune", "wake_up"):
            assert _section_lines(await call_ok(client, tool), *ANTICIPATION_STARTS) == [
                'Tomorrow: "Dinner with Master at the harbour restaurant."'
            ]
        clock.set(moment + timedelta(hours=2))
        arrived = _section_lines(await call_ok(client, "attune"), *ANTICIPATION_STARTS)
        assert arrived == ['That time came: "The dentist appointment.". How was it, actually?']  # the earliest
        again = _section_lines(await call_ok(client, "wake_up"), *ANTICIPATION_STARTS)
        assert again == ['That time came: "Dinner with Master at the harbour restaurant.". How was it, actually?']
        assert _section_lines(await call_ok(client, "wake_up"), *ANTICIPATION_STARTS) == []
    host.stop()
    restarted = memory_host(make_host, data, clock)
    async with mcp_client(restarted) as client:
        assert _section_lines(await call_ok(client, "wake_up"), *ANTICIPATION_STARTS) == []  # acknowledged for good


# ---------------------------------------------------------------------------------------------------
# Fuzzy recall and precious memories


def _line_of(text: str, start: str) -> str:
    """The result line of a recall answer whose shown text starts with ``start``."""
    found = [line for line in text.splitlines() if line.partition("] ")[2].startswith(start)]
    assert len(found) == 1, text
    return found[0].partition("] ")[2]


@pytest.mark.anyio
async def test_fuzzy_recall_fades_to_a_gist_and_an_impression_but_precious_and_anticipated_stay_vivid(
    make_host: HostFactory, tmp_path: Path
) -> None:
    clock = Clock(NOW - timedelta(days=300))
    host = memory_host(make_host, tmp_path / "data", clock)
    async with mcp_client(host) as client:
        await remember(client, "Painted the garden fence blue with the neighbour.", emotion="happy")
        clock.set(NOW - timedelta(days=299))
        await remember(client, "Watched the fireworks over the river.", emotion="moved", importance=1)
        for _ in range(3):  # it keeps coming back although it never seemed important: precious
            await call_ok(client, "recall", {"context": "fireworks over the river", "n_results": 1})
        clock.set(NOW - timedelta(days=298))
        await remember(client, "The sailing race on the lake.", anticipated_at=(NOW + timedelta(days=10)).isoformat())
        clock.set(NOW - timedelta(days=120))
        await remember(client, "Learned to bake sourdough bread in the small kitchen.", emotion="contentment")
        clock.set(NOW - timedelta(days=119))
        await remember(client, "京都の公園で桜が咲いていた。", emotion="nostalgic", private=True)
        clock.set(NOW - timedelta(days=30))
        await remember(client, "Repaired the old bicycle chain in the garage.", emotion="neutral")
        clock.set(NOW)
        await remember(client, "A quiet morning with coffee.")  # the store's present
        fence = await call_ok(client, "recall", {"context": "painting the garden fence", "n_results": 1})
        bread = await call_ok(client, "recall", {"context": "baking sourdough bread", "n_results": 1})
        sakura = await call_ok(client, "recall", {"context": "京都の桜", "n_results": 1})
        bicycle = await call_ok(client, "recall", {"context": "repairing the bicycle", "n_results": 1})
        fireworks = await call_ok(client, "recall", {"context": "fireworks over the river", "n_results": 1})
        race = await call_ok(client, "recall", {"context": "the sailing race", "n_results": 1})
        search = await call_ok(client, "search_memories", {"context": "painting the garden fence", "n_results": 1})
    assert _line_of(fence, "happy") == "happy, about a year ago"  # an impression
    assert _line_of(bread, "contentment") == (
        "contentment daily — sourdough, kitchen, learned, bread, small (a few months ago)"  # a gist
    )
    assert _line_of(sakura, "nostalgic") == "nostalgic daily — 京都, 公園 (a few months ago)"
    assert "private: true" in sakura  # still marked
    assert _line_of(bicycle, "Repaired") == "Repaired the old bicycle chain in the garage."  # vivid
    assert _line_of(fireworks, "Watched") == "Watched the fireworks over the river."  # precious
    assert _line_of(race, "The sailing") == "The sailing race on the lake."  # still ahead
    assert "Painted the garden fence blue with the neighbour." in search  # the explicit lookup shows it all
    for answer in (fence, bread, sakura):
        assert "faded" not in answer


@pytest.mark.anyio
async def test_precious_floor_lifts_the_rank_but_not_the_strength(make_host: HostFactory, tmp_path: Path) -> None:
    clock = Clock(NOW - timedelta(days=700))
    plugin = MemoryPlugin()
    host = make_host(
        {"memory": plugin},
        config={"memory": {"recall": {"decay_weight": 3.0}}},
        settings=Settings(data_dir=tmp_path / "data", timezone="UTC", random_seed=7),
        clock=clock,
    )
    host.start()
    async with mcp_client(host) as client:
        kept = await remember(client, "Green tea in the morning on the veranda.", importance=1)
        for _ in range(3):  # recalled again and again, never important: precious
            await call_ok(client, "recall", {"context": "green tea on the veranda", "n_results": 1})
        clock.set(NOW - timedelta(days=60))
        others = [
            await remember(client, text)
            for text in ("Jasmine tea in the evening on the balcony.", "Black tea with milk in the garden.")
        ]
        clock.set(NOW)
        await remember(client, "Fixed the printer at work.")
    memories = plugin.memories
    assert memories is not None
    context = "tea outside in the morning"
    found = memories.engine.gather(context, memories.embed([context], "query")[0], NOW)
    assert found.precious == {kept}
    with_floor = [hit.id for hit in memories.engine.rank(found, 3).hits]
    found.precious = set()
    without_floor = [hit.id for hit in memories.engine.rank(found, 3).hits]
    assert set(others) <= set(without_floor)
    assert with_floor.index(kept) < without_floor.index(kept)  # the floor lifts it
    # what is shown and what counts as dormant stays the raw strength
    assert kept in [m.id for m, _ in service(host).dormant_near("green tea", at=NOW)]


@pytest.mark.anyio
async def test_anticipation_of_a_private_memory_is_marked_and_never_logged(
    make_host: HostFactory, tmp_path: Path
) -> None:
    clock = Clock(NOW)
    secret = "Telling my sister about the hospital results"
    moment = (NOW + timedelta(hours=20)).isoformat()
    host = make_host(
        {"memory": MemoryPlugin()},
        settings=Settings(data_dir=tmp_path / "data", timezone="UTC", random_seed=7, log_arguments=True),
        clock=clock,
        log=True,
    )
    host.start()
    async with mcp_client(host) as client:
        await remember(client, secret, private=True, anticipated_at=moment)
        soon = await call_ok(client, "wake_up")
        clock.set(NOW + timedelta(days=1))
        came = await call_ok(client, "attune")
    assert f'Tomorrow: "{secret}" (private)' in soon  # shown to the agent, marked
    assert f'That time came: "{secret}" (private). How was it, actually?' in came
    logged = json.dumps(read_log(host), ensure_ascii=False)
    assert "tool_call" in logged  # the calls were logged, with their arguments
    assert "hospital" not in logged
    assert moment not in logged
    remembered = next(r for r in read_log(host) if r.get("tool") == "remember")
    assert remembered["args"]["anticipated_at"] == PRIVATE_MARK


@pytest.mark.anyio
async def test_anticipation_travels_through_export_and_import(make_host: HostFactory, tmp_path: Path) -> None:
    clock = Clock(NOW)
    moment = NOW + timedelta(days=5)
    source = memory_host(make_host, tmp_path / "source", clock)
    async with mcp_client(source) as client:
        planned = await remember(client, "The school reunion in the old gym.", anticipated_at=moment.isoformat())
    export_file(source, tmp_path / "all.jsonl", include_private=True)
    target = memory_host(make_host, tmp_path / "target", clock)
    assert import_file(target, tmp_path / "all.jsonl").added == {"memory": 1}
    assert [m.anticipated for m in service(target).get([planned])] == [moment]
    assert service(target).protected([planned], NOW) == {planned}


@pytest.mark.anyio
async def test_anticipation_columns_are_added_to_a_store_from_before(make_host: HostFactory, tmp_path: Path) -> None:
    data = tmp_path / "data"
    host = memory_host(make_host, data, Clock(NOW))
    async with mcp_client(host) as client:
        older = await remember(client, "A memory from before anticipation existed.")
    host.stop()
    with closing(sqlite3.connect(data / "memory" / "memory.sqlite3")) as db:
        db.execute("DROP INDEX memories_anticipated")
        db.execute("ALTER TABLE memories DROP COLUMN anticipated")
        db.execute("ALTER TABLE memories DROP COLUMN anticipation_surfaced")
        db.execute("PRAGMA user_version = 0")  # as the releases before user_version left it
        db.commit()
    reopened = memory_host(make_host, data, Clock(NOW))
    async with mcp_client(reopened) as client:
        planned = await remember(client, "The harvest festival.", anticipated_at="2026-03-09")
        assert "A memory from before" in await call_ok(client, "recall", {"context": "a memory from before"})
    assert [m.anticipated for m in service(reopened).get([older, planned])] == [None, datetime(2026, 3, 9, tzinfo=UTC)]
