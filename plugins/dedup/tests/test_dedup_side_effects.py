"""What the guard costs and what a refused save leaves behind.

- An exact duplicate is found by its hash: no embedding at all.
- A new memory is embedded once: the guard's embedding is the one the save stores.
- A refused save changes nothing: no memory, no link, no on_remember (so no workspace line, no desire
  satisfaction), no access count, no file, and no log record beyond the core's own ``tool_call`` line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from dedup_support import NEAR_DUPLICATE, PARAPHRASES, UNRELATED, memory_config, remember, saved_id, store_of

from ego_core import PRIVATE_MARK, Clock, Memory, PluginHost, Settings, ToolOutcome, hookimpl
from ego_core.testing import HostFactory, configure_logging, mcp_client
from ego_dedup import NOT_SAVED, DedupPlugin
from ego_memory.plugin import MemoryPlugin

pytestmark = pytest.mark.anyio

SECRET = "I still think about the argument with Master last winter, and it hurts."


def embedder_of(host: PluginHost) -> Any:
    """The memory plugin's CachedEmbedder (``calls``, ``texts_embedded``, ``hits``), as its service exposes it."""
    return store_of(host).embedder  # type: ignore[attr-defined]


def counters(host: PluginHost) -> tuple[int, int, int]:
    embedder = embedder_of(host)
    return embedder.calls, embedder.texts_embedded, embedder.hits


class Recorder:
    """Records every on_remember and on_tool_called notification."""

    def __init__(self) -> None:
        self.remembered: list[Memory] = []
        self.tool_calls: list[tuple[str, ToolOutcome]] = []

    @hookimpl(optionalhook=True)
    def on_remember(self, memory: Memory) -> None:
        self.remembered.append(memory)

    @hookimpl
    def on_tool_called(self, tool: str, result: ToolOutcome) -> None:
        self.tool_calls.append((tool, result))


async def test_an_exact_duplicate_is_caught_without_any_embedding(dedup_host: Callable[..., PluginHost]) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        saved_id(await remember(client, PARAPHRASES[0]))
        embedder_of(host).clear()  # even a cache hit would count: nothing may ask for an embedding
        before = counters(host)

        text = await remember(client, PARAPHRASES[0])

        assert text.startswith(NOT_SAVED)
        assert "Similarity: 1.00" in text
        assert counters(host) == before


async def test_surrounding_whitespace_still_counts_as_the_exact_same_text(
    dedup_host: Callable[..., PluginHost],
) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        saved_id(await remember(client, PARAPHRASES[0]))
        embedder_of(host).clear()
        before = counters(host)
        text = await remember(client, f"  {PARAPHRASES[0]}\n")
        assert text.startswith(NOT_SAVED)
        assert counters(host) == before


async def test_a_new_memory_is_embedded_exactly_once(dedup_host: Callable[..., PluginHost]) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        saved_id(await remember(client, PARAPHRASES[0]))
        for content in (UNRELATED[0], PARAPHRASES[1], UNRELATED[1]):
            calls, texts, _hits = counters(host)
            saved_id(await remember(client, content))
            new_calls, new_texts, _ = counters(host)
            assert new_texts == texts + 1, content
            assert new_calls == calls + 1, content


async def test_a_refused_near_duplicate_is_embedded_once_and_never_stored(
    dedup_host: Callable[..., PluginHost],
) -> None:
    host = dedup_host()
    async with mcp_client(host) as client:
        saved_id(await remember(client, PARAPHRASES[0]))
        _calls, texts, _hits = counters(host)
        assert (await remember(client, NEAR_DUPLICATE)).startswith(NOT_SAVED)
        assert counters(host)[1] == texts + 1
        assert store_of(host).find_exact(NEAR_DUPLICATE) is None


def _files(data_dir: Path) -> dict[str, str]:
    """sha256 of every file of the data directory except the logs and SQLite's ``-shm`` index (any reader
    rewrites it)."""
    logs = data_dir / "logs"
    return {
        str(path.relative_to(data_dir)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(data_dir.rglob("*"))
        if path.is_file() and logs not in path.parents and not path.name.endswith("-shm")
    }


def _log_records(log_dir: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for path in sorted(log_dir.glob("ego-*.jsonl")):
        records.extend(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    return records


def _snapshot(host: PluginHost, ids: list[str]) -> Mapping[str, Memory]:
    return {m.id: m for m in store_of(host).get(ids)}


async def test_a_refused_save_leaves_everything_as_it_was(
    make_host: HostFactory, ego_settings: Settings, clock: Clock
) -> None:
    log_dir = ego_settings.data_dir / "logs"
    configure_logging(log_dir, "DEBUG")
    recorder = Recorder()
    host = make_host(
        {"memory": MemoryPlugin(), "dedup": DedupPlugin(), "recorder": recorder},
        config=memory_config(),
        clock=clock,
        settings=attrs.evolve(ego_settings, log_arguments=True),  # values logged (masked where private)
    )
    async with mcp_client(host) as client:
        ids = [
            saved_id(await remember(client, PARAPHRASES[0], importance=4)),
            saved_id(await remember(client, SECRET, private=True, emotion="sad")),
            saved_id(await remember(client, UNRELATED[0])),
        ]
        # give some memories an access history, so "unchanged" is not just "still zero"
        recall = await client.call_tool("recall", {"context": "herons by the river"})
        assert not recall.is_error
        service = store_of(host)
        before = _snapshot(host, ids)
        assert any(m.access_count > 0 for m in before.values())
        assert any(m.links for m in before.values())
        count = service.count()
        files = _files(ego_settings.data_dir)
        records = len(_log_records(log_dir))
        remembered = len(recorder.remembered)
        calls = len(recorder.tool_calls)

        refused = [
            await remember(client, PARAPHRASES[0]),  # exact duplicate
            await remember(client, NEAR_DUPLICATE, emotion="happy", importance=5),  # near duplicate
            await remember(client, SECRET),  # exact duplicate of a private memory, sent without private=true
        ]

        assert all(text.startswith(NOT_SAVED) for text in refused)
        assert service.count() == count
        assert _snapshot(host, ids) == before  # content, links, access_count, last_accessed: all as they were
        assert _files(ego_settings.data_dir) == files
        assert len(recorder.remembered) == remembered  # no on_remember: no workspace line, no satisfaction
        # the core still announces the call, marked declined so reactions (desire satisfaction) skip it
        new_calls = recorder.tool_calls[calls:]
        assert [tool for tool, _ in new_calls] == ["remember"] * 3
        assert all(outcome.text.startswith(NOT_SAVED) and not outcome.is_error for _, outcome in new_calls)
        assert all(outcome.declined for _, outcome in new_calls)

    new_records = _log_records(log_dir)[records:]
    assert [(r.get("event"), r.get("tool"), r.get("outcome")) for r in new_records] == [
        ("tool_call", "remember", "declined")
    ] * 3
    log_text = "".join(p.read_text(encoding="utf-8") for p in log_dir.glob("ego-*.jsonl"))
    assert SECRET not in log_text
    assert new_records[2]["args"]["content"].rstrip(".") == PRIVATE_MARK  # the full stop is no private text
