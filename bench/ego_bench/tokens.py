"""Token cost of ego in an agent's context: the tools/list definitions and typical responses.

    ego bench tokens [--output FILE]

Serves every enabled plugin in-process (temporary data dir, real embedding model from
EGO_EMBEDDING_MODEL_DIR or the chromadb cache), lists the tools over an in-memory MCP client, and plays a short
session (remember ×3, a near-duplicate, recall, search_memories, wake_up, introspect, consolidate, forget).
Sizes are the serialized JSON of tools/list as sent on the wire and the text of each response, in characters
and in estimated tokens (characters / 4, the usual rule of thumb for English text with OpenAI/Anthropic
tokenizers; no tokenizer is downloaded).
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from ego_bench.common import report_header
from ego_core import Settings, build_host
from ego_core.testing import mcp_client, tool_text


def estimate(chars: int) -> int:
    return round(chars / 4)


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
    ("introspect", {}),
    ("consolidate", {}),
]


async def measure(work: Path, command: str, embedder: str, plugins: Sequence[str] | None) -> dict[str, Any]:
    settings = Settings(data_dir=work, timezone="UTC")
    host = build_host(settings, enabled=plugins)
    async with mcp_client(host) as client:
        listed = await client.list_tools()
        tools = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed.tools]
        wire = json.dumps({"tools": tools}, separators=(",", ":"), ensure_ascii=False)
        per_tool = {t["name"]: len(json.dumps(t, separators=(",", ":"), ensure_ascii=False)) for t in tools}
        served = set(per_tool)
        responses: dict[str, dict[str, int]] = {}
        memory_ids: list[str] = []
        for index, (name, args) in enumerate(SESSION):
            if name not in served:
                continue
            text = tool_text(await client.call_tool(name, args))
            memory_ids += re.findall(r"Saved \(id: (mem_[0-9a-f]{12})", text)
            responses[f"{index:02d} {name}"] = {"chars": len(text), "tokens": estimate(len(text))}
        if "forget" in served and memory_ids:
            text = tool_text(await client.call_tool("forget", {"memory_id": memory_ids[0]}))
            responses[f"{len(SESSION):02d} forget"] = {"chars": len(text), "tokens": estimate(len(text))}
    return {
        **report_header(command, embedder),
        "plugins": [s.id for s in host.statuses() if s.state == "enabled"],
        "token_estimate": "characters / 4",
        "tools_list": {"tools": len(tools), "chars": len(wire), "tokens": estimate(len(wire))},
        "per_tool_chars": dict(sorted(per_tool.items(), key=lambda kv: -kv[1])),
        "responses": responses,
    }


def run_tokens(
    *, command: str, embedder: str, work_dir: Path | None, plugins: Sequence[str] | None = None
) -> dict[str, Any]:
    """The report for the enabled plugins (``plugins``: exactly these; default: the usual selection)."""
    with tempfile.TemporaryDirectory(prefix="ego-tokens-", dir=work_dir) as tmp:
        return anyio.run(measure, Path(tmp), command, embedder, plugins)
