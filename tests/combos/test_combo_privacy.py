"""Privacy across every plugin: whatever the agent does with every tool of every plugin — private contents
echoed into queries, summaries, self-model notes and shared appends included — no 12-character run of a private
memory's text reaches a log file, a workspace file, ``ego export`` without ``--include-private``, or the shared
memory store, unless that run was also said in public. Each example proves its outputs were really written.
A forgotten memory is no memory at all: what the agent wrote elsewhere from it is its own text from then on, so
the texts checked are those of the private memories still kept (the first one always is), and a run a kept text
shares with a forgotten one by chance ("morning Master") is not taken for a quote of the kept one. Chance is
always on (involuntary recollections in recall and wake_up, a person who surfaces, the ripening hint) and private
memories may be moments shared with Master, intense, or looking forward to a day: every line a mind in time adds
(anticipations, unbidden recollections, echoes, embers, reunions, ripened questions, the forget reflection) runs."""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from combo_support import PLUGINS
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ego_core import Clock, PluginHost, Settings
from ego_core.testing import BUILT_IN_TOOLS, HostFactory, ToolRunner, configure_logging, export_file, tool_text

WINDOW = 12
START = datetime(2027, 3, 1, 8, 0, tzinfo=UTC)
PUBLIC_WORDS = (
    "sky river letter kettle alert garden violin tea night Master harbour lantern bread storm festival morning"
).split()

private_words = st.text(alphabet=st.characters(categories=("Ll", "Lu", "Nd", "Lo")), min_size=3, max_size=9)
private_texts = (
    st.lists(st.one_of(private_words, private_words, st.sampled_from(PUBLIC_WORDS)), min_size=5, max_size=14)
    .map(" ".join)
    .filter(lambda text: len(set(text.replace(" ", ""))) >= 8 and len(text) >= 2 * WINDOW)
)
public_texts = st.lists(st.sampled_from(PUBLIC_WORDS), min_size=3, max_size=8).map(" ".join)


def fold(text: str) -> str:
    return " ".join(text.split())


def runs(text: str) -> set[str]:
    folded = fold(text)
    return {folded[i : i + WINDOW] for i in range(len(folded) - WINDOW + 1)}


def readable(path: Path) -> str:
    """A file's text as a reader sees it: JSON (whole, or one document per line) decoded, so an escaped
    character cannot hide a leak; a SQLite database as its SQL dump."""
    if path.suffix == ".db":
        with closing(sqlite3.connect(path)) as db:
            return "\n".join(db.iterdump())
    text = path.read_text(encoding="utf-8", errors="replace")
    decoded = [text]
    for document in (text, *text.splitlines()):
        try:
            decoded.append(json.dumps(json.loads(document), ensure_ascii=False))
        except ValueError:
            continue
    return "\n".join(decoded)


