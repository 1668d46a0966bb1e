"""Acceptance 3: with the memory plugin disabled, emotion_trend is not served, nothing names it, and
introspect (and wake_up) still work."""

from __future__ import annotations

import pytest

from ego_core import Section, hookimpl
from ego_core.testing import HostFactory, call_error, call_ok, mcp_client
from ego_emotion_trend import EmotionTrendPlugin
from ego_memory.plugin import MemoryPlugin

pytestmark = pytest.mark.anyio


class Diary:
    """Another plugin with an introspect section, so introspect has something to compose."""

    @hookimpl
    def on_introspect(self) -> Section:
        return Section(key="diary", text="Diary: two pages written today.", order=50)


@pytest.mark.parametrize("how", ["disabled", "absent"])
async def test_without_memory_emotion_trend_is_not_served_and_nobody_names_it(make_host: HostFactory, how: str) -> None:
    if how == "disabled":
        # `ego serve --disable memory`: every installed plugin (found through its entry point) but memory.
        host = make_host(autoload=True, disabled=["memory"])
    else:
        host = make_host({"emotion_trend": EmotionTrendPlugin(), "diary": Diary()})
    async with mcp_client(host) as client:
        served = {tool.name for tool in (await client.list_tools()).tools}
        assert "emotion_trend" not in served
        introspect = await call_ok(client, "introspect")
        wake_up = await call_ok(client, "wake_up")
        refused = await call_error(client, "emotion_trend")
    for text in (introspect, wake_up):
        assert "emotion_trend" not in text
        assert "Emotional trend" not in text
    assert "Reflect on these in your own words." in introspect
    if how == "absent":
        assert introspect.startswith("Diary: two pages written today.")
    assert "emotion_trend" not in refused.lower().replace("unknown tool: emotion_trend", "")
    status = next(s for s in host.statuses() if s.id == "emotion_trend")
    assert status.state == "failed"
    assert "requires plugin(s) memory" in status.reason


async def test_with_memory_the_introspect_pointer_names_it(make_host: HostFactory) -> None:
    host = make_host(
        {"memory": MemoryPlugin(), "emotion_trend": EmotionTrendPlugin()},
        config={"emotion_trend": {"tool": True}},
    )
    async with mcp_client(host) as client:
        assert "emotion_trend" in {tool.name for tool in (await client.list_tools()).tools}
        await call_ok(client, "remember", {"content": "A first small joy: the kettle works again.", "emotion": "happy"})
        introspect = await call_ok(client, "introspect")
    assert "Emotional trend: too few memories yet; felt so far: happy." in introspect
    assert "emotion_trend shows the peaks, shifts and what is fading." in introspect
