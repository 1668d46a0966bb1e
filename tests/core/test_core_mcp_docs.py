"""The MCP surface's documentation agrees with what is tested: docs/mcp.md names every conformance scenario that
does not apply to ego (conformance/not_applicable.toml, which `tox -e conformance` reads), the committed report
docs/conformance.json agrees with that list, and the setup guide tells Claude Desktop and OpenClaw users about
the prompts."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def not_applicable() -> dict[str, str]:
    with (ROOT / "conformance" / "not_applicable.toml").open("rb") as file:
        return dict(tomllib.load(file)["not_applicable"])


def test_every_scenario_that_does_not_apply_is_named_with_a_reason_in_the_docs() -> None:
    text = (DOCS / "mcp.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([a-z0-9-]+)` \| (.+) \|$", text, flags=re.MULTILINE))
    skipped = not_applicable()
    assert all(reason.strip() for reason in skipped.values())
    assert set(skipped) <= set(rows), f"docs/mcp.md has no row for {sorted(set(skipped) - set(rows))}"


def test_the_committed_conformance_report_agrees_with_the_list() -> None:
    report = json.loads((DOCS / "conformance.json").read_text(encoding="utf-8"))
    package = json.loads((ROOT / "conformance" / "package.json").read_text(encoding="utf-8"))
    suite = "@modelcontextprotocol/conformance"
    assert report["suite"] == f"{suite}@{package['dependencies'][suite]}"
    skipped = not_applicable()
    scenarios = {s["scenario"]: s for s in report["scenarios"]}
    assert {name for name, s in scenarios.items() if not s["applies"]} == set(skipped)
    applicable = [s for s in scenarios.values() if s["applies"]]
    assert applicable
    assert all(s["outcome"] == "passed" for s in applicable)
    summary = report["summary"]
    assert summary == {
        "scenarios": len(scenarios),
        "applicable": len(applicable),
        "applicable_passed": len(applicable),
        "not_applicable": len(skipped),
    }
    text = " ".join((DOCS / "mcp.md").read_text(encoding="utf-8").split())
    assert f"Of the {len(scenarios)} scenarios, the {len(applicable)} that apply to ego pass" in text
    for scenario in applicable:
        assert f"`{scenario['scenario']}`" in text
    assert "/tmp/" not in json.dumps(report)
    assert not re.search(r"127\.0\.0\.1:\d+", json.dumps(report))


def test_the_setup_guide_tells_claude_desktop_and_openclaw_users_about_the_prompts() -> None:
    text = (DOCS / "agent-setup.md").read_text(encoding="utf-8")
    openclaw = text.split("\n## OpenClaw\n", 1)[1].split("\n## A Japanese-speaking agent", 1)[0]
    claude = text.split("\n## Claude Desktop\n", 1)[1].split("\n## Plugin sets", 1)[0]
    for section in (openclaw, claude):
        assert "`heartbeat`" in section or "**heartbeat**" in section
        assert "`wake-up`" in section or "**wake-up**" in section
