"""The documentation is complete: every hook, CLI command and option, config key and ``EGO_*`` variable.

Only ego-core needs to be installed: the CLI parser is built from a host with no plugins, and the
variables are read from ego_core's own source.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

import ego_core
from ego_core import build_host, hookspecs
from ego_core.kernel.config import PluginSelection, ServerConfig, Settings
from ego_core.mcp.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CORE = Path(ego_core.__file__).resolve().parent
ENV_VAR = re.compile(r"\bEGO_[A-Z][A-Z0-9_]*\b")


def read(name: str) -> str:
    path = DOCS / name
    assert path.is_file(), f"{path} is missing"
    return path.read_text(encoding="utf-8")


def hook_signatures() -> list[str]:
    """``name(param, ...)`` of every hook spec, parameters in the spec's order (``self`` left out)."""
    found = []
    for spec_class in hookspecs.ALL_SPECS:
        for name, function in vars(spec_class).items():
            if name.startswith("_") or not callable(function):
                continue
            params = [p for p in inspect.signature(function).parameters if p != "self"]
            found.append(f"{name}({', '.join(params)})")
    return found


def test_every_hook_spec_is_collected() -> None:
    names = [signature.split("(")[0] for signature in hook_signatures()]
    assert sorted(names) == sorted(hookspecs.hook_names())
    assert "before_remember(draft, ctx)" in hook_signatures()


@pytest.mark.parametrize("signature", hook_signatures())
def test_hook_has_its_signature_heading(signature: str) -> None:
    headings = {line.strip() for line in read("hooks.md").splitlines() if line.startswith("## ")}
    assert f"## {signature}" in headings, f"docs/hooks.md needs a section headed exactly `## {signature}`"


def test_hooks_reference_documents_no_hook_that_does_not_exist() -> None:
    known = {signature.split("(")[0] for signature in hook_signatures()}
    documented = re.findall(r"^## ([a-z_]+)\(", read("hooks.md"), flags=re.MULTILINE)
    assert set(documented) <= known, f"docs/hooks.md documents unknown hooks: {sorted(set(documented) - known)}"
    assert len(documented) == len(set(documented)), "a hook is documented twice"


def walk_parser(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str]]:
    """(command path, long option) for every option; (command path, "") for every (sub)command."""
    yield path, ""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk_parser(sub, (*path, name))
            continue
        for option in action.option_strings:
            if option.startswith("--") and option != "--help":
                yield path, option


def cli_items(tmp_path: Path) -> list[tuple[tuple[str, ...], str]]:
    host = build_host(Settings(data_dir=tmp_path / "data"), autoload=False)
    assert host.plugin_ids() == ["core"]
    return sorted(set(walk_parser(build_parser(host.commands()), ("ego",))))


def test_every_cli_command_and_option_is_documented(tmp_path: Path) -> None:
    text = read("cli.md")
    items = cli_items(tmp_path)
    commands = {" ".join(path) for path, option in items if not option and len(path) > 1}
    assert {"ego serve", "ego plugins", "ego doctor", "ego token", "ego token new"} <= commands
    missing = [command for command in sorted(commands) if f"## {command}" not in text]
    assert not missing, f"docs/cli.md needs a section per command: {missing}"
    options = sorted({option for _path, option in items if option})
    assert "--http" in options
    assert "--json" in options
    undocumented = [option for option in options if f"`{option}" not in text]
    assert not undocumented, f"docs/cli.md does not document: {undocumented}"


def test_cli_docs_name_the_exit_code_for_usage_errors() -> None:
    assert "exit code 2" in read("cli.md").lower()


@pytest.mark.parametrize("cls", [Settings, ServerConfig, PluginSelection])
def test_every_config_field_is_documented(cls: type) -> None:
    text = read("configuration.md")
    missing = [field.name for field in attrs.fields(cls) if f"`{field.name}`" not in text]
    assert not missing, f"docs/configuration.md does not document {cls.__name__} fields {missing}"


