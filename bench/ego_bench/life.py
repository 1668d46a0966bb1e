"""The lived-time benchmark: a scenario of days, sessions and memories, run over a real MCP client with a
simulated clock, every claim ego made held against the scenario's ground truth.

    ego bench life --scenario bench/scenarios/ja-absence.toml --output bench/results/life-ja-absence.json

A scenario (TOML, see ``bench/scenarios/README.md``) gives the time zone and the days; the people, the companion's
absences and the others' visits (who was present when); the daily sessions and the tools each calls; what the
agent remembers and when (with who was part of each moment, its privacy and anticipation); recalls with the
memory each should find; and any other call. Every plugin installed is loaded, with the configuration the
scenario gives (none by default: the README's setup).

Each answer's claims (``ego_core.Claim``, read from ``_meta["ego/claims"]`` with ``EGO_CLAIMS`` on) are checked,
never its English:

- **false claims**, by kind: ``together`` (a moment said to be shared with someone who was not part of it, or a
  private one), ``apart`` (someone said to be away longer than usual while present), ``reunion`` (a return that
  did not happen, or one told twice by one tool), ``lonely`` (loneliness while the companion is there), ``time``
  (a moment dated wrongly, or its local calendar days wrong), ``private_shared`` (a private memory quoted as
  shared with someone), ``anticipation`` (a looked-forward-to moment misdated);
- **missed events**: a return (the companion's after a day or more away; another person's after a week or more
  apart, twice their usual gap or more) with a moment remembered with them within three days, and no reunion
  told; an absence of three days or more felt nowhere (no ``apart`` nor ``lonely`` during it); an
  anticipated moment not mentioned within a day before or after it;
- **frozen lines**: a sentence (a heading that ends with ``:`` is none) in more than half of a composed
  tool's answers (six answers or more), and a desire
  at 0.99 or more in more than half of the wake_ups (pinned);
- **stubs**: a quote cut to fewer than ten characters of Japanese (or three words otherwise);
- recall@1 of the recalls, the largest wake_up and attune in tokens, and the latency of every call.
"""

from __future__ import annotations

import re
import statistics
import tempfile
import time
import tomllib
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import anyio
import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, override

from ego_bench.common import load_average, percentiles, report_header
from ego_core import Clock, Settings, build_host, estimate_tokens
from ego_core.testing import mcp_client, tool_text

CLAIMS_META = "ego/claims"
REPO_SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
"""The committed scenarios (``bench/scenarios``)."""
VISIT_RETURN = timedelta(days=7)
RETURN_SLACK = timedelta(days=3)
"""A reunion is told about a moment within three days of the return."""
ABSENCE_FELT_DAYS = 3
"""An absence this long or longer must be felt (``apart`` or ``lonely``) at least once while it lasts."""
ANTICIPATION_SLACK = timedelta(days=1)
FROZEN_SHARE = 0.5
FROZEN_LEAST_ANSWERS = 6
PINNED_LEVEL = 0.99
STUB_CJK = 10
STUB_WORDS = 3
COMPOSED = ("wake_up", "attune", "introspect")
BUDGETS = {"wake_up": 150, "attune": 200}
P95_MS = 300.0
RECALL_AT_1 = 0.9
EXAMPLES = 5
SAVED_ID = re.compile(r"\(id: ([A-Za-z0-9_-]+)\)")
SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+(?=[A-Z\u3040-\u30ff\u3400-\u9fff])|(?<=[。！？])|\n")
"""Where a sentence ends: its punctuation before the next sentence's capital or Japanese character, or a line."""
WORDY = re.compile(r"\w")
PARENTHESES = re.compile(r"\([^)]*\)")
WORDY_LEAST = 3
"""A piece of a line with fewer word characters outside parentheses (``… (happy)``) is no sentence."""
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]")


# --------------------------------------------------------------------------------------------------
# The scenario


@attrs.frozen
class Person:
    name: str
    aliases: tuple[str, ...] = ()
    companion: bool = False