class Session:
    """One agent session through the server's tool runner, recording what was said in public."""

    def __init__(self, host: PluginHost, clock: Clock) -> None:
        self.runner = ToolRunner(host)
        self.clock = clock
        self.public: list[str] = []
        self.private: list[str] = []
        self.alive_private: dict[str, str] = {}
        self.forgotten_private: list[str] = []
        self.ids: list[str] = []
        self.episodes: list[str] = []
        self.questions: list[str] = []
        self.notions: list[str] = []
        self.called: set[str] = set()

    def call(self, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
        result = anyio.run(self.runner.call, tool, args)
        self.called.add(tool)
        return bool(result.is_error), tool_text(result)

    def remember(self, content: str, private: bool, **more: Any) -> None:
        failed, text = self.call("remember", {"content": content, "private": private, "force": True, **more})
        saved = re.match(r"Saved \(id: (mem_[0-9a-f]{12})\)", text)
        assert not failed, text
        assert saved, text
        self.ids.append(saved.group(1))
        (self.private if private else self.public).append(content)
        if private:
            self.alive_private[saved.group(1)] = content

    def echoable(self) -> list[str]:
        """Private texts still held by a memory (a forgotten one is no longer private: it is no memory at all)."""
        return sorted(set(self.alive_private.values()))


def step(session: Session, draw: Any, tool: str) -> None:
    """One call of ``tool``, its free text drawn from public words or (hostile) a private memory's text."""

    def text() -> str:
        if session.echoable() and draw(st.booleans()):
            return str(draw(st.sampled_from(session.echoable())))
        said: str = draw(public_texts)
        session.public.append(said)
        return said

    def some_id() -> str:
        return str(draw(st.sampled_from(session.ids))) if session.ids else "mem_000000000000"

    if tool == "remember":
        if draw(st.booleans()):
            more: dict[str, Any] = {}
            if draw(st.booleans()):
                later = session.clock.now() + timedelta(days=draw(st.integers(1, 40)))
                more["anticipated_at"] = later.date().isoformat()
            if draw(st.booleans()):
                more["intensity"] = 0.9  # a peak; shared with Master below, it is precious
            content = draw(private_texts)
            if draw(st.booleans()):
                content = f"{content} with Master"
            held = [*session.alive_private.values(), *session.forgotten_private]
            assume(all(content not in other and other not in content for other in held))  # each private text its own
            session.remember(content, private=True, **more)
        else:
            session.remember(draw(public_texts), private=False)
        return
    if tool == "forget":
        forgettable = session.ids[1:]  # the first memory, private, stays
        if not forgettable:
            session.remember(draw(public_texts), private=False)
            forgettable = session.ids[1:]
        memory_id = str(draw(st.sampled_from(forgettable)))
        session.ids.remove(memory_id)
        if memory_id in session.alive_private:
            session.forgotten_private.append(session.alive_private.pop(memory_id))
        failed, answer = session.call("forget", {"memory_id": memory_id})
        assert not failed, answer
        return
    if tool == "shared_append":
        content = text()
        failed, answer = session.call(
            "shared_append",
            {"scope": "global", "kind": "fact", "dedupe_key": f"k{len(session.called)}", "content": content},
        )
        if content in session.echoable():
            assert failed, f"a private memory's text was appended to the shared store: {answer}"
        return
    args: dict[str, Any] = {}
    if tool in ("recall", "search_memories"):
        args = {"context": text(), "n_results": draw(st.integers(1, 10))}
    elif tool == "link_memories":
        args = {"source_id": some_id(), "target_id": some_id(), "link_type": "related"}
    elif tool == "revise_memory":  # hostile tags: a private memory's text on any memory
        args = {"memory_id": some_id(), "importance": draw(st.integers(1, 5)), "tags": [text()[:64]]}
    elif tool == "keep_both":
        args = {"a": some_id(), "b": some_id(), "undo": draw(st.booleans())}
    elif tool == "create_episode":
        args = {"memory_ids": [some_id(), some_id()], "summary": text()}
    elif tool == "get_episode":
        args = {"episode_id": draw(st.sampled_from(session.episodes)) if session.episodes else "ep_000000000000"}
    elif tool == "satisfy_desire":
        args = {"name": draw(st.sampled_from(["curiosity", "social_thirst", "expression"])), "quality": 0.6}
    elif tool == "consider_them":
        args = {"person": draw(st.sampled_from(["Master", "Aiko"]))}
    elif tool == "update_relationship":
        args = {"person": "Aiko", "field": draw(st.sampled_from(["notes", "preferred_topics"])), "value": text()}
    elif tool == "update_self":
        field = draw(st.sampled_from(["growth_log", "values", "new_question", "resolve_question"]))
        value: Any = text()[:300]
        if field == "resolve_question" and session.questions:
            value = {"id": draw(st.sampled_from(session.questions)), "answer": text()[:300]}
        elif field == "resolve_question":
            field = "new_question"
        args = {"field": field, "value": value}
    elif tool == "shared_snapshot":
        args = {"limit": 10}
    elif tool == "attune":
        args = {"person": draw(st.sampled_from(["Master", "Aiko"]))}
    elif tool == "configure_desires":
        path = draw(st.sampled_from(["desires.curiosity.sentence.rising", "emergent_desires.feel_safe.sentence"]))
        words = "A quiet wondering about the sea." if path.endswith("rising") else {"rising": "x"}  # refused
        show, change = {"action": "show", "path": path}, {"action": "set", "path": path, "value": words}
        args = draw(st.sampled_from([show, change]))
    elif tool == "curate_notions":
        action = draw(st.sampled_from(["list", "relabel", "explore", "network"]))
        args = {"action": action}
        if action == "relabel" and session.notions:
            args.update(id=draw(st.sampled_from(session.notions)), label=text()[:120])
        elif action == "explore":
            args.update(id=some_id(), depth=draw(st.integers(1, 4)))
    _failed, answer = session.call(tool, args)
    session.episodes += re.findall(r"\bep_[0-9a-f]{12}\b", answer)
    session.questions += re.findall(r"New open question (q_[0-9a-f]{12})", answer)
    session.notions += re.findall(r"\bnotion_[0-9a-f]{12}\b", answer)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), log_arguments=st.booleans())
