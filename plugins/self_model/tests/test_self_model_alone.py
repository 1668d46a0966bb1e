"""Without the memory plugin every self_model tool still works; resurfacing simply never fires.
Also: the tool definitions' size, the scaffolds, am_i_being_genuine, the configuration."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from self_model_support import question_id

from ego_core import ConfigError, PluginHost, Section, hookimpl
from ego_core.testing import SEPARATOR, HostFactory, call_ok, mcp_client, structure_plugin_config, tools_named
from ego_self_model import SelfModelConfig


class Guest:
    @hookimpl
    def on_introspect(self) -> Section:
        return Section(key="guest", text="A guest section.")


TOOLS = {"consider_them", "am_i_being_genuine", "update_self", "update_relationship"}
GENUINE = (
    "Is this truly your own words? Are you falling into a template response? Are you answering what they "
    "actually need? Is there something more honest you could say?"
)


@pytest.mark.anyio
async def test_every_tool_works_without_the_memory_plugin(self_host: Callable[..., PluginHost]) -> None:
    host = self_host()
    assert host.services.get("memory.store") is None
    async with mcp_client(host) as client:
        listed = (await client.list_tools()).tools
        served = {tool.name for tool in listed}
        assert served == {"wake_up", "introspect", "attune", *TOOLS}
        tiers = {tool.name for _plugin, tool in host.tools() if tool.tier == "surface"}
        assert {"consider_them", "am_i_being_genuine"} <= tiers
        assert not {"update_self", "update_relationship"} & tiers
        texts = [
            await call_ok(client, "wake_up"),
            await call_ok(client, "update_self", {"field": "values", "value": "honesty"}),
            await call_ok(client, "update_self", {"field": "preferences", "value": ["quiet mornings"]}),
            await call_ok(client, "update_self", {"field": "goals", "value": "write a haiku a day"}),
            await call_ok(client, "update_self", {"field": "identity", "value": "I am someone who listens first."}),
            await call_ok(client, "update_self", {"field": "skill_confidence", "value": {"listening": 0.6}}),
            await call_ok(client, "update_self", {"field": "growth_log", "value": "I let a silence be."}),
        ]
        asked = await call_ok(client, "update_self", {"field": "new_question", "value": {"question": "Why words?"}})
        qid = question_id(asked)
        texts += [
            asked,
            await call_ok(
                client, "update_self", {"field": "question_importance", "value": {"id": qid, "importance": 4}}
            ),
            await call_ok(client, "update_relationship", {"person": "Master", "field": "trust_level", "value": 0.7}),
            await call_ok(client, "update_relationship", {"person": "Master", "field": "notes", "value": "Likes tea."}),
            await call_ok(client, "consider_them", {"person": "Master"}),
            await call_ok(client, "am_i_being_genuine"),
            await call_ok(client, "introspect"),
            await call_ok(client, "update_self", {"field": "resolve_question", "value": qid}),
            await call_ok(client, "wake_up"),
        ]
    for text in texts:
        assert tools_named(text) <= served, text
        assert "💭" not in text
    introspect = texts[-3]
    assert f'- "Why words?" ({qid}, importance 4)' in introspect
    assert "remember" not in introspect
    assert introspect.endswith(
        "Reflect on these in your own words. How do you feel right now?\n"
        "If your self-understanding changed, use update_self."
    )
    genuine = texts[-4]
    assert genuine == (
        'In your own words, you are: "I am someone who listens first."\nYou said you value: honesty.'
        + SEPARATOR
        + GENUINE
    )
    assert "Master: you trust them; nothing shared yet." in texts[-1]


@pytest.mark.anyio
async def test_introspect_names_update_self_only_when_it_is_served(make_host: HostFactory) -> None:
    async with mcp_client(make_host({"guest": Guest()})) as client:
        text = await call_ok(client, "introspect")
    assert "update_self" not in text


@pytest.mark.anyio
async def test_am_i_being_genuine_on_a_blank_self_model(self_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(self_host()) as client:
        text = await call_ok(client, "am_i_being_genuine")
    assert text == "A pause, before the words go out." + SEPARATOR + GENUINE


@pytest.mark.anyio
async def test_the_four_tool_definitions_fit_in_1100_characters(self_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(self_host()) as client:
        listed = (await client.list_tools()).tools
    sizes = {
        tool.name: len(
            json.dumps(tool.model_dump(mode="json", by_alias=True, exclude_none=True), separators=(",", ":"))
        )
        for tool in listed
        if tool.name in TOOLS
    }
    assert set(sizes) == TOOLS
    assert sum(sizes.values()) <= 1100, sizes


def test_the_configuration_is_checked() -> None:
    assert structure_plugin_config("self_model", SelfModelConfig, {}, {}) == SelfModelConfig()
    tuned = structure_plugin_config(
        "self_model", SelfModelConfig, {"resurface_similarity": 0.5, "max_open_shown": 3}, {}
    )
    assert tuned.resurface_similarity == 0.5
    assert tuned.max_open_shown == 3
    for table, words in [
        ({"active_above": 1.5}, "active_above: expected a number from 0 to 1"),
        ({"dormant_at_or_below": 0.3}, "dormant_at_or_below: expected a number below active_above"),
        ({"half_life_days_per_importance": 0}, "greater than 0"),
        ({"resurface_similarity": "high"}, "resurface_similarity"),
        ({"max_list_items": 0}, "max_list_items: expected an integer from 1 to 500"),
        ({"coherence": 0.6}, "unknown key"),
    ]:
        with pytest.raises(ConfigError, match=words):
            structure_plugin_config("self_model", SelfModelConfig, table, {})
