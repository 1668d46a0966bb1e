"""The deprecation path of the renovation: every old module path and every name ``ego_core`` no longer exports
still works, with a ``DeprecationWarning`` naming the new place, and docs/api-changes.md lists each move."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import ego_core
from ego_core.moved import MODULES, NAMES

DOC = (Path(__file__).resolve().parents[2] / "docs" / "api-changes.md").read_text(encoding="utf-8")


PROBE = """
import importlib, json, sys, warnings
report = {}
for old, new in json.loads(sys.argv[1]).items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    report[old] = [[str(w.message) for w in caught if w.category is DeprecationWarning], module is sys.modules[new]]
print(json.dumps(report))
"""


def test_an_old_module_path_gives_the_module_at_its_new_path_and_warns() -> None:
    """In a fresh interpreter, so that each old path is imported for the first time."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(MODULES)], capture_output=True, text=True, check=True, timeout=120
    )
    report = json.loads(done.stdout)
    for old, new in MODULES.items():
        warnings, same = report[old]
        assert same, old
        assert [
            w for w in warnings if w.startswith(f"{old} moved to {new}; the old path stops working in ego-core 1.0")
        ]


@pytest.mark.parametrize("name", sorted(NAMES))
def test_a_name_that_moved_into_its_plugin_is_still_reachable_from_ego_core(name: str) -> None:
    owner = pytest.importorskip(NAMES[name], reason="the owning plugin is not installed here")
    with pytest.warns(DeprecationWarning, match=rf"ego_core\.{name} moved to {NAMES[name]}\.{name}"):
        value = getattr(ego_core, name)
    assert value is getattr(owner, name)


def test_a_name_ego_core_never_had_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'NOT_A_NAME'"):
        ego_core.NOT_A_NAME  # noqa: B018


def test_the_new_paths_exist() -> None:
    for new in MODULES.values():
        importlib.import_module(new)


def test_the_page_lists_every_move() -> None:
    for old, new in [*MODULES.items(), *((f"ego_core.{n}", f"{m}.{n}") for n, m in NAMES.items())]:
        assert f"| `{old}` | `{new}` |" in DOC, old
