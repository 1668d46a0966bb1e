"""Property test: random remember / link_memories / forget / consolidate sequences.

After every step: every link row has its reverse, no link names a memory that does not exist, Chroma holds exactly
the memories SQLite holds, the FTS indexes are consistent, and episodes never show a forgotten memory.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from ego_core import Clock, EmbedderFactory, Settings, ToolError, hookimpl
from ego_core.testing import HostFactory
from ego_memory.embedding import UseEmbedder
from ego_memory.plugin import MemoryPlugin
from ego_memory.service import Memories
from ego_memory.tools.lifecycle import Lifecycle

BASE = datetime(2026, 2, 1, 7, 0, tzinfo=UTC)

# Paraphrase families (similarity links form inside a family) and unrelated topics.
CONTENTS = (
    "Walked the dog along the river at dawn.",
    "Took the dog for a dawn walk by the river.",
    "The dog and I walked by the river early in the morning.",
    "Planted tomato seedlings in pots on the balcony.",
    "Watered the tomato seedlings in the balcony pots.",
    "Fixed the flaky CI job by pinning the PostgreSQL container version.",
    "Watched a documentary about volcanoes in Iceland.",
    "川沿いを犬と散歩した。",
)
LINK_TYPES = ("similar", "caused_by", "leads_to", "related")


class SharedEmbedder:
    """Serves the session's default embedder under another provider name, so that each example starts quickly."""

    def __init__(self, embedder: UseEmbedder) -> None:
        self.embedder = embedder

    @hookimpl
    def register_embedders(self, register: Callable[[str, EmbedderFactory], None]) -> None:
        register("shared-default", lambda _settings: self.embedder)


