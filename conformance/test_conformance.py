"""The official MCP conformance suite (server scenarios, the version pinned in package.json) against a real
``ego serve --http``, through the token-adding proxy (the suite cannot send a bearer token).

Every scenario of the suite's active set either passes or is listed in not_applicable.toml with the reason;
the outcome of each is written as JSON, and docs/conformance.json (committed) must agree with it:
``CONFORMANCE_WRITE_REPORT=1 tox -e conformance`` writes it again.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from conformance_support import NodeTools, installed_plugins

import ego_core

HERE = Path(__file__).resolve().parent
REPORT = HERE.parent / "docs" / "conformance.json"
SUITE = "@modelcontextprotocol/conformance"
RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")
PASSING = {"SUCCESS", "INFO", "WARNING"}
"""Check statuses that are not failures (a WARNING is advice: the suite itself counts it as passed)."""


def not_applicable() -> dict[str, str]:
    with (HERE / "not_applicable.toml").open("rb") as file:
        return dict(tomllib.load(file)["not_applicable"])


def suite_version() -> str:
    return str(json.loads((HERE / "package.json").read_text(encoding="utf-8"))["dependencies"][SUITE])


def run_suite(tools: NodeTools, url: str, out: Path, home: Path) -> subprocess.CompletedProcess[str]:
    entry = tools.package(SUITE) / "dist" / "index.js"
    command = [str(tools.node), str(entry), "server", "--url", url, "--output-dir", str(out)]
    return subprocess.run(command, env=tools.env(home), capture_output=True, text=True, timeout=900, check=False)


def read_results(out: Path) -> dict[str, list[dict[str, Any]]]:
    """Scenario -> its checks, from the suite's ``<out>/server-<scenario>-<time>/checks.json``."""
    results: dict[str, list[dict[str, Any]]] = {}
    for directory in sorted(out.iterdir()):
        match = RESULT_DIR.match(directory.name)
        if match is None or not (directory / "checks.json").is_file():
            continue
        results[match["scenario"]] = json.loads((directory / "checks.json").read_text(encoding="utf-8"))
    return results


def outcome(checks: list[dict[str, Any]]) -> str:
    statuses = {str(check.get("status")) for check in checks}
    if not statuses <= PASSING:
        return "failed"
    return "passed" if "SUCCESS" in statuses else "nothing checked"


def scrub(text: str, url: str) -> str:
    """A check's message as it may be committed: without the address of this run."""
    host = urlsplit(url).netloc
    return text.replace(url, "<url>").replace(host, "<host>")


def report(results: dict[str, list[dict[str, Any]]], skipped: dict[str, str], url: str) -> dict[str, Any]:
    scenarios = []
    for name, checks in results.items():
        entry: dict[str, Any] = {
            "scenario": name,
            "applies": name not in skipped,
            "outcome": outcome(checks),
            "checks": [
                {"id": check.get("id"), "status": check.get("status")}
                | ({"message": scrub(str(check["errorMessage"]), url)} if check.get("errorMessage") else {})
                for check in checks
            ],
        }
        if name in skipped:
            entry["why_not"] = skipped[name]
        scenarios.append(entry)
    applicable = [s for s in scenarios if s["applies"]]
    return {
        "suite": f"{SUITE}@{suite_version()}",
        "command": "tox -e conformance",
        "server": f"ego serve --http (ego-core {ego_core.__version__}; plugins: core, {', '.join(installed_plugins())})"
        ", one agent token, through conformance/token_proxy.py",
        "summary": {
            "scenarios": len(scenarios),
            "applicable": len(applicable),
            "applicable_passed": sum(s["outcome"] == "passed" for s in applicable),
            "not_applicable": len(scenarios) - len(applicable),
        },
        "scenarios": scenarios,
    }


def essence(document: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What must not change unnoticed: the scenarios, whether each applies, and for those that do their outcome
    and their checks' status (what a scenario that does not apply happens to find is recorded, not compared)."""
    return [
        (s["scenario"], s["applies"])
        + ((s["outcome"], tuple((c["id"], c["status"]) for c in s["checks"])) if s["applies"] else ())
        for s in document["scenarios"]
    ]


def test_the_conformance_suite_passes_every_scenario_that_applies_to_ego(
    node_tools: NodeTools, proxy_url: str, tmp_path: Path
) -> None:
    done = run_suite(node_tools, proxy_url, tmp_path / "results", tmp_path / "home")
    results = read_results(tmp_path / "results")
    assert results, f"the suite wrote no results:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    skipped = not_applicable()

    stale = sorted(set(skipped) - set(results))
    assert not stale, f"not_applicable.toml lists scenarios the suite does not run: {stale}"
    failed = {name: checks for name, checks in results.items() if name not in skipped and outcome(checks) != "passed"}
    assert not failed, "applicable scenarios that did not pass:\n" + json.dumps(failed, indent=2)[:6000]

    document = report(results, skipped, proxy_url)
    written = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    (tmp_path / "conformance.json").write_text(written, encoding="utf-8")
    if os.environ.get("CONFORMANCE_WRITE_REPORT") == "1":
        REPORT.write_text(written, encoding="utf-8")
    committed = json.loads(REPORT.read_text(encoding="utf-8"))
    assert essence(committed) == essence(document), (
        "docs/conformance.json differs from this run: `CONFORMANCE_WRITE_REPORT=1 tox -e conformance` writes it"
    )
    assert committed["suite"] == document["suite"]
    assert document["summary"]["applicable"] == document["summary"]["applicable_passed"] >= 6
