"""Issue 10, acceptance 1, through a real MCP client over stdio: ``ego serve --plugins desires,memory`` as a
subprocess. The time-dependent part ("rises back more slowly") runs in-process with a simulated clock
(test_desires_tools.py), because ``ego serve`` has no clock setting."""

from __future__ import annotations

from pathlib import Path

import pytest
from desires_support import NINE, level_map, parse_levels, stdio, store_rows
from mcp import Client

from ego_core.testing import call_error, call_ok

pytestmark = pytest.mark.anyio


async def test_feel_satisfy_recall_forget_and_failures_over_stdio(tmp_path: Path) -> None:
    good, poor = tmp_path / "good", tmp_path / "poor"
    async with Client(stdio(good, "desires,memory")) as g, Client(stdio(poor, "desires,memory")) as p:
        served = {t.name for t in (await g.list_tools()).tools}
        assert {"feel_desires", "satisfy_desire", "recall", "forget", "remember"} <= served

        fresh = await call_ok(g, "feel_desires")
        found = parse_levels(fresh)
        assert sorted(name for name, _level, _band in found) == sorted(NINE)
        assert [level for _n, level, _b in found] == sorted((level for _n, level, _b in found), reverse=True)

        # identical stores, satisfied with quality 1.0 and 0.2
        await call_ok(g, "satisfy_desire", {"name": "curiosity", "quality": 1.0})
        await call_ok(p, "satisfy_desire", {"name": "curiosity", "quality": 0.2})
        assert (
            level_map(await call_ok(g, "feel_desires"))["curiosity"]
            < level_map(await call_ok(p, "feel_desires"))["curiosity"]
        )

        # recall lowers information_hunger and curiosity
        saved = await call_ok(p, "remember", {"content": "The lighthouse keeper waved at us from the rocks."})
        memory_id = saved.split("(id: ")[1].split(")")[0]
        before = level_map(await call_ok(p, "feel_desires"))
        assert "lighthouse keeper waved" in await call_ok(p, "recall", {"context": "the lighthouse"})
        after = level_map(await call_ok(p, "feel_desires"))
        assert after["information_hunger"] < before["information_hunger"]
        assert after["curiosity"] < before["curiosity"]

        # forget, and calls that failed, change nothing
        rows = store_rows(poor)
        await call_ok(p, "forget", {"memory_id": memory_id})
        assert store_rows(poor) == rows
        await call_error(p, "forget", {"memory_id": memory_id})
        await call_error(p, "forget", {"memory_id": "not an id"})
        await call_error(p, "recall", {"context": ""})
        await call_error(p, "satisfy_desire", {"name": "nostalgia"})
        await call_error(p, "satisfy_desire", {"name": "curiosity", "quality": -1})
        assert store_rows(poor) == rows
        unchanged = level_map(await call_ok(p, "feel_desires"))
        assert unchanged == pytest.approx(after, abs=0.011)  # only real time has passed
