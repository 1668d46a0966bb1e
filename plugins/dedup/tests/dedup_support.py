"""Helpers for the dedup tests: the real embedding model, measured sentences, tool-name checks, remember calls."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ego_core import MEMORY_STORE, MemoryService, PluginHost
from ego_core.testing import tool_text

MODEL_DIR = Path(__file__).resolve().parents[3].parent / "shared/models/all-MiniLM-L6-v2/onnx"
EGO = [sys.executable, "-m", "ego_core.cli"]
NOON = datetime(2026, 3, 14, 12, 0, tzinfo=UTC)
SAVED_ID = re.compile(r"^Saved \(id: (mem_[0-9a-f]{12})\)")

# The original design's pair; all-MiniLM-L6-v2 scores it ≈ 0.898 (below both thresholds).
JA_FIRST = "今日の会話は楽しかった。Masterとの対話は学びが多い。"
JA_SECOND = "今日の会話は楽しかった。Masterから多くのことを学んだ。"
JA_SIMILARITY = 0.898

# Three paraphrases the model scores 0.915-0.926 with each other: past the guard (< 0.95), merge candidates
# (>= 0.90). Measured with all-MiniLM-L6-v2; the tests re-measure and assert the band.
PARAPHRASES = (
    "I walked along the river this morning and watched the herons fishing.",
    "I saw some herons fishing in the river while walking this morning.",
    "The herons were fishing in the river when I walked there this morning.",
)
UNRELATED = (
    "The database migration failed because of a missing index.",
    "Learned a new recipe for miso soup with tofu and seaweed.",
)
# Scored 0.968 against PARAPHRASES[0]: a near-duplicate in other words, refused by the guard.
NEAR_DUPLICATE = "Watched herons fishing during my morning walk along the river."


def memory_config(**dedup: Any) -> dict[str, Mapping[str, Any]]:
    config: dict[str, Mapping[str, Any]] = {"memory": {"model_dir": str(MODEL_DIR)}}
    if dedup:
        config["dedup"] = dedup
    return config


def store_of(host: PluginHost) -> MemoryService:
    service = host.services.get(MEMORY_STORE, MemoryService)
    assert service is not None, "the memory plugin has not started"
    return service


def similarity(service: MemoryService, a: str, b: str) -> float:
    vectors = service.embed([a, b])
    return float(np.dot(vectors[0], vectors[1]))


def saved_id(text: str) -> str:
    found = SAVED_ID.match(text)
    assert found is not None, text
    return found.group(1)


async def remember(client: Any, content: str, **extra: Any) -> str:
    result = await client.call_tool("remember", {"content": content, **extra})
    assert not result.is_error, tool_text(result)
    return tool_text(result)
