"""feel_desires and satisfy_desire through an in-process MCP client (desires alone)."""

from __future__ import annotations

import json
import math
from datetime import timedelta

import pytest
from desires_support import (
    AFTERNOON,
    NINE,
    DesireHostFactory,
    FixedBody,
    FixedMemories,
    FixedQuestions,
    level_map,
    memory,
    parse_levels,
    question,
    scaffold_of,
    store_rows,
)

from ego_core import Clock, PluginHost
from ego_core.testing import ToolRunner, call_error, call_ok, mcp_client, tool_text, tools_named
from ego_desires.api import DESIRE_LEVELS, DesireLevels
from ego_desires.curve import logit

pytestmark = pytest.mark.anyio


async def test_a_fresh_store_lists_all_nine_in_the_documented_form(desire_host: DesireHostFactory) -> None:
    dh = desire_host(companion_name="Aiko")
    async with mcp_client(dh.host) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert {"feel_desires", "satisfy_desire"} <= set(tools)
        text = await call_ok(client, "feel_desires")
    found = parse_levels(text)
    assert sorted(name for name, _level, _band in found) == sorted(NINE)
    levels = [level for _name, level, _band in found]
    assert levels == sorted(levels, reverse=True)
    assert all(0.0 <= level <= 1.0 for level in levels)
    assert scaffold_of(text) == [
        "What is your strongest urge? Should you act on it now?",
        "Consider Aiko's current situation. Act naturally. Restraint is also a choice.",
    ]


async def test_equal_levels_keep_the_order_of_the_four_levels(desire_host: DesireHostFactory) -> None:
    dh = desire_host()
    async with mcp_client(dh.host) as client:
        text = await call_ok(client, "feel_desires")
    assert [name for name, _level, _band in parse_levels(text)] == list(NINE)  # a fresh store: all at 0.50


async def test_bands_follow_the_shown_level(desire_host: DesireHostFactory) -> None:
    dh = desire_host()
    async with mcp_client(dh.host) as client:
        await call_ok(client, "satisfy_desire", {"name": "curiosity", "quality": 1.0})
        dh.clock.set(dh.clock.now() + timedelta(hours=30))
        text = await call_ok(client, "feel_desires")
    for _name, level, band in parse_levels(text):
        assert band == ("high" if level >= 0.7 else "mid" if level >= 0.4 else "low")


async def test_quality_one_lowers_more_than_quality_point_two_and_it_rises_back_more_slowly(
    desire_host: DesireHostFactory,
) -> None:
    good, poor = desire_host(name="good"), desire_host(name="poor")
    async with mcp_client(good.host) as g, mcp_client(poor.host) as p:
        good_text = await call_ok(g, "satisfy_desire", {"name": "curiosity", "quality": 1.0})
        poor_text = await call_ok(p, "satisfy_desire", {"name": "curiosity", "quality": 0.2})
        assert good_text.startswith("curiosity: 0.50 → 0.02 (quality 1).")
        assert poor_text.startswith("curiosity: 0.50 → 0.40 (quality 0.2).")
        after = [level_map(await call_ok(c, "feel_desires"))["curiosity"] for c in (g, p)]
    assert after[0] < after[1]

    # A later simulated clock: the well satisfied desire climbs more slowly (smaller slope of its logit) and
    # takes longer to come back to where it was before.
    steps = [good.clock.now() + timedelta(hours=h) for h in range(0, 49, 4)]
    series: dict[str, list[float]] = {"good": [], "poor": []}
    for moment in steps:
        for label, dh in (("good", good), ("poor", poor)):
            dh.clock.set(moment)
            series[label].append(dh.levels()["curiosity"])
    for g_level, p_level in zip(series["good"][:3], series["poor"][:3], strict=True):  # while both still rise
        assert g_level <= p_level  # (the poorly satisfied one peaks sooner, and so settles sooner too)
    slope = {label: logit(values[2]) - logit(values[1]) for label, values in series.items()}
    assert slope["good"] < slope["poor"]
    back = {label: next(i for i, v in enumerate(values) if v >= 0.5) for label, values in series.items()}
    assert back["good"] > back["poor"]


async def test_satisfy_reads_names_loosely_and_changes_only_that_desire(desire_host: DesireHostFactory) -> None:
    dh = desire_host()
    before = dh.levels()
    async with mcp_client(dh.host) as client:
        text = await call_ok(client, "satisfy_desire", {"name": "  Social Thirst "})
    assert text.startswith("social_thirst: 0.50 → 0.15 (quality 0.7). It settles deeply")
    after = dh.levels()
    assert after["social_thirst"] < before["social_thirst"]
    assert {k: v for k, v in after.items() if k != "social_thirst"} == {
        k: v for k, v in before.items() if k != "social_thirst"
    }


