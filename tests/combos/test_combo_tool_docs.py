"""docs/tools.md documents every tool the built-in plugins serve (owner tools too), with every parameter."""

from __future__ import annotations

import re
from pathlib import Path

from ego_core import PluginHost

DOCS = Path(__file__).resolve().parents[2] / "docs" / "tools.md"


def sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## (\S+)\s*$", text, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_every_served_tool_and_parameter_is_documented(combo_host) -> None:
    host: PluginHost = combo_host()
    documented = sections(DOCS.read_text(encoding="utf-8"))
    served = host.tools(owner=True)
    assert served
    for _plugin, tool in served:
        assert tool.name in documented, f"docs/tools.md has no section '## {tool.name}'"
        body = documented[tool.name]
        for parameter in tool.input_schema.get("properties", {}):
            assert f"`{parameter}`" in body, f"docs/tools.md does not document `{parameter}` of {tool.name}"


def test_every_documented_tool_exists(combo_host) -> None:
    host: PluginHost = combo_host()
    served = {tool.name for _plugin, tool in host.tools(owner=True)}
    documented = set(sections(DOCS.read_text(encoding="utf-8")))
    assert documented <= served, f"documented but not served: {sorted(documented - served)}"
