"""Property: after any sequence of remember / shared_append calls, no private memory's text is in the
gateway's storage, whatever the agent tries to share (the memory plugin's real private-memory redactor)."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared_support import ThreadGateway, agent_host

from ego_core import ToolError
from ego_core.testing import HostFactory
from ego_shared_memory.store import EventFilter, SqlStore

WORDS = ["violet", "balcony", "heartbeat", "kettle", "letter", "garden", "night shift", "river", "Master", "quiet"]

operation = st.one_of(
    st.tuples(st.just("remember"), st.booleans(), st.lists(st.sampled_from(WORDS), min_size=4, max_size=8)),
    # share a remembered text (by index), whole or a long passage of it, wrapped in the agent's own words
    st.tuples(st.just("share"), st.integers(0, 20), st.sampled_from(["whole", "passage", "first line"])),
)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(operation, min_size=3, max_size=10))
def test_no_private_text_reaches_the_gateway(
    make_host: HostFactory,
    gateway: ThreadGateway,
    token_for: Callable[..., str],
    store: SqlStore,
    ops: list[tuple[str, object, object]],
) -> None:
    host = agent_host(make_host, {"gateway_url": gateway.url, "token": token_for("claude")}, memory=True)
    host.start()
    tools = {tool.name: tool for _plugin, tool in host.tools()}
    owners = {tool.name: host.context(plugin) for plugin, tool in host.tools()}
    remembered: list[tuple[str, bool]] = []
    private_markers: list[str] = []
    refusals: list[str] = []
    try:
        for kind, first, second in ops:
            if kind == "remember":
                private = bool(first)
                marker = f"{'PRIV' if private else 'PUB'}{secrets.token_hex(5)}"
                words = " ".join(second)  # type: ignore[arg-type]
                content = f"{marker} remembered {words} that evening\nand later {words} again {marker}"
                tools["remember"].handler({"content": content, "private": private, "force": True}, owners["remember"])
                remembered.append((content, private))
                if private:
                    private_markers.append(marker)
                continue
            if not remembered:
                continue
            content, _private = remembered[int(first) % len(remembered)]  # type: ignore[call-overload]
            if second == "whole":
                shared = content
            elif second == "passage":
                shared = content[: max(30, len(content) // 2)]
            else:
                shared = content.splitlines()[0]
            try:
                tools["shared_append"].handler(
                    {
                        "scope": "global",
                        "kind": "fact",
                        "dedupe_key": f"fact:{secrets.token_hex(4)}",
                        "content": f"From my notes: {shared}",
                    },
                    owners["shared_append"],
                )
            except ToolError as exc:  # refused: the property is about what got through
                refusals.append(exc.message)
    finally:
        host.stop()
    assert all("private memories" in message for message in refusals), refusals
    stored = store.list_events(EventFilter(include_deprecated=True, limit=10_000))
    for event in stored:
        for marker in private_markers:
            assert marker not in event.content_md
