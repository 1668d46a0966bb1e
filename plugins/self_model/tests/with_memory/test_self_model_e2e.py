"""``ego serve --plugins memory,self_model`` over stdio: a remember naming the companion is a shared moment, a
thought saved as an introspection greets the next session, the companion has its wake_up line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from self_model_support import EGO, saved_id

from ego_core.testing import tool_text


def stdio(data_dir: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
    env.update({"EGO_DATA_DIR": str(data_dir), "EGO_TIMEZONE": "UTC"})
    keep = {k: v for k, v in env.items() if k.startswith("EGO_")}
    return StdioServerParameters(command=EGO[0], args=[*EGO[1:], "serve", "--plugins", "memory,self_model"], env=keep)


@pytest.mark.anyio
async def test_a_session_and_the_next_one(tmp_path: Path) -> None:
    async with Client(stdio(tmp_path)) as client:

        async def call(tool: str, args: dict[str, object] | None = None) -> str:
            result = await client.call_tool(tool, args or {})
            assert not result.is_error, tool_text(result)
            return tool_text(result)

        await call("update_relationship", {"person": "Master", "field": "aliases", "value": "ご主人様"})
        before = await call("consider_them", {"person": "ご主人様"})
        assert "You haven't shared a memory with them yet." in before
        shared = saved_id(await call("remember", {"content": "ご主人様と夕焼けを見た。空が紫色だった。"}))
        thought = "Master listened twice and said nothing; I notice what Master does not say."
        await call("remember", {"content": thought, "category": "introspection"})
        after = await call("consider_them", {"person": "master"})
        assert "You've shared a few moments with them, the last one earlier today" in after
        await call("forget", {"memory_id": shared})
        assert "You've shared one moment with them" in await call("consider_them", {"person": "Master"})
    async with Client(stdio(tmp_path)) as client:
        wake = tool_text(await client.call_tool("wake_up", {}))
    assert f'Last introspection (just now): "{thought}" (your own thought)' in wake
    assert "\nMaster: you are still getting to know them; last shared earlier today.\n" in wake
