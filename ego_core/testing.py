"""pytest fixtures for ego and for plugin authors (loaded automatically through the ``pytest11`` entry point).

- ``ego_settings``: settings with a fresh data directory under ``tmp_path``.
- ``make_host``: build a host with the plugin objects you give (and/or installed ones), stopped at teardown;
  ``log=True`` writes ego's JSON log (``read_log(host)`` reads it back).
- ``hermetic_memory``: the installed memory plugin with a deterministic embedder (no model), to add to a host.
- ``fake_dist``: install a throwaway distribution with an ``ego`` entry point on ``sys.path``, so real
  entry-point discovery runs without pip.
- ``mcp_client(host)``: an async context manager giving an in-memory MCP ``Client`` for the host's server.
- ``tool_text(result)``: the text of a tool result; ``call_ok`` / ``call_error`` call a tool and check it.
- ``tools_named(text)``: which of ``BUILT_IN_TOOLS`` a response names (it may name only served ones).

It also re-exports what plugin tests need from the core's internals, so a plugin's tests import only from
``ego_core`` and ``ego_core.testing``: ``SEPARATOR`` (between a response's data and its scaffold),
``load_settings`` and ``structure_plugin_config`` (configuration as ``ego`` reads it), ``configure_logging``
(ego's log handlers, to inspect what reaches the log files), ``export_file`` / ``import_file`` /
``PortableError`` (``ego export`` / ``ego import`` in-process), ``read_source`` / ``import_source``
(``ego import --from FORMAT PATH`` in-process: read with the plugins' readers, then check and import),
``ToolRunner`` (tool calls without an MCP session, for fuzzing), ``mask_secrets`` and ``WITHHELD`` (the core's
redaction), ``hash_token`` (the form ``[server.tokens]`` holds, for HTTP tests), ``agent_settings`` (the settings of
one agent's space, as ``ego --agent ID`` and ``ego serve --http`` make them).
"""

from __future__ import annotations

import importlib
import json
import logging
import re
import sys
import textwrap
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import attrs
import pytest

from ego_core.kernel.config import Settings, load_settings, structure_plugin_config
from ego_core.kernel.context import Clock
from ego_core.kernel.host import PluginHost
from ego_core.kernel.logs import active_pipeline, configure_logging, install_pipeline, reset_logging
from ego_core.kernel.markers import hookimpl
from ego_core.kernel.redaction import WITHHELD
from ego_core.kernel.secrets import mask_secrets
from ego_core.mcp.agents import agent_settings
from ego_core.mcp.factory import build_host
from ego_core.mcp.foreign import import_source, read_source
from ego_core.mcp.http_transport import hash_token
from ego_core.mcp.portable import PortableError, export_file, import_file
from ego_core.mcp.server import ToolRunner
from ego_core.responses import SEPARATOR

__all__ = [
    "SEPARATOR",
    "WITHHELD",
    "DeterministicEmbedder",
    "DeterministicEmbedderPlugin",
    "FakeDist",
    "HermeticMemory",
    "HostFactory",
    "PortableError",
    "ToolRunner",
    "agent_settings",
    "call_error",
    "call_ok",
    "configure_logging",
    "export_file",
    "hash_token",
    "import_file",
    "import_source",
    "load_settings",
    "mask_secrets",
    "mcp_client",
    "read_log",
    "read_source",
    "structure_plugin_config",
    "tool_text",
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _ego_logging_isolation() -> Iterator[None]:
    """Hosts install their redaction pipeline process-wide and code under test may install ego's log
    handlers: every test starts from the state the previous one found."""
    level = logging.getLogger().level
    yield
    reset_logging(level)


@pytest.fixture
def ego_settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "ego-data", timezone="UTC")


class HostFactory(Protocol):
    def __call__(
        self,
        plugins: Mapping[str, object] | None = None,
        *,
        enabled: Sequence[str] | None = None,
        disabled: Sequence[str] = (),
        autoload: bool = False,
        config: Mapping[str, Mapping[str, Any]] | None = None,
        settings: Settings | None = None,
        clock: Clock | None = None,
        log: bool = False,
    ) -> PluginHost: ...