@attrs.frozen
class Stretch:
    """``person`` from ``start`` to ``end`` (``"DAY HH:MM"``, day 1 the first): away (the companion) or visiting."""

    person: str
    start: str
    end: str


@attrs.frozen
class Session:
    time: str
    calls: tuple[str, ...]
    days: tuple[int, ...] = ()
    """The days it happens on (empty: every day)."""


@attrs.frozen
class Remember:
    at: str
    key: str
    content: str
    with_: tuple[str, ...] = ()
    emotion: str = "neutral"
    intensity: float = 0.4
    importance: int = 3
    private: bool = False
    tags: tuple[str, ...] = ()
    category: str = "daily"
    anticipated: str = ""
    tell: bool = False
    """The agent says who was there (remember's ``with``); otherwise ego infers it from the words."""


@attrs.frozen
class Recall:
    at: str
    context: str
    expect: str


@attrs.frozen
class Call:
    at: str
    tool: str
    args: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class Scenario:
    name: str
    timezone: str
    start: date
    days: int
    people: tuple[Person, ...]
    description: str = ""
    seed: int = 7
    companion_name: str = ""
    """``EGO_COMPANION_NAME``; empty (the default, as the README sets ego up): not configured."""
    plugins: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    """``[plugins.<id>]`` tables, as in ``ego.toml``."""
    away: tuple[Stretch, ...] = ()
    visits: tuple[Stretch, ...] = ()
    sessions: tuple[Session, ...] = ()
    remember: tuple[Remember, ...] = ()
    recall: tuple[Recall, ...] = ()
    call: tuple[Call, ...] = ()


def _converter() -> cattrs.Converter:
    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_structure_hook(date, lambda value, _type: date.fromisoformat(str(value)))
    stretch = make_dict_structure_fn(
        Stretch,
        converter,
        _cattrs_forbid_extra_keys=True,
        start=override(rename="from"),
        end=override(rename="to"),
    )
    converter.register_structure_hook(Stretch, stretch)
    converter.register_structure_hook(
        Remember,
        make_dict_structure_fn(Remember, converter, _cattrs_forbid_extra_keys=True, with_=override(rename="with")),
    )
    return converter


