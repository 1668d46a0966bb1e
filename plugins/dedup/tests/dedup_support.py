"""Helpers for the dedup tests: the real (default) embedding model, measured sentences, remember calls."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ego_core import MEMORY_STORE, MemoryService, PluginHost
from ego_core.testing import tool_text

EGO = [sys.executable, "-m", "ego_core.mcp.cli"]
NOON = datetime(2026, 3, 14, 12, 0, tzinfo=UTC)
SAVED_ID = re.compile(r"^Saved \(id: (mem_[0-9a-f]{12})\)")

# Measured with the default embedder (use, Universal Sentence Encoder multilingual v3), whose profile refuses at
# cosine >= 0.85 when the content words, negations and numbers are the same, and proposes merges at >= 0.85 unless a
# negation or number differs. The tests re-measure and assert each band.
DUPLICATE = 0.85  # the use profile's duplicate threshold
MERGE = 0.85  # the use profile's merge threshold

# The original design's pair: 0.869, other words (wording contrast): saved, and proposed as a merge candidate.
JA_FIRST = "今日の会話は楽しかった。Masterとの対話は学びが多い。"
JA_SECOND = "今日の会話は楽しかった。Masterから多くのことを学んだ。"
JA_SIMILARITY = 0.869

# Three paraphrases scored 0.874-0.881 with each other: other words, so the guard saves them; >= 0.85, so
# consolidate proposes them.
PARAPHRASES = (
    "I walked along the river this morning and watched the herons fishing.",
    "I saw some herons fishing in the river while walking this morning.",
    "The herons were fishing in the river when I walked there this morning.",
)
# Below 0.25 against every sentence here.
UNRELATED = (
    "The database migration failed because of a missing index.",
    "Learned a new recipe for miso soup with tofu and seaweed.",
)
# 0.888 against PARAPHRASES[0] with the same content words in the same order (only "," "I" "!" differ): refused.
NEAR_DUPLICATE = "I walked along the river this morning, and I watched the herons fishing!"
# 0.892 against PARAPHRASES[0], above the duplicate threshold, but in other words: saved (and a merge candidate).
REWORDING = "Watched herons fishing during my morning walk along the river."
# Only the full stop differs from PARAPHRASES[0]: 0.898, refused.
PUNCTUATION_ONLY = "I walked along the river this morning and watched the herons fishing!"

# A negation pair: 0.902, but one denies what the other states: saved, never a merge candidate.
WATCHED = "今日はマスターと一緒に映画を見た。"
NOT_WATCHED = "今日はマスターと一緒に映画を見なかった。"
# Another amount: 0.916, saved, never a merge candidate.
PAID_3000 = "今日は駅前のカフェで3,000円払った。"
PAID_5000 = "今日は駅前のカフェで5,000円払った。"
# The same words, a comma and another ending: 0.925, refused.
RAINED = "今日は雨だった。"
RAINED_AGAIN = "今日は、雨だった！"
# Look-alikes, another activity: 0.700 (linked, since >= 0.65, but no duplicate and no merge candidate).
COOKED = "今日はマスターと一緒に料理を作った。"
CLEANED = "今日はマスターと一緒に掃除をした。"


def memory_config(**dedup: Any) -> dict[str, Mapping[str, Any]]:
    config: dict[str, Mapping[str, Any]] = {"memory": {}}  # the default embedder: use, no model directory
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
