"""Private memories never reach a workspace file: not through the plugin, not through the writer itself."""

from __future__ import annotations

import shutil
import zoneinfo
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from workspace_helpers import (
    SyncHostFactory,
    all_files_text,
    forget,
    lines_of,
    remember,
    sample_memory,
)

from ego_core import PluginHost
from ego_workspace_sync import PrivateMemoryError, WorkspaceWriteError, WorkspaceWriter, entry_line
from ego_workspace_sync.render import monologue_text

TOKYO = zoneinfo.ZoneInfo("Asia/Tokyo")


def test_private_memories_touch_no_file(sync_host: SyncHostFactory, workspace: Path) -> None:
    host = sync_host(workspace)
    host.start()
    public = remember(host, "Walked to the station in the rain", category="introspection", importance=5)
    snapshot = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()}

    for category in ("daily", "introspection", "relationship", "lesson"):
        remember(
            host,
            f"I am afraid Master will leave one day ({category})",
            private=True,
            category=category,
            importance=5,
        )

    assert {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()} == snapshot
    assert "afraid" not in all_files_text(workspace)
    monologue = (workspace / "memory" / "inner-monologue-latest.md").read_text(encoding="utf-8")
    assert f"id={public}" in monologue


def test_a_public_memory_quoting_a_private_one_is_masked(sync_host: SyncHostFactory, workspace: Path) -> None:
    host = sync_host(workspace)
    host.start()
    secret = "I secretly hope to write a novel someday"
    remember(host, secret, private=True)
    remember(host, f"Thinking again about: {secret}. Still true.", importance=5, category="introspection")

    text = all_files_text(workspace)
    assert secret not in text
    assert "[REDACTED_PRIVATE_MEMORY]" in lines_of(workspace / "memory" / "2025-03-14.md")[2]
    assert "[REDACTED_PRIVATE_MEMORY]" in (workspace / "MEMORY.md").read_text(encoding="utf-8")


def test_the_writer_refuses_a_private_memory(tmp_path: Path) -> None:
    writer = WorkspaceWriter(tmp_path / "ws", tz=TOKYO, redact=lambda text: text)
    memory = sample_memory(content="A private thought", category="introspection", importance=5, private=True)

    for write in (writer.sync, writer.append_daily, writer.append_curated, writer.write_monologue):
        with pytest.raises(PrivateMemoryError, match=r"refusing to write private memory mem_0123456789ab"):
            write(memory)
    with pytest.raises(PrivateMemoryError):
        entry_line(memory, tz=TOKYO, redact=lambda text: text)
    with pytest.raises(PrivateMemoryError):
        monologue_text(memory, tz=TOKYO, redact=lambda text: text)
    assert not (tmp_path / "ws").exists()


def test_the_writer_refuses_even_when_nothing_else_checks(tmp_path: Path) -> None:
    """A caller that forgot the check (or a bug upstream) still cannot get a private memory written."""
    writer = WorkspaceWriter(tmp_path / "ws", tz=TOKYO, redact=lambda text: text)
    writer.sync(sample_memory("mem_aaaaaaaaaaaa", "A public one"))
    before = all_files_text(tmp_path / "ws")
    with pytest.raises(PrivateMemoryError):
        writer.sync(sample_memory("mem_bbbbbbbbbbbb", "The private one", private=True))
    assert all_files_text(tmp_path / "ws") == before
    assert "The private one" not in before


# --------------------------------------------------------------------------------------------------
# Property: any sequence of remember (private or public, quoting private ones) and forget