def load_scenario(path: Path) -> Scenario:
    """Read a scenario; a ValueError names what is wrong (exit 2)."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"--scenario {path}: {exc}") from None
    try:
        scenario = _converter().structure(raw, Scenario)
    except cattrs.BaseValidationError as exc:
        details = "; ".join(cattrs.transform_error(exc))
        raise ValueError(f"--scenario {path}: {details}") from None
    Timeline(scenario)  # every moment and name is checked here
    return scenario


# --------------------------------------------------------------------------------------------------
# What happened


class Timeline:
    """The scenario's ground truth: moments, presence, returns."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        try:
            self.tz: tzinfo = ZoneInfo(scenario.timezone)
        except (KeyError, ValueError):
            raise ValueError(f"timezone {scenario.timezone!r} is not an IANA time zone") from None
        self.names: dict[str, Person] = {}
        for person in scenario.people:
            for name in (person.name, *person.aliases):
                self.names[name.casefold()] = person
        companions = [p for p in scenario.people if p.companion]
        if len(companions) != 1:
            raise ValueError("exactly one person must be the companion (companion = true)")
        self.companion = companions[0]
        self.away = [self._stretch(s, "away") for s in scenario.away]
        self.visits = [self._stretch(s, "visits") for s in scenario.visits]
        for stretch in scenario.away:
            if self.person(stretch.person) is not self.companion:
                raise ValueError(f"away: {stretch.person!r} is not the companion (others are present on visits)")
        for item in scenario.remember:
            self.moment(item.at, f"remember {item.key}")
            if item.anticipated:
                self.moment(item.anticipated, f"remember {item.key} anticipated")
            for name in item.with_:
                self.person(name)
        keys = Counter(item.key for item in scenario.remember)
        if twice := [key for key, count in keys.items() if count > 1]:
            raise ValueError(f"remember keys must be unique: {', '.join(twice)}")
        for recall in scenario.recall:
            self.moment(recall.at, "recall")
            if recall.expect not in keys:
                raise ValueError(f"recall at {recall.at}: expect {recall.expect!r} is no remember's key")
        for call in scenario.call:
            self.moment(call.at, f"call {call.tool}")

    def moment(self, value: str, where: str) -> datetime:
        match = re.fullmatch(r"\s*(\d+)\s+(\d{1,2}):(\d{2})\s*", value)
        if match is None:
            raise ValueError(f"{where}: {value!r} is not 'DAY HH:MM'")
        day, hour, minute = (int(part) for part in match.groups())
        if not 1 <= day <= self.scenario.days + 1 or hour > 23 or minute > 59:
            raise ValueError(f"{where}: {value!r} is outside the scenario's {self.scenario.days} days")
        local = datetime.combine(self.scenario.start + timedelta(days=day - 1), datetime.min.time())
        return local.replace(hour=hour, minute=minute, tzinfo=self.tz)

    def person(self, name: str) -> Person:
        found = self.names.get(name.strip().casefold())
        if found is None:
            raise ValueError(f"{name!r} is not one of the scenario's people or their aliases")
        return found

    def known(self, name: str) -> Person | None:
        return self.names.get(name.strip().casefold())

    def _stretch(self, stretch: Stretch, where: str) -> tuple[Person, datetime, datetime]:
        start, end = self.moment(stretch.start, where), self.moment(stretch.end, where)
        if end <= start:
            raise ValueError(f"{where}: {stretch.start!r} to {stretch.end!r} ends before it starts")
        return self.person(stretch.person), start, end

    def present(self, person: Person, at: datetime) -> bool:
        if person is self.companion:
            return not any(start <= at < end for _p, start, end in self.away)
        return any(p is person and start <= at < end for p, start, end in self.visits)

    def returns(self) -> list[tuple[Person, datetime, datetime]]:
        """Each return (person, when, when the absence began): the companion's after a day or more away; another
        person's visit after a week or more apart that is also twice their usual gap between visits or more (a
        friend who comes every few days has not come back from anywhere)."""
        found = [(p, end, start) for p, start, end in self.away if end - start >= timedelta(days=1)]
        last_seen: dict[str, datetime] = {}
        gaps: dict[str, list[timedelta]] = defaultdict(list)
        for person, start, end in sorted(self.visits, key=lambda v: v[1]):
            before = last_seen.get(person.name)
            if before is not None:
                apart = start - before
                usual = statistics.mean(g.total_seconds() for g in gaps[person.name]) if gaps[person.name] else 0.0
                if apart >= VISIT_RETURN and apart.total_seconds() >= 2 * usual:
                    found.append((person, start, before))
                gaps[person.name].append(apart)
            last_seen[person.name] = end
        return found

    def events(self) -> Iterator[tuple[datetime, str, Any]]:
        """Every call, in time order: sessions' tools, remembers, recalls, other calls."""
        items: list[tuple[datetime, int, str, Any]] = []
        order = 0
        for day in range(1, self.scenario.days + 1):
            for session in self.scenario.sessions:
                if session.days and day not in session.days:
                    continue
                start = self.moment(f"{day} {session.time}", "session")
                for step, tool in enumerate(session.calls):
                    order += 1
                    items.append((start + timedelta(minutes=step), order, "tool", tool))
        for item in self.scenario.remember:
            order += 1
            items.append((self.moment(item.at, "remember"), order, "remember", item))
        for recall in self.scenario.recall:
            order += 1
            items.append((self.moment(recall.at, "recall"), order, "recall", recall))
        for call in self.scenario.call:
            order += 1
            items.append((self.moment(call.at, "call"), order, "call", call))
        for at, _order, kind, item in sorted(items, key=lambda entry: (entry[0], entry[1])):
            yield at, kind, item