@pytest.fixture
def make_host(ego_settings: Settings) -> Iterator[HostFactory]:
    """Build hosts; ``config`` gives ``[plugins.<id>]`` tables. Started hosts are stopped at teardown.

    ``plugins`` are plugin objects by id. With ``autoload=True`` the installed plugins are loaded too (all of
    them, or those ``enabled`` names, minus ``disabled``); a plugin object given under the id of an installed
    plugin replaces it. ``log=True`` writes ego's JSON log to ``<data dir>/logs/`` (what ``ego serve`` writes,
    at DEBUG), for tests of what reaches the log: :func:`read_log` reads its records.

    A host installs its redaction pipeline for the whole process (every log record passes through it); at
    teardown the pipeline (and log-record factory) that was active before the test is put back, so one test's
    redactors never apply to the next test's log records.
    """
    hosts: list[PluginHost] = []
    previous_pipeline = active_pipeline()
    previous_factory = logging.getLogRecordFactory()

    def factory(
        plugins: Mapping[str, object] | None = None,
        *,
        enabled: Sequence[str] | None = None,
        disabled: Sequence[str] = (),
        autoload: bool = False,
        config: Mapping[str, Mapping[str, Any]] | None = None,
        settings: Settings | None = None,
        clock: Clock | None = None,
        log: bool = False,
    ) -> PluginHost:
        base = settings or ego_settings
        if config is not None:
            base = attrs.evolve(base, plugin_tables={**base.plugin_tables, **config})
        if log:
            configure_logging(base.logs_path, "DEBUG")  # the autouse isolation fixture removes it again
        host = build_host(base, enabled=enabled, disabled=disabled, autoload=autoload, plugins=plugins, clock=clock)
        hosts.append(host)
        return host

    try:
        yield factory
        for host in hosts:
            while host.started:
                host.stop()
    finally:
        install_pipeline(previous_pipeline)
        logging.setLogRecordFactory(previous_factory)


@attrs.frozen
class FakeDist:
    name: str
    module: str
    path: Path


class FakeDistFactory(Protocol):
    def __call__(
        self, dist: str, module: str, source: str, *, ep_name: str | None = None, ep_object: str | None = None
    ) -> FakeDist: ...


@pytest.fixture
def fake_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDistFactory]:
    """Write ``module.py`` and ``<dist>-0.1.0.dist-info`` with an ``ego`` entry point, then put it on sys.path.

    ``ep_name`` defaults to the module name; ``ep_object`` (e.g. ``"MyPlugin"``) makes the entry point
    ``module:MyPlugin``.
    """
    site = tmp_path / "fake-site"
    site.mkdir(exist_ok=True)
    monkeypatch.syspath_prepend(str(site))
    modules: list[str] = []

    def make(
        dist: str, module: str, source: str, *, ep_name: str | None = None, ep_object: str | None = None
    ) -> FakeDist:
        (site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        info = site / f"{dist.replace('-', '_')}-0.1.0.dist-info"
        info.mkdir(exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n", encoding="utf-8")
        target = f"{module}:{ep_object}" if ep_object else module
        (info / "entry_points.txt").write_text(f"[ego]\n{ep_name or module} = {target}\n", encoding="utf-8")
        modules.append(module)
        sys.modules.pop(module, None)
        importlib.invalidate_caches()
        return FakeDist(name=dist, module=module, path=site)

    yield make
    for module in modules:
        sys.modules.pop(module, None)
    importlib.invalidate_caches()


def read_log(host: PluginHost) -> list[dict[str, Any]]:
    """Every record of the JSON log in the host's data directory (written with ``make_host(..., log=True)``, or
    by an ``ego`` child process given the same ``EGO_DATA_DIR``), oldest first."""
    records: list[dict[str, Any]] = []
    for path in sorted(host.settings.logs_path.glob("ego-*.jsonl")):
        records += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return records


class DeterministicEmbedder:
    """Vectors without a model: each word (and, for text without spaces such as Japanese, each pair of
    characters) is hashed into one of ``dimension`` buckets. Texts that share words are similar; the same text
    always gives the same unit vector, in every process."""

    model_id = "ego-testing:deterministic"

    def __init__(self, dimension: int = 256) -> None:
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str], role: str = "document") -> Any:
        import hashlib

        import numpy as np

        vectors = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            words = re.findall(r"\w+", text.casefold())
            features = [w for w in words if w.isascii()]
            for word in (w for w in words if not w.isascii()):
                features += [word[i : i + 2] for i in range(max(1, len(word) - 1))]
            for feature in features or [""]:
                digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
                vectors[row, int.from_bytes(digest[:4], "little") % self._dimension] += 1.0 if digest[4] & 1 else -1.0
            norm = float(np.linalg.norm(vectors[row]))
            vectors[row] = vectors[row] / norm if norm else np.eye(1, self._dimension, 0, dtype=np.float32)[0]
        return vectors


