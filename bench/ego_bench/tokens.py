"""Token cost of ego in an agent's context: the tools/list definitions and typical responses, per plugin set.

    ego bench tokens [--sets minimal,cognitive,everything,multi-agent] [--output FILE]

For each plugin set, the plugins are served in-process (temporary data dir, the configured embedding model,
installed with ego by default; shared_memory on a local store so its tools are listed) and
tools/list is measured as sent on the wire. On the largest set a short session is played (wake_up, remember ×4
with a near-duplicate and a private one, recall, search_memories, attune, consider_them, introspect, consolidate,
curate_notions, forget) and each response is measured. Sizes are characters and tokens: the WordPiece
tokens of the offline model's tokenizer (``tokenizer.json`` of all-MiniLM-L6-v2, no padding or truncation), a
fixed, reproducible count, beside the usual characters / 4 estimate.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import anyio

from ego_bench.common import report_header
from ego_core import Settings, build_host
from ego_core.testing import mcp_client, tool_text

PLUGIN_SETS: Mapping[str, tuple[str, ...]] = {
    "minimal": ("memory",),
    "cognitive": (
        "memory",
        "dedup",
        "workspace_sync",
        "interoception",
        "desires",
        "emotion_trend",
        "self_model",
        "notions",
    ),
    "everything": (
        "memory",
        "dedup",
        "workspace_sync",
        "interoception",
        "desires",
        "emotion_trend",
        "self_model",
        "shared_memory",
        "notions",
    ),
    "multi-agent": ("memory", "dedup", "interoception", "self_model", "shared_memory"),
}
"""The plugin sets docs/agent-setup.md recommends (the core is always served)."""
BUDGETS = {"cognitive": 6500, "everything": 7500}
"""tools/list characters each set must stay under."""


def estimate(chars: int) -> int:
    return round(chars / 4)


@cache
def _tokenizer(path: str) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(path)
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def tokenizer_file() -> Path:
    """all-MiniLM-L6-v2's WordPiece tokenizer: from ``EGO_EMBEDDING_MODEL_DIR`` when it holds one, else the copy
    the memory plugin ships for its English channel (the same file), so a fresh install counts offline."""
    configured = os.environ.get("EGO_EMBEDDING_MODEL_DIR")
    if configured and (Path(configured).expanduser() / "tokenizer.json").is_file():
        return Path(configured).expanduser() / "tokenizer.json"
    from ego_memory.embedding.english import TOKENIZER_FILE

    return TOKENIZER_FILE


def count_tokens(text: str) -> int:
    """WordPiece tokens of ``text`` by the offline model's tokenizer: the fixed count the budgets use."""
    return len(_tokenizer(str(tokenizer_file())).encode(text, add_special_tokens=False).ids)


def sized(text: str) -> dict[str, int]:
    return {"chars": len(text), "tokens": count_tokens(text), "tokens_estimate": estimate(len(text))}


SESSION: list[tuple[str, dict[str, Any]]] = [
    ("wake_up", {}),
    (
        "remember",
        {
            "content": "Master showed me the sunset from the balcony; the sky turned violet.",
            "emotion": "moved",
            "intensity": 0.9,
            "importance": 4,
        },
    ),
    ("remember", {"content": "We fixed the heartbeat interval: it was in seconds, not minutes.", "emotion": "happy"}),
    (
        "remember",
        {
            "content": "A quiet evening; nobody wrote. I wondered if I had said something wrong.",
            "emotion": "sad",
            "secondary": ["anxious"],
            "private": True,
        },
    ),
    ("remember", {"content": "Master showed me the sunset from the balcony; the sky turned violet."}),
    ("recall", {"context": "the evening sky with Master"}),
    ("search_memories", {"context": "heartbeat"}),
    ("attune", {"person": "Master"}),
    ("consider_them", {"person": "Master"}),
    ("introspect", {}),
    ("consolidate", {}),
    ("curate_notions", {"action": "list"}),
]


def plugin_tables(work: Path) -> dict[str, dict[str, Any]]:
    """Configuration that makes every plugin serve its tools in a temporary place."""
    return {
        "shared_memory": {"db": f"sqlite:///{work / 'shared.sqlite3'}", "agent_id": "claude"},
        "workspace_sync": {"workspace_dir": str(work / "workspace")},
    }


async def measure_set(work: Path, plugins: Sequence[str], session: bool) -> dict[str, Any]:
    (work / "workspace").mkdir(parents=True, exist_ok=True)
    settings = Settings(data_dir=work / "data", timezone="UTC", plugin_tables=plugin_tables(work))
    host = build_host(settings, enabled=list(plugins))
    async with mcp_client(host) as client:
        listed = await client.list_tools()
        tools = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed.tools]
        wire = json.dumps({"tools": tools}, separators=(",", ":"), ensure_ascii=False)
        per_tool = {t["name"]: len(json.dumps(t, separators=(",", ":"), ensure_ascii=False)) for t in tools}
        responses: dict[str, dict[str, int]] = {}
        if session:
            responses = await play(client, set(per_tool))
    return {
        "plugins": sorted(s.id for s in host.statuses() if s.state == "enabled"),
        "tools_list": {"tools": len(tools), **sized(wire)},
        "per_tool_chars": dict(sorted(per_tool.items(), key=lambda kv: -kv[1])),
        **({"responses": responses} if session else {}),
    }


async def play(client: Any, served: set[str]) -> dict[str, dict[str, int]]:
    responses: dict[str, dict[str, int]] = {}
    memory_ids: list[str] = []
    for index, (name, args) in enumerate(SESSION):
        if name not in served:
            continue
        text = tool_text(await client.call_tool(name, args))
        memory_ids += re.findall(r"Saved \(id: (mem_[0-9a-f]{12})", text)
        responses[f"{index:02d} {name}"] = sized(text)
    if "forget" in served and memory_ids:
        text = tool_text(await client.call_tool("forget", {"memory_id": memory_ids[0]}))
        responses[f"{len(SESSION):02d} forget"] = sized(text)
    return responses


def run_tokens(
    *,
    command: str,
    embedder: str,
    work_dir: Path | None,
    sets: Sequence[str] = tuple(PLUGIN_SETS),
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The report: each plugin set's tools/list, and a session's responses on the largest set."""
    unknown = [name for name in sets if name not in PLUGIN_SETS]
    if unknown:
        raise ValueError(f"--sets: unknown set(s) {', '.join(unknown)}; known: {', '.join(PLUGIN_SETS)}")
    largest = max(sets, key=lambda name: len(PLUGIN_SETS[name]))
    report: dict[str, Any] = {
        **report_header(command, embedder),
        "tokens": "WordPiece tokens of all-MiniLM-L6-v2's tokenizer.json (tokens_estimate: characters / 4)",
        "budgets_chars": {name: BUDGETS[name] for name in sets if name in BUDGETS},
        "sets": {},
    }
    for name in sets:
        if progress is not None:
            progress(name)
        with tempfile.TemporaryDirectory(prefix=f"ego-tokens-{name}-", dir=work_dir) as tmp:
            report["sets"][name] = anyio.run(measure_set, Path(tmp), PLUGIN_SETS[name], name == largest)
    report["within_budget"] = {
        name: report["sets"][name]["tools_list"]["chars"] <= budget for name, budget in report["budgets_chars"].items()
    }
    return report