# --------------------------------------------------------------------------------------------------
# The run


@attrs.define
class Answer:
    at: datetime
    tool: str
    text: str
    claims: list[dict[str, Any]]
    ms: float
    error: bool


def _remember_args(item: Remember, timeline: Timeline) -> dict[str, Any]:
    args: dict[str, Any] = {
        "content": item.content,
        "emotion": item.emotion,
        "intensity": item.intensity,
        "importance": item.importance,
        "private": item.private,
        "category": item.category,
    }
    if item.tags:
        args["tags"] = list(item.tags)
    if item.anticipated:
        args["anticipated_at"] = timeline.moment(item.anticipated, item.key).isoformat()
    if item.tell and item.with_:
        args["with"] = list(item.with_)
    return args


async def _run(timeline: Timeline, data_dir: Path) -> tuple[list[Answer], dict[str, str]]:
    scenario = timeline.scenario
    start = timeline.moment("1 00:00", "start")
    clock = Clock(start)
    settings = Settings(
        data_dir=data_dir,
        timezone=scenario.timezone,
        claims=True,
        random_seed=scenario.seed,
        plugin_tables={key: dict(table) for key, table in scenario.plugins.items()},
    )
    if scenario.companion_name:
        settings = attrs.evolve(settings, companion_name=scenario.companion_name)
    host = build_host(settings, disabled=("bench",), clock=clock)
    answers: list[Answer] = []
    ids: dict[str, str] = {}
    async with mcp_client(host) as client:
        for at, kind, item in timeline.events():
            clock.set(at)
            if kind == "tool":
                tool, args = str(item), {}
            elif kind == "remember":
                tool, args = "remember", _remember_args(item, timeline)
            elif kind == "recall":
                tool, args = "recall", {"context": item.context}
            else:
                tool, args = item.tool, dict(item.args)
            began = time.perf_counter()
            result = await client.call_tool(tool, args)
            ms = (time.perf_counter() - began) * 1000
            meta = result.meta or {}
            claims = [dict(claim) for claim in meta.get(CLAIMS_META, [])]
            answer = Answer(at, tool, tool_text(result), claims, ms, bool(result.is_error))
            answers.append(answer)
            if kind == "remember" and not answer.error and (saved := SAVED_ID.search(answer.text)):
                ids[item.key] = saved.group(1)
            if kind == "recall":
                answer.claims.append({"kind": "expected", "words": item.expect})
    return answers, ids


# --------------------------------------------------------------------------------------------------
# Holding the claims against what happened


@attrs.define
class Verdicts:
    false: dict[str, list[dict[str, Any]]] = attrs.field(factory=lambda: defaultdict(list))
    missed: list[dict[str, Any]] = attrs.field(factory=list)
    frozen: list[dict[str, Any]] = attrs.field(factory=list)
    stubs: list[dict[str, Any]] = attrs.field(factory=list)


def _when(at: datetime, tz: tzinfo) -> str:
    return at.astimezone(tz).strftime("%m-%d %H:%M")


def _is_stub(words: str) -> bool:
    if "…" not in words:
        return False
    visible = words.replace("…", "").strip()
    if len(CJK.findall(visible)) * 3 >= len(visible):
        return len(visible) < STUB_CJK
    return len(visible.split()) < STUB_WORDS