async def test_satisfy_words_follow_the_quality(desire_host: DesireHostFactory) -> None:
    dh = desire_host()
    async with mcp_client(dh.host) as client:
        mid = await call_ok(client, "satisfy_desire", {"name": "expression", "quality": 0.5})
        poor = await call_ok(client, "satisfy_desire", {"name": "recognition", "quality": 0.1})
        none = await call_ok(client, "satisfy_desire", {"name": "resonance", "quality": 0})
    assert "It eases somewhat." in mid
    assert "It barely eases; it may return soon." in poor
    assert none.startswith("resonance: 0.50 → 0.50 (quality 0). It does not ease")
    assert scaffold_of(mid) == ["What else, if anything, is pulling at you?"]


async def test_an_unknown_name_lists_the_nine_and_changes_nothing(desire_host: DesireHostFactory) -> None:
    dh = desire_host()
    rows = store_rows(dh.data_dir)
    async with mcp_client(dh.host) as client:
        text = await call_error(client, "satisfy_desire", {"name": "my secret plan"})
        bad_quality = await call_error(client, "satisfy_desire", {"name": "curiosity", "quality": 1.5})
        missing = await call_error(client, "satisfy_desire", {})
    assert (
        text
        == "Invalid arguments for satisfy_desire: `name`: one of " + ", ".join(NINE) + ". Fix the call and try again."
    )
    assert "secret" not in text
    assert "`quality`" in bad_quality
    assert "1.5" not in bad_quality
    assert "`name`" in missing
    assert store_rows(dh.data_dir) == rows


async def test_non_finite_quality_is_refused(desire_host: DesireHostFactory) -> None:
    dh = desire_host()
    rows = store_rows(dh.data_dir)
    runner = ToolRunner(dh.host)
    for value in (math.nan, math.inf, -math.inf):
        result = await runner.call("satisfy_desire", {"name": "curiosity", "quality": value})
        assert result.is_error
        assert "`quality`" in tool_text(result)
    assert store_rows(dh.data_dir) == rows


async def test_unresolved_lines_only_when_fading_questions_boost(desire_host: DesireHostFactory) -> None:
    plain = desire_host(name="plain", others={"questions": FixedQuestions([question(1, "active"), question(2)])})
    nagged = desire_host(name="nagged", others={"questions": FixedQuestions([question(3), question(4)])})
    quiet = desire_host(name="quiet", others={"questions": FixedQuestions([question(5, importance=3)])})
    texts = {}
    for label, dh in (("plain", plain), ("nagged", nagged), ("quiet", quiet)):
        async with mcp_client(dh.host) as client:
            texts[label] = await call_ok(client, "feel_desires")
    unresolved = "Something feels unresolved. You can't quite name it, but there's a nagging feeling."
    hint = "Consider running introspect to see if anything surfaces."
    assert scaffold_of(texts["nagged"])[2:] == [unresolved, hint]
    # one fading question of importance 5 in "plain", none of importance >= 4 in "quiet"
    assert unresolved in scaffold_of(texts["plain"])
    assert unresolved not in texts["quiet"]
    assert level_map(texts["nagged"])["cognitive_coherence"] == pytest.approx(0.58)
    assert level_map(texts["plain"])["cognitive_coherence"] == pytest.approx(0.54)
    assert level_map(texts["quiet"])["cognitive_coherence"] == pytest.approx(0.50)


async def test_the_question_boost_is_capped(desire_host: DesireHostFactory) -> None:
    many = desire_host(others={"questions": FixedQuestions([question(n) for n in range(6)])})
    assert many.levels()["cognitive_coherence"] == pytest.approx(0.5 + 0.12)


async def test_the_question_threshold_is_configurable(desire_host: DesireHostFactory) -> None:
    dh = desire_host(
        others={"questions": FixedQuestions([question(1, importance=3)])},
        desires={"questions": {"min_importance": 3, "boost_each": 0.1, "boost_max": 0.3}},
    )
    assert dh.levels()["cognitive_coherence"] == pytest.approx(0.6)


async def test_with_only_desires_every_response_names_only_served_tools(desire_host: DesireHostFactory) -> None:
    dh = desire_host(others={"questions": FixedQuestions([question(1)])})
    async with mcp_client(dh.host) as client:
        served = {t.name for t in (await client.list_tools()).tools}
        assert served == {"wake_up", "introspect", "attune", "feel_desires", "satisfy_desire", "configure_desires"}
        texts = [
            await call_ok(client, "wake_up"),
            await call_ok(client, "feel_desires"),
            await call_ok(client, "satisfy_desire", {"name": "curiosity"}),
            await call_error(client, "satisfy_desire", {"name": "nothing"}),
            await call_ok(client, "introspect"),
            await call_ok(client, "feel_desires"),
        ]
    for text in texts:
        assert tools_named(text) <= served, text


