"""ego_core imports no plugin and no chromadb, whatever is installed next to it."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import ego_core

EGO_PACKAGES = (
    "ego_core",
    "ego_memory",
    "ego_dedup",
    "ego_desires",
    "ego_self_model",
    "ego_notions",
    "ego_interoception",
    "ego_emotion_trend",
    "ego_shared_memory",
    "ego_workspace_sync",
    "ego_bench",
    "ego_dashboard",
    "ego_hello",
)

PROBE = """
import importlib, json, pkgutil, sys
import ego_core
names = sorted(m.name for m in pkgutil.walk_packages(ego_core.__path__, "ego_core."))
for name in names:
    importlib.import_module(name)
# building a host and a server without entry points imports nothing more of a plugin
from pathlib import Path
from ego_core.kernel.config import Settings
from ego_core import build_host
from ego_core.mcp.server import build_server
build_server(build_host(Settings(data_dir=Path(sys.argv[1])), autoload=False))
print(json.dumps({"modules": names, "loaded": sorted(sys.modules)}))
"""


def test_importing_every_core_module_loads_no_plugin_and_no_chromadb(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=tmp_path,
    )
    report = json.loads(done.stdout)
    root = Path(ego_core.__file__).parent
    files = [p.relative_to(root).with_suffix("") for p in root.rglob("*.py")]
    expected = {".".join(f.parts[:-1] if f.name == "__init__" else f.parts) for f in files} - {""}
    assert {name.removeprefix("ego_core.") for name in report["modules"]} == expected
    loaded: list[str] = report["loaded"]
    assert not [m for m in loaded if m == "chromadb" or m.startswith("chromadb.")]
    assert not [m for m in loaded if m.startswith("ego_") and not m.startswith("ego_core")]
    assert not [m for m in loaded if m.startswith(("onnxruntime", "sentence_transformers", "torch"))]


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, or of one that imports itself (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(edges[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1 or module in edges[module]:
                found.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycle_anywhere() -> None:
    """Counting imports inside functions and under ``TYPE_CHECKING``, in every ego package installed here."""
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (the lint, core and all envs)")
    roots = [name for name in EGO_PACKAGES if importlib.util.find_spec(name) is not None]
    graph = grimp.build_graph(*roots, cache_dir=None)
    ours = {m for m in graph.modules if m.split(".")[0] in roots}
    edges = {m: {other for other in graph.find_modules_directly_imported_by(m) if other in ours} for m in ours}
    assert _cycles(edges) == []
