"""Relationships: typed fields, aliases, the worded picture of consider_them, the companion's wake_up line."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import attrs
import pytest
from self_model_support import NOON

from ego_core import Clock, PluginHost, Settings
from ego_core.testing import HostFactory, call_error, call_ok, mcp_client
from ego_self_model import RELATIONSHIP_FIELDS, SelfModelConfig, SelfModelPlugin
from ego_self_model.people import blank, mentioned

CONFIG = SelfModelConfig()


async def relate(client: Any, person: str, field: str, value: Any) -> str:
    return await call_ok(client, "update_relationship", {"person": person, "field": field, "value": value})


@pytest.mark.anyio
async def test_every_field_takes_its_form_and_consider_them_words_it(self_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(self_host()) as client:
        first = await relate(client, "Aiko", "trust_level", 0.85)
        assert first.startswith("New person: Aiko. Aiko: trust set; you trust them deeply.")
        await relate(client, "aiko", "preferred_topics", ["astronomy", "old films"])
        await relate(client, "Aiko", "sensitive_topics", "her father's illness")
        await relate(client, "Aiko", "communication_style", "short messages, dry humour")
        await relate(client, "Aiko", "notes", "Has a cat named Miso.")
        alias = await relate(client, "Aiko", "aliases", "Ai")
        assert alias.startswith('Aiko: added to aliases: "Ai".')
        same = await relate(client, "AI", "notes", "has a cat named miso.")
        assert same.startswith("Aiko: notes already holds that; nothing changed.")
        picture = await call_ok(client, "consider_them", {"person": "ai"})
    data, _, scaffold = picture.partition("\n\n---\n")
    assert data.splitlines() == [
        "Aiko (also Ai): you trust them deeply.",
        "They light up about: astronomy, old films.",
        "Tread gently around: her father's illness.",
        "How they like to talk: short messages, dry humour",
        "What you've noted: Has a cat named Miso.",
        "You haven't shared a memory with them yet.",
    ]
    assert not re.search(r"\d", data), "consider_them words the relationship; it shows no numbers"
    assert "What might they be feeling right now" in scaffold
    assert "update_relationship keeps it" in scaffold


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("field", "value", "form"),
    [
        ("trust_level", 1.2, "a number from 0 to 1"),
        ("trust_level", "high", "a number from 0 to 1"),
        ("trust_level", True, "a number from 0 to 1"),
        ("preferred_topics", 3, "a string (adds one item) or a list"),
        ("sensitive_topics", [""], "a string (adds one item) or a list"),
        ("aliases", "x" * 81, "each 1 to 80 characters"),
        ("notes", {"a": 1}, "a string (adds one item) or a list"),
        ("notes", ["同じメモ"] * 21, "a list of at most 20 strings"),
        ("communication_style", ["terse"], "a string of at most 300 characters"),
    ],
)
async def test_a_wrong_value_is_refused_naming_field_and_form(
    self_host: Callable[..., PluginHost], field: str, value: Any, form: str
) -> None:
    async with mcp_client(self_host()) as client:
        await relate(client, "Aiko", "trust_level", 0.3)
        text = await call_error(client, "update_relationship", {"person": "Aiko", "field": field, "value": value})
        assert f"for field {field}" in text
        assert form in text
        assert "you are cautious with them" in await call_ok(client, "consider_them", {"person": "Aiko"})


@pytest.mark.anyio
async def test_unknown_fields_and_bad_names_are_refused(self_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(self_host()) as client:
        text = await call_error(client, "update_relationship", {"person": "Aiko", "field": "birthday", "value": "May"})
        assert "`field` must be one of: " + ", ".join(RELATIONSHIP_FIELDS) in text
        for person in ("", "   ", "n" * 81):
            text = await call_error(client, "consider_them", {"person": person})
            assert "`person`: a name of 1 to 80 characters" in text
        text = await call_error(client, "consider_them", {"person": 7})
        assert "`person` must be a string" in text


@pytest.mark.anyio
async def test_an_alias_cannot_name_someone_else(self_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(self_host()) as client:
        await relate(client, "Aiko", "aliases", ["Ai", "A-chan"])
        await relate(client, "Ben", "trust_level", 0.5)
        for alias in ("ai", "Aiko", ["Benny", "a-chan"]):
            text = await call_error(
                client, "update_relationship", {"person": "Ben", "field": "aliases", "value": alias}
            )
            assert "an alias must not be another person's name or alias" in text
        own = await relate(client, "Ben", "aliases", ["ben", "Benny"])
        assert own.startswith("Ben: aliases now holds 1 item(s).")


@pytest.mark.anyio
async def test_someone_unknown_is_not_created_by_thinking_about_them(self_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(self_host()) as client:
        text = await call_ok(client, "consider_them", {"person": "Carla"})
        assert text.startswith("Carla: you don't know much about them yet. Nothing shared, nothing noted.")
        again = await relate(client, "Carla", "notes", "Met at the library.")
        assert again.startswith("New person: Carla.")


@pytest.mark.anyio
async def test_the_companion_has_one_wake_up_line(self_host: Callable[..., PluginHost], clock: Clock) -> None:
    async with mcp_client(self_host()) as client:
        fresh = await call_ok(client, "wake_up")
        assert "Master" not in fresh, "no one known yet: nothing is claimed about a companion"
        picture = await call_ok(client, "consider_them", {"person": "master"})
        assert picture.startswith("Master (the one you live with): you are still getting to know them.")
        await relate(client, "Master", "trust_level", 0.7)
        clock.set(NOON + timedelta(hours=3))
        later = await call_ok(client, "wake_up")
    assert "\nMaster: you trust them; nothing shared yet.\n" in later


@pytest.mark.anyio
async def test_the_companion_may_be_known_by_another_name(
    make_host: HostFactory, ego_settings: Settings, clock: Clock
) -> None:
    settings = attrs.evolve(ego_settings, companion_name="ご主人様")
    host = make_host({"self_model": SelfModelPlugin()}, settings=settings, clock=clock)
    async with mcp_client(host) as client:
        await relate(client, "Haruto", "aliases", "ご主人様")
        await relate(client, "ご主人様", "trust_level", 0.9)
        wake = await call_ok(client, "wake_up")
        picture = await call_ok(client, "consider_them", {"person": "Haruto"})
    assert "\nご主人様: you trust them deeply; nothing shared yet.\n" in wake
    assert picture.startswith("Haruto (also ご主人様; the one you live with): you trust them deeply.")


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Master showed me the sunset.", True),
        ("I told MASTER about it", True),
        ("the master plan failed", True),
        ("Masterful work by the team", False),
        ("my_master_key", False),
        ("Taskmaster again", False),
        ("Ai said hello", True),
        ("Aiko's cat", True),
        ("the AI model", True),
        ("said, 'Ai.'", True),
        ("ご主人様と夕焼けを見た", True),
        ("今日はご主人様が忙しそう", True),
        ("nobody here", False),
    ],
)
def test_a_name_or_alias_is_found_as_a_whole_word(text: str, found: bool) -> None:
    master = blank("Master", NOON, CONFIG)
    aiko = attrs.evolve(blank("Aiko", NOON, CONFIG), aliases=("Ai", "ご主人様"))
    assert bool(mentioned(text, [master, aiko])) is found
