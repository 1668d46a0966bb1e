"""Two processes on one data directory lose nothing; a kill -9 in the middle of writing leaves a readable state
that holds every committed write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ego_core import Check, PluginHost, Settings, build_host
from ego_core.testing import call_ok, mcp_client
from ego_self_model import SelfModelPlugin

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from ego_core import Settings, build_host
    from ego_self_model import SelfModelPlugin

    data_dir, tag, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    plugin = SelfModelPlugin()
    host = build_host(Settings(data_dir=data_dir, timezone="UTC"), autoload=False, plugins={"self_model": plugin})
    host.start()
    model, ctx = plugin.model, host.context("self_model")
    for number in range(count if count >= 0 else 10**9):
        model.update_self({"field": "growth_log", "value": f"{tag} entry {number}"}, ctx)
        if count >= 0:  # a list holds 20 items: only the bounded runs add to one
            model.update_self({"field": "values", "value": f"{tag} value {number % 10}"}, ctx)
        model.update_relationship({"person": f"{tag}-friend", "field": "notes", "value": f"note {number % 10}"}, ctx)
        if number == 20:
            print("writing", flush=True)
    host.stop()
    """
)


def child_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("EGO_")}


def writer(data_dir: Path, tag: str, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(data_dir), tag, str(count)],
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def open_host(data_dir: Path) -> tuple[PluginHost, SelfModelPlugin]:
    plugin = SelfModelPlugin()
    host = build_host(Settings(data_dir=data_dir, timezone="UTC"), autoload=False, plugins={"self_model": plugin})
    host.start()
    return host, plugin


def growth_texts(plugin: SelfModelPlugin) -> list[str]:
    assert plugin.model is not None
    store = plugin.model.store
    with store.reading() as db:
        return [entry.text for entry in store.growth(db)]


def test_two_processes_writing_one_data_dir_lose_nothing(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    children = [writer(data_dir, tag, 60) for tag in ("north", "south")]
    for child in children:
        _out, err = child.communicate(timeout=180)
        assert child.returncode == 0, err
    host, plugin = open_host(data_dir)
    try:
        texts = growth_texts(plugin)
        assert plugin.model is not None
        with plugin.model.store.reading() as db:
            values = plugin.model.store.fields(db)["values"]
            people = {p.name: p.notes for p in plugin.model.store.people(db)}
    finally:
        host.stop()
    for tag in ("north", "south"):
        assert sorted(t for t in texts if t.startswith(tag)) == sorted(f"{tag} entry {n}" for n in range(60))
        assert sorted(v for v in values if v.startswith(tag)) == sorted(f"{tag} value {n}" for n in range(10))
        assert sorted(people[f"{tag}-friend"]) == sorted(f"note {n}" for n in range(10))


def test_a_kill_during_writes_leaves_every_committed_write(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    for _round in range(3):
        child = writer(data_dir, f"round{_round}", -1)
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "writing"
        time.sleep(0.2)
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)
        host, plugin = open_host(data_dir)
        try:
            checks = host.hooks.doctor_checks()
            ((_plugin, ours),) = [c for c in checks if c[0] == "self_model"]
            assert not isinstance(ours, Check)
            (check,) = [c for c in ours if c.name == "self-model state"]
            assert check.ok, check.detail
            numbers = sorted(int(t.rsplit(" ", 1)[1]) for t in growth_texts(plugin) if t.startswith(f"round{_round}"))
            assert numbers == list(range(len(numbers)))
            assert len(numbers) > 20
        finally:
            host.stop()


@pytest.mark.anyio
async def test_two_hosts_in_one_process_see_each_others_writes(
    self_host: Callable[..., PluginHost], make_host: Any, ego_settings: Settings
) -> None:
    first = self_host()
    second = make_host({"self_model": SelfModelPlugin()})
    async with mcp_client(first) as one, mcp_client(second) as two:
        await call_ok(one, "update_self", {"field": "values", "value": "honesty"})
        await call_ok(two, "update_self", {"field": "values", "value": "play"})
        assert "values: play, honesty" in await call_ok(one, "introspect")
