"""An empty or blank `person`: attune's is optional and means the companion; consider_them's is required."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ego_core import PluginHost
from ego_core.testing import call_error, call_ok, mcp_client


def companion_line(text: str) -> str:
    """The first line of an attune answer: with self_model alone, the person's line."""
    return text.splitlines()[0]


@pytest.mark.anyio
async def test_a_blank_person_is_the_companion_in_attune_and_an_error_in_consider_them(
    self_host: Callable[..., PluginHost],
) -> None:
    async with mcp_client(self_host()) as client:
        await call_ok(client, "update_relationship", {"person": "あいこ", "field": "trust_level", "value": 0.9})
        absent = companion_line(await call_ok(client, "attune"))
        assert absent == "Master: you are still getting to know them; nothing shared yet."
        for blank in ("", "   ", "\u3000"):
            assert companion_line(await call_ok(client, "attune", {"person": blank})) == absent
            text = await call_error(client, "consider_them", {"person": blank})
            assert "`person`: a name of 1 to 80 characters" in text
        toward = companion_line(await call_ok(client, "attune", {"person": "あいこ"}))
        assert toward.startswith("Regarding あいこ: you trust them deeply")