async def test_the_introspect_hint_is_shown_only_while_introspect_is_served(desire_host: DesireHostFactory) -> None:
    dh = desire_host(others={"questions": FixedQuestions([question(1)])})
    # The core drops a ScaffoldLine whose `needs` are not all served; introspect is the core's own tool.
    host: PluginHost = dh.host
    assert host.tool_served("introspect")
    response = dh.plugin.feel_desires({}, dh.host.context("desires"))
    hints = [line for line in response.scaffold if not isinstance(line, str)]
    assert [(line.text, set(line.needs)) for line in hints] == [
        ("Consider running introspect to see if anything surfaces.", {"introspect"})
    ]


async def test_the_service_gives_every_level_in_the_unit_interval(desire_host: DesireHostFactory) -> None:
    clock = Clock()
    dh = desire_host(clock=clock)
    service = dh.host.services.get(DESIRE_LEVELS, DesireLevels)
    assert service is not None
    levels = dict(service.levels())
    assert set(levels) == set(NINE)
    assert all(0.0 <= v <= 1.0 for v in levels.values())


async def test_the_two_tool_definitions_stay_within_450_characters(desire_host: DesireHostFactory) -> None:
    """The budget of the lead, measured like ``ego bench tokens`` (per_tool_chars: compact JSON of tools/list)."""
    dh = desire_host()
    async with mcp_client(dh.host) as client:
        listed = (await client.list_tools()).tools
    sizes = {
        t.name: len(json.dumps(t.model_dump(mode="json", by_alias=True, exclude_none=True), separators=(",", ":")))
        for t in listed
    }
    assert sizes["feel_desires"] + sizes["satisfy_desire"] <= 450, sizes


async def test_satisfy_desire_says_nothing_changed_when_the_level_stays(desire_host: DesireHostFactory) -> None:
    """A new user found: `satisfy_desire {"name":"curiosity","quality":1.0}` answered "curiosity: 0.48 → 0.48 …
    It settles deeply" while nothing changed. A satisfaction that does not move the shown level says so, and
    why: the desire's own pull was already at rest, and what holds the level up (here a recent surprise and the
    time of day) is not something satisfying it quiets."""
    surprised = memory(1, AFTERNOON - timedelta(minutes=5), emotion="surprised", valence=0.0)
    dh = desire_host(others={"memory": FixedMemories([surprised]), "body": FixedBody(time_phase="morning")})
    async with mcp_client(dh.host) as client:
        first = await call_ok(client, "satisfy_desire", {"name": "curiosity", "quality": 1.0})
        level = dh.levels()["curiosity"]
        again = await call_ok(client, "satisfy_desire", {"name": "curiosity", "quality": 1.0})
    assert first.startswith("curiosity: ")
    assert "It settles deeply" in first
    assert "What remains comes from a recent surprise and the time of day" in first
    shown = f"{level:.2f}"
    assert level > 0.25  # the surprise and the morning, not the desire itself
    assert again.startswith(f"curiosity: {shown} → {shown} (quality 1). Nothing changed: its own pull was already")
    assert "settles" not in again
    assert "comes from a recent surprise and the time of day, which satisfying it does not quiet" in again
    assert dh.levels()["curiosity"] == pytest.approx(level)


async def test_satisfy_desire_names_the_eased_pull_when_a_full_level_stays_full(desire_host: DesireHostFactory) -> None:
    """The same, when what surrounds a desire holds it at 1.00 although its own pull eased (with the plain
    clamp: by default modulation only approaches 1)."""
    late = [memory(n, AFTERNOON - timedelta(minutes=n), category="philosophical") for n in range(1, 8)]
    dh = desire_host(
        others={"memory": FixedMemories(late), "body": FixedBody(time_phase="late_night")},
        desires={"memories": {"topic_weight": 1.0}, "soft_from": 1.0},
    )
    before = dh.levels()["cognitive_coherence"]
    async with mcp_client(dh.host) as client:
        text = await call_ok(client, "satisfy_desire", {"name": "cognitive_coherence", "quality": 1.0})
    assert before == 1.0
    assert text.startswith("cognitive_coherence: 1.00 → 1.00 (quality 1). Nothing changed: its own pull eased (")
    assert "but what you feel comes from recent memories on its topics and the time of day" in text
