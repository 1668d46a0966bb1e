"""When a moment was last shared is said by the local calendar day (Asia/Tokyo): a moment at 21:00 is "last
night" at 08:03 the next morning, never "earlier today"; at 23:00 the same evening it is today."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from ego_core import Clock, Settings
from ego_core.testing import HostFactory, call_ok, mcp_client
from ego_memory.plugin import MemoryPlugin
from ego_self_model import SelfModelPlugin

TOKYO = ZoneInfo("Asia/Tokyo")
EVENING = datetime(2026, 5, 1, 21, 0, tzinfo=TOKYO)
LATER = datetime(2026, 5, 1, 23, 0, tzinfo=TOKYO)
MORNING = datetime(2026, 5, 2, 8, 3, tzinfo=TOKYO)


async def answers(client: Any, companion: str) -> dict[str, str]:
    """Every answer that says when a moment was last shared with the companion."""
    return {
        "wake_up": await call_ok(client, "wake_up"),
        "consider_them": await call_ok(client, "consider_them", {"person": companion}),
        "attune": await call_ok(client, "attune"),
        "introspect": await call_ok(client, "introspect"),
    }


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("companion", "content"),
    [
        ("Master", "Master and I watched the fireworks from the balcony."),
        ("あいこ", "あいこと一緒にベランダから花火を見た。"),
    ],
)
async def test_last_night_is_not_earlier_today(
    make_host: HostFactory, tmp_path: Path, companion: str, content: str
) -> None:
    clock = Clock(EVENING)
    settings = Settings(data_dir=tmp_path / "ego-tokyo", timezone="Asia/Tokyo", companion_name=companion)
    host = make_host({"memory": MemoryPlugin(), "self_model": SelfModelPlugin()}, settings=settings, clock=clock)
    async with mcp_client(host) as client:
        await call_ok(client, "remember", {"content": content})
        clock.set(LATER)
        evening = await answers(client, companion)
        clock.set(MORNING)
        morning = await answers(client, companion)
    assert f"\n{companion}: you are still getting to know them; last shared earlier today.\n" in evening["wake_up"]
    assert "You've shared one moment with them, the last one earlier today" in evening["consider_them"]
    assert "; last shared earlier today" in evening["attune"]
    assert "; last shared earlier today" in evening["introspect"]

    assert f"\n{companion}: you are still getting to know them; last shared last night.\n" in morning["wake_up"]
    assert "You've shared one moment with them, the last one last night" in morning["consider_them"]
    assert "; last shared last night" in morning["attune"]
    assert "; last shared last night" in morning["introspect"]
    for tool, text in morning.items():
        assert "today" not in text.lower(), (tool, text)