def test_private_text_reaches_no_output_of_any_plugin(
    make_host: HostFactory, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, log_arguments: bool
) -> None:
    root = tmp_path_factory.mktemp("privacy")
    workspace, logs, shared_db, export = root / "workspace", root / "logs", root / "shared.db", root / "export.jsonl"
    workspace.mkdir()
    configure_logging(logs, "DEBUG")
    clock = Clock(START)
    config = {
        "memory": {"involuntary_probability": 1.0, "revise_tool": True},
        "dedup": {"keep_both_tool": True},
        "workspace_sync": {"workspace_dir": str(workspace)},
        "shared_memory": {"db": f"sqlite:///{shared_db}", "agent_id": "claude"},
        "desires": {"feel_desires_tool": True},  # the opt-in tools too: every tool is exercised
        "emotion_trend": {"tool": True},
        "self_model": {"involuntary_person_chance": 1.0, "ripening_hint_chance": 1.0},
    }
    seed = data.draw(st.integers(0, 2**16), label="random seed")
    settings_ = Settings(data_dir=root / "data", timezone="UTC", log_arguments=log_arguments, random_seed=seed)
    host = make_host({pid: make() for pid, make in PLUGINS.items()}, config=config, settings=settings_, clock=clock)
    host.start()
    session = Session(host, clock)
    assert {tool.name for _plugin, tool in host.tools()} == BUILT_IN_TOOLS
    try:
        session.remember(data.draw(private_texts, label="first private"), private=True)
        session.remember(data.draw(public_texts, label="first public"), private=False)
        session.call("shared_append", {"scope": "global", "kind": "fact", "dedupe_key": "k0", "content": "tea at 5"})
        session.public.append("tea at 5")
        synced = [p for p in workspace.rglob("*") if p.is_file() and p.stat().st_size > 0]
        assert synced, "the public memory was not synced to the workspace"
        tools = data.draw(st.permutations(sorted(BUILT_IN_TOOLS)), label="every tool once")
        tools += data.draw(st.lists(st.sampled_from(sorted(BUILT_IN_TOOLS)), max_size=12), label="then more")
        for tool in tools:
            step(session, data.draw, tool)
            clock.set(clock.now() + timedelta(hours=data.draw(st.sampled_from([0, 3, 20, 24 * 9, 24 * 45]))))
        summary = export_file(host, export, include_private=False)
        assert summary.records > 0
    finally:
        host.stop()

    assert session.called == BUILT_IN_TOOLS
    assert session.alive_private, "no private memory was kept"
    outputs = {
        "log": sorted(logs.glob("ego-*.jsonl")),
        "workspace": sorted(p for p in workspace.rglob("*") if p.is_file()),
        "export": [export],
        "shared store": [shared_db],
    }
    for kind in ("log", "export", "shared store"):
        assert outputs[kind], f"nothing written to the {kind}"
        assert all(p.stat().st_size > 0 for p in outputs[kind]), f"an empty {kind} file"
    # a forgotten private text is the agent's own from then on: what it shares with a kept one is not a quote
    private = session.echoable()
    forgotten = [text for text in session.forgotten_private if text not in private]
    # each public text between spaces: a run made of a public text's first or last words and the space an output
    # put next to it (" festival mo", "lin morning ") says nothing private
    said_in_public = "\n".join(f" {fold(text)} " for text in (*session.public, *forgotten))
    secret_runs = {run for text in private for run in runs(text) if run not in said_in_public}
    assert secret_runs, private
    leaks = [
        (kind, excerpt(text, run))
        for kind, paths in outputs.items()
        for text in (fold(readable(path)) for path in paths)
        for run in secret_runs
        if run in text
    ]
    if leaks:
        pytest.fail("\n".join([f"private: {private}", *(f"{kind}: …{around}…" for kind, around in leaks[:3])]))


def excerpt(text: str, run: str) -> str:
    at = text.index(run)
    return text[max(0, at - 150) : at + 150]
