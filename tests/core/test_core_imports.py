"""ego_core imports no plugin and no chromadb, whatever is installed next to it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import ego_core

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
    expected = {p.stem for p in Path(ego_core.__file__).parent.glob("*.py") if p.stem != "__init__"}
    assert {name.removeprefix("ego_core.") for name in report["modules"]} == expected
    loaded: list[str] = report["loaded"]
    assert not [m for m in loaded if m == "chromadb" or m.startswith("chromadb.")]
    assert not [m for m in loaded if m.startswith("ego_") and not m.startswith("ego_core")]
    assert not [m for m in loaded if m.startswith(("onnxruntime", "sentence_transformers", "torch"))]