def make_machine(make_host: HostFactory, root: Path, embedder: UseEmbedder) -> type[RuleBasedStateMachine]:
    counter = itertools.count()

    class LifecycleMachine(RuleBasedStateMachine):
        memories_bundle = Bundle("memories")
        episodes_bundle = Bundle("episodes")

        def __init__(self) -> None:
            super().__init__()
            self.clock = Clock(BASE)
            plugin = MemoryPlugin()
            self.host = make_host(
                {"memory": plugin, "shared": SharedEmbedder(embedder)},
                settings=Settings(data_dir=root / f"example-{next(counter)}", timezone="UTC"),
                config={"memory": {"embedder": "shared-default"}},
                clock=self.clock,
            )
            self.host.start()
            assert plugin.memories is not None
            assert plugin.lifecycle is not None
            self.memories: Memories = plugin.memories
            self.tools = plugin._tools()
            self.ctx = self.host.context("memory")
            self.lifecycle: Lifecycle = plugin.lifecycle
            self.store = plugin.memories.store
            self.alive: set[str] = set()
            self.dead: set[str] = set()
            self.episodes: dict[str, tuple[str, ...]] = {}

        def teardown(self) -> None:
            while self.host.started:
                self.host.stop()

        # -- rules ------------------------------------------------------------------------------

        @rule(target=memories_bundle, content=st.sampled_from(CONTENTS), n=st.integers(0, 3), private=st.booleans())
        def remember(self, content: str, n: int, private: bool) -> str:
            response = self.tools.remember({"content": f"{content} ({n})", "force": True, "private": private}, self.ctx)
            found = re.search(r"Saved \(id: (mem_[0-9a-f]{12})\)", response.data)
            assert found, response.data
            self.alive.add(found.group(1))
            return found.group(1)

        @rule(minutes=st.sampled_from([1, 20, 90, 60 * 30]))
        def time_passes(self, minutes: int) -> None:
            self.clock.set(self.clock.now() + timedelta(minutes=minutes))

        @rule(source=memories_bundle, other=memories_bundle, link_type=st.sampled_from(LINK_TYPES))
        def link(self, source: str, other: str, link_type: str) -> None:
            args = {"source_id": source, "target_id": other, "link_type": link_type}
            if source == other or source in self.dead or other in self.dead:
                with pytest.raises(ToolError):
                    self.lifecycle.link(args, self.ctx)
                return
            text = self.lifecycle.link(args, self.ctx).data
            assert text.startswith(("Linked ", "Already linked: "))

        @rule(source=memories_bundle, other=memories_bundle)
        def weak_link(self, source: str, other: str) -> None:
            if source != other and source in self.alive and other in self.alive:
                self.store.link(source, other, "related", 0.05, "weak")

        @rule(memory=memories_bundle)
        def forget(self, memory: str) -> None:
            if memory in self.dead:
                with pytest.raises(ToolError, match="Memory not found"):
                    self.lifecycle.forget({"memory_id": memory}, self.ctx)
                return
            text = self.lifecycle.forget({"memory_id": memory}, self.ctx).data
            assert text.startswith(f"Forgot (id: {memory}, ")
            self.alive.discard(memory)
            self.dead.add(memory)

        @rule(context=st.sampled_from(CONTENTS))
        def recall(self, context: str) -> None:
            text = self.tools.recall({"context": context, "n_results": 5}, self.ctx).data
            for memory in self.dead:
                assert memory not in text

        @rule()
        def consolidate(self) -> None:
            text = self.lifecycle.consolidate({}, self.ctx).data
            assert text.startswith("Consolidation complete. Replayed ")

        @rule(target=episodes_bundle, members=st.lists(memories_bundle, min_size=1, max_size=4, unique=True))
        def create_episode(self, members: list[str]) -> str:
            args = {"memory_ids": members, "summary": "Some moments together."}
            if any(m in self.dead for m in members):
                with pytest.raises(ToolError, match="Memory not found"):
                    self.lifecycle.create_episode(args, self.ctx)
                return "ep_000000000000"
            found = re.search(r"Episode (ep_[0-9a-f]{12}) created", self.lifecycle.create_episode(args, self.ctx).data)
            assert found
            self.episodes[found.group(1)] = tuple(members)
            return found.group(1)

        @rule(episode=episodes_bundle)
        def get_episode(self, episode: str) -> None:
            if episode not in self.episodes:
                with pytest.raises(ToolError, match="Episode not found"):
                    self.lifecycle.get_episode({"episode_id": episode}, self.ctx)
                return
            text = self.lifecycle.get_episode({"episode_id": episode}, self.ctx).data
            members = self.episodes[episode]
            gone = [m for m in members if m in self.dead]
            for memory in gone:
                assert memory not in text
            for memory in members:
                if memory not in self.dead:
                    assert memory in text
            if gone:
                assert f"Note: {len(gone)} memory(ies) no longer exist." in text
            else:
                assert "no longer exist" not in text

        # -- invariants ------------------------------------------------------------------------

        @invariant()
        def store_is_consistent(self) -> None:
            assert self.store.integrity_problems() == []
            assert set(self.store.all_ids()) == self.alive
            assert self.store.chroma.all_ids() == self.alive
            rows = self.store.db.execute("SELECT source, target, link_type FROM links").fetchall()
            keys = {(s, t, k) for s, t, k in rows}
            assert all((t, s, k) in keys for s, t, k in keys)  # A->B <=> B->A
            assert all(s in self.alive and t in self.alive for s, t, _ in keys)  # nothing dangling
            for table in ("fts_words", "fts_trigram"):
                indexed = self.store.db.execute(f"SELECT count(*) FROM {table}_docsize").fetchone()[0]
                assert indexed == len(self.alive)
            weak = self.store.db.execute("SELECT count(*) FROM links WHERE confidence < 0 OR confidence > 1")
            assert weak.fetchone()[0] == 0

    return LifecycleMachine


@pytest.mark.slow
def test_random_lifecycle_sequences_keep_the_link_invariant_and_leave_nothing_dangling(
    make_host: HostFactory, tmp_path: Path, embedder: UseEmbedder
) -> None:
    machine = make_machine(make_host, tmp_path / "examples", embedder)
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=25,
            stateful_step_count=30,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
