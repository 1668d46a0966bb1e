"""The installed plugin through ``ego serve --plugins desires`` over stdio, and ``ego export`` / ``ego import``
(no memory plugin)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from desires_support import EGO, NINE, child_env, level_map, parse_levels, stdio, store_rows
from mcp import Client

from ego_core.testing import call_error, call_ok, tools_named

pytestmark = pytest.mark.anyio


async def test_desires_alone_over_stdio(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with Client(stdio(data, "desires")) as client:
        served = {t.name for t in (await client.list_tools()).tools}
        assert served == {"wake_up", "introspect", "attune", "feel_desires", "satisfy_desire", "configure_desires"}
        fresh = await call_ok(client, "feel_desires")
        assert sorted(name for name, _l, _b in parse_levels(fresh)) == sorted(NINE)
        assert "Consider Aiko's current situation." in fresh
        satisfied = await call_ok(client, "satisfy_desire", {"name": "expression", "quality": 0.9})
        assert satisfied.startswith("expression: 0.50 → ")
        after = await call_ok(client, "feel_desires")
        assert level_map(after)["expression"] < level_map(fresh)["expression"]
        rows = store_rows(data)
        await call_error(client, "satisfy_desire", {"name": "wanderlust"})
        assert store_rows(data) == rows
        texts = [fresh, satisfied, after, await call_ok(client, "wake_up"), await call_ok(client, "introspect")]
    for text in texts:
        named = tools_named(text)
        assert named <= served, text


def test_ego_export_and_import_carry_the_desires(tmp_path: Path) -> None:
    source, target = tmp_path / "source", tmp_path / "target"
    exported = tmp_path / "desires.jsonl"

    def ego(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*EGO, *args],
            check=False,
            env=child_env(data, EGO_PLUGINS="desires"),
            capture_output=True,
            text=True,
            timeout=120,
        )

    assert ego(source, "export", str(exported)).returncode == 0
    records = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    assert [r["name"] for r in records if r.get("type") == "desire"] == list(NINE)
    first = ego(target, "import", str(exported))
    assert first.returncode == 0, first.stderr
    assert "desires: 9 new of 9 records" in first.stdout  # its meta record describes the state, it is not data
    again = ego(target, "import", str(exported))
    assert "desires: 0 new of 9 records" in again.stdout
    assert store_rows(target) == store_rows(source)