def core_env_vars() -> set[str]:
    """``EGO_*`` names in string literals (including docstrings and f-strings) of ego_core/*.py."""
    found: set[str] = set()
    for path in sorted(CORE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.update(ENV_VAR.findall(node.value))
    return found


def test_every_environment_variable_is_documented() -> None:
    variables = core_env_vars()
    assert {"EGO_DATA_DIR", "EGO_CONFIG", "EGO_PLUGINS", "EGO_DISABLE_PLUGINS"} <= variables
    text = read("configuration.md")
    missing = sorted(var for var in variables if f"`{var}`" not in text)
    assert not missing, f"docs/configuration.md does not document {missing}"


BUILT_IN_PLUGINS = tuple(sorted(p.parent.name for p in (ROOT / "plugins").glob("*/pyproject.toml")))


def test_the_built_in_plugins_are_found() -> None:
    assert {"memory", "dedup", "workspace_sync", "interoception"} <= set(BUILT_IN_PLUGINS)


MARKDOWN = sorted([ROOT / "README.md", ROOT / "bench" / "README.md", *DOCS.rglob("*.md")])
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_at_a_file_that_exists(page: Path) -> None:
    targets = [t for t in LINK.findall(page.read_text(encoding="utf-8")) if "://" not in t and ":" not in t]
    missing = [t for t in targets if not (page.parent / t).exists()]
    assert not missing, f"{page.relative_to(ROOT)} links to missing files: {missing}"


@pytest.mark.parametrize("plugin", BUILT_IN_PLUGINS)
def test_configuration_points_at_each_built_in_plugin_page(plugin: str) -> None:
    text = read("configuration.md")
    assert f"### plugins.{plugin}" in text
    assert f"docs/plugins/{plugin}.md" in text


def test_plugin_author_guide_walks_through_the_example_plugin() -> None:
    guide = read("plugin-author-guide.md")
    example = DOCS / "examples" / "ego-hello"
    assert (example / "pyproject.toml").is_file()
    assert 'hello = "ego_hello:HelloPlugin"' in (example / "pyproject.toml").read_text(encoding="utf-8")
    assert 'hello = "ego_hello:HelloPlugin"' in guide
    for name in ("make_host", "fake_dist", "mcp_client", "tool_text", "config_class", "config_env", "requires"):
        assert name in guide, f"the plugin author guide does not explain {name}"


# --------------------------------------------------------------------------------------------------
# docs/services.md: the service contracts and value types as the code has them


def test_services_reference_shows_every_contract_as_the_code_has_it() -> None:
    from contracts_doc import documented, expected_page, render_blocks

    page = read("services.md")
    blocks = render_blocks()
    assert {("ego_core/services.py", "MemoryService"), ("ego_core/types.py", "Memory")} <= set(blocks)
    missing = sorted(name for _module, name in set(blocks) - documented(page))
    assert not missing, f"docs/services.md has no generated block for {missing}: run python tests/core/contracts_doc.py"
    gone = sorted(name for _module, name in documented(page) - set(blocks))
    assert not gone, f"docs/services.md documents names the code no longer has: {gone}"
    assert page == expected_page(page), (
        "docs/services.md differs from the code: run python tests/core/contracts_doc.py (and read the prose around "
        "the blocks it changes)"
    )


def test_every_service_contract_is_exported_and_in_the_reference() -> None:
    import ego_core.services

    page = read("services.md")
    for name, value in vars(ego_core.services).items():
        if isinstance(value, type) and value.__module__ == "ego_core.services" and not name.startswith("_"):
            assert f"class {name}(" in page or f"class {name}:" in page, name


# --------------------------------------------------------------------------------------------------
# docs/hooks.md "Used by" tells the truth


def built_in_plugins() -> dict[str, Path]:
    """Plugin id -> package directory, for every built-in plugin (its entry point) and the core."""
    found = {"core": CORE}
    examples = ROOT.glob("docs/examples/*/pyproject.toml")
    for pyproject in [*ROOT.glob("plugins/*/pyproject.toml"), ROOT / "bench" / "pyproject.toml", *examples]:
        text = pyproject.read_text(encoding="utf-8")
        section = text.split("[project.entry-points.ego]", 1)
        if len(section) < 2:
            continue
        for plugin_id, target in re.findall(r'^(\w+)\s*=\s*"([\w.]+)', section[1], flags=re.MULTILINE):
            found[plugin_id] = pyproject.parent / target.split(".")[0]
    return found


def implemented_hooks(package: Path) -> set[str]:
    hooks: set[str] = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any(
                "hookimpl" in ast.unparse(decorator) for decorator in node.decorator_list
            ):
                hooks.add(node.name)
    return hooks


def used_by(section: str) -> set[str]:
    """The plugin ids a ``**Used by:**`` paragraph names (outside parentheses, before a top-level ``;``)."""
    paragraph = section.split("**Used by:**", 1)[1].split("\n\n", 1)[0].strip()
    if paragraph.startswith("none"):
        return set()
    depth, outside = 0, []
    for char in paragraph:
        depth += char == "("
        if depth == 0:
            if char == ";":
                break
            outside.append(char)
        depth -= char == ")"
    text = "".join(outside).replace(" and ", ",").replace(".", ",")
    return {word.strip(" \n`*") for word in text.split(",") if word.strip(" \n`*")}


def test_hooks_reference_used_by_names_exactly_the_plugins_implementing_each_hook() -> None:
    plugins = {plugin_id: implemented_hooks(package) for plugin_id, package in built_in_plugins().items()}
    assert {"core", "memory", "dedup"} <= set(plugins)
    sections = re.split(r"^## ", read("hooks.md"), flags=re.MULTILINE)
    for name in hookspecs.hook_names():
        section = next(s for s in sections if s.startswith(f"{name}("))
        assert "**Used by:**" in section, f"docs/hooks.md: {name} has no **Used by:** line"
        expected = {plugin_id for plugin_id, hooks in plugins.items() if name in hooks}
        assert used_by(section) == expected, f"docs/hooks.md: {name} is used by {sorted(expected) or 'none'}"


# --------------------------------------------------------------------------------------------------
# Nothing points outside the repository

OUTSIDE = re.compile(r"SPEC §|SPEC\.md|\bissue \d|\bseeds/|design note|idea note")


def test_no_doc_or_comment_points_outside_the_repository() -> None:
    skip = {".venv", ".tox", ".git", "results", ".ci", ".mypy_cache", ".ruff_cache"}
    found = []
    for path in ROOT.rglob("*"):
        if path.suffix not in (".py", ".md", ".toml", ".ini", ".txt") or skip & set(path.relative_to(ROOT).parts):
            continue
        if path.name == "test_docs.py" or ".egg-info" in str(path):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not found, "\n".join(found)


# --------------------------------------------------------------------------------------------------
# One rule for exports, everywhere

EXPORT_RULE = (
    "a plain `ego export FILE` leaves private memories out and masks secrets and private passages in what it "
    "writes (for sharing); `ego export --include-private FILE` is the full backup, private memories included and "
    "nothing masked; `ego import FILE` restores what the file holds"
)


def test_the_include_private_rule_is_stated_the_same_everywhere() -> None:
    """A new user found the README saying export/import "move everything" while the agent setup said private
    memories "never reach an export". Each page that speaks of exporting states the one rule, in the same words,
    and no page says either half alone."""
    pages = [ROOT / "README.md", ROOT / "docs" / "agent-setup.md", ROOT / "docs" / "plugins" / "memory.md"]
    for page in pages:
        text = " ".join(page.read_text(encoding="utf-8").split())
        assert EXPORT_RULE.lower() in text.lower(), f"{page.relative_to(ROOT)} does not state the export rule"
    for page in [*pages, ROOT / "docs" / "cli.md", ROOT / "docs" / "tools.md"]:
        text = " ".join(page.read_text(encoding="utf-8").split())
        assert "`ego import FILE` move everything" not in text, page
        assert "a workspace file, an export" not in text, page
    cli = " ".join((ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split())
    assert "Without `--include-private` (the default) private memories are left out" in cli
    assert "`--include-private` writes a full backup, private memories included and nothing redacted" in cli
