"""The guard across languages, with the default multilingual model: a memory and its translation meet in one
space, so the new one is linked to the original and remember names it; it is still stored (its words differ:
the agent decides whether both belong), and a Japanese repeat is caught like an English one."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from dedup_support import remember, saved_id, store_of

from ego_core import PluginHost
from ego_core.testing import mcp_client
from ego_dedup import NOT_SAVED

pytestmark = pytest.mark.anyio

JAPANESE = "今日はマスターと一緒に映画を見た。"
# USE multilingual v3: 0.85 with JAPANESE
ENGLISH = "Today I watched a movie with Master."


async def test_a_translation_is_kept_and_linked_to_the_original(dedup_host: Callable[..., PluginHost]) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        saved_id(await remember(client, JAPANESE))
        reply = await remember(client, ENGLISH)
        saved_id(reply)
        assert f"{JAPANESE} (similarity: 0.8" in reply  # the original, under Most related
        again = await remember(client, "今日は、マスターと一緒に映画を見た！")
        assert again.startswith(NOT_SAVED), again  # a Japanese repeat is refused
        assert store_of(host).count() == 2
