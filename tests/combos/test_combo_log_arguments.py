"""Logs hold no argument text by default: after any session calling every served tool with distinctive free
text, no 12-character run of that text is in any log file. With ``log_arguments`` the values are logged,
redacted (a private memory's text stays out)."""

from __future__ import annotations

import string
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ego_core import PluginHost, Settings
from ego_core.testing import HostFactory, ToolRunner, configure_logging

FREE_TEXT = st.text(alphabet=string.ascii_letters + " ", min_size=14, max_size=60).filter(
    lambda text: len(set(text.replace(" ", ""))) >= 8
)
WINDOW = 12


def free_text_parameter(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "string" and not {"enum", "pattern", "format", "const"} & set(schema)


def example_value(schema: Mapping[str, Any], text: str) -> Any:
    """A value of the parameter's type; free-text strings (and lists/objects of them) carry ``text``."""
    kind = schema.get("type")
    if free_text_parameter(schema):
        return text
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "string":
        if schema.get("format") == "date" or "date" in str(schema.get("pattern", "")):
            return "2025-01-01"
        return "mem_0123456789ab" if "mem_" in str(schema.get("pattern", "")) else "x"
    if kind in ("number", "integer"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "array":
        items = schema.get("items", {})
        if items.get("type") == "number":
            return [0.0, 0.5]
        return [example_value(items, text)]
    if kind == "object":
        return {"note": text}
    return text


def arguments_for(input_schema: Mapping[str, Any], texts: Iterator[str]) -> dict[str, Any]:
    return {name: example_value(prop, next(texts)) for name, prop in input_schema.get("properties", {}).items()}


def log_text(directory: Path) -> str:
    return "".join(path.read_text(encoding="utf-8") for path in sorted(directory.glob("ego-*.jsonl")))


def runs(text: str) -> set[str]:
    folded = " ".join(text.split())
    return {folded[i : i + WINDOW] for i in range(len(folded) - WINDOW + 1) if folded[i : i + WINDOW].strip()}


@pytest.fixture
def all_plugins_host(make_host: HostFactory, ego_settings: Settings, tmp_path: Path) -> Callable[..., PluginHost]:
    """Every installed plugin (the `all` environment installs them all), the real model, a workspace."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()

    def build(**changes: Any) -> PluginHost:
        config = {"memory": {}, "workspace_sync": {"workspace_dir": str(workspace)}}
        host = make_host(autoload=True, config=config, settings=attrs.evolve(ego_settings, **changes))
        host.start()
        return host

    return build


def call_every_tool(host: PluginHost, texts: list[str]) -> list[str]:
    """Call each served tool once with free text from ``texts``; returns the free texts actually sent."""
    runner = ToolRunner(host)
    pool = iter(texts * 20)
    sent: list[str] = []

    async def session() -> None:
        for _plugin, tool in host.tools():
            args = arguments_for(tool.input_schema, pool)
            sent.extend(
                value
                for name, value in args.items()
                if isinstance(value, str) and free_text_parameter(tool.input_schema["properties"][name])
            )
            await runner.call(tool.name, args)

    anyio.run(session)
    return sent


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(FREE_TEXT, min_size=3, max_size=6, unique=True))
def test_default_logs_hold_no_run_of_argument_text(
    all_plugins_host: Callable[..., PluginHost], tmp_path_factory: pytest.TempPathFactory, texts: list[str]
) -> None:
    logs = tmp_path_factory.mktemp("logs")
    configure_logging(logs, "DEBUG")
    host = all_plugins_host()
    sent = call_every_tool(host, texts)
    assert sent, "no tool took free text"
    written = log_text(logs)
    assert '"event": "tool_call"' in written
    leaked = sorted({run for text in sent for run in runs(text) if run in written})
    assert not leaked


def test_log_arguments_logs_values_redacted(all_plugins_host: Callable[..., PluginHost], tmp_path: Path) -> None:
    logs = tmp_path / "logs-values"
    configure_logging(logs, "DEBUG")
    host = all_plugins_host(log_arguments=True)
    public = "the violet evening over the harbour"
    private = "I never told anyone about the broken lantern"
    runner = ToolRunner(host)

    async def session() -> None:
        await runner.call("remember", {"content": private, "private": True})
        await runner.call("recall", {"context": public})

    anyio.run(session)
    written = log_text(logs)
    assert public in written
    assert "lantern" not in written
