"""The documentation is complete: every hook, CLI command and option, config key and ``EGO_*`` variable.

Only ego-core needs to be installed: the CLI parser is built from a host with no plugins, and the
variables are read from ego_core's own source.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import attrs
import hooks_doc
import pytest
from hooks_doc import heading

import ego_core
from ego_core import PluginContext, build_host
from ego_core.kernel import hookspecs
from ego_core.kernel.config import PluginSelection, ServerConfig, Settings
from ego_core.kernel.markers import HookKind, spec
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
    """``name(param, ...)`` of every hook spec (the core's and those built-in plugins publish), parameters in the
    spec's order (``self`` left out)."""
    return [heading(name, function).removeprefix("## ") for name, (_cls, function) in hooks_doc.hooks().items()]


def test_every_hook_spec_is_collected() -> None:
    names = [signature.split("(")[0] for signature in hook_signatures()]
    assert set(hookspecs.hook_names()) <= set(names)
    assert len(names) == len(set(names))
    assert "on_wake_up(ctx)" in hook_signatures()


@pytest.mark.parametrize("signature", hook_signatures())
def test_hook_has_its_signature_heading(signature: str) -> None:
    headings = {line.strip() for line in read("hooks.md").splitlines() if line.startswith("## ")}
    assert f"## {signature}" in headings, f"docs/hooks.md needs a section headed exactly `## {signature}`"


def test_hooks_reference_documents_no_hook_that_does_not_exist() -> None:
    """Hooks of a publisher whose plugin is not installed here (the core's own env) are taken as they are."""
    page = read("hooks.md")
    skipped = hooks_doc.unavailable_modules()
    elsewhere = {name for module, name in hooks_doc.documented(page) if module in skipped}
    known = {signature.split("(")[0] for signature in hook_signatures()} | elsewhere
    documented = re.findall(r"^## ([a-z_]+)\(", page, flags=re.MULTILINE)
    assert set(documented) <= known, f"docs/hooks.md documents unknown hooks: {sorted(set(documented) - known)}"
    assert len(documented) == len(set(documented)), "a hook is documented twice"


def test_hooks_reference_is_generated_from_the_specs() -> None:
    """Each hook's heading, signature, kind and text come from its spec (``python tests/core/hooks_doc.py``)."""
    page = read("hooks.md")
    blocks = hooks_doc.render_blocks()
    documented = [name for _module, name in hooks_doc.documented(page)]
    assert len(documented) == len(set(documented)), "docs/hooks.md has a generated block twice"
    missing = [name for name in blocks if name not in documented]
    assert not missing, f"docs/hooks.md has no generated block for {missing}: run python tests/core/hooks_doc.py"
    skipped = hooks_doc.unavailable_modules()
    gone = [name for module, name in hooks_doc.documented(page) if name not in blocks and module not in skipped]
    assert not gone, f"docs/hooks.md has a generated block for hooks that do not exist: {gone}"
    written = hooks_doc.hand_written_headings(page)
    assert not written, f"docs/hooks.md has hook sections outside the generated blocks: {written}"
    assert page == hooks_doc.expected_page(page), (
        "docs/hooks.md differs from the hook specs: run python tests/core/hooks_doc.py (and read the prose around "
        "the blocks it changes)"
    )


class PublishedSpecs:
    @spec(HookKind.NOTIFICATION)
    def on_published(self, ctx: PluginContext) -> None:
        """A hook a plugin publishes."""


class TwiceSpecs:
    @spec(HookKind.LIFECYCLE)
    def on_startup(self, ctx: PluginContext) -> None:
        """The core's hook, declared again."""


def test_hooks_a_plugin_publishes_are_documented_with_the_core_s(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("published_api")
    module.PublishedSpecs = PublishedSpecs  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "published_api", module)
    monkeypatch.setattr(hooks_doc, "PUBLISHED", (("published_api", "PublishedSpecs", "published_api.py"),))
    blocks = hooks_doc.render_blocks()
    assert list(blocks)[-1] == "on_published"
    module_path, text = blocks["on_published"]
    assert module_path == "tests/core/test_docs.py"
    assert "@hookimpl(optionalhook=True)\ndef on_published(self, ctx: PluginContext) -> None: ..." in text
    assert "**Kind:** [notification](#kinds)." in text
    assert "`on_published`" in blocks[hooks_doc.KINDS][1]
    assert "@hookimpl\ndef on_wake_up(self, ctx: PluginContext) -> Section | None: ..." in blocks["on_wake_up"][1]


def test_a_hook_declared_twice_cannot_be_documented(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("twice_api")
    module.TwiceSpecs = TwiceSpecs  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "twice_api", module)
    monkeypatch.setattr(hooks_doc, "PUBLISHED", (("twice_api", "TwiceSpecs", "twice_api.py"),))
    with pytest.raises(hooks_doc.HookDocError, match="on_startup is declared by LifecycleSpecs and TwiceSpecs"):
        hooks_doc.hooks()


def test_a_hand_written_hook_section_is_found() -> None:
    page = read("hooks.md") + "\n## on_wake_up(ctx)\n\nWritten by hand.\n"
    assert hooks_doc.hand_written_headings(page) == ["## on_wake_up(ctx)"]


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
    for path in sorted(CORE.rglob("*.py")):
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
    from contracts_doc import documented, expected_page, render_blocks, unavailable_modules

    page = read("services.md")
    blocks = render_blocks()
    assert {("ego_core/services.py", "MemoryService"), ("ego_core/types.py", "Memory")} <= set(blocks)
    missing = sorted(name for _module, name in set(blocks) - documented(page))
    assert not missing, f"docs/services.md has no generated block for {missing}: run python tests/core/contracts_doc.py"
    skipped = unavailable_modules()
    gone = sorted(name for module, name in documented(page) - set(blocks) if module not in skipped)
    assert not gone, f"docs/services.md documents names the code no longer has: {gone}"
    assert page == expected_page(page), (
        "docs/services.md differs from the code: run python tests/core/contracts_doc.py (and read the prose around "
        "the blocks it changes)"
    )


def test_every_service_contract_is_exported_and_in_the_reference() -> None:
    import importlib

    from contracts_doc import PLUGIN_CONTRACTS, unavailable_modules

    import ego_core.services

    page = read("services.md")
    for name, value in vars(ego_core.services).items():
        if isinstance(value, type) and value.__module__ == "ego_core.services" and not name.startswith("_"):
            assert name in ego_core.__all__, name
            assert f"class {name}(" in page or f"class {name}:" in page, name
    installed = [module for module, path in PLUGIN_CONTRACTS.items() if path not in unavailable_modules()]
    for module_name in installed:
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if isinstance(value, type) and value.__module__ == module_name and not name.startswith("_"):
                assert name in module.__all__, f"{module_name}.{name}"
                assert f"class {name}(" in page or f"class {name}:" in page, f"{module_name}.{name}"


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
    for name in hooks_doc.hooks():
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
