"""Resources: opening and closing stores and hosts gives back every file descriptor (a long test session or a
long-lived process must not run out), and the memory package has no import cycle."""

from __future__ import annotations

import ast
import gc
import os
from pathlib import Path
from typing import TYPE_CHECKING

import ego_memory
from ego_memory.embedding import UseEmbedder
from ego_memory.store.memory_store import MemoryStore

if TYPE_CHECKING:
    from conftest import MemoryHosts

ROUNDS = 12


def open_fds() -> int:
    gc.collect()
    return len(os.listdir("/proc/self/fd"))


def test_closing_a_store_releases_its_files(embedder: UseEmbedder, tmp_path: Path) -> None:
    def use(directory: Path) -> None:
        store = MemoryStore(directory, embedder.model_id)
        store.open(embedder.embed)
        try:
            text = f"A note written in {directory.name}."
            vector = embedder.embed([text])
            store.add_many([_memory(directory.name, text)], vector)
            assert store.dense(vector[0], 1)[0][0] == _memory(directory.name, text).id
        finally:
            store.close()

    use(tmp_path / "warm-up")  # the first use loads what stays loaded (libraries, thread pools)
    before = open_fds()
    for n in range(ROUNDS):
        use(tmp_path / f"store-{n}")
    assert open_fds() - before < ROUNDS  # each open store holds more than ten


def test_a_store_reopened_after_a_foreign_write_keeps_no_stale_files(embedder: UseEmbedder, tmp_path: Path) -> None:
    writer = MemoryStore(tmp_path / "shared", embedder.model_id)
    reader = MemoryStore(tmp_path / "shared", embedder.model_id)
    writer.open(embedder.embed)
    reader.open(embedder.embed)
    try:
        texts = [f"Foreign write number {n}." for n in range(ROUNDS + 1)]
        writer.add_many([_memory(f"w{0}", texts[0])], embedder.embed(texts[:1]))
        assert reader.count() == 1  # the reader reopens its index once
        before = open_fds()
        for n in range(1, ROUNDS + 1):
            writer.add_many([_memory(f"w{n}", texts[n])], embedder.embed(texts[n : n + 1]))
            assert reader.count() == n + 1  # and again after each foreign write
        assert open_fds() - before < ROUNDS
    finally:
        writer.close()
        reader.close()


def test_starting_and_stopping_hosts_releases_their_files(memory_hosts: MemoryHosts, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    host, plugin = memory_hosts(data_dir)
    ctx = host.context("memory")
    plugin._tools().remember({"content": "The kettle whistled twice."}, ctx)
    host.stop()
    before = open_fds()
    for _ in range(ROUNDS):
        host, plugin = memory_hosts(data_dir)
        assert plugin._require().count() == 1
        host.stop()
    assert open_fds() - before < ROUNDS


def _memory(label: str, text: str) -> object:
    from datetime import UTC, datetime

    from ego_core import Memory

    digits = "".join(f"{ord(c):02x}" for c in label)[-12:].rjust(12, "0")
    return Memory(id=f"mem_{digits}", content=text, timestamp=datetime(2026, 2, 1, tzinfo=UTC))


# ---------------------------------------------------------------------------------------------------
# Import cycles


def imports_of(path: Path, package: str) -> set[str]:
    """Every ``ego_memory`` module ``path`` imports, at any place (also inside functions and TYPE_CHECKING)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(package):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith(package))
    return found


def test_the_memory_package_has_no_import_cycle() -> None:
    root = Path(next(iter(ego_memory.__path__)))
    modules = {
        ".".join(("ego_memory", *path.relative_to(root).with_suffix("").parts)).removesuffix(".__init__"): path
        for path in root.rglob("*.py")
    }
    graph = {
        name: {m for m in imports_of(path, "ego_memory") if m in modules and m != name}
        for name, path in modules.items()
    }
    # a package's __init__ is imported with each of its modules: it may not import them back
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        stack.append(name)
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycles.append([*stack[stack.index(target) :], target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)
    assert cycles == []