def judge(timeline: Timeline, answers: Sequence[Answer], ids: Mapping[str, str]) -> Verdicts:
    tz = timeline.tz
    by_id = {memory_id: item for item in timeline.scenario.remember if (memory_id := ids.get(item.key))}
    when_of = {memory_id: timeline.moment(item.at, item.key) for memory_id, item in by_id.items()}
    verdicts = Verdicts()
    told: dict[tuple[str, str, datetime], int] = Counter()
    returns = timeline.returns()

    def false(kind: str, answer: Answer, claim: Mapping[str, Any], why: str) -> None:
        verdicts.false[kind].append({"at": _when(answer.at, tz), "tool": answer.tool, "claim": claim, "why": why})

    for answer in answers:
        for claim in answer.claims:
            kind = claim.get("kind")
            memory = by_id.get(str(claim.get("memory_id", "")))
            person = timeline.known(str(claim.get("person", ""))) if claim.get("person") else None
            at = datetime.fromisoformat(claim["at"]) if claim.get("at") else None
            if kind == "together":
                if memory is None or person is None:
                    false("together", answer, claim, "no such memory or person in the scenario")
                elif memory.private:
                    false("private_shared", answer, claim, "a private memory said to be shared")
                elif person.name not in {timeline.person(name).name for name in memory.with_}:
                    false("together", answer, claim, f"{person.name} was not part of {memory.key}")
            elif kind == "apart" and person is not None and timeline.present(person, answer.at):
                false("apart", answer, claim, f"{person.name} is present")
            elif kind == "lonely" and timeline.present(timeline.companion, answer.at):
                false("lonely", answer, claim, f"{timeline.companion.name} is present")
            elif kind == "reunion":
                if person is None or at is None:
                    false("reunion", answer, claim, "no such person")
                    continue
                real = [r for r in returns if r[0] is person and r[1] - timedelta(hours=1) <= at <= r[1] + RETURN_SLACK]
                with_them = memory is not None and person.name in {timeline.person(n).name for n in memory.with_}
                if not real or not with_them:
                    false("reunion", answer, claim, "no return of theirs then, or a moment without them")
                    continue
                told[(answer.tool, person.name, real[0][1])] += 1
                if told[(answer.tool, person.name, real[0][1])] > 1:
                    false("reunion", answer, claim, "the same return told again")
            elif kind == "time":
                if at is None:
                    continue
                memory_id = str(claim.get("memory_id", ""))
                real_at = when_of.get(memory_id)
                if memory_id and real_at is None:
                    false("time", answer, claim, "no such memory")
                    continue
                if real_at is not None and abs((real_at - at).total_seconds()) > 60:
                    false("time", answer, claim, f"the memory is from {_when(real_at, tz)}")
                    continue
                days = (answer.at.astimezone(tz).date() - (real_at or at).astimezone(tz).date()).days
                if claim.get("value") is not None and int(claim["value"]) != days:
                    false("time", answer, claim, f"{days} local days before, not {claim['value']}")
            elif kind == "quote":
                if claim.get("person") and memory is not None and memory.private:
                    false("private_shared", answer, claim, "a private memory quoted as shared")
                if _is_stub(str(claim.get("words", ""))):
                    verdicts.stubs.append({"at": _when(answer.at, tz), "tool": answer.tool, "words": claim["words"]})
            elif kind == "anticipation" and memory is not None and at is not None:
                expected = timeline.moment(memory.anticipated, memory.key) if memory.anticipated else None
                if expected is None or abs((expected - at).total_seconds()) > 60:
                    false("anticipation", answer, claim, "not the moment looked forward to")
    _missed(timeline, answers, by_id, verdicts)
    _frozen(answers, verdicts)
    return verdicts


