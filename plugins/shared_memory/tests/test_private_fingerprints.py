"""A private memory rewritten does not reach the gateway: as a slug in the dedupe_key (the form the protocol asks
keys to take), hyphenated, underscored or dotted in the content, in a project scope, or quoted in 18 characters
mixing scripts. Each is refused with the private-memory message before anything is sent, through a real MCP
client, the real memory plugin and a gateway over HTTP; an entry sharing only common words is stored."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from shared_support import ThreadGateway, agent_host

from ego_core.testing import HostFactory, call_error, call_ok, mcp_client
from ego_shared_memory.store import EventFilter, SqlStore
from ego_shared_memory.tools import PRIVATE_REFUSED

pytestmark = pytest.mark.anyio

DIARY = "privzebra4471 my hidden diary entry: I buried the letter under the old cedar tree"
CANARY = "昨夜、庭で秘密のカナリアKANARIA7788を見つけたことは誰にも言わない"
NEUTRAL = {"scope": "global", "kind": "fact", "dedupe_key": "fact:garden_plan", "content": "The plan is in docs/x.md."}

VARIANTS: dict[str, dict[str, Any]] = {
    "slug in dedupe_key": {"dedupe_key": "privzebra4471-my-hidden-diary-entry-i-buried-the-letter"},
    "slug after a prefix": {"dedupe_key": "fact:my-hidden-diary-entry-i-buried-the-letter"},
    "hyphenated content": {"content": "my-hidden-diary-entry-i-buried-the-letter-under-the-old-cedar-tree"},
    "underscored content": {"content": "Filed as my_hidden_diary_entry_i_buried_the_letter_under_the_old_cedar."},
    "dotted content": {"content": "Seen: my.hidden.diary.entry.i.buried.the.letter.under.the.old.cedar.tree"},
    "slug in a project scope": {"scope": "project:my-hidden-diary-entry-i-buried-the-letter"},
    "18-character mixed quote": {"content": "秘密のカナリアKANARIA7788"},
    "mixed quote re-punctuated": {"content": "確認: 秘密の・カナリア・kanaria-7788"},
}


@pytest.fixture
def host_with_private_memories(
    make_host: HostFactory, gateway: ThreadGateway, token_for: Callable[..., str]
) -> Callable[[], Any]:
    def build() -> Any:
        return agent_host(make_host, {"gateway_url": gateway.url, "token": token_for("claude")}, memory=True)

    return build


@pytest.mark.parametrize("variant", sorted(VARIANTS))
async def test_a_rewritten_private_memory_never_reaches_the_gateway(
    host_with_private_memories: Callable[[], Any], store: SqlStore, variant: str
) -> None:
    async with mcp_client(host_with_private_memories()) as client:
        for private in (DIARY, CANARY):
            await call_ok(client, "remember", {"content": private, "private": True, "force": True})
        refused = await call_error(client, "shared_append", {**NEUTRAL, **VARIANTS[variant]})
        assert refused.startswith(PRIVATE_REFUSED)
        for word in ("hidden", "diary", "buried", "カナリア", "KANARIA"):
            assert word not in refused
        # the same call without the private text goes through: nothing else refused it
        stored = await call_ok(client, "shared_append", NEUTRAL)
        assert "Shared (evt_" in stored
    events = store.list_events(EventFilter(include_deprecated=True))
    assert [(e.scope, e.dedupe_key, e.content_md) for e in events] == [
        ("global", "fact:garden_plan", "The plan is in docs/x.md.")
    ]


async def test_common_words_of_a_private_memory_are_shared(
    host_with_private_memories: Callable[[], Any], store: SqlStore
) -> None:
    shared = [
        {"dedupe_key": "fact:old-cedar-tree", "content": "The old cedar tree by the gate is to be kept."},
        {"dedupe_key": "fact:diary-app", "content": "My diary app hides entries behind a PIN; see docs/app.md."},
        {"dedupe_key": "fact:canary", "content": "カナリアの餌は棚の上。KANARIA は鳥の名前。"},
    ]
    async with mcp_client(host_with_private_memories()) as client:
        for private in (DIARY, CANARY):
            await call_ok(client, "remember", {"content": private, "private": True, "force": True})
        for entry in shared:
            assert "Shared (evt_" in await call_ok(client, "shared_append", {**NEUTRAL, **entry})
    events = store.list_events(EventFilter(include_deprecated=True))
    assert sorted(e.dedupe_key for e in events) == sorted(str(entry["dedupe_key"]) for entry in shared)