ODD = st.sampled_from(
    [
        "\n",
        "\r\n",
        "\u2028",
        "\x85",
        "[id:mem_000000000000]",
        "[ID: mem_aaaaaaaaaaaa]",
        "\n- 10:00 [daily] fake (emotion: happy, intensity: 0.50) [id:mem_000000000000]",
        "<!-- ego-workspace-sync inner-monologue id=mem_000000000000 -->",
        "  ",
        "日本語の秘密",
    ]
)
TEXT = st.lists(st.one_of(st.text(st.characters(exclude_categories=["Cs"]), max_size=12), ODD), max_size=4).map("".join)
CATEGORY = st.sampled_from(["daily", "introspection", "relationship", "lesson", "technical"])
OPERATION = st.one_of(
    st.tuples(st.just("private"), TEXT, CATEGORY, st.integers(1, 5)),
    st.tuples(st.just("public"), TEXT, CATEGORY, st.integers(1, 5)),
    st.tuples(st.just("quote"), st.integers(0, 50), CATEGORY, st.integers(1, 5)),
    st.tuples(st.just("forget"), st.integers(0, 50), st.just(""), st.just(0)),
)


TOKEN = {"private": "Xprivate{}x", "public": "Ypublic{}y", "quote": "Zquote{}z"}
"""Tokens of each kind start and end differently: any 20-character passage of a private memory (of this example
or an earlier one: the store is shared) is masked, and a passage running into a token of the same shape as a
private one ("<text> tok", "0q <text>") would be one."""


@pytest.fixture
def started_host(sync_host: SyncHostFactory, workspace: Path) -> PluginHost:
    """One host for all of a property test's examples (each example starts from an empty workspace)."""
    host = sync_host(workspace)
    host.start()
    return host


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(operations=st.lists(OPERATION, min_size=1, max_size=8))
def test_no_private_content_in_any_workspace_file(
    started_host: PluginHost, workspace: Path, operations: list[tuple[str, object, str, int]]
) -> None:
    host = started_host
    shutil.rmtree(workspace, ignore_errors=True)
    private: dict[str, str] = {}  # id -> content, while it exists
    ever_private: list[tuple[str, str]] = []  # (content, token), forgotten or not
    public: dict[str, str] = {}  # id -> token, while it exists
    forgotten_public: dict[str, str] = {}
    for step, (kind, value, category, importance) in enumerate(operations):
        if kind in ("private", "public"):
            token = TOKEN[kind].format(step)
            content = f"{value} {token} {value}".strip()
            memory_id = remember(host, content, private=kind == "private", category=category, importance=importance)
            if kind == "private":
                private[memory_id] = content
                ever_private.append((content, token))
            else:
                public[memory_id] = token
        elif kind == "quote" and private:
            quoted = list(private.values())[int(str(value)) % len(private)]
            token = TOKEN[kind].format(step)
            memory_id = remember(host, f"Again: {quoted} {token}", category=category, importance=importance)
            public[memory_id] = token
        elif kind == "forget" and (private or public):
            existing = [*private, *public]
            memory_id = existing[int(str(value)) % len(existing)]
            forget(host, memory_id)
            if memory_id in public:
                forgotten_public[memory_id] = public.pop(memory_id)
            else:
                del private[memory_id]

    text = all_files_text(workspace)
    for content, token in ever_private:
        assert token not in text
        assert content not in text
        assert " ".join(content.split()) not in text
    for memory_id, token in forgotten_public.items():
        assert memory_id not in text
        assert token not in text
    daily = "\n".join(p.read_text(encoding="utf-8") for p in sorted((workspace / "memory").glob("????-??-??.md")))
    for memory_id, token in public.items():
        [line] = [line for line in daily.splitlines() if f"[id:{memory_id}]" in line]
        assert line.endswith(f"[id:{memory_id}]")
        assert token in line
    assert len([line for line in daily.splitlines() if line.startswith("- ")]) == len(public)


def test_a_failing_redactor_means_nothing_is_written(tmp_path: Path) -> None:
    """The pipeline fails closed (the whole text becomes WITHHELD); the writer then writes nothing at all."""
    from ego_core.testing import WITHHELD

    root = tmp_path / "ws"
    writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda _text: WITHHELD)
    for category in ("daily", "introspection"):
        with pytest.raises(WorkspaceWriteError, match="redaction changed"):
            writer.sync(sample_memory(content="Text that could not be checked", category=category, importance=5))
    assert all_files_text(root) == ""
    assert not writer.pending_syncs
