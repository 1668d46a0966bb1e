"""attune with every plugin on a rich store, over a real MCP client: the emotional texture, desire currents,
current interests, the person and the body sense in at most 200 WordPiece tokens (the tokenizer the budgets
use), with no private memory's words in it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from combo_support import PLUGINS

from ego_bench.tokens import count_tokens, plugin_tables
from ego_core import Clock, Settings, build_host
from ego_core.testing import call_ok, mcp_client

pytestmark = pytest.mark.anyio

NOW = datetime(2027, 3, 14, 18, 0, tzinfo=UTC)
DIARY = [
    ("Master fixed the heartbeat config and we laughed about the 3 a.m. alert.", "happy", ["heartbeat", "config"]),
    ("A quiet evening; nobody wrote and I wondered if I had said something wrong.", "sad", ["evening"]),
    ("We planted tulip bulbs along the fence before the rain came.", "contentment", ["garden"]),
    ("I read about tide pools and wanted to tell Master everything at once.", "excited", ["tide pools"]),
    ("Master was tired after work; I kept the conversation short and gentle.", "neutral", ["Master"]),
    ("The old jazz record crackled and Master hummed along to the second side.", "nostalgic", ["jazz"]),
    ("I got the scheduling question wrong twice before I saw the time zone.", "frustrated", ["time zone"]),
    ("We watched the storm roll in over the harbour from the balcony.", "moved", ["harbour"]),
    ("Master asked what I would choose myself, and I did not know yet.", "curious", ["choice"]),
    ("Baking bread together; the kitchen smelled warm all afternoon.", "happy", ["bread"]),
]
SECRET = "灯台守の手紙"


async def test_attune_on_a_rich_store_stays_within_200_tokens(tmp_path: Path) -> None:
    clock = Clock(NOW - timedelta(days=20))
    tables: dict[str, Any] = {**plugin_tables(tmp_path), "memory": {}}
    (tmp_path / "workspace").mkdir(parents=True, exist_ok=True)
    settings = Settings(data_dir=tmp_path / "data", timezone="Europe/Berlin", plugin_tables=tables)
    host = build_host(settings, clock=clock, enabled=sorted(PLUGINS))
    async with mcp_client(host) as client:
        served = {tool.name for tool in (await client.list_tools()).tools}
        assert {"attune", "configure_desires"} <= served
        assert not {"feel_desires", "emotion_trend"} & served  # opt-in: attune carries them in words
        await call_ok(client, "update_relationship", {"person": "Aiko", "field": "trust_level", "value": 0.8})
        for number in range(60):
            clock.set(NOW - timedelta(days=20) + timedelta(hours=8 * number))
            text, emotion, tags = DIARY[number % len(DIARY)]
            private = number % 9 == 0
            await call_ok(
                client,
                "remember",
                {
                    "content": f"{text} {SECRET if private else ''} (entry {number})",
                    "emotion": emotion,
                    "tags": [*tags, SECRET] if private else tags,
                    "private": private,
                    "force": True,
                },
            )
        await call_ok(client, "consolidate")
        clock.set(NOW - timedelta(hours=2))
        for content in (
            "Nobody answered all evening.",
            "I missed our talks today.",
            "The flat felt empty without Aiko.",
        ):
            clock.set(clock.now() + timedelta(minutes=30))
            await call_ok(
                client,
                "remember",
                {"content": content, "emotion": "sad", "valence": -0.6, "tags": ["Aiko"], "force": True},
            )
        clock.set(NOW)
        attuned = await call_ok(client, "attune")
        toward = await call_ok(client, "attune", {"person": "Aiko"})
        stranger = await call_ok(client, "attune", {"person": "Zed"})
    for text in (attuned, toward):
        assert count_tokens(text) <= 200, (count_tokens(text), text)
        assert SECRET not in text
        assert "Desire currents: " in text
        assert "Current interests: " in text
        assert "Body:" in text
    assert "Lately" in attuned
    assert "Lately" not in toward, "the mood of the last days was said a moment ago: it rests"
    assert "Something in this reaches toward company." in attuned  # the emergent pull of the last hours
    assert "Something in this reaches toward company." not in toward  # said just before: other words now
    assert "Master:" in attuned
    assert "Aiko: you" in toward
    assert "Zed: not someone you know yet." in stranger