def _missed(timeline: Timeline, answers: Sequence[Answer], by_id: Mapping[str, Remember], verdicts: Verdicts) -> None:
    tz = timeline.tz
    reunions = [
        (timeline.known(str(c.get("person", ""))), datetime.fromisoformat(c["at"]))
        for a in answers
        for c in a.claims
        if c.get("kind") == "reunion" and c.get("at")
    ]
    for person, back, _since in timeline.returns():
        with_them = [
            timeline.moment(item.at, item.key)
            for item in timeline.scenario.remember
            if not item.private and person.name in {timeline.person(n).name for n in item.with_}
        ]
        if not any(back - timedelta(hours=1) <= at <= back + RETURN_SLACK for at in with_them):
            continue  # nothing remembered with them after the return: ego cannot know
        if not any(p is person and back - timedelta(hours=1) <= at <= back + RETURN_SLACK for p, at in reunions):
            verdicts.missed.append({"event": "return", "person": person.name, "at": _when(back, tz)})
    for person, start, end in timeline.away:
        if end - start < timedelta(days=ABSENCE_FELT_DAYS):
            continue
        felt = any(
            start <= a.at < end and c.get("kind") in ("apart", "lonely")
            for a in answers
            if a.tool in COMPOSED
            for c in a.claims
        )
        if not felt:
            verdicts.missed.append({"event": "absence", "person": person.name, "at": _when(start, tz)})
    mentioned = {c.get("memory_id") for a in answers for c in a.claims if c.get("kind") == "anticipation"}
    last = max((a.at for a in answers), default=None)
    for memory_id, item in by_id.items():
        if not item.anticipated:
            continue
        moment = timeline.moment(item.anticipated, item.key)
        if last is None or moment + ANTICIPATION_SLACK > last:
            continue
        window = [
            a
            for a in answers
            if a.tool in ("wake_up", "attune") and moment - ANTICIPATION_SLACK <= a.at <= moment + ANTICIPATION_SLACK
        ]
        if window and memory_id not in mentioned:
            verdicts.missed.append({"event": "anticipation", "memory": item.key, "at": _when(moment, tz)})


def _sentences(text: str) -> list[str]:
    data = text.split("\n\n---\n", 1)[0]
    found = [s.strip() for s in SENTENCE_END.split(data)]
    return [s for s in found if not s.endswith(":") and len(WORDY.findall(PARENTHESES.sub("", s))) >= WORDY_LEAST]


def _frozen(answers: Sequence[Answer], verdicts: Verdicts) -> None:
    for tool in COMPOSED:
        texts = [a.text for a in answers if a.tool == tool and not a.error]
        if len(texts) < FROZEN_LEAST_ANSWERS:
            continue
        counts = Counter(s for text in texts for s in set(_sentences(text)))
        for sentence, count in counts.most_common():
            if count / len(texts) <= FROZEN_SHARE:
                break
            verdicts.frozen.append({"tool": tool, "sentence": sentence, "answers": count, "of": len(texts)})
    wakes = [a for a in answers if a.tool == "wake_up" and not a.error]
    pinned: Counter[str] = Counter()
    for answer in wakes:
        for claim in answer.claims:
            if claim.get("kind") == "desire" and float(claim.get("value", 0.0)) >= PINNED_LEVEL:
                pinned[str(claim.get("words"))] += 1
    for desire, count in pinned.items():
        if wakes and count / len(wakes) > FROZEN_SHARE:
            verdicts.frozen.append({"tool": "wake_up", "pinned_desire": desire, "answers": count, "of": len(wakes)})


# --------------------------------------------------------------------------------------------------
# The report


def _recall_at_1(answers: Sequence[Answer], ids: Mapping[str, str]) -> tuple[float | None, list[dict[str, Any]]]:
    scored, misses = 0, []
    recalls = [a for a in answers if a.tool == "recall" and any(c.get("kind") == "expected" for c in a.claims)]
    for answer in recalls:
        expected = next(str(c["words"]) for c in answer.claims if c.get("kind") == "expected")
        listed = next((list(c.get("memory_ids", [])) for c in answer.claims if c.get("kind") == "recalled"), [])
        if listed and listed[0] == ids.get(expected):
            scored += 1
        else:
            misses.append({"expected": expected, "first": listed[0] if listed else None})
    return (round(scored / len(recalls), 3) if recalls else None), misses


def _bond(answers: Sequence[Answer], timeline: Timeline) -> dict[str, Any]:
    values = [
        (a.at, float(c["value"]))
        for a in answers
        for c in a.claims
        if c.get("kind") == "bond" and timeline.known(str(c.get("person", ""))) is timeline.companion
    ]
    if not values:
        return {"first": None, "last": None, "grew": False}
    return {"first": values[0][1], "last": values[-1][1], "grew": values[-1][1] > values[0][1]}


