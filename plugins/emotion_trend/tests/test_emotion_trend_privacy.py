"""Acceptance 4: a private memory counts in the trend, but its distinctive text never appears in
emotion_trend's output (the line says ``(private)`` instead), nor in its wake_up and introspect sections,
nor in any log."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from trend_support import DAY, HOUR, Feeling, block, remember_all, section, spread

from ego_core import Clock, PluginHost
from ego_core.testing import call_ok, configure_logging, mcp_client

SECRET = "I secretly dread the zebra-quartz-417 audit more than anything."
PRIVATE_PEAK = Feeling(HOUR, "anxious", SECRET, ("sad",), extra={"private": True, "intensity": 1.0})
PUBLIC = [
    *spread(30, "curious", 28 * DAY, 22 * HOUR, "Sorting seeds for the spring garden"),
    Feeling(2 * HOUR, "happy", "We finished the bird feeder."),
]


def log_text(log_dir: Path) -> str:
    for handler in logging.getLogger().handlers:
        handler.flush()
    records = [json.loads(line) for path in sorted(log_dir.glob("*.jsonl")) for line in path.read_text().splitlines()]
    assert records, "nothing was logged"
    return json.dumps(records, ensure_ascii=False)


def passages(text: str, size: int = 12) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text) - size + 1)]


@pytest.mark.anyio
async def test_a_private_memory_is_counted_but_never_quoted(
    trend_host: Callable[..., PluginHost], clock: Clock, tmp_path: Path
) -> None:
    configure_logging(tmp_path / "logs", "DEBUG")
    host = trend_host()
    async with mcp_client(host) as client:
        await remember_all(client, clock, [*PUBLIC, PRIVATE_PEAK])
        trend = await call_ok(client, "emotion_trend")
        wake_up = await call_ok(client, "wake_up")
        introspect = await call_ok(client, "introspect")
    mine = [trend, section(wake_up, "Lately: "), section(introspect, "Emotional trend:")]
    assert all(mine), mine
    for text in mine:
        assert not [p for p in passages(SECRET) if p in text], text

    # It counts: the Recent peak, the undercurrent, the month's peak and end, each marked private.
    recent = block(trend, "recent")
    assert recent.startswith("Recent (last 3 days, 4 memories):")
    assert "- anxious(1.0), this morning — (private) (peak)" in recent
    assert "Undercurrent: sad." in recent
    assert "Peak and end: anxious(1.0), this morning — (private)" in block(trend, "month")
    assert "peak anxious(1.0) this morning" in mine[2]

    log = log_text(tmp_path / "logs")
    assert '"tool": "emotion_trend"' in log
    assert not [p for p in passages(SECRET, 20) if p in log]
