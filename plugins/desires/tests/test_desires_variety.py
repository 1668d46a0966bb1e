"""A line said lately yields (a lived month: "Something else stirs, but you can't name it yet." was in all 60 attunes of
a month): a sentence of the desires' wake_up, attune or introspect section said in one of the last few answers
gives way to another wording made from facts, or to silence. A simulated month on a driven clock, over a real MCP
client, with stand-ins for the memories, the body and the other plugins' tools."""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from datetime import timedelta

import pytest
from desires_support import (
    AFTERNOON,
    DesireHostFactory,
    FixedBody,
    FixedMemories,
    FixedQuestions,
    StandInTools,
    memory,
    question,
)

from ego_core.testing import SEPARATOR, call_ok, mcp_client
from ego_desires.attune import STIRS
from ego_desires.store import FILE_NAME

pytestmark = pytest.mark.anyio

SENTENCE = re.compile(r"(?<=[.!?])\s+")
PHASES = ((8, "morning"), (14, "afternoon"), (21, "night"))


def desire_sentences(answer: str, tool: str) -> list[str]:
    """The sentences of the desires' section: wake_up's ``You feel …`` line, attune's currents and interests."""
    data = answer.split(SEPARATOR, 1)[0]
    if tool == "wake_up":
        lines = [line for line in data.splitlines() if line.startswith("You feel")]
    else:
        lines = [
            line.removeprefix("Desire currents: ")
            for line in data.splitlines()
            if line.startswith(("Desire currents: ", "Current interests: "))
        ]
    return [s for line in lines for s in (SENTENCE.split(line) if not line.startswith("Current") else [line])]


async def live(dh_factory: DesireHostFactory, **desires: object) -> dict[str, list[list[str]]]:
    body = FixedBody()
    memories = FixedMemories()
    dh = dh_factory(
        others={"body": body, "memory": memories, "tools": StandInTools(), "questions": FixedQuestions([question(1)])},
        desires=desires,
    )
    said: dict[str, list[list[str]]] = {"wake_up": [], "attune": [], "introspect": []}
    async with mcp_client(dh.host) as client:
        for day in range(30):
            for session, (hour, phase) in enumerate(PHASES[: 2 + day % 2]):
                now = AFTERNOON.replace(hour=hour) + timedelta(days=day)
                dh.clock.set(now)
                body.state["time_phase"] = phase
                category = ("lesson", "feeling")[day % 2]
                happy = memory(day * 3 + session, now, emotion="happy", valence=0.6, category=category)
                memories.memories.append(happy)
                for tool in ("wake_up", "attune"):
                    said[tool].append(desire_sentences(await call_ok(client, tool), tool))
                introspected = (await call_ok(client, "introspect")).split(SEPARATOR, 1)[0]
                said["introspect"].append([s for s in SENTENCE.split(introspected) if s.startswith("Something")])
                await call_ok(client, ("recall", "remember", "consider_them")[session])
    return said


async def test_no_desire_sentence_is_in_most_answers_of_a_month(desire_host: DesireHostFactory) -> None:
    said = await live(desire_host)
    for tool, answers in said.items():
        counts = Counter(s for answer in answers for s in dict.fromkeys(answer))
        assert counts, tool
        sentence, most = counts.most_common(1)[0]
        assert most <= len(answers) // 2, (tool, sentence, most, len(answers))
        if tool != "introspect":
            assert sum(1 for answer in answers if answer) >= len(answers) * 2 // 3, tool  # the desires still speak
    attunes = said["attune"]
    assert sum(STIRS in answer for answer in attunes) <= len(attunes) // 3
    assert any(s.startswith("Beneath them, ") for answer in attunes for s in answer)  # what stirs, from facts
    assert any(", last eased " in s for answer in attunes for s in answer)
    nags = [bool(answer) for answer in said["introspect"]]
    assert 0 < sum(nags) <= len(nags) // 2  # the nagging questions are felt, not recited


async def test_with_variety_off_every_answer_may_repeat(desire_host: DesireHostFactory) -> None:
    said = await live(desire_host, variety={"answers": 0})
    counts = Counter(s for answer in said["introspect"] for s in answer)
    assert counts.most_common(1)[0][1] == len(said["introspect"])  # the old behaviour: every time


async def test_a_lone_sentence_is_said_once_in_three_answers_and_only_digests_are_kept(
    desire_host: DesireHostFactory,
) -> None:
    dh = desire_host(desires={"initial_position": 0.0})  # every desire at rest: "You feel settled; …"
    async with mcp_client(dh.host) as client:
        lines = []
        for n in range(6):
            dh.clock.set(AFTERNOON + timedelta(minutes=n))
            wake = (await call_ok(client, "wake_up")).split(SEPARATOR, 1)[0]
            lines.append([line for line in wake.splitlines() if line.startswith("You feel")])
    settled = ["You feel settled; nothing pulls at you much right now."]
    assert lines == [settled, [], [], settled, [], []]  # said, then silence rather than the same words
    with sqlite3.connect(dh.data_dir / "desires" / FILE_NAME) as db:
        kept = [row[0] for row in db.execute("SELECT digest FROM said")]
    assert kept
    assert all(re.fullmatch(r"[0-9a-f]{16}|", digest) for digest in kept)  # never the words
