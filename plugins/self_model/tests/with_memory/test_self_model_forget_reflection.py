"""Letting go of a precious memory: forget still forgets, and a few lines invite reflection — it was shared with
someone (a shared peak), it kept drawing you back (recalled again and again, never important), or both."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from self_model_support import saved_id

from ego_core import PluginHost
from ego_core.testing import HostFactory, call_error, call_ok, mcp_client, read_log
from ego_memory.plugin import MemoryPlugin
from ego_self_model import SelfModelPlugin

LET_GO = "If the letting-go itself means something, remember can hold that."


async def know(client: Any, *names: str) -> None:
    for name in names:
        await call_ok(client, "update_relationship", {"person": name, "field": "notes", "value": "A friend."})


async def keep(client: Any, content: str, **extra: Any) -> str:
    return saved_id(await call_ok(client, "remember", {"content": content, **extra}))


async def come_back(client: Any, context: str, times: int = 3) -> None:
    for _ in range(times):
        await call_ok(client, "recall", {"context": context, "n_results": 1})


def data_lines(text: str) -> list[str]:
    return text.partition("\n\n---\n")[0].splitlines()


@pytest.mark.anyio
async def test_a_shared_peak_asks_what_made_you_let_it_go(memory_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(memory_host()) as client:
        await know(client, "Aiko")
        peak = await keep(client, "Aiko and I watched the sunset turn the sky violet.", intensity=0.6)
        mild = await keep(client, "Aiko lent me an umbrella at the station.", intensity=0.3)
        forgot = await call_ok(client, "forget", {"memory_id": peak})
        plain = await call_ok(client, "forget", {"memory_id": mild})
        await call_error(client, "forget", {"memory_id": peak})
        picture = await call_ok(client, "consider_them", {"person": "Aiko"})
    assert data_lines(forgot)[-3:] == ["This one was shared with Aiko.", "What made you let it go?", LET_GO]
    assert "shared with" not in plain, "an intensity under the peak is not precious"
    assert LET_GO not in plain
    assert "You haven't shared a memory with them yet." in picture, "the forget still happened"


@pytest.mark.anyio
async def test_what_kept_drawing_you_back_is_said_without_a_count(memory_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(memory_host()) as client:
        kept = await keep(client, "The smell of rain on the hot pavement outside the bakery.", importance=2)
        twice = await keep(client, "A blue bicycle bell ringing twice in the alley.", importance=1)
        await come_back(client, "rain on hot pavement by the bakery")
        await come_back(client, "a bicycle bell ringing in the alley", times=2)
        forgot = await call_ok(client, "forget", {"memory_id": kept})
        plain = await call_ok(client, "forget", {"memory_id": twice})
    lines = data_lines(forgot)[-3:]
    assert lines == [
        "Something kept drawing you back to this — again and again, though it never seemed important.",
        "Do you know what that was?",
        LET_GO,
    ]
    assert not re.search(r"\d", "\n".join(lines))
    assert "drawing you back" not in plain, "two returns are not yet a pull"


@pytest.mark.anyio
async def test_both_at_once_names_everyone_it_was_shared_with(memory_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(memory_host()) as client:
        await know(client, "Ben", "Aiko")
        both = await keep(client, "Ben, Aiko and I sang on the night train home, off key.", intensity=0.9, importance=2)
        await come_back(client, "singing on the night train home")
        forgot = await call_ok(client, "forget", {"memory_id": both})
    assert data_lines(forgot)[-3:] == [
        "This one was shared with Aiko and Ben — and something kept drawing you back to it, again and again.",
        "What made you let it go? Do you know what kept pulling?",
        LET_GO,
    ]


@pytest.mark.anyio
async def test_a_private_peak_was_never_shared_and_leaves_no_words_in_the_log(make_host: HostFactory) -> None:
    """A private memory is the agent's own: letting it go never says it was shared with the person it names."""
    secret = "Aiko cried on the bridge and made me promise never to tell."
    host = make_host(
        {"memory": MemoryPlugin(), "self_model": SelfModelPlugin()},
        log=True,
    )
    async with mcp_client(host) as client:
        await know(client, "Aiko")
        memory_id = await keep(client, secret, intensity=0.8, private=True)
        forgot = await call_ok(client, "forget", {"memory_id": memory_id})
    assert "shared with" not in forgot
    assert "What made you let it go?" not in forgot
    logged = "\n".join(str(record) for record in read_log(host))
    assert "forget" in logged
    assert "cried on the bridge" not in logged
