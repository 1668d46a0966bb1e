"""Each built-in plugin's page documents its configuration keys, environment variables and commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest
from combo_support import PLUGINS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plugins"


def config_keys(cls: Any) -> list[str]:
    keys: list[str] = []
    for field in attrs.fields(attrs.resolve_types(cls)):
        keys.append(field.name)
        if isinstance(field.type, type) and attrs.has(field.type):
            keys.extend(config_keys(field.type))
    return keys


@pytest.mark.parametrize("plugin_id", sorted(PLUGINS))
def test_the_plugin_page_documents_keys_variables_and_commands(combo_host, plugin_id: str) -> None:
    page = DOCS / f"{plugin_id}.md"
    assert page.exists(), f"docs/plugins/{plugin_id}.md is missing"
    text = page.read_text(encoding="utf-8")
    plugin = PLUGINS[plugin_id]()
    config_class = getattr(plugin, "config_class", None)
    if config_class is not None:
        for key in config_keys(config_class):
            assert f"`{key}`" in text, f"docs/plugins/{plugin_id}.md does not document the key `{key}`"
    for variable in getattr(plugin, "config_env", {}) or {}:
        assert variable in text, f"docs/plugins/{plugin_id}.md does not mention {variable}"
    host = combo_host()
    for owner, command in host.commands():
        if owner == plugin_id:
            words = " ".join(part for part in ("ego", command.group, command.name) if part)
            assert words in text, f"docs/plugins/{plugin_id}.md does not document `{words}`"