class DeterministicEmbedderPlugin:
    """Registers :class:`DeterministicEmbedder` as the embedder ``deterministic``."""

    @hookimpl
    def register_embedders(self, register: Callable[[str, Callable[[Any], Any]], None]) -> None:
        register("deterministic", lambda _settings: DeterministicEmbedder())


@attrs.frozen
class HermeticMemory:
    """What to add to ``make_host`` for the real memory plugin without a model:
    ``make_host({"dream": DreamPlugin(), **hermetic_memory.plugins}, config=hermetic_memory.config)``."""

    plugins: Mapping[str, object]
    """The installed memory plugin (from its entry point) and the plugin that registers the embedder."""
    config: Mapping[str, Mapping[str, Any]]
    """``[plugins.memory]``: the ``deterministic`` embedder, no English channel (it would load a model)."""


@pytest.fixture
def hermetic_memory() -> HermeticMemory:
    """The memory plugin (it must be installed: ``pip install ego-memory`` from the clone) with a deterministic
    embedder, so a memory-backed test needs no model and gives the same vectors every run."""
    import importlib.metadata

    found = [ep for ep in importlib.metadata.entry_points(group="ego") if ep.name == "memory"]
    if not found:
        pytest.fail("hermetic_memory needs the memory plugin installed (pip install plugins/memory from the clone)")
    return HermeticMemory(
        plugins={"memory": found[0].load(), "testing_embedder": DeterministicEmbedderPlugin()},
        config={"memory": {"embedder": "deterministic", "english_channel": False}},
    )


@asynccontextmanager
async def mcp_client(host: PluginHost, *, mode: str = "auto") -> AsyncIterator[Any]:
    """An in-memory MCP client connected to ``build_server(host)``."""
    from mcp import Client

    from ego_core.mcp.server import build_server

    async with Client(build_server(host), mode=mode) as client:
        yield client


BUILT_IN_TOOLS = frozenset(
    {
        "wake_up",
        "introspect",
        "attune",
        "remember",
        "recall",
        "search_memories",
        "forget",
        "revise_memory",
        "link_memories",
        "create_episode",
        "get_episode",
        "consolidate",
        "keep_both",
        "feel_desires",
        "satisfy_desire",
        "configure_desires",
        "emotion_trend",
        "consider_them",
        "update_self",
        "update_relationship",
        "am_i_being_genuine",
        "shared_snapshot",
        "shared_append",
        "curate_notions",
    }
)
"""Every tool the core and the built-in plugins define (a test of the whole set keeps it complete)."""


def tools_named(text: str, names: Iterable[str] = BUILT_IN_TOOLS) -> set[str]:
    """The tools of ``names`` that ``text`` names as whole words: a response may name only tools that are served."""
    return {name for name in names if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)}


def tool_text(result: Any) -> str:
    """The concatenated text content of a ``CallToolResult``."""
    return "".join(getattr(block, "text", "") for block in result.content)


async def call_ok(client: Any, tool: str, args: Mapping[str, Any] | None = None) -> str:
    """Call ``tool`` and return its text, failing the test (with that text) if it is an ``isError`` result."""
    result = await client.call_tool(tool, dict(args or {}))
    text = tool_text(result)
    assert not result.is_error, f"{tool}: {text}"
    return text


async def call_error(client: Any, tool: str, args: Mapping[str, Any] | None = None) -> str:
    """Call ``tool`` and return its text, failing the test unless it is an ``isError`` result."""
    result = await client.call_tool(tool, dict(args or {}))
    text = tool_text(result)
    assert result.is_error, f"{tool} was expected to fail: {text}"
    return text


@pytest.fixture
def mcp_client_factory() -> Callable[..., Any]:
    return mcp_client
