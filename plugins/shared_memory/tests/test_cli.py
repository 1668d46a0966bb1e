"""`ego gateway …` and `ego shared …`: the registered commands in-process, the real `ego` once, and an
end-to-end run: a real `ego gateway serve` process, `ego serve` over stdio with the agent's tools, driven by
the MCP SDK client."""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from shared_support import ProcessGateway, clean_env, ego_command, event

from ego_core.testing import HostFactory, tool_text
from ego_shared_memory import SharedMemoryPlugin
from ego_shared_memory.events import parse_event
from ego_shared_memory.store import EventFilter, SqlStore, open_store
from ego_shared_memory.tokens import create_token

NOW = datetime.now(UTC)


@pytest.fixture
def ego(make_host: HostFactory, capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Runs `ego <group> <name> ARGS` in-process: the plugin's registered command, parsed as ego parses it."""
    host = make_host({"shared_memory": SharedMemoryPlugin()})
    commands = {(command.group, command.name): command for _plugin, command in host.commands()}

    def run(group: str, name: str, *args: str) -> tuple[int, str, str]:
        command = commands[(group, name)]
        parser = argparse.ArgumentParser(prog=f"ego {group} {name}", allow_abbrev=False)
        command.configure(parser)
        code = command.run(parser.parse_args(list(args)), host)
        out, err = capsys.readouterr()
        return code, out, err

    return run


def put(store: SqlStore, agent: str = "claude", when: datetime = NOW, **fields: object) -> str:
    draft, _warnings = parse_event(event(**fields), agent_id=agent, max_chars=4000)
    return store.append(draft, when).event.event_id


def test_token_create_list_revoke(ego, store_url: str, store: SqlStore) -> None:
    code, out, err = ego("gateway", "token", "create", "claude", "--db", store_url)
    assert code == 0
    token = out.strip()
    assert token.startswith("egs_")
    assert "shown only once" in err
    assert token not in err
    code, out, _err = ego("gateway", "token", "list", "--db", store_url)
    assert re.search(r"^claude  agent  [0-9a-f]{12}…  created \S+  active$", out, re.MULTILINE)
    assert token not in out
    code, _out, err = ego("gateway", "token", "create", "mallory", "--db", store_url)
    assert code == 2
    assert "not among the configured agents" in err
    code, out, _err = ego("gateway", "token", "create", "ops", "--admin", "--db", store_url)
    assert code == 0
    code, out, _err = ego("gateway", "token", "revoke", "claude", "--db", store_url)
    assert out.strip() == "revoked 1 token(s) of claude"
    assert store.token_owner(hashlib.sha256(token.encode()).hexdigest()) is None


def test_the_real_command_line(store_url: str, store: SqlStore, tmp_path: Path) -> None:
    env = clean_env(EGO_DATA_DIR=str(tmp_path / "data"), EGO_GATEWAY_DB=store_url)
    made = subprocess.run(
        [*ego_command(), "gateway", "token", "create", "openclaw"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    assert store.token_owner(hashlib.sha256(made.stdout.strip().encode()).hexdigest()) == ("openclaw", "agent")
    missing = subprocess.run(
        [*ego_command(), "shared", "list"],
        env=clean_env(EGO_DATA_DIR=str(tmp_path / "data")),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert missing.returncode == 2
    assert "ego: error: no store: give --db URL or set EGO_GATEWAY_DB" in missing.stderr


def test_every_command_needs_a_store(ego, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    code, _out, err = ego("shared", "list")
    assert code == 2
    assert "--db URL or set EGO_GATEWAY_DB" in err
    code, _out, err = ego("shared", "list", "--db", "mysql://x")
    assert code == 2
    assert "unsupported store URL" in err
    monkeypatch.setenv("EGO_GATEWAY_DB", f"sqlite:///{tmp_path / 'env.db'}")
    code, _out, err = ego("shared", "list")
    assert (code, err.strip()) == (0, "no events")


def test_list_search_conflicts_and_audit(ego, store_url: str, store: SqlStore) -> None:
    first = put(store, content_md="Heartbeat every 30 minutes.")
    second = put(store, "gemini", run_id="r2", content_md="Heartbeat every hour.")
    put(store, "gemini", scope="agent:gemini", dedupe_key="fact:mine", kind="fact", content_md="Mine.")
    code, out, _err = ego("shared", "list", "--db", store_url)
    assert code == 0
    assert len(out.splitlines()) == 3
    code, out, _err = ego("shared", "list", "--scope", "agent:*", "--db", store_url)
    assert "agent:gemini" in out
    assert len(out.splitlines()) == 1
    code, out, _err = ego("shared", "search", "heartbeat", "hour", "--db", store_url)
    assert second in out
    assert first not in out
    code, out, _err = ego("shared", "list", "--json", "--kind", "config", "--db", store_url)
    assert {e["event_id"] for e in json.loads(out)} == {first, second}
    code, out, _err = ego("shared", "conflicts", "--db", store_url)
    assert f"{second} (read) vs {first}" in out
    assert "not asked yet" in out
    code, out, _err = ego("shared", "janitor", "--db", store_url)
    assert code == 0
    assert "1 conflict_resolution event(s) written" in out
    assert "pins: global:" in out
    code, out, _err = ego("shared", "audit", "--db", store_url)
    assert "janitor  janitor: steps: scan, conflicts, ttl, consolidate" in out
    code, out, _err = ego("shared", "consolidate", "--json", "--db", store_url)
    assert {line["scope"] for line in json.loads(out)} == {"global", "agent:gemini"}
    code, _out, err = ego("shared", "list", "--scope", "team:x", "--db", store_url)
    assert code == 2
    assert "--scope" in err


def test_cleanup_proposes_a_plan_and_deletes_only_when_it_is_confirmed(ego, store_url: str, store: SqlStore) -> None:
    old = put(store, "gemini", NOW - timedelta(days=45), scope="agent:gemini", content_md="Old note.")
    put(store, "gemini", NOW - timedelta(days=45), content_md="Old but global.")
    put(store, "gemini", NOW, scope="agent:gemini", dedupe_key="fact:new", content_md="New note.")
    code, out, err = ego("shared", "cleanup", "--older-than", "30d", "--scope", "agent:*", "--db", store_url)
    assert code == 0
    assert old in out
    assert len(out.splitlines()) == 1
    assert "nothing was deleted" in err
    assert store.event_count() == 3
    plan_id = err.split("--confirm ")[1].split()[0]
    code, out, _err = ego("shared", "cleanup", "--confirm", plan_id, "--db", store_url)
    assert "deleted 1 event(s)" in out
    assert store.get(old) is None
    assert store.event_count() == 2
    code, _out, err = ego("shared", "cleanup", "--db", store_url)
    assert code == 2
    assert "--older-than AGE and/or --expired" in err
    code, _out, err = ego("shared", "cleanup", "--older-than", "soon", "--db", store_url)
    assert code == 2


def test_export_markdown(ego, store_url: str, store: SqlStore, tmp_path: Path) -> None:
    kept = put(store, content_md="The vault lives in ~/notes.\nSecond line.")
    put(store, "gemini", scope="agent:gemini", dedupe_key="fact:mine", kind="fact", content_md="Only for gemini.")
    vault = tmp_path / "vault" / "Shared"
    code, out, _err = ego("shared", "export-md", "--out", str(vault), "--db", store_url)
    assert code == 0
    assert "wrote 2 file(s)" in out
    pinned = (vault / "Pinned.md").read_text(encoding="utf-8")
    assert kept in pinned
    assert "## global" in pinned
    (daily,) = sorted((vault / "daily").glob("*.md"))
    text = daily.read_text(encoding="utf-8")
    assert "The vault lives in ~/notes." in text
    assert "  Second line." in text
    assert "Only for gemini" not in text + pinned
    code, _out, _err = ego("shared", "export-md", "--out", str(vault), "--include-agent-scopes", "--db", store_url)
    assert "Only for gemini" in daily.read_text(encoding="utf-8")


def test_end_to_end_gateway_process_and_stdio_agent(pg_url: str, tmp_path: Path) -> None:
    """An operator's replica (`ego gateway serve` on PostgreSQL) and an agent's `ego serve` over stdio."""
    store = open_store(pg_url)
    gateway = ProcessGateway(pg_url, tmp_path / "gateway-data").wait_ready()
    try:
        code_env = clean_env(EGO_DATA_DIR=str(tmp_path / "agent-data"))
        token = create_token(store, "gemini", role="agent", agents=("gemini",), now=NOW)
        env = {**code_env, "EGO_SHARED_URL": gateway.url, "EGO_SHARED_TOKEN": token, "EGO_SHARED_PROJECT": "ego"}
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "ego_core.mcp.cli", "serve", "--plugins", "shared_memory"], env=env
        )

        async def session() -> tuple[str, str]:
            async with Client(params) as client:
                saved = await client.call_tool(
                    "shared_append",
                    {
                        "scope": "project:ego",
                        "kind": "workflow",
                        "dedupe_key": "workflow:release",
                        "content": "Release on Fridays.",
                    },
                )
                read = await client.call_tool("shared_snapshot", {})
                return tool_text(saved), tool_text(read)

        saved, read = anyio.run(session)
        assert "Shared (evt_" in saved
        assert "gemini · project:ego · workflow `workflow:release`" in read
        (stored,) = store.list_events(EventFilter())
        assert stored.agent_id == "gemini"
        health = httpx.get(gateway.url + "/v1/health").json()
        assert health["backend"] == "postgresql"
    finally:
        gateway.stop()
        store.close()
