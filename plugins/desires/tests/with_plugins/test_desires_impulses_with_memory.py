"""Impulses end to end: the real memory plugin brings an old memory back unbidden in wake_up, and the desires
plugin feels the pull its emotion calls for — once, and not again from that memory within 72 hours."""

from __future__ import annotations

import re
import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from desires_support import AFTERNOON, DesireHostFactory

from ego_core.testing import call_ok, mcp_client

pytestmark = pytest.mark.anyio

SAVED = re.compile(r"Saved \(id: (mem_[0-9a-f]+)\)")
ALWAYS = {"memory": {"involuntary_probability": 1.0}}
"""Every wake_up brings back a dormant memory when there is one (the chance is drawn from ctx.random)."""


def impulses(data_dir: Path) -> list[tuple[Any, ...]]:
    path = data_dir / "desires" / "desires.sqlite3"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute("SELECT memory_id, emotion, desire, amount, felt_at IS NOT NULL FROM impulse").fetchall()


async def test_an_unbidden_memory_in_wake_up_is_felt_as_a_pull(with_memory: DesireHostFactory) -> None:
    dh = with_memory(config=ALWAYS)
    async with mcp_client(dh.host) as client:
        text = await call_ok(
            client,
            "remember",
            {"content": "Grandfather's boat at the old harbour, the smell of tar and salt.", "emotion": "nostalgic"},
        )
        found = SAVED.search(text)
        assert found, text
        old = found.group(1)
        dh.clock.set(AFTERNOON + timedelta(days=60))
        await call_ok(client, "remember", {"content": "Walked past a harbour full of old fishing boats today."})
        wake = await call_ok(client, "wake_up")
        assert "Unbidden" in wake  # the memory plugin brought it back
        assert "tar and salt" not in str(impulses(dh.data_dir))
        await call_ok(client, "feel_desires")  # felt by now, whichever came first
        assert impulses(dh.data_dir) == [(old, "nostalgic", "resonance", 0.15, 1)]
        dh.clock.set(AFTERNOON + timedelta(days=61))
        assert "Unbidden" in await call_ok(client, "wake_up")  # back again the next day, no new pull
    assert impulses(dh.data_dir) == [(old, "nostalgic", "resonance", 0.15, 1)]
    assert dh.plugin.snapshot().modulation.factors["impulses"] == {}
