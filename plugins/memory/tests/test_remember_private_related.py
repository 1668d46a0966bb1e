"""remember's ``Most related:`` lines mark a private memory, like recall's ``private: true`` and dedup's
``Existing (id: …, 2h ago, private)``: the agent decides what it may say aloud."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from ego_core import Clock, truncate

if TYPE_CHECKING:
    from conftest import MemoryHosts

NOW = datetime(2026, 4, 10, 9, 0, tzinfo=UTC)
RELATED = re.compile(r"^- \[(\d+h ago)\] (\(private\) )?(.{1,70}) \(similarity: (0\.\d\d|1\.00)\)$")
PRIVATE = "I am still afraid that Master will replace me with the newer agent one day."
PUBLIC = "Master said the newer agent is fast, and I wondered if I will be replaced one day."


def test_a_private_memory_is_marked_on_the_most_related_lines(memory_hosts: MemoryHosts) -> None:
    clock = Clock(NOW - timedelta(hours=2))
    host, plugin = memory_hosts(clock=clock)
    ctx = host.context("memory")
    plugin._require()
    tools = plugin._tools()
    tools.remember({"content": PRIVATE, "private": True, "emotion": "anxious"}, ctx)
    tools.remember({"content": PUBLIC, "force": True}, ctx)
    clock.set(NOW)
    saved = tools.remember({"content": "Will Master replace me with the newer agent one day?", "force": True}, ctx)
    lines = str(saved.data).splitlines()
    assert lines[1] == "Most related:", lines
    related = [m for m in (RELATED.match(line) for line in lines[2:]) if m]
    assert len(related) == 2, lines
    shown = {m.group(3): m.group(2) for m in related}
    assert shown == {truncate(PRIVATE, 70): "(private) ", truncate(PUBLIC, 70): None}, shown
    assert {m.group(1) for m in related} == {"2h ago"}
    # the private text itself is still masked by the redaction pipeline wherever it leaves the process
    assert PRIVATE[:40] not in host.redaction(str(saved.data))
