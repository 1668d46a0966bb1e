"""A private memory's text never appears in logs or workspace files, whatever the agent does."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ego_core import PluginHost
from ego_core.logs import configure_logging
from ego_core.services import MEMORY_STORE

WORDS = ["sky", "river", "letter", "kettle", "alert", "garden", "violin", "tea", "night", "Master", "fear", "hope"]

operation = st.one_of(
    st.tuples(st.just("remember"), st.booleans(), st.lists(st.sampled_from(WORDS), min_size=2, max_size=6)),
    st.tuples(st.just("recall"), st.booleans(), st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)),
    st.tuples(st.just("forget"), st.booleans(), st.lists(st.sampled_from(WORDS), max_size=0)),
    st.tuples(st.just("consolidate"), st.booleans(), st.lists(st.sampled_from(WORDS), max_size=0)),
)


def leaked(text: str, secrets_seen: list[str]) -> list[str]:
    return [secret for secret in secrets_seen if secret in text]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(operation, min_size=3, max_size=12))
def test_private_text_never_reaches_logs_or_workspace(combo_host, workspace: Path, tmp_path: Path, ops) -> None:
    logs = tmp_path / f"logs-{secrets.token_hex(4)}"
    configure_logging(logs, "DEBUG")
    host: PluginHost = combo_host()
    host.start()
    tools = {tool.name: tool for _plugin, tool in host.tools()}
    store = host.services.get(MEMORY_STORE)
    private_texts: list[str] = []
    ids: list[str] = []
    try:
        for kind, private, words in ops:
            if kind == "remember":
                # A unique marker makes any leak (whole, truncated or per line) detectable by substring.
                marker = f"PRIV{secrets.token_hex(5)}" if private else f"PUB{secrets.token_hex(5)}"
                content = f"{marker} " + " ".join(words) + "\nsecond line " + marker
                if private:
                    private_texts.append(marker)
                response = tools["remember"].handler({"content": content, "private": private, "force": True})
                found = re.search(r"mem_[0-9a-f]{12}", response.data if hasattr(response, "data") else str(response))
                if found:
                    ids.append(found.group(0))
            elif kind == "recall":
                tools["recall"].handler({"context": " ".join(words), "n_results": 5})
            elif kind == "forget" and ids:
                tools["forget"].handler({"memory_id": ids.pop(0)})
            elif kind == "consolidate":
                tools["consolidate"].handler({})
        assert store is not None
    finally:
        host.stop()
    written = [p for p in [*workspace.rglob("*"), *logs.rglob("*")] if p.is_file()]
    for path in written:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert not leaked(text, private_texts), f"private text in {path}"
