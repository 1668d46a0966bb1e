"""Notions seen by the self-model through the ``notions.store`` service: a notion reinforced into a conviction
shows in am_i_being_genuine and leaves it when contradictions weaken it; a notion bound to a person shows in
consider_them's impressions of them."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

import pytest
from combo_support import MORE_TEA, TEA

from ego_core import PluginHost
from ego_core.testing import call_ok, mcp_client

pytestmark = pytest.mark.anyio


async def remember(client: Any, content: str, **extra: Any) -> str:
    text = await call_ok(client, "remember", {"content": content, **extra})
    found = re.search(r"Saved \(id: (mem_[0-9a-f]+)\)", text)
    assert found, text
    return found.group(1)


async def test_convictions_and_impressions_reach_the_self_model(combo_host: Callable[..., PluginHost]) -> None:
    host = combo_host("memory", "notions", "self_model")
    async with mcp_client(host) as client:
        ids = [await remember(client, c, emotion="contentment", tags=["tea"], valence=0.6) for c in TEA]
        for source, target in itertools.combinations(ids, 2):
            await call_ok(client, "link_memories", {"source_id": source, "target_id": target})
        assert "Formed 1 notion(s)." in await call_ok(client, "consolidate")
        listing = await call_ok(client, "curate_notions", {"action": "list"})
        notion_id = re.findall(r"notion_[0-9a-f]{12}", listing)[0]
        genuine = await call_ok(client, "am_i_being_genuine")
        assert "Your convictions" not in genuine

        for content in MORE_TEA:
            await remember(client, content, emotion="happy", tags=["tea"], valence=0.5)
        genuine = await call_ok(client, "am_i_being_genuine")
        assert 'Your convictions: "Tea brings me calm".' in genuine

        await call_ok(client, "update_relationship", {"person": "Master", "field": "trust_level", "value": 0.9})
        await call_ok(client, "curate_notions", {"action": "relabel", "id": notion_id, "person": "Master"})
        them = await call_ok(client, "consider_them", {"person": "Master"})
        assert 'Impressions of Master: "Tea brings me calm".' in them

        for content in ["The tea went cold and bitter.", "Burnt my tongue on the tea.", "Spilled tea on my notes."]:
            await remember(client, content, emotion="frustrated", tags=["tea"], valence=-0.6)
        genuine = await call_ok(client, "am_i_being_genuine")
        assert "Your convictions" not in genuine  # 1.0 − 3 · 0.15 = 0.55: held, no longer a conviction
        assert "Tea brings me calm" in await call_ok(client, "curate_notions", {"action": "list"})


async def test_a_notion_formed_from_moments_shared_with_someone_is_bound_to_them(
    combo_host: Callable[..., PluginHost],
) -> None:
    host = combo_host("memory", "notions", "self_model")
    async with mcp_client(host) as client:
        await call_ok(client, "update_relationship", {"person": "Aiko", "field": "trust_level", "value": 0.8})
        contents = [
            "Aiko taught me to fold paper cranes.",
            "Aiko laughed at my lopsided crane.",
            "Folded cranes alone.",
        ]
        ids = [await remember(client, c, emotion="happy", tags=["origami"], valence=0.7) for c in contents]
        for source, target in itertools.combinations(ids, 2):
            await call_ok(client, "link_memories", {"source_id": source, "target_id": target})
        await call_ok(client, "consolidate")
        listing = await call_ok(client, "curate_notions", {"action": "list"})
        assert "person=Aiko" in listing  # two of its three memories were shared with Aiko
        them = await call_ok(client, "consider_them", {"person": "Aiko"})
        assert 'Impressions of Aiko: "Origami with Aiko makes me happy".' in them
