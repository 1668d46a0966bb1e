"""The companion's absence end to end: the real self-model counts the moments shared with the companion (memories
naming them), and once they have been away long against that rhythm, social_thirst is 0.08 higher."""

from __future__ import annotations

from datetime import timedelta

import pytest
from desires_support import AFTERNOON, DesireHostFactory, level_map

from ego_core.testing import call_ok, mcp_client
from ego_self_model import SelfModelPlugin

pytestmark = pytest.mark.anyio


async def test_a_long_absence_of_the_companion_raises_social_thirst(with_memory: DesireHostFactory) -> None:
    dh = with_memory(others={"self_model": SelfModelPlugin()}, companion_name="Aiko")
    last = AFTERNOON + timedelta(days=1)
    async with mcp_client(dh.host) as client:
        await call_ok(client, "remember", {"content": "Aiko and I walked to the bakery this morning."})
        dh.clock.set(last)
        await call_ok(client, "remember", {"content": "Aiko showed me her new bicycle."})

        def pushed() -> float:
            return dict(dh.plugin.snapshot().modulation.factors["absence"]).get("social_thirst", 0.0)

        # two moments: the usual gap is half a week, so quiet from one week, long from two
        dh.clock.set(last + timedelta(days=6))
        assert pushed() == 0.0
        dh.clock.set(last + timedelta(days=7))
        assert pushed() == 0.0  # quiet adds nothing by default
        dh.clock.set(last + timedelta(days=14))
        assert pushed() == pytest.approx(0.08)
        reading = dh.plugin.snapshot().reading("social_thirst")
        felt = level_map(await call_ok(client, "feel_desires"))
        assert felt["social_thirst"] == round(reading.level, 2)
        assert reading.modulation >= 0.08
        await call_ok(client, "remember", {"content": "Aiko came back from her trip and we had tea."})
        assert pushed() == 0.0  # a reunion: the absence is over