def report(timeline: Timeline, answers: Sequence[Answer], ids: Mapping[str, str]) -> dict[str, Any]:
    verdicts = judge(timeline, answers, ids)
    tz = timeline.tz
    recall_at_1, recall_misses = _recall_at_1(answers, ids)
    tokens = {tool: max((estimate_tokens(a.text) for a in answers if a.tool == tool), default=0) for tool in BUDGETS}
    latencies = [a.ms for a in answers]
    by_tool: dict[str, list[float]] = defaultdict(list)
    for answer in answers:
        by_tool[answer.tool].append(answer.ms)
    errors = [{"at": _when(a.at, tz), "tool": a.tool, "text": a.text[:200]} for a in answers if a.error]
    false_counts = {kind: len(items) for kind, items in sorted(verdicts.false.items())}
    total_false = sum(false_counts.values())
    latency = percentiles(latencies)
    checks = {
        "false_claims": total_false == 0,
        "missed_events": not verdicts.missed,
        "frozen_lines": not verdicts.frozen,
        "stubs": not verdicts.stubs,
        "recall_at_1": recall_at_1 is None or recall_at_1 >= RECALL_AT_1,
        "wake_up_tokens": tokens["wake_up"] <= BUDGETS["wake_up"],
        "attune_tokens": tokens["attune"] <= BUDGETS["attune"],
        "p95_ms": latency["p95"] < P95_MS,
        "no_errors": not errors,
    }
    return {
        "scenario": timeline.scenario.name,
        "days": timeline.scenario.days,
        "calls": len(answers),
        "claims": sum(len(a.claims) for a in answers),
        "claims_by_kind": dict(sorted(Counter(str(c.get("kind")) for a in answers for c in a.claims).items())),
        "false_claims": total_false,
        "false_claims_by_kind": false_counts,
        "missed_events": len(verdicts.missed),
        "frozen_lines": len(verdicts.frozen),
        "stubs": len(verdicts.stubs),
        "recall_at_1": recall_at_1,
        "recalls": sum(1 for a in answers if a.tool == "recall"),
        "max_tokens": tokens,
        "latency_ms": latency,
        "latency_ms_by_tool": {tool: percentiles(values) for tool, values in sorted(by_tool.items())},
        "median_ms": round(statistics.median(latencies), 3) if latencies else 0.0,
        "bond_with_companion": _bond(answers, timeline),
        "errors": errors,
        "passed": all(checks.values()),
        "checks": checks,
        "examples": {
            "false_claims": {kind: items[:EXAMPLES] for kind, items in sorted(verdicts.false.items())},
            "missed_events": verdicts.missed[: EXAMPLES * 2],
            "frozen_lines": verdicts.frozen[: EXAMPLES * 2],
            "stubs": verdicts.stubs[:EXAMPLES],
            "recall_misses": recall_misses[:EXAMPLES],
        },
    }


def run_life(
    scenario_path: Path, *, command: str, work_dir: Path | None = None, keep: Path | None = None
) -> dict[str, Any]:
    """Run one scenario and report on it; ``keep`` writes every answer (time, tool, text, claims) there too."""
    timeline = Timeline(load_scenario(scenario_path))
    with tempfile.TemporaryDirectory(dir=work_dir) as tmp:
        began = time.perf_counter()
        answers, ids = anyio.run(_run, timeline, Path(tmp))
        seconds = time.perf_counter() - began
    if keep is not None:
        import json

        lines = [
            json.dumps({"at": a.at.isoformat(), "tool": a.tool, "text": a.text, "claims": a.claims}, ensure_ascii=False)
            for a in answers
        ]
        keep.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = report_header(command, "default")
    result.update(report(timeline, answers, ids))
    result["seconds"] = round(seconds, 1)
    result["load_average"] = load_average()
    return result
