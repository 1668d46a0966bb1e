"""Emergent desires over a real MCP client with the real memory plugin and a driven clock: they arise from the
last hours' feelings in attune, change their words with their life stage, expire on time, and are satisfied
through the cascade from a fixed desire; the catalog's words, rules and signals are edited with
configure_desires."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from desires_support import DesireHost, DesireHostFactory

from ego_core.testing import PortableError, call_error, call_ok, export_file, import_file, mcp_client

pytestmark = pytest.mark.anyio

LONELY = (
    ("Nobody answered my messages all evening.", "sad"),
    ("The house was quiet and I missed our talks.", "melancholy"),
    ("I wrote a long message and deleted it again.", "sad"),
)
RISING = "Something in this reaches toward company."
STEADY = "The wish for company sits quietly underneath."
SETTLING = "The reach toward others is easing."
EMERGENT_TAG = re.compile(r"be_with_someone\[(\d\.\d\d)/(low|mid|high)\]")


async def live(client: Any, dh: DesireHost, items: tuple[tuple[str, str], ...], **extra: Any) -> None:
    for content, emotion in items:
        dh.clock.set(dh.clock.now() + timedelta(minutes=20))
        await call_ok(client, "remember", {"content": content, "emotion": emotion, "valence": -0.6, **extra})


def emergent_level(feel: str) -> float | None:
    found = EMERGENT_TAG.search(feel)
    return float(found.group(1)) if found else None


async def test_an_emergent_desire_arises_changes_its_words_and_expires_on_time(
    with_memory: DesireHostFactory,
) -> None:
    dh = with_memory()
    async with mcp_client(dh.host) as client:
        await live(client, dh, LONELY[:2])
        before = await call_ok(client, "attune")
        assert RISING not in before  # two memories are not yet a flow
        await live(client, dh, LONELY[2:])
        arose = dh.clock.now()
        first = await call_ok(client, "attune")
        assert "Desire currents: " + RISING in first  # a new emergent desire leads (level 0.98)
        feel = await call_ok(client, "feel_desires")
        level = emergent_level(feel)
        assert level is not None
        assert level >= 0.95
        reading = await call_ok(client, "feel_desires")
        assert reading == feel  # reading changes nothing

        dh.clock.set(arose + timedelta(hours=30))  # 30 / 72 of its life: steady
        assert STEADY in await call_ok(client, "attune")
        dh.clock.set(arose + timedelta(hours=71, minutes=59))
        assert SETTLING in await call_ok(client, "attune")
        assert emergent_level(await call_ok(client, "feel_desires")) is not None
        dh.clock.set(arose + timedelta(hours=72))
        gone = await call_ok(client, "attune")
        assert not {RISING, STEADY, SETTLING} & set(re.split(r"(?<=\.) ", gone.split("\n---")[0]))
        assert emergent_level(await call_ok(client, "feel_desires")) is None


async def test_satisfying_the_fixed_desire_satisfies_its_emergent_one(with_memory: DesireHostFactory) -> None:
    dh = with_memory()
    async with mcp_client(dh.host) as client:
        await call_ok(client, "satisfy_desire", {"name": "social_thirst", "quality": 1})
        assert emergent_level(await call_ok(client, "feel_desires")) is None  # the cascade never creates one
        await live(client, dh, LONELY)
        await call_ok(client, "attune")
        high = emergent_level(await call_ok(client, "feel_desires"))
        assert high is not None
        assert high >= 0.95

        await call_ok(client, "satisfy_desire", {"name": "curiosity", "quality": 1})  # not mapped: no change
        assert emergent_level(await call_ok(client, "feel_desires")) == high

        await call_ok(client, "satisfy_desire", {"name": "social_thirst", "quality": 0.8})
        eased = emergent_level(await call_ok(client, "feel_desires"))
        assert eased is not None
        assert eased == pytest.approx(high * 0.5, abs=0.02)
        assert RISING not in await call_ok(client, "attune")  # eased: it no longer leads

        dh.clock.set(dh.clock.now() + timedelta(hours=167))
        assert emergent_level(await call_ok(client, "feel_desires")) is not None
        dh.clock.set(dh.clock.now() + timedelta(hours=1))  # 168 h after its satisfaction: gone
        assert emergent_level(await call_ok(client, "feel_desires")) is None


async def test_configure_desires_edits_a_sentence_and_the_next_attune_uses_it(with_memory: DesireHostFactory) -> None:
    # every attune may say the same sentence again here (by default one said lately yields to another)
    dh = with_memory(config={"desires": {"feel_desires_tool": True, "variety": {"answers": 0}}})
    catalog = dh.data_dir / "desires" / "catalog.json"
    async with mcp_client(dh.host) as client:
        await live(client, dh, LONELY)
        path = "emergent_desires.be_with_someone.sentence.rising"
        changed = await call_ok(
            client, "configure_desires", {"action": "set", "path": path, "value": "誰かのそばにいたい。"}
        )
        assert changed.startswith(f"Updated {path}.")
        assert "Desire currents: 誰かのそばにいたい。" in await call_ok(client, "attune")
        shown = await call_ok(client, "configure_desires", {"action": "show", "path": path})
        assert "誰かのそばにいたい。" in shown

        before = catalog.read_bytes()
        bad_places = [
            ("desires.curiosity.sentence.rising", "   "),
            ("desires.curiosity.colour", "blue"),
            ("desires.social_thirst.implicit_emergent_satisfaction.be_with_someone", 0.2),
            ("implicit_rules[0].effects[0].desire", "telepathy"),
        ]
        for place, value in bad_places:
            error = await call_error(client, "configure_desires", {"action": "set", "path": place, "value": value})
            assert place in error, error
            assert "The catalog is as it was." in error
            assert catalog.read_bytes() == before
        missing = await call_error(
            client, "configure_desires", {"action": "set", "path": "desires.nobody.x", "value": 1}
        )
        assert "desires.nobody.x" in missing
        assert catalog.read_bytes() == before
        assert "Desire currents: 誰かのそばにいたい。" in await call_ok(client, "attune")

        reset = await call_ok(client, "configure_desires", {"action": "reset", "path": path})
        assert reset.startswith(f"Reset {path}")
        assert RISING in await call_ok(client, "attune")


async def test_a_hand_edited_catalog_counts_at_once_and_a_broken_one_is_named(with_memory: DesireHostFactory) -> None:
    dh = with_memory()
    catalog = dh.data_dir / "desires" / "catalog.json"
    raw = json.loads(catalog.read_text(encoding="utf-8"))
    raw["desires"]["curiosity"]["display_name"] = "wonder"
    raw["desires"]["curiosity"]["sentence"]["steady"] = "Wonder hums along."
    catalog.write_text(json.dumps(raw), encoding="utf-8")
    async with mcp_client(dh.host) as client:
        shown = await call_ok(client, "configure_desires", {"action": "show", "path": "desires.curiosity.display_name"})
        assert '"wonder"' in shown
        assert "Wonder hums along." in await call_ok(client, "attune")  # nine at 0.5: each reads steady
        raw["desires"]["curiosity"]["sentence"]["steady"] = 7
        catalog.write_text(json.dumps(raw), encoding="utf-8")
        broken = await call_ok(client, "attune")
        assert "not valid at desires.curiosity.sentence.steady" in broken
        assert "A quiet wondering about something." in broken  # the built-in words meanwhile
        fixed = await call_ok(
            client,
            "configure_desires",
            {"action": "set", "path": "desires.curiosity.sentence.steady", "value": "Wonder again."},
        )
        assert fixed.startswith("Updated")
        assert "Wonder again." in await call_ok(client, "attune")


async def test_a_conditional_rule_satisfies_only_for_its_category(with_memory: DesireHostFactory) -> None:
    dh = with_memory()
    rule = {"tool": "remember", "when": {"category": "lesson"}, "effects": [{"desire": "predictability", "quality": 1}]}
    async with mcp_client(dh.host) as client:
        await call_ok(client, "configure_desires", {"action": "set", "path": "implicit_rules[1]", "value": rule})
        start = dh.levels()["predictability"]
        await call_ok(client, "remember", {"content": "Tea at four, as always.", "category": "daily"})
        assert dh.levels()["predictability"] == pytest.approx(start, abs=0.01)
        await call_ok(client, "remember", {"content": "Check the time zone before scheduling.", "category": "lesson"})
        assert dh.levels()["predictability"] < start - 0.3


async def test_a_satisfaction_signal_in_a_memory_eases_its_desire(with_memory: DesireHostFactory) -> None:
    dh = with_memory()
    async with mcp_client(dh.host) as client:
        await call_ok(
            client,
            "configure_desires",
            {"action": "set", "path": "desires.resonance.satisfaction_signals", "value": ["sharing tea with Aiko"]},
        )
        start = dh.levels()["resonance"]
        plain = await call_ok(
            client, "remember", {"content": "Sharing tea with Aiko.", "emotion": "sad", "valence": -0.5}
        )
        assert "Something quieted" not in plain  # only a pleasant, felt memory counts
        eased = await call_ok(
            client,
            "remember",
            {"content": "Sharing tea with Aiko", "emotion": "happy", "valence": 0.8, "intensity": 0.8, "force": True},
        )
        assert "Something quieted — a little lighter now." in eased
        assert dh.levels()["resonance"] < start - 0.1


async def test_an_edited_catalog_moves_with_export_and_import(with_memory: DesireHostFactory, tmp_path: Path) -> None:
    source = with_memory(name="source")
    path = "desires.curiosity.sentence.steady"
    async with mcp_client(source.host) as client:
        await call_ok(client, "configure_desires", {"action": "set", "path": path, "value": "ふしぎが静かに続く。"})
    exported = tmp_path / "out.jsonl"
    export_file(source.host, exported, include_private=False)
    records = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    (catalog,) = [r for r in records if r.get("plugin") == "desires" and r["type"] == "catalog"]
    assert catalog["catalog"]["desires"]["curiosity"]["sentence"]["steady"] == "ふしぎが静かに続く。"

    target = with_memory(name="target", clock=source.clock)
    assert import_file(target.host, exported).added["desires"] >= 1
    async with mcp_client(target.host) as client:
        assert "ふしぎが静かに続く。" in await call_ok(client, "attune")
    assert import_file(target.host, exported).added["desires"] == 0  # idempotent

    catalog["catalog"]["desires"]["curiosity"]["sentence"]["steady"] = ""
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")
    with pytest.raises(PortableError, match=r"`catalog\.desires\.curiosity\.sentence\.steady`"):
        import_file(target.host, broken)
