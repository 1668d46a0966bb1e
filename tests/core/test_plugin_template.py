"""The ``ego plugin new`` scaffold: template files under ``ego_core/mcp/templates/plugin`` (package data), rendered
with ``string.Template``, their paths too, by a module that does not import the ``ego_core`` package root."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import grimp
import pytest

from ego_core.errors import UsageError
from ego_core.mcp.cli import main
from ego_core.mcp.plugin_template import render, write_plugin

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "ego_core" / "mcp" / "templates" / "plugin"


def files_for(plugin_id: str) -> list[str]:
    package = f"ego_{plugin_id}"
    return sorted(
        [
            "README.md",
            "pyproject.toml",
            "tox.ini",
            f"{package}/__init__.py",
            f"{package}/plugin.py",
            f"{package}/py.typed",
            f"tests/test_{plugin_id}.py",
        ]
    )


@pytest.mark.parametrize("plugin_id", ["dream", "night_notes", "a1_b2"])
def test_every_template_is_rendered_with_its_path_renamed(plugin_id: str) -> None:
    rendered = render(plugin_id, "/src/ego")
    assert sorted(rendered) == files_for(plugin_id)
    for path, text in rendered.items():
        if path.endswith(".py"):
            ast.parse(text, filename=path)  # valid Python: no placeholder left in it
        assert "${" not in text, path
    assert rendered[f"ego_{plugin_id}/py.typed"] == ""


def test_the_names_come_from_the_id_with_hyphens_in_the_distribution_only() -> None:
    rendered = render("night_notes", "/src/ego")
    pyproject = tomllib.loads(rendered["pyproject.toml"])
    assert pyproject["project"]["name"] == "ego-night-notes"
    assert pyproject["project"]["entry-points"]["ego"] == {"night_notes": "ego_night_notes:NightNotesPlugin"}
    assert pyproject["tool"]["setuptools"]["package-data"] == {"ego_night_notes": ["py.typed"]}
    init = rendered["ego_night_notes/__init__.py"]
    assert "from ego_night_notes.plugin import NightNotesConfig, NightNotesPlugin" in init
    plugin = rendered["ego_night_notes/plugin.py"]
    assert 'config_env: Mapping[str, str] = {"EGO_NIGHT_NOTES_MAX_CHARS": "max_chars"}' in plugin
    assert 'name="night_notes_note",' in plugin
    assert 'return Section(key="night_notes", text=text, order=900)' in plugin
    assert "from ego_night_notes import NightNotesPlugin" in rendered["tests/test_night_notes.py"]


def test_core_source_and_escaped_dollars() -> None:
    rendered = render("dream", "ego-core")
    assert "    {env:EGO_CORE:ego-core}\n" in rendered["tox.ini"]
    assert "or from $EGO_CORE\n" in rendered["tox.ini"]  # `$$` in the template is a literal `$`
    assert "with ego-core from ego-core (or $EGO_CORE)" in rendered["README.md"]
    assert "    mypy --strict ego_dream tests\n" in rendered["tox.ini"]


def test_japanese_text_in_a_template_survives_rendering() -> None:
    tests = render("dream", "/src/ego")["tests/test_dream.py"]
    assert '{"text": "川沿いを散歩した。"}' in tests


def test_written_files_match_the_rendering_byte_for_byte(tmp_path: Path) -> None:
    written = write_plugin("night_notes", tmp_path / "ego-night-notes", "/src/ego")
    rendered = render("night_notes", "/src/ego")
    assert sorted(path.relative_to(tmp_path / "ego-night-notes").as_posix() for path in written) == sorted(rendered)
    for relative, text in rendered.items():
        assert (tmp_path / "ego-night-notes" / relative).read_bytes() == text.encode("utf-8")


def test_a_non_empty_directory_is_refused_and_left_alone(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(UsageError, match="already exists and is not empty"):
        write_plugin("dream", tmp_path, "/src/ego")
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_ego_plugin_new_writes_the_rendered_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "ego-dream"
    assert main(["plugin", "new", "dream", "--dir", str(target)]) == 0
    assert "wrote the plugin 'dream' (7 files)" in capsys.readouterr().out
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) == files_for("dream")


def test_every_template_file_is_package_data() -> None:
    """Only ``*.tmpl`` files are rendered and shipped (``[tool.setuptools.package-data]``): nothing else lives there."""
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "mcp/templates/plugin/**/*.tmpl" in package_data["package-data"]["ego_core"]
    found = sorted(p.relative_to(TEMPLATES).as_posix() for p in TEMPLATES.rglob("*") if p.is_file())
    assert found == sorted(f"{path.replace('ego_$id/', '$package/')}.tmpl" for path in files_for("$id"))


def test_the_renderer_does_not_import_the_ego_core_package_root() -> None:
    graph = grimp.build_graph("ego_core")
    assert "ego_core" not in graph.find_modules_directly_imported_by("ego_core.mcp.plugin_template")
    assert graph.find_shortest_chain(importer="ego_core.mcp.plugin_template", imported="ego_core.mcp.composed") is None
