"""Shared fixtures of the memory plugin tests: the real models, in-process hosts, and ``ego`` child processes.

Child processes never inherit ``EGO_*`` variables from the developer's shell, never touch ``~/.ego`` and
always select their plugins explicitly (other plugins may be installed in the environment).
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from mcp import StdioServerParameters
from memory_support import packaged_model_dir

from ego_core import Clock, EmbedderSettings, PluginHost, Settings, build_host
from ego_memory.embedding import OnnxEmbedder, UseEmbedder
from ego_memory.plugin import MemoryPlugin
from ego_memory.store.memory_store import MemoryStore

EGO = [sys.executable, "-m", "ego_core.mcp.cli"]


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model directory for the tests of the ``model_dir`` option, made from the packaged model."""
    return packaged_model_dir(tmp_path_factory.mktemp("models") / "minilm")


@pytest.fixture(scope="session")
def onnx_embedder() -> OnnxEmbedder:
    """The ``onnx`` embedder without a model directory: all-MiniLM-L6-v2 int8, installed with ego."""
    return OnnxEmbedder(EmbedderSettings())


@pytest.fixture(scope="session")
def embedder() -> UseEmbedder:
    """The default model, the one hosts open their stores with (one encoder per process): stores a test builds
    directly must be made with it, or a host would re-embed them (or refuse them) when it opens."""
    return UseEmbedder(EmbedderSettings())


class MemoryHosts:
    """Builds started hosts serving a fresh :class:`MemoryPlugin` (plus any plugin objects given)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.hosts: list[PluginHost] = []

    def __call__(
        self,
        data_dir: Path | None = None,
        *,
        recall: Mapping[str, Any] | None = None,
        memory: Mapping[str, Any] | None = None,
        plugins: Mapping[str, object] | None = None,
        clock: Clock | None = None,
        timezone: str = "UTC",
        start: bool = True,
        log_arguments: bool = False,
    ) -> tuple[PluginHost, MemoryPlugin]:
        if data_dir is None:
            data_dir = self.root / f"data-{len(self.hosts)}"
        table: dict[str, Any] = dict(memory or {})
        if recall:
            table["recall"] = dict(recall)
        plugin = MemoryPlugin()
        settings = Settings(
            data_dir=data_dir, timezone=timezone, plugin_tables={"memory": table}, log_arguments=log_arguments
        )
        host = build_host(settings, autoload=False, plugins={"memory": plugin, **(plugins or {})}, clock=clock)
        self.hosts.append(host)
        if start:
            host.start()
            assert plugin.memories is not None, [f.describe() for f in host.failures]
        return host, plugin

    def close(self) -> None:
        for host in self.hosts:
            while host.started:
                host.stop()


@pytest.fixture
def memory_hosts(tmp_path: Path) -> Iterator[MemoryHosts]:
    hosts = MemoryHosts(tmp_path / "hosts")
    yield hosts
    hosts.close()


@pytest.fixture(scope="module")
def module_memory_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryHosts]:
    hosts = MemoryHosts(tmp_path_factory.mktemp("hosts"))
    yield hosts
    hosts.close()


@pytest.fixture
def open_store(tmp_path: Path, embedder: UseEmbedder) -> Iterator[Any]:
    """Open real stores (Chroma + SQLite) in temporary directories, made with the default model (as a host would
    open them); all are closed at teardown."""
    stores: list[MemoryStore] = []

    def make(directory: Path | None = None, model_id: str | None = None) -> MemoryStore:
        store = MemoryStore(directory or tmp_path / "store", model_id or embedder.model_id)
        stores.append(store)
        store.open(embedder.embed)
        return store

    yield make
    for store in stores:
        store.close()


class EgoChild:
    """``ego`` child processes on one data directory, with a clean environment and fake plugins on a site dir."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data_dir = root / "data"
        self.site = root / "site"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.site.mkdir(parents=True, exist_ok=True)

    def dist(self, dist: str, module: str, source: str, *, ep_name: str) -> None:
        (self.site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        info = self.site / f"{dist.replace('-', '_')}-0.1.0.dist-info"
        info.mkdir(exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n", encoding="utf-8")
        (info / "entry_points.txt").write_text(f"[ego]\n{ep_name} = {module}\n", encoding="utf-8")

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}
        env["EGO_DATA_DIR"] = str(self.data_dir)
        env["EGO_TIMEZONE"] = "UTC"
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(self.site), os.environ.get("PYTHONPATH", "")) if p)
        env.update(extra)
        return env

    def stdio(self, *args: str, **extra_env: str) -> StdioServerParameters:
        """``ego serve <args>`` over stdio (the client merges ``env`` over a minimal default environment)."""
        env = self.env(**extra_env)
        keep = {k: v for k, v in env.items() if k.startswith("EGO_") or k == "PYTHONPATH"}
        return StdioServerParameters(command=EGO[0], args=[*EGO[1:], "serve", *args], env=keep)

    def command(self, *args: str) -> list[str]:
        return [*EGO, *args]


@pytest.fixture
def ego_child(tmp_path: Path) -> EgoChild:
    return EgoChild(tmp_path / "child")
